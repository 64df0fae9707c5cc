// Thermodynamic integration over parallel-tempered DE-MCMC against analytic evidences: models
// linear in their parameters (offsets, a linear trend) with Gaussian noise of known sigma and
// uniform priors wide enough to hold the whole likelihood, where
//   Z = L_max (2 pi)^(d/2) det(F)^(-1/2) / prod(prior widths),  F = X^T W X.
#include <kosmos/core/error.hpp>
#include <kosmos/kepler/evidence.hpp>
#include <kosmos/kepler/impl/evidence.hpp>

#include "synthetic_rv.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {
constexpr double kPi = 3.14159265358979323846;

kosmos::kepler::RVData two_instruments(int n, unsigned seed) {
  kosmos::kepler::RVData data;
  data.path = "linear";
  data.instrument_names = {"A", "B"};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int k = 0; k < n; ++k) {
    const double t = 1000 + 200.0 * k / n, sigma = 1 + u(rng);
    const int inst = k % 2;
    data.time.push_back(t);
    data.sigma.push_back(sigma);
    data.instrument.push_back(inst);
    data.velocity.push_back((inst ? -4.0 : 3.0) + 0.05 * (t - 1100) + sigma * g(rng));
  }
  return data;
}

// ln Z of the linear Gaussian model with design columns X (n x d) and uniform priors of the
// given widths: the maximum of ln L by the normal equations, det F by Gaussian elimination.
double analytic_ln_z(const kosmos::kepler::RVData& data, const std::vector<std::vector<double>>& X,
                     const std::vector<double>& widths) {
  const std::size_t n = data.size(), d = X.size();
  std::vector<std::vector<double>> F(d, std::vector<double>(d + 1, 0.0));
  for (std::size_t k = 0; k < n; ++k) {
    const double w = 1 / (data.sigma[k] * data.sigma[k]);
    for (std::size_t a = 0; a < d; ++a) {
      for (std::size_t b = 0; b < d; ++b) F[a][b] += w * X[a][k] * X[b][k];
      F[a][d] += w * X[a][k] * data.velocity[k];
    }
  }
  auto A = F;
  double log_det = 0;
  for (std::size_t c = 0; c < d; ++c) {  // elimination without pivoting (F is positive definite)
    log_det += std::log(A[c][c]);
    for (std::size_t r = c + 1; r < d; ++r) {
      const double f = A[r][c] / A[c][c];
      for (std::size_t q = c; q <= d; ++q) A[r][q] -= f * A[c][q];
    }
  }
  std::vector<double> beta(d);
  for (std::size_t c = d; c-- > 0;) {
    double s = A[c][d];
    for (std::size_t q = c + 1; q < d; ++q) s -= A[c][q] * beta[q];
    beta[c] = s / A[c][c];
  }
  double ln_l = 0;
  for (std::size_t k = 0; k < n; ++k) {
    double model = 0;
    for (std::size_t a = 0; a < d; ++a) model += X[a][k] * beta[a];
    const double r = data.velocity[k] - model, s2 = data.sigma[k] * data.sigma[k];
    ln_l += -0.5 * (r * r / s2 + std::log(2 * kPi * s2));
  }
  double ln_z = ln_l + 0.5 * double(d) * std::log(2 * kPi) - 0.5 * log_det;
  for (double w : widths) ln_z -= std::log(w);
  return ln_z;
}

kosmos::kepler::SearchOptions evidence_options() {
  kosmos::kepler::SearchOptions o;
  o.planets = 0;
  o.chains = 24;
  o.burn = 400;
  o.steps = 1200;
  o.thin = 2;
  o.epoch = 1100;
  o.priors = {kosmos::kepler::parse_prior("jitter_A fixed 0", "test"),
              kosmos::kepler::parse_prior("jitter_B fixed 0", "test"),
              kosmos::kepler::parse_prior("gamma_A uniform -30 30", "test"),
              kosmos::kepler::parse_prior("gamma_B uniform -40 40", "test")};
  return o;
}

TEST(KeplerEvidence, OffsetsMatchTheAnalyticEvidence) {
  using namespace kosmos::kepler;
  const auto data = two_instruments(40, 3);
  std::vector<std::vector<double>> X(2, std::vector<double>(data.size()));
  for (std::size_t k = 0; k < data.size(); ++k) {
    X[0][k] = data.instrument[k] == 0;
    X[1][k] = data.instrument[k] == 1;
  }
  // The data have a trend the model lacks: ln L is still Gaussian in the offsets.
  const double expected = analytic_ln_z(data, X, {60, 80});
  const auto r = planet_count_evidence(data, evidence_options());
  ASSERT_EQ(r.counts.size(), 1u);
  const auto& z = r.counts[0];
  std::printf("[kepler] evidence (2 offsets): ln Z = %.3f +- %.3f, analytic %.3f (%.1f s)\n",
              z.ln_z, z.ln_z_error, expected, r.seconds);
  EXPECT_NEAR(z.ln_z, expected, std::max(3 * z.ln_z_error, 0.1));
  EXPECT_LT(z.ln_z_error, 0.5);
}

// The design of two_instruments' model: an offset per instrument and a trend about t = 1100,
// and the evidence options with the trend's prior (width 1 m/s/d).
std::vector<std::vector<double>> offsets_and_trend(const kosmos::kepler::RVData& data) {
  std::vector<std::vector<double>> X(3, std::vector<double>(data.size()));
  for (std::size_t k = 0; k < data.size(); ++k) {
    X[0][k] = data.instrument[k] == 0;
    X[1][k] = data.instrument[k] == 1;
    X[2][k] = data.time[k] - 1100;
  }
  return X;
}

kosmos::kepler::SearchOptions trend_options() {
  auto o = evidence_options();
  o.trend = 1;
  o.priors.push_back(kosmos::kepler::parse_prior("dvdt uniform -0.5 0.5", "test"));
  return o;
}

TEST(KeplerEvidence, TrendModelMatchesAndIsPreferredByItsOdds) {
  using namespace kosmos::kepler;
  const auto data = two_instruments(40, 4);
  const auto X = offsets_and_trend(data);
  const auto o = trend_options();
  const double expected = analytic_ln_z(data, X, {60, 80, 1.0});
  const auto r = planet_count_evidence(data, o);
  const auto& z = r.counts[0];
  std::printf("[kepler] evidence (2 offsets + trend): ln Z = %.3f +- %.3f, analytic %.3f\n", z.ln_z,
              z.ln_z_error, expected);
  EXPECT_NEAR(z.ln_z, expected, std::max(3 * z.ln_z_error, 0.1));
  // The trend of 0.05 m/s/d over 200 d is strongly supported: the model without it loses.
  const double without = analytic_ln_z(data, {X[0], X[1]}, {60, 80});
  std::printf("[kepler] analytic ln Z without the trend %.3f\n", without);
  EXPECT_GT(z.ln_z - without, 5);
}

// One instrument: the orbits (RadVel convention, M0 at the epoch) + offset 2 m/s + dvdt (t -
// epoch) + white noise of sigma 1.5 m/s; times uniform over `span` days around the epoch.
kosmos::kepler::RVData one_instrument(const std::vector<kosmos::kepler::Orbit>& orbits, double dvdt,
                                      int n, double span, unsigned seed) {
  return kosmos_test::one_instrument_star(orbits, 2.0, dvdt, 1.5, n, 5000 - span / 2, span, 5000.0,
                                          seed);
}

// The budget of the model-selection tests: small chains, a short ladder (the decisions below
// are far beyond the threshold and the errors).
kosmos::kepler::SearchOptions selection_options(int planets) {
  auto o = kosmos_test::test_budget(planets, 2 * (5 * planets + 2) + 2, 150, 3, 40, 1024);
  o.min_planets = 0;
  o.epoch = 5000;
  o.k_max = 100;
  o.jitter_max = 20;
  return o;
}

kosmos::kepler::EvidenceOptions small_ladder() {
  kosmos::kepler::EvidenceOptions ev;
  ev.temperatures = 10;
  return ev;
}

void print_table(const char* what, const kosmos::kepler::ModelSelection& s) {
  std::printf("[kepler] %s (%.1f s):", what, s.evidence.seconds);
  for (const auto& c : s.evidence.counts)
    std::printf("  %d pl trend %d: ln Z %.2f +- %.2f", c.planets, c.trend, c.ln_z, c.ln_z_error);
  std::printf("  -> %d planet(s), trend %d\n", s.evidence.preferred, s.evidence.preferred_trend);
}

// Noise only: no planet is supported, and the strongest residual peak is not significant.
TEST(KeplerModelSelection, NoiseOnlyStarGetsNoPlanet) {
  using namespace kosmos::kepler;
  const auto data = one_instrument({}, 0.0, 40, 300, 21);
  const auto s = select_model(data, selection_options(1), small_ladder());
  print_table("noise only", s);
  EXPECT_EQ(s.evidence.preferred, 0);
  EXPECT_FALSE(s.evidence.top_of_range);
  EXPECT_EQ(s.posterior.planets, 0);
  ASSERT_EQ(s.posterior.false_alarm.size(), 1u);  // the signal searched for and rejected
  EXPECT_GT(s.posterior.false_alarm[0], 0.01);
  EXPECT_LT(s.evidence.log_odds(1, 0), small_ladder().log_odds_threshold);
}

// A clean one-planet star: one planet, at its period, not a second one at an alias; the signal's
// false-alarm probability is tiny; the top of the range compared is not reached.
TEST(KeplerModelSelection, OnePlanetStarGetsNoAliasPlanet) {
  using namespace kosmos::kepler;
  const Orbit truth{11.3, 9.0, 0.1, 1.0, 2.0};
  const auto data = one_instrument({truth}, 0.0, 40, 250, 22);
  const auto s = select_model(data, selection_options(2), small_ladder());
  print_table("one planet", s);
  ASSERT_EQ(s.evidence.preferred, 1);
  EXPECT_FALSE(s.evidence.top_of_range);
  EXPECT_NEAR(s.posterior.get("P_b").median, truth.P, 0.05);
  EXPECT_NEAR(s.posterior.get("K_b").median, truth.K, 1.5);
  EXPECT_LT(s.posterior.false_alarm[0], 1e-6);
  ASSERT_EQ(s.posterior.period_modes.size(), 1u);
  EXPECT_EQ(s.posterior.period_modes[0].size(), 1u);
  EXPECT_GT(s.evidence.log_odds(1, 0), 20);
  // Short chains bias ln Z of the larger model up (by 5-7 here: the drift between the halves of
  // the run shows it in the error); the rule keeps the simpler model while that is unresolved.
  const auto &z1 = s.evidence.get(1, 0), &z2 = s.evidence.get(2, 0);
  EXPECT_LT(s.evidence.log_odds(2, 1) - 2 * (z1.ln_z_error + z2.ln_z_error),
            small_ladder().log_odds_threshold);
}

// A sparse 32-point two-planet star (the transiting pair): the count may be 1 or 2, but
// every planet reported is a true one, not a short-period eccentric alias.
TEST(KeplerModelSelection, SparseTwoPlanetStarHasNoFalseShortPeriodPlanet) {
  using namespace kosmos::kepler;
  const std::vector<Orbit> truth{{3.52, 12.0, 0.0, 0.0, 1.0}, {9.71, 8.0, 0.05, 2.0, 4.0}};
  const auto data = one_instrument(truth, 0.0, 32, 90, 23);
  const auto s = select_model(data, selection_options(2), small_ladder());
  print_table("sparse two planets", s);
  EXPECT_GE(s.evidence.preferred, 1);
  for (const auto& o : s.posterior.best_orbits) {
    // the period resolution of 90 d at 10 d is about 1 d: 3 % (the false solutions were at
    // 0.6-0.75 d)
    const bool true_period =
        std::fabs(o.P / truth[0].P - 1) < 0.03 || std::fabs(o.P / truth[1].P - 1) < 0.03;
    EXPECT_TRUE(true_period) << "planet at P = " << o.P << " d, e = " << o.e;
    EXPECT_LT(o.e, 0.5) << "planet at P = " << o.P << " d";
  }
}

// --trend auto on a star with a linear trend worth delta ln L >> 30 and no planet: order 1,
// with ln Z of orders 0 and 1 matching the analytic evidences under the priors it added.
TEST(KeplerModelSelection, TrendAutoPicksTheLinearTrend) {
  using namespace kosmos::kepler;
  auto data = one_instrument({}, 0.02, 40, 300, 24);
  auto o = selection_options(0);
  o.min_planets = -1;
  o.trend = kAutoTrend;
  o.chains = 12;
  o.priors = {parse_prior("jitter_A fixed 0", "test")};
  const auto s = select_model(data, o, small_ladder());
  print_table("trend", s);
  EXPECT_EQ(s.evidence.preferred_trend, 1);
  ASSERT_EQ(s.evidence.default_priors.size(), 3u);  // gamma_A, dvdt, curv
  const double gamma_width = s.evidence.default_priors[0].b - s.evidence.default_priors[0].a;
  const double dvdt_width = s.evidence.default_priors[1].b - s.evidence.default_priors[1].a;
  std::vector<double> ones(data.size(), 1.0), dt(data.size());
  for (std::size_t k = 0; k < data.size(); ++k) dt[k] = data.time[k] - 5000;
  const double flat = analytic_ln_z(data, {ones}, {gamma_width});
  const double sloped = analytic_ln_z(data, {ones, dt}, {gamma_width, dvdt_width});
  const auto& z0 = s.evidence.get(0, 0);
  const auto& z1 = s.evidence.get(0, 1);
  std::printf("[kepler] analytic ln Z: trend 0 %.3f, trend 1 %.3f\n", flat, sloped);
  EXPECT_NEAR(z0.ln_z, flat, std::max(3 * z0.ln_z_error, 0.15));
  EXPECT_NEAR(z1.ln_z, sloped, std::max(3 * z1.ln_z_error, 0.15));
  EXPECT_GT(sloped - flat, 10);
  EXPECT_EQ(s.posterior.trend, 1);
  EXPECT_NEAR(s.posterior.get("dvdt").median, 0.02,
              4 * 0.5 * (s.posterior.get("dvdt").upper - s.posterior.get("dvdt").lower));
}

// Nightly sampling at the same hour: a circular planet at P = 1.5 d (f = 2/3 per day) and its
// daily alias f = 1/3 (P = 3 d; the orbit mirrored, omega -> -omega) fit the data exactly
// equally well. Uniform in ln P, the modes' weights are in the ratio of their widths in ln P,
// 1 / f: 1/3 and 2/3. The tempered chains must visit both, and the summary report both.
TEST(KeplerModelSelection, DailyAliasModesAreReportedWithTheirWeights) {
  using namespace kosmos::kepler;
  const Orbit truth{1.5, 10.0, 0.0, 0.0, 1.0};
  RVData data;
  data.path = "nightly";
  data.instrument_names = {"A"};
  std::mt19937_64 rng(25);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int night = 0; night < 80; ++night) {
    if (rng() % 2) continue;  // about 40 of 80 nights
    const double t = 5000 + night;
    data.time.push_back(t);
    data.velocity.push_back(radial_velocity(truth, t, 5000.0) + 1.5 * g(rng));
    data.sigma.push_back(1.5);
    data.instrument.push_back(0);
  }
  auto o = selection_options(1);
  o.min_planets = -1;
  o.chains = 24;
  o.period_min = 1.0;  // f <= 1: the aliases f + 1, 2 - f stay out
  o.period_max = 20;
  const auto s = select_model(data, o, small_ladder());
  const auto& modes = s.posterior.period_modes.at(0);
  for (const auto& m : modes) std::printf("[kepler] mode %.5f d weight %.3f\n", m.period, m.weight);
  ASSERT_EQ(modes.size(), 2u);
  EXPECT_NEAR(modes[0].period, 3.0, 0.01);
  EXPECT_NEAR(modes[1].period, 1.5, 0.01);
  EXPECT_NEAR(modes[0].weight, 2.0 / 3, 0.12);
  bool warned = false;
  for (const auto& w : s.posterior.warnings)
    warned = warned || w.find("multimodal") != std::string::npos;
  EXPECT_TRUE(warned);
}

// Baluev's (2008) false-alarm probability against the fraction of white-noise series whose
// highest GLS peak (a direct implementation here, the same frequency band) exceeds the power
// where it predicts 10 % and 2 %: an upper bound, close at small values.
TEST(KeplerModelSelection, BaluevFalseAlarmMatchesMonteCarlo) {
  using namespace kosmos::kepler;
  const int n = 30, trials = 400;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<double> t(n), w(n, 1.0);
  for (auto& x : t) x = 100 * u(rng);
  const double f_max = 0.5, df = 0.2 / 100;
  // the power where the FAP is 0.1 and 0.02 (bisection; the FAP falls with the power)
  auto level = [&](double fap) {
    double lo = 0, hi = 1;
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      (false_alarm_probability(mid, t, w, f_max) > fap ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
  };
  const double z10 = level(0.1), z02 = level(0.02);
  int above10 = 0, above02 = 0;
  std::vector<double> y(n);
  for (int trial = 0; trial < trials; ++trial) {
    for (auto& v : y) v = g(rng);
    double mean = 0;
    for (double v : y) mean += v / n;
    double yy = 0;
    for (double v : y) yy += (v - mean) * (v - mean);
    double best = 0;
    for (double f = df; f <= f_max; f += df) {  // chi^2 of the best sinusoid + constant
      double C = 0, S = 0, CC = 0, SS = 0, CS = 0, YC = 0, YS = 0;
      for (int k = 0; k < n; ++k) {
        const double c = std::cos(2 * kPi * f * t[k]), s = std::sin(2 * kPi * f * t[k]);
        C += c / n, S += s / n;
      }
      for (int k = 0; k < n; ++k) {
        const double c = std::cos(2 * kPi * f * t[k]) - C, s = std::sin(2 * kPi * f * t[k]) - S;
        CC += c * c, SS += s * s, CS += c * s, YC += (y[k] - mean) * c, YS += (y[k] - mean) * s;
      }
      const double D = CC * SS - CS * CS;
      best = std::max(best, (SS * YC * YC + CC * YS * YS - 2 * CS * YC * YS) / (D * yy));
    }
    above10 += best > z10;
    above02 += best > z02;
  }
  std::printf("[kepler] Baluev: power %.3f (FAP 0.1) exceeded in %d/%d, %.3f (FAP 0.02) in %d\n",
              z10, above10, trials, z02, above02);
  EXPECT_NEAR(double(above10) / trials, 0.1, 0.04);
  EXPECT_NEAR(double(above02) / trials, 0.02, 0.015);
}

// Alias modes: samples from two separated peaks in frequency are reported as two modes with
// their weights; a single broad peak stays one mode.
TEST(KeplerModelSelection, PeriodModesSplitAliases) {
  using namespace kosmos::kepler;
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g(0.0, 1.0);
  const double baseline = 1000;  // seasons over three years
  std::vector<double> periods;
  for (int i = 0; i < 7000; ++i) periods.push_back(1 / (1 / 4.8 + 0.1 / baseline * g(rng)));
  // the yearly alias: frequency + 1 / 365.25
  for (int i = 0; i < 3000; ++i)
    periods.push_back(1 / (1 / 4.8 + 1 / 365.25 + 0.1 / baseline * g(rng)));
  const auto modes = period_modes(periods, baseline);
  ASSERT_EQ(modes.size(), 2u);
  EXPECT_NEAR(modes[0].weight, 0.7, 1e-12);
  EXPECT_NEAR(modes[0].period, 4.8, 1e-3);
  EXPECT_NEAR(modes[1].weight, 0.3, 1e-12);
  EXPECT_NEAR(modes[1].period, 1 / (1 / 4.8 + 1 / 365.25), 1e-3);
  std::vector<double> broad;
  for (int i = 0; i < 5000; ++i) broad.push_back(1 / (1 / 30.0 + 0.5 / baseline * g(rng)));
  EXPECT_EQ(period_modes(broad, baseline).size(), 1u);
}

// Kipping's (2013) Beta(0.867, 3.03) eccentricity prior: densities against the closed form,
// parsing of beta priors.
TEST(KeplerModelSelection, BetaEccentricityPrior) {
  using namespace kosmos::kepler;
  const auto priors = kipping_eccentricity_prior(2);
  ASSERT_EQ(priors.size(), 2u);
  EXPECT_EQ(priors[1].parameter, "e_c");
  for (double e : {0.01, 0.1, 0.5, 0.9})
    EXPECT_NEAR(priors[0].log_density(e) - priors[0].log_density(0.3),
                -0.133 * std::log(e / 0.3) + 2.03 * std::log((1 - e) / 0.7), 1e-12);
  EXPECT_EQ(priors[0].log_density(1.0), -HUGE_VAL);
  EXPECT_THROW(parse_prior("e_b beta 0 1", "test"), kosmos::invalid_input);
}

// The survey's evidence (survey_evidence: every star's ladder in shared launches) against the
// one-star path and the analytic evidence. Jitter fixed at 0: with one instrument the model of
// no planet is linear (the offset), its ln Z analytic under the default offset prior, whose
// width the test computes from the data itself: 2 (max v - min v + 10 max sigma).
double default_offset_width(const kosmos::kepler::RVData& data) {
  return 2 * (*std::max_element(data.velocity.begin(), data.velocity.end()) -
              *std::min_element(data.velocity.begin(), data.velocity.end()) +
              10 * *std::max_element(data.sigma.begin(), data.sigma.end()));
}

TEST(KeplerSurveyEvidence, MatchesTheOneStarEvidenceAndTheAnalyticValue) {
  using namespace kosmos::kepler;
  const std::vector<RVData> stars{one_instrument({}, 0.0, 40, 300, 21),
                                  one_instrument({{11.3, 9.0, 0.1, 1.0, 2.0}}, 0.0, 40, 250, 22)};
  auto o = selection_options(1);
  o.priors = {parse_prior("jitter_A fixed 0", "test")};
  auto ladder = small_ladder();
  ladder.screen_by_importance = false;  // the ladders of both stars, batched
  const auto survey = survey_evidence(stars, o, ladder);
  ASSERT_EQ(survey.size(), stars.size());
  for (std::size_t s = 0; s < stars.size(); ++s) {
    const auto& z = survey[s].evidence;
    ASSERT_EQ(z.counts.size(), 2u);
    ASSERT_EQ(z.default_priors.size(), 1u);  // gamma_A
    EXPECT_NEAR(z.default_priors[0].b - z.default_priors[0].a, default_offset_width(stars[s]),
                1e-9 * default_offset_width(stars[s]));
    auto one_options = o;
    one_options.priors.push_back(z.default_priors[0]);
    const auto one = planet_count_evidence(stars[s], one_options, small_ladder());
    const double analytic = analytic_ln_z(stars[s], {std::vector<double>(stars[s].size(), 1.0)},
                                          {default_offset_width(stars[s])});
    for (int c = 0; c <= 1; ++c) {
      const auto &batched = z.get(c, 0), &single = one.get(c, 0);
      std::printf(
          "[kepler] survey star %zu, %d planet(s): ln Z %.2f +- %.2f, one star %.2f +- "
          "%.2f%s\n",
          s, c, batched.ln_z, batched.ln_z_error, single.ln_z, single.ln_z_error,
          c == 0 ? (", analytic " + std::to_string(analytic)).c_str() : "");
      EXPECT_NEAR(batched.ln_z, single.ln_z,
                  3 * std::hypot(batched.ln_z_error, single.ln_z_error) + 0.2);
    }
    EXPECT_NEAR(z.get(0, 0).ln_z, analytic, std::max(3 * z.get(0, 0).ln_z_error, 0.15));
    EXPECT_EQ(z.preferred, one.preferred);
    EXPECT_EQ(survey[s].posterior.planets, z.preferred);
  }
  // A star's result does not depend on the stars beside it: alone (numbered as in the survey)
  // it draws the same numbers and gets the same evidences.
  const auto alone = survey_evidence({stars[1]}, o, ladder, 1);
  for (std::size_t c = 0; c < alone[0].evidence.counts.size(); ++c)
    EXPECT_EQ(alone[0].evidence.counts[c].ln_z, survey[1].evidence.counts[c].ln_z);
}

// 0-, 1- and 2-planet stars in one survey each get their count; the noise-only star no planet.
TEST(KeplerSurveyEvidence, EachStarOfAMixedSurveyGetsItsTrueCount) {
  using namespace kosmos::kepler;
  const std::vector<Orbit> two{{11.3, 9.0, 0.1, 1.0, 2.0}, {27.5, 8.0, 0.05, 2.0, 4.0}};
  const std::vector<RVData> stars{one_instrument({}, 0.0, 40, 300, 21),
                                  one_instrument({two[0]}, 0.0, 40, 250, 22),
                                  one_instrument(two, 0.0, 50, 250, 26)};
  auto o = selection_options(2);
  o.priors = {parse_prior("jitter_A fixed 0", "test")};
  o.chains = 24;  // 11 free parameters at most
  o.burn = o.steps = 80;
  auto ev = small_ladder();
  ev.temperatures = 8;
  const auto begin = std::chrono::steady_clock::now();
  const auto survey = survey_evidence(stars, o, ev);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  // the stages' seconds: the same in every star's result, each positive (every stage ran: the
  // importance screening, ladders for the stars it left, posteriors), together within the call
  const auto& t = survey[0].evidence.survey_stages;
  for (double stage : {t.optimization, t.importance, t.ladders, t.posteriors, t.summaries})
    EXPECT_GT(stage, 0.0);
  EXPECT_LE(t.optimization + t.importance + t.ladders + t.posteriors + t.summaries, wall);
  for (const auto& selection : survey)
    EXPECT_EQ(selection.evidence.survey_stages.ladders, t.ladders);
  for (std::size_t s = 0; s < stars.size(); ++s) {
    const auto& z = survey[s].evidence;
    std::printf("[kepler] mixed survey star %zu:", s);
    for (const auto& c : z.counts)
      std::printf("  %d pl: ln Z %.2f +- %.2f", c.planets, c.ln_z, c.ln_z_error);
    std::printf("  -> %d (%s)\n", z.preferred, z.decided_by.c_str());
    // A star decided with ladders keeps the estimates importance sampling could make.
    int laddered = 0;
    for (const auto& c : z.counts) laddered += c.method == "stepping stones" ? 1 : 0;
    if (z.decided_by.rfind("importance and ladder: ", 0) == 0) {
      EXPECT_GT(laddered, 0);
      EXPECT_LT(laddered, int(z.counts.size()));
    }
    if (z.decided_by == "importance") {
      EXPECT_EQ(laddered, 0);
    }
    EXPECT_EQ(z.preferred, int(s));
    EXPECT_EQ(survey[s].posterior.planets, int(s));
    EXPECT_EQ(z.top_of_range, s == 2);
  }
  EXPECT_LT(survey[0].evidence.log_odds(1, 0), ev.log_odds_threshold);
  EXPECT_NEAR(survey[1].posterior.get("P_b").median, two[0].P, 0.05);
  std::vector<double> periods;
  for (const auto& orbit : survey[2].posterior.best_orbits) periods.push_back(orbit.P);
  std::sort(periods.begin(), periods.end());
  ASSERT_EQ(periods.size(), 2u);
  EXPECT_NEAR(periods[0], two[0].P, 0.1);
  EXPECT_NEAR(periods[1], two[1].P, 0.3);
}

// Options a survey cannot run are refused before any work, naming the star.
TEST(KeplerSurveyEvidence, BadOptionsAreNamed) {
  using namespace kosmos::kepler;
  auto star = one_instrument({}, 0.0, 20, 100, 5);
  star.path = "star_x";
  auto expect_error = [&](const SearchOptions& o, const std::string& text) {
    try {
      survey_evidence({star}, o, small_ladder());
      ADD_FAILURE() << "accepted: " << text;
    } catch (const kosmos::invalid_input& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  auto o = selection_options(2);
  o.chains = 10;
  expect_error(o, "star_x: kosmos::kepler::planet_count_evidence: chains = 10 must be even");
  o = selection_options(1);
  o.trend = kAutoTrend;
  expect_error(o, "a survey compares planet counts at one trend order");
}

// A ladder's chains per temperature: ladder_chains or the search's chains, whichever is fewer (the
// search's where ladder_chains is 0), at least the 2 x parameters + 2 DE-MCMC needs (26 for two
// planets, an offset and a jitter); an odd count is refused, naming it.
TEST(KeplerEvidence, LadderChainsAreTheFewerCountAndAtLeastWhatDeMcmcNeeds) {
  using namespace kosmos::kepler;
  const auto star = one_instrument({}, 0.0, 20, 100, 5);
  auto o = selection_options(2);
  o.priors = {parse_prior("gamma_A uniform -50 50", "test")};
  std::vector<Impl::BoundPrior> priors;
  const Impl::Model model = Impl::ladder_model(star, o, 2, priors);
  ASSERT_EQ(model.n_free(), 12);
  EvidenceOptions ev;
  o.chains = 160;
  EXPECT_EQ(ev.ladder_chains, 32);
  EXPECT_EQ(Impl::ladder_chain_count(model, o, ev), 32);
  ev.ladder_chains = 16;
  EXPECT_EQ(Impl::ladder_chain_count(model, o, ev), 26);
  ev.ladder_chains = 0;
  EXPECT_EQ(Impl::ladder_chain_count(model, o, ev), 160);
  ev.ladder_chains = 64;
  o.chains = 40;
  EXPECT_EQ(Impl::ladder_chain_count(model, o, ev), 40);
  ev.ladder_chains = 33;
  try {
    select_model(star, selection_options(1), ev);
    ADD_FAILURE() << "an odd ladder_chains was accepted";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("ladder_chains = 33: need an even count"),
              std::string::npos)
        << e.what();
  }
}

TEST(KeplerEvidence, ImproperOffsetPriorIsRefused) {
  using namespace kosmos::kepler;
  auto o = evidence_options();
  o.priors.pop_back();  // gamma_B: no prior of its own
  try {
    planet_count_evidence(two_instruments(20, 5), o);
    ADD_FAILURE() << "an improper prior was accepted";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("needs a proper prior on gamma_B"), std::string::npos)
        << e.what();
  }
}

}  // namespace

// The survey's screening estimate (importance sampling about each count's optimum) against the
// analytic evidence of linear models: one offset, and two offsets with a trend (jitters fixed),
// each model alone (one count: the estimate decides).
TEST(KeplerSurveyEvidence, ImportanceSamplingMatchesTheAnalyticEvidence) {
  using namespace kosmos::kepler;
  const auto star = one_instrument({}, 0.0, 40, 300, 21);
  auto o = selection_options(0);
  o.min_planets = -1;
  o.priors = {parse_prior("jitter_A fixed 0", "test")};
  const auto one = survey_evidence({star}, o, small_ladder())[0].evidence;
  ASSERT_EQ(one.counts.size(), 1u);
  EXPECT_EQ(one.decided_by, "importance");
  EXPECT_EQ(one.counts[0].method, "importance");
  const double expected =
      analytic_ln_z(star, {std::vector<double>(star.size(), 1.0)}, {default_offset_width(star)});
  std::printf("[kepler] importance ln Z (offset) %.4f +- %.4f, analytic %.4f\n", one.counts[0].ln_z,
              one.counts[0].ln_z_error, expected);
  EXPECT_NEAR(one.counts[0].ln_z, expected, std::max(4 * one.counts[0].ln_z_error, 0.02));

  const auto data = two_instruments(40, 4);
  const auto X = offsets_and_trend(data);
  const auto t = trend_options();
  const auto trend = survey_evidence({data}, t, small_ladder())[0].evidence;
  const double with_trend = analytic_ln_z(data, X, {60, 80, 1.0});
  std::printf("[kepler] importance ln Z (2 offsets + trend) %.4f +- %.4f, analytic %.4f\n",
              trend.counts[0].ln_z, trend.counts[0].ln_z_error, with_trend);
  EXPECT_EQ(trend.decided_by, "importance");
  EXPECT_NEAR(trend.counts[0].ln_z, with_trend, std::max(4 * trend.counts[0].ln_z_error, 0.02));
}

// The screening against the ladder on a one-planet star, jitter free: importance sampling
// decides it, each count's ln Z within the errors of the ladder's, the same count, and the
// posterior (sampled at beta = 1 alone) finds the planet. Short ladders overestimate the
// planet's ln Z (by 5 at 400 generations here, 2.8 at 3000 and 1.2 at 6000 with 32
// temperatures, against the importance estimate's 0.01; the errors do not cover it): a count
// with planets may lie above the importance estimate by up to kShortLadderBias more, never
// below it beyond the errors.
TEST(KeplerSurveyEvidence, ImportanceSamplingMatchesTheLadderOnAPlanet) {
  using namespace kosmos::kepler;
  const Orbit planet{11.3, 9.0, 0.1, 1.0, 2.0};
  const auto star = one_instrument({planet}, 0.0, 60, 250, 32);
  auto o = selection_options(1);
  o.chains = 40;
  o.burn = 1000;
  o.steps = 2000;
  o.thin = 10;
  auto ladder = small_ladder();
  ladder.temperatures = 24;
  // The ladder of the 40 chains this comparison was made for (not ladder_chains' fewer). Its
  // bias above comes with any chain count: 1.8, 2.6 and 3.1 above the importance estimate with
  // 40, 64 and 32 chains on the GPU, at errors of 0.69-0.80; 2.2 at 0.46 with 40 chains and
  // other device streams.
  ladder.ladder_chains = 0;
  ladder.screen_by_importance = false;
  auto screened = ladder;
  screened.screen_by_importance = true;
  const auto by_ladder = survey_evidence({star}, o, ladder)[0];
  const auto by_importance = survey_evidence({star}, o, screened)[0];
  EXPECT_EQ(by_ladder.evidence.decided_by, "ladder");
  EXPECT_EQ(by_importance.evidence.decided_by, "importance");
  for (int c = 0; c <= 1; ++c) {
    const auto &l = by_ladder.evidence.get(c, 0), &i = by_importance.evidence.get(c, 0);
    std::printf(
        "[kepler] %d planet(s): ladder ln Z %.2f +- %.2f, importance %.2f +- %.2f (ESS %.0f, "
        "margin %.1f)\n",
        c, l.ln_z, l.ln_z_error, i.ln_z, i.ln_z_error, i.importance_ess, i.ln_z_margin);
    EXPECT_EQ(i.method, "importance");
    constexpr double kShortLadderBias = 3.0;  // at this test's 3000 generations
    const double tolerance = 3 * std::hypot(l.ln_z_error, i.ln_z_error) + 0.3;
    EXPECT_GT(i.ln_z - l.ln_z, -tolerance - (c > 0 ? kShortLadderBias : 0.0));
    EXPECT_LT(i.ln_z - l.ln_z, tolerance);
  }
  EXPECT_EQ(by_importance.evidence.preferred, 1);
  EXPECT_EQ(by_ladder.evidence.preferred, 1);
  EXPECT_EQ(by_importance.posterior.planets, 1);
  EXPECT_NEAR(by_importance.posterior.get("P_b").median, planet.P, 0.05);
}
