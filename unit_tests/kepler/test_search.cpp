// The search on synthetic data with a known injected planet, two instruments with different
// offsets and jitters: the truth must lie inside the posterior (4 posterior standard deviations).
#include <kosmos/core/error.hpp>
#include <kosmos/core/hdf5.hpp>
#include <kosmos/kepler/search.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

TEST(KeplerSearch, RecoversAnInjectedPlanet) {
  using namespace kosmos::kepler;
  const Orbit truth{47.3, 12.0, 0.3, 1.0, 2.0};
  const double epoch = 2455000.0, offsets[2] = {5.0, -3.0}, jitters[2] = {1.0, 2.5};
  RVData data;
  data.path = "synthetic";
  data.instrument_names = {"A", "B"};
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<double> times;
  for (int k = 0; k < 120; ++k) times.push_back(epoch - 750 + 1500 * u(rng));
  std::sort(times.begin(), times.end());
  for (int k = 0; k < 120; ++k) {
    const int inst = times[k] < epoch ? 0 : 1;
    const double sigma = 1.0 + u(rng);
    const double noise = std::sqrt(sigma * sigma + jitters[inst] * jitters[inst]) * g(rng);
    data.time.push_back(times[k]);
    data.velocity.push_back(radial_velocity(truth, times[k], epoch) + offsets[inst] + noise);
    data.sigma.push_back(sigma);
    data.instrument.push_back(inst);
  }
  SearchOptions options;
  options.planets = 1;
  options.chains = 48;
  options.burn = 300;
  options.steps = 300;
  options.optimizer_generations = 60;
  options.random_candidates = 2048;
  options.epoch = epoch;
  const auto r = search(data, options);
  ASSERT_EQ(r.best_orbits.size(), 1u);
  std::printf("[kepler] search: %lld likelihood evaluations in %.2f s, max R-hat %.3f\n",
              r.likelihood_evaluations, r.seconds, r.max_rhat);
  auto within = [&](const char* name, double value, double slack = 0) {
    const auto& s = r.get(name);
    const double sd = 0.5 * (s.upper - s.lower);
    EXPECT_LE(std::fabs(s.median - value), 4 * sd + slack)
        << name << ": median " << s.median << " (" << s.lower << ", " << s.upper << "), truth "
        << value;
  };
  within("P_b", truth.P);
  within("K_b", truth.K);
  within("e_b", truth.e);
  within("gamma_A", offsets[0]);
  within("gamma_B", offsets[1]);
  within("jitter_B", jitters[1], 0.5);
  EXPECT_NEAR(r.periodogram_periods[0], truth.P, 1.0);
  EXPECT_EQ(r.samples.size(), std::size_t(48 * 75));  // 300 kept generations, thin 4
  EXPECT_LT(r.max_rhat, 1.5);
}

// Synthetic data: `orbits` (RadVel convention) + per-instrument offset + dvdt (t - epoch) +
// curv (t - epoch)^2, Gaussian noise of sigma (1 to 2 m/s) and the instrument's jitter. Times
// uniform over 1500 d around the epoch, instrument A before it, B after.
kosmos::kepler::RVData synthetic(const std::vector<kosmos::kepler::Orbit>& orbits, double epoch,
                                 double dvdt, double curv, int n_obs, unsigned seed,
                                 const double offsets[2] = nullptr,
                                 const double jitters[2] = nullptr) {
  using namespace kosmos::kepler;
  const double zero[2] = {0.0, 0.0};
  offsets = offsets ? offsets : zero;
  jitters = jitters ? jitters : zero;
  RVData data;
  data.path = "synthetic";
  data.instrument_names = {"A", "B"};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<double> times;
  for (int k = 0; k < n_obs; ++k) times.push_back(epoch - 750 + 1500 * u(rng));
  std::sort(times.begin(), times.end());
  for (int k = 0; k < n_obs; ++k) {
    const int inst = times[k] < epoch ? 0 : 1;
    const double sigma = 1.0 + u(rng), dt = times[k] - epoch;
    double v = offsets[inst] + dvdt * dt + curv * dt * dt;
    for (const auto& o : orbits) v += radial_velocity(o, times[k], epoch);
    data.time.push_back(times[k]);
    data.velocity.push_back(v + std::sqrt(sigma * sigma + jitters[inst] * jitters[inst]) * g(rng));
    data.sigma.push_back(sigma);
    data.instrument.push_back(inst);
  }
  return data;
}

kosmos::kepler::SearchOptions small_budget(double epoch) {
  kosmos::kepler::SearchOptions options;
  options.chains = 40;
  options.burn = 200;
  options.steps = 200;
  options.optimizer_generations = 60;
  options.random_candidates = 2048;
  options.period_max = 1000;
  options.epoch = epoch;
  return options;
}

// The batch-independence tests' budget: one planet, few chains and generations (the results are
// compared bit for bit, not with the truth).
kosmos::kepler::SearchOptions batch_budget(double epoch) {
  auto options = small_budget(epoch);
  options.planets = 1;
  options.chains = 24;
  options.burn = 30;
  options.steps = 30;
  options.optimizer_generations = 20;
  options.random_candidates = 128;
  return options;
}

void expect_within(const kosmos::kepler::SearchResult& r, const char* name, double truth,
                   double sigmas = 4) {
  const auto& s = r.get(name);
  EXPECT_LE(std::fabs(s.median - truth), sigmas * 0.5 * (s.upper - s.lower))
      << name << ": median " << s.median << " (" << s.lower << ", " << s.upper << "), truth "
      << truth;
}

// A linear trend (30 m/s over the span) under a circular planet, fitted with --trend 1 and e
// fixed at 0: dvdt is recovered, e stays exactly 0 and leaves the free parameters.
TEST(KeplerSearch, RecoversATrendWithEccentricityFixed) {
  using namespace kosmos::kepler;
  const double epoch = 2456000.0, dvdt = 0.02;
  const Orbit truth{23.7, 9.0, 0.0, 0.0, 1.2};
  const auto data = synthetic({truth}, epoch, dvdt, 0.0, 90, 7);
  auto options = small_budget(epoch);
  options.planets = 1;
  options.trend = 1;
  options.priors.push_back(parse_prior("e_b fixed 0", "test"));
  const auto r = search(data, options);
  expect_within(r, "dvdt", dvdt);
  expect_within(r, "P_b", truth.P);
  expect_within(r, "K_b", truth.K);
  EXPECT_LT(std::fabs(r.get("dvdt").median - dvdt), 0.002);  // the trend is resolved, not hidden
  EXPECT_EQ(r.get("e_b").lower, 0.0);
  EXPECT_EQ(r.get("e_b").upper, 0.0);
  EXPECT_EQ(r.n_free, 5 - 2 + 4 + 1);  // ln P, K, lambda; 2 x (gamma, jitter); dvdt
  // The printed MAP is the polished optimum: no sample has a higher ln L.
  const std::size_t ll = r.columns.size() - 1;
  for (const auto& row : r.samples) ASSERT_LE(row[ll], r.best_loglike + 1e-6);
}

// Velocities carrying c (S - mean S) of a rotation-modulated S-index (27-d period, 150 m/s per
// unit: 7.5 m/s) besides a 23.7-d planet: with --activity the fit recovers c and the planet and
// leaves no excess jitter; without it the white-noise fit puts the activity in the jitter. The
// survey (two such stars sampled together) reports the coefficient per star.
TEST(KeplerSearch, ActivityRegressorRecoversTheCoefficient) {
  using namespace kosmos::kepler;
  const double epoch = 2456000.0, c = 150;
  const Orbit truth{23.7, 9.0, 0.0, 0.0, 1.2};
  auto active = [&](unsigned seed) {
    RVData data = synthetic({truth}, epoch, 0.0, 0.0, 60, seed);
    std::mt19937_64 rng(seed + 1);
    std::normal_distribution<double> g(0.0, 1.0);
    data.columns = {{"svalue", {}}};
    for (std::size_t k = 0; k < data.size(); ++k) {
      const double s =
          0.45 + 0.05 * std::sin(6.283185307179586 * data.time[k] / 27) + 0.003 * g(rng);
      data.columns[0].values.push_back(s);
      data.velocity[k] += c * (s - 0.45);
    }
    return data;
  };
  const RVData data = active(11);
  auto options = small_budget(epoch);
  options.planets = 1;
  options.chains = 24;
  options.burn = options.steps = 150;
  options.optimizer_generations = 40;
  options.random_candidates = 512;
  options.priors.push_back(parse_prior("e_b fixed 0", "test"));
  const auto plain = search(data, options);
  options.activity = {"svalue"};
  const auto r = search(data, options);
  const auto& cs = r.get("c_svalue");
  std::printf("[kepler] activity: c_svalue %.1f (%.1f, %.1f), jitter_A %.2f; without: %.2f\n",
              cs.median, cs.lower, cs.upper, r.get("jitter_A").median,
              plain.get("jitter_A").median);
  expect_within(r, "c_svalue", c, 3);
  EXPECT_LT(cs.upper - cs.lower, 0.5 * c);  // resolved, not only allowed
  expect_within(r, "P_b", truth.P);
  expect_within(r, "K_b", truth.K);
  EXPECT_GT(plain.get("jitter_A").median, 3.0);
  EXPECT_GT(plain.get("jitter_A").median, 3 * r.get("jitter_A").median);
  EXPECT_GT(r.best_loglike, plain.best_loglike + 20);

  const auto stars = survey({data, active(12)}, options);
  ASSERT_EQ(stars.size(), 2u);
  for (const auto& s : stars) expect_within(s, "c_svalue", c, 4);
}

// format_prior writes what parse_prior reads.
TEST(KeplerSearch, PriorsFormatInTheSyntaxTheyAreReadFrom) {
  using kosmos::kepler::format_prior;
  using kosmos::kepler::parse_prior;
  EXPECT_EQ(format_prior(parse_prior("K_b tgauss 5 2 0 10", "test")), "K_b tgauss 5 2 0 10");
  EXPECT_EQ(format_prior(parse_prior("e_b fixed 0.25", "test")), "e_b fixed 0.25");
  EXPECT_EQ(format_prior(parse_prior("P_b loguniform 1 1e4", "test")), "P_b loguniform 1 10000");
  // Every kind read back unchanged, numbers to the last bit.
  for (const std::string kind : {"uniform", "loguniform", "gauss", "tgauss", "beta", "fixed"}) {
    const std::string args = kind == "tgauss" ? " 0.1 0.30000000000000004 -1e-300 7.123456789012345"
                             : kind == "fixed" ? " 0.1"
                                               : " 0.1 0.30000000000000004";
    const auto p = parse_prior("gamma_A " + kind + args, "test");
    const auto q = parse_prior(format_prior(p), "test");
    EXPECT_EQ(kosmos::kepler::prior_kind_name(q.kind), kind);
    EXPECT_EQ(q.parameter, "gamma_A");
    EXPECT_EQ(q.a, p.a);
    EXPECT_EQ(q.b, p.b);
    EXPECT_EQ(q.lower, p.lower);
    EXPECT_EQ(q.upper, p.upper);
  }
}

// A Gaussian prior on an offset pulls it from the data's value (about 0) to the prior's centre
// when the prior is much narrower than the data's constraint; a truncated Gaussian on the jitter
// keeps it inside its bounds; priors and fixed values are parsed and checked.
TEST(KeplerSearch, GaussianPriorPullsAParameter) {
  using namespace kosmos::kepler;
  const double epoch = 2456000.0, offsets[2] = {0.0, 0.0}, jitters[2] = {2.0, 2.0};
  const auto data = synthetic({}, epoch, 0.0, 0.0, 60, 3, offsets, jitters);
  auto options = small_budget(epoch);
  options.planets = 0;
  const auto free = search(data, options);
  options.priors = {parse_prior("gamma_A gauss 5 0.05", "test"),
                    parse_prior("jitter_B tgauss 2 1 1.5 1.7", "test")};
  const auto pulled = search(data, options);
  EXPECT_LT(std::fabs(free.get("gamma_A").median), 1.5);
  EXPECT_NEAR(pulled.get("gamma_A").median, 5.0, 0.15);
  EXPECT_GE(pulled.get("jitter_B").lower, 1.5);
  EXPECT_LE(pulled.get("jitter_B").upper, 1.7);
  EXPECT_THROW(parse_prior("K_b gauss 5", "test"), kosmos::invalid_input);
  EXPECT_THROW(parse_prior("K_b normal 5 1", "test"), kosmos::invalid_input);
  EXPECT_THROW(parse_prior("P_b loguniform 0 10", "test"), kosmos::invalid_input);
  EXPECT_THROW(parse_prior("gamma_A fixed 1e300", "test"), kosmos::invalid_input);  // chi^2 was NaN
  options.priors = {parse_prior("gamma_C gauss 0 1", "test")};
  EXPECT_THROW(search(data, options), kosmos::invalid_input);  // no instrument C
  options.planets = 1;
  for (const char* bad : {"e_b fixed 1", "e_b fixed -0.1", "omega_b fixed 400", "P_b fixed -3"}) {
    options.priors = {parse_prior(bad, "test")};
    EXPECT_THROW(search(data, options), kosmos::invalid_input) << bad;
  }
  options.priors = {parse_prior("e_b fixed 0.97", "test")};  // above e_max = 0.95
  EXPECT_THROW(search(data, options), kosmos::invalid_input);
  options.priors = {parse_prior("Tc_b fixed 2456000", "test"),
                    parse_prior("Tc_b fixed 2456001", "test")};
  EXPECT_THROW(search(data, options), kosmos::invalid_input);  // fixed twice
}

// ln L of the data for given orbits, offsets, jitters (host, double; the model of rv.hpp).
double loglike_of(const kosmos::kepler::RVData& d, const std::vector<kosmos::kepler::Orbit>& orbits,
                  double epoch, const double offsets[2], const double jitters[2]) {
  double ll = 0;
  for (std::size_t k = 0; k < d.size(); ++k) {
    double v = offsets[d.instrument[k]];
    for (const auto& o : orbits) v += kosmos::kepler::radial_velocity(o, d.time[k], epoch);
    const double var =
        d.sigma[k] * d.sigma[k] + jitters[d.instrument[k]] * jitters[d.instrument[k]];
    ll -= 0.5 * ((d.velocity[k] - v) * (d.velocity[k] - v) / var +
                 std::log(2 * 3.14159265358979323846 * var));
  }
  return ll;
}

// --planets 0..2 on data with 0, 1 and 2 injected planets picks the injected count; at every
// count up to the injected one, ln L at the polished optimum is at least that of the truth.
TEST(KeplerSearch, ModelComparisonPicksTheInjectedCount) {
  using namespace kosmos::kepler;
  const double epoch = 2456000.0, offsets[2] = {3.0, -2.0}, jitters[2] = {1.0, 1.0};
  const std::vector<Orbit> planets{{31.4, 12.0, 0.2, 1.0, 2.0}, {5.77, 7.0, 0.1, 4.0, 0.5}};
  for (int injected = 0; injected <= 2; ++injected) {
    const std::vector<Orbit> truth(planets.begin(), planets.begin() + injected);
    const auto data = synthetic(truth, epoch, 0.0, 0.0, 80, 11 + injected, offsets, jitters);
    auto options = small_budget(epoch);
    options.planets = 2;
    options.min_planets = 0;
    options.chains = 32;
    options.random_candidates = 1024;
    options.burn = 10;  // only the comparison is checked here
    options.steps = 10;
    const auto r = search(data, options);
    ASSERT_EQ(r.comparison.size(), 3u);
    EXPECT_EQ(r.planets, injected) << "BIC " << r.comparison[0].bic << " " << r.comparison[1].bic
                                   << " " << r.comparison[2].bic;
    const double ll_truth = loglike_of(data, truth, epoch, offsets, jitters);
    EXPECT_GE(r.comparison[std::size_t(injected)].loglike, ll_truth - 1e-6)
        << injected << " planet(s)";
  }
}

// m sin i and a against Lovis & Fischer (2010, Eq. 14): K = 28.4329 m/s / sqrt(1 - e^2)
// (m sin i / M_jup) (m_star / M_sun)^(-2/3) (P / 1 yr)^(-1/3) for m << M_star; and Kepler's third
// law in au, yr, M_sun. Jupiter around the Sun, and a hot Neptune around a 0.8 M_sun star.
// A posterior's rows in one block: row views write through, rows keep their order when some are
// dropped, every row has one width, and tables compare by their values.
TEST(KeplerRowTable, RowsShareOneBlock) {
  kosmos::kepler::RowTable t(3, 2);
  for (std::size_t r = 0; r < t.size(); ++r)
    for (std::size_t c = 0; c < t.width(); ++c) t[r][c] = double(10 * r + c);
  for (const kosmos::kepler::RowView<double> row : t) row[1] += 0.5;
  EXPECT_EQ(t, (kosmos::kepler::RowTable{{0, 1.5}, {10, 11.5}, {20, 21.5}}));
  EXPECT_EQ(t.data()[3], 11.5);
  EXPECT_EQ(t.back().back(), 21.5);
  t.keep_if([](std::size_t r) { return r != 1; });
  EXPECT_EQ(t, (kosmos::kepler::RowTable{{0, 1.5}, {20, 21.5}}));
  const double wider[3] = {1, 2, 3};
  EXPECT_THROW(t.append(wider, 3), std::invalid_argument);
  t.keep_if([](std::size_t) { return false; });
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t, kosmos::kepler::RowTable());
  t.append(wider, 3);  // an empty table takes rows of any width
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t.width(), 3u);
}

TEST(KeplerSearch, MinimumMassMatchesPublishedFormula) {
  using namespace kosmos::kepler;
  const double year = 365.25;
  for (const auto& c : {std::array<double, 4>{4332.59, 12.5, 0.0489, 1.0},
                        std::array<double, 4>{3.1, 20.0, 0.05, 0.8}}) {
    const Orbit o{c[0], c[1], c[2], 0, 0};
    const PlanetMass m = minimum_mass(o, c[3]);
    const double expected = o.K * std::sqrt(1 - o.e * o.e) / 28.4329 * std::pow(c[3], 2.0 / 3.0) *
                            std::cbrt(o.P / year);
    EXPECT_NEAR(m.msini_jupiter / expected, 1.0, 2e-3) << o.P;
    EXPECT_NEAR(m.msini_earth / m.msini_jupiter, 317.83, 0.01);
    EXPECT_NEAR(m.a_au / std::cbrt(c[3] * (o.P / year) * (o.P / year)), 1.0, 2e-3) << o.P;
  }
  EXPECT_THROW(minimum_mass(Orbit{10, 5, 0, 0, 0}, 0.0), kosmos::invalid_input);
}

// Companions of any mass solve the mass function itself (in long double):
// (G m)^3 / (G (M + m))^2 = P K^3 (1 - e^2)^(3/2) / (2 pi), from a planet to a stellar companion
// heavier than the star (where m << M no longer holds).
TEST(KeplerSearch, MinimumMassSolvesTheMassFunction) {
  using namespace kosmos::kepler;
  const long double gm_sun = 1.3271244e20L, gm_jupiter = 1.26686534e17L,
                    pi = 3.14159265358979323846L;
  for (const auto& c :
       {std::array<double, 4>{3.1, 0.5, 0.0, 1.0}, std::array<double, 4>{365.25, 30, 0.3, 1.0},
        std::array<double, 4>{900, 3000, 0.6, 0.8}, std::array<double, 4>{40000, 9000, 0.9, 0.2}}) {
    const Orbit o{c[0], c[1], c[2], 0, 0};
    const PlanetMass m = minimum_mass(o, c[3]);
    const long double gm = m.msini_jupiter * gm_jupiter, gm_star = c[3] * gm_sun;
    const long double P = c[0] * 86400.0L, K = c[1], e = c[2];
    const long double lhs = gm * gm * gm / ((gm_star + gm) * (gm_star + gm));
    const long double rhs = P * K * K * K * std::pow(1 - e * e, 1.5L) / (2 * pi);
    EXPECT_NEAR(double(lhs / rhs), 1.0, 1e-13) << o.P << " " << o.K;
    const long double a3 = (gm_star + gm) * P * P / (4 * pi * pi);
    EXPECT_NEAR(double(m.a_au * 1.495978707e11L / std::cbrt(a3)), 1.0, 1e-14);
  }
}

// Split R-hat and ESS on AR(1) chains x_t = phi x_{t-1} + noise, whose ESS is
// N (1 - phi) / (1 + phi); and R-hat far above 1 for chains stuck at different levels.
TEST(KeplerSearch, ChainDiagnosticsMatchAR1) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g(0.0, 1.0);
  const double phi = 0.8;
  const int m = 16, len = 2000;
  std::vector<std::vector<double>> chains(m), stuck(m);
  for (int c = 0; c < m; ++c) {
    double x = g(rng) / std::sqrt(1 - phi * phi);
    for (int i = 0; i < len; ++i) {
      x = phi * x + g(rng);
      chains[c].push_back(x);
      stuck[c].push_back(x + 10 * c);
    }
  }
  double rhat, ess;
  kosmos::kepler::chain_diagnostics(chains, rhat, ess);
  const double expected = m * len * (1 - phi) / (1 + phi);
  EXPECT_NEAR(ess / expected, 1.0, 0.15) << ess << " vs " << expected;
  EXPECT_LT(rhat, 1.01);
  kosmos::kepler::chain_diagnostics(stuck, rhat, ess);
  EXPECT_GT(rhat, 2.0);
  // Three samples per chain cannot be split into halves with variances: unknown, not 1.
  const std::vector<std::vector<double>> short_chains{{1, 2, 3}, {4, 5, 6}};
  kosmos::kepler::chain_diagnostics(short_chains, rhat, ess);
  EXPECT_TRUE(std::isnan(rhat)) << rhat;
  EXPECT_TRUE(std::isnan(ess)) << ess;
  const std::vector<std::vector<double>> constant{{2, 2, 2, 2}, {2, 2, 2, 2}};
  kosmos::kepler::chain_diagnostics(constant, rhat, ess);
  EXPECT_EQ(rhat, 1.0);
  EXPECT_EQ(ess, 8.0);
}

// Survey mode: three stars with different planets, instruments and sizes share one DE-MCMC;
// every star's truth lies inside its own posterior. survey() runs the full per-star
// optimization first (one star here); survey_from() starts from given models.
TEST(KeplerSearch, SurveySamplesManyStarsTogether) {
  using namespace kosmos::kepler;
  const double epoch = 2456000.0, offsets[2] = {2.0, -1.0}, jitters[2] = {1.0, 1.5};
  const std::vector<Orbit> truths{
      {12.3, 10.0, 0.1, 1.0, 2.0}, {47.0, 15.0, 0.3, 2.0, 1.0}, {3.3, 8.0, 0.05, 4.0, 3.0}};
  std::vector<RVData> stars;
  std::vector<StartModel> starts;
  for (int s = 0; s < 3; ++s) {
    stars.push_back(synthetic({truths[std::size_t(s)]}, epoch + 100 * s, 0.0, 0.0, 60 + 20 * s,
                              21 + s, offsets, jitters));
    // The start's mean anomaly is at the star's mid time, the epoch survey_from() takes when
    // options.epoch is 0; the data's is at epoch + 100 s.
    Orbit start = truths[std::size_t(s)];
    start.M0 += 2 * M_PI * (stars.back().mid_time() - (epoch + 100 * s)) / start.P;
    start.P *= 1.0005;
    start.K *= 0.9;
    starts.push_back({{start}, {0.0, 0.0}, {1.0, 1.0}, {}});
  }
  auto options = small_budget(0.0);
  options.planets = 1;
  options.chains = 24;
  options.burn = 150;
  options.steps = 150;
  const auto results = survey_from(stars, starts, options);
  ASSERT_EQ(results.size(), 3u);
  for (int s = 0; s < 3; ++s) {
    const auto& r = results[std::size_t(s)];
    EXPECT_EQ(r.n_obs, 60 + 20 * s);
    expect_within(r, "P_b", truths[std::size_t(s)].P);
    expect_within(r, "K_b", truths[std::size_t(s)].K);
    expect_within(r, "gamma_B", offsets[1]);
    EXPECT_EQ(r.samples.size(), std::size_t(24 * 38));
  }
  // Per-star random streams: the same seed gives the same chains (whatever the thread count,
  // since each star's draws are its own), and another seed different ones.
  const auto again = survey_from(stars, starts, options);
  for (std::size_t s = 0; s < 3; ++s) EXPECT_EQ(again[s].samples, results[s].samples);
  options.seed += 1;
  EXPECT_NE(survey_from(stars, starts, options)[0].samples, results[0].samples);
  options.seed -= 1;
  options.optimizer_generations = 30;
  options.random_candidates = 512;
  const auto full = survey({stars[0]}, options);
  ASSERT_EQ(full.size(), 1u);
  expect_within(full[0], "P_b", truths[0].P);
  starts[1].offsets.pop_back();
  EXPECT_THROW(survey_from(stars, starts, options), kosmos::invalid_input);
}

// The survey's batched search (all stars' periodograms, random searches, DE populations and
// Nelder-Mead simplexes in shared launches) on a 2-planet, a 1-planet and a noise-only star,
// counts 0..2 compared by BIC: each star's count and orbits recovered, and the optimum of every
// count up to the true one equal to the one-star search's (search(), run independently per
// star). Counts above the truth fit noise: many equal local optima, not compared.
TEST(KeplerSearch, SurveyBatchedSearchMatchesOneStarSearch) {
  using namespace kosmos::kepler;
  const double epoch = 2456000.0, offsets[2] = {3.0, -2.0}, jitters[2] = {1.0, 1.0};
  const std::vector<std::vector<Orbit>> truths{
      {{18.7, 14.0, 0.1, 1.0, 2.0}, {131.0, 11.0, 0.2, 4.0, 0.5}},
      {{6.4, 12.0, 0.05, 2.0, 1.0}},
      {}};
  std::vector<RVData> stars;
  for (std::size_t s = 0; s < truths.size(); ++s)
    stars.push_back(synthetic(truths[s], epoch, 0.0, 0.0, 70, 31 + unsigned(s), offsets, jitters));
  auto options = small_budget(0.0);
  options.planets = 2;
  options.min_planets = 0;
  options.chains = 30;
  options.burn = 60;
  options.steps = 60;
  options.optimizer_generations = 30;
  options.random_candidates = 512;
  const auto results = survey(stars, options);
  ASSERT_EQ(results.size(), truths.size());
  const char* periods[2] = {"P_b", "P_c"};
  for (std::size_t s = 0; s < truths.size(); ++s) {
    const auto& r = results[s];
    ASSERT_EQ(r.planets, int(truths[s].size())) << "star " << s;
    // planets in the order found: the stronger first; match each truth to the nearer period
    for (std::size_t j = 0; j < truths[s].size(); ++j) {
      double nearest = 0;
      for (int q = 0; q < r.planets; ++q)
        if (std::fabs(std::log(r.get(periods[q]).median / truths[s][j].P)) <
            std::fabs(std::log(nearest / truths[s][j].P)))
          nearest = r.get(periods[q]).median;
      EXPECT_NEAR(nearest / truths[s][j].P, 1.0, 0.01) << "star " << s << " planet " << j;
    }
    const auto one = search(stars[s], options);
    ASSERT_EQ(one.comparison.size(), 3u);
    ASSERT_EQ(r.comparison.size(), 3u);
    for (std::size_t c = 0; c <= truths[s].size(); ++c)
      EXPECT_NEAR(r.comparison[c].loglike, one.comparison[c].loglike, 0.02)
          << "star " << s << ", " << c << " planet(s)";
    EXPECT_EQ(one.planets, r.planets);
  }
  // The survey's outputs: the parameter table (every column of every star) and one HDF5 file
  // with a group per star.
  std::ostringstream table;
  write_survey_table(table, stars, results);
  std::size_t lines = 0;
  for (const auto& r : results) lines += r.columns.size();
  const std::string text = table.str();
  EXPECT_EQ(std::size_t(std::count(text.begin(), text.end(), '\n')), lines + 2);
  EXPECT_NE(text.find("synthetic 2 Tc_c "), std::string::npos);
  EXPECT_NE(text.find("synthetic 0 jitter_B "), std::string::npos);
  if (!kosmos::io::hdf5_enabled()) GTEST_SKIP() << "built without HDF5 (KOSMOS_ENABLE_HDF5=OFF)";
  const std::string path = ::testing::TempDir() + "kosmos_survey_posteriors.h5";
  write_survey_samples(path, stars, results);
  kosmos::io::H5Reader h5(path);
  EXPECT_EQ(h5.read_strings("stars"),
            (std::vector<std::string>{survey_group(0), survey_group(1), survey_group(2)}));
  for (std::size_t s = 0; s < results.size(); ++s) {
    const std::string group = survey_group(s);
    std::vector<std::size_t> dims;
    const auto flat = h5.read<double>(group + "/samples", &dims);
    ASSERT_EQ(dims,
              (std::vector<std::size_t>{results[s].samples.size(), results[s].columns.size()}));
    EXPECT_EQ(flat.back(), results[s].samples.back().back());
    EXPECT_EQ(h5.read_strings(group + "/columns"), results[s].columns);
    EXPECT_EQ(h5.attribute_integer("/" + group, "planets"), results[s].planets);
  }
  std::remove(path.c_str());
  EXPECT_THROW(write_survey_samples(::testing::TempDir() + "survey.txt", stars, results),
               kosmos::invalid_input);
}

// A survey cut into parts (as MPI ranks cut it): a star fitted in a call of its own, numbered by
// its index in the survey, gets exactly the result it gets in the whole survey's call.
TEST(KeplerSearch, SurveyStarResultDoesNotDependOnItsBatch) {
  using namespace kosmos::kepler;
  const double epoch = 2456000.0, offsets[2] = {2.0, -1.0}, jitters[2] = {1.0, 1.5};
  const std::vector<Orbit> truths{{12.3, 10.0, 0.1, 1.0, 2.0}, {47.0, 15.0, 0.3, 2.0, 1.0}};
  std::vector<RVData> stars;
  for (int s = 0; s < 2; ++s)
    stars.push_back(synthetic({truths[std::size_t(s)]}, epoch + 100 * s, 0.0, 0.0, 40 + 10 * s,
                              31 + s, offsets, jitters));
  const auto options = batch_budget(0.0);
  const auto whole = survey(stars, options);
  const auto second = survey({stars[1]}, options, 1);
  ASSERT_EQ(whole.size(), 2u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].samples, whole[1].samples);
  EXPECT_EQ(second[0].best_loglike, whole[1].best_loglike);
  // Numbered as the first star instead, its streams (and so its chains) differ.
  EXPECT_NE(survey({stars[1]}, options, 0)[0].samples, whole[1].samples);
  EXPECT_THROW(survey({stars[1]}, options, -1), kosmos::invalid_input);
}

// With counts compared (0..1), a star's chains must not depend on which other counts its batch
// holds: a one-planet star alone and beside a noise-only star (sampled as another count).
TEST(KeplerSearch, SurveyStarResultDoesNotDependOnTheOtherCountsOfItsBatch) {
  using namespace kosmos::kepler;
  const double epoch = 2456000.0;
  const std::vector<RVData> stars{synthetic({{12.3, 20.0, 0.1, 1.0, 2.0}}, epoch, 0.0, 0.0, 50, 41),
                                  synthetic({}, epoch, 0.0, 0.0, 40, 42)};
  auto options = batch_budget(epoch);
  options.min_planets = 0;
  const auto whole = survey(stars, options);
  ASSERT_EQ(whole.size(), 2u);
  ASSERT_EQ(whole[0].planets, 1);  // two counts in the batch
  ASSERT_EQ(whole[1].planets, 0);
  const auto first = survey({stars[0]}, options, 0);
  const auto second = survey({stars[1]}, options, 1);
  EXPECT_EQ(first[0].samples, whole[0].samples);
  EXPECT_EQ(second[0].samples, whole[1].samples);
}

// The DE-MCMC against an exactly known posterior: with the jitters fixed, a model linear in its
// free parameters (offsets, trend, and K of an orbit whose P, e, omega and Tc are known) under
// flat priors has a Gaussian posterior with mean (A^T W A)^-1 A^T W v and covariance
// (A^T W A)^-1, solved here from the normal equations in long double. The chains' mean must
// match within 5 Monte Carlo errors (sd / sqrt(ESS)) and their standard deviation within 15 %.
void expect_linear_gaussian_posterior(const kosmos::kepler::SearchResult& r,
                                      const kosmos::kepler::RVData& data,
                                      const std::vector<std::string>& names,
                                      const std::vector<std::vector<double>>& design) {
  const std::size_t p = names.size(), n = data.size();
  std::vector<std::vector<long double>> m(p, std::vector<long double>(2 * p + 1, 0.0L));
  for (std::size_t k = 0; k < n; ++k) {
    const long double w = 1.0L / (static_cast<long double>(data.sigma[k]) * data.sigma[k]);
    for (std::size_t i = 0; i < p; ++i) {
      for (std::size_t j = 0; j < p; ++j) m[i][j] += w * design[i][k] * design[j][k];
      m[i][2 * p] += w * design[i][k] * data.velocity[k];
    }
  }
  for (std::size_t i = 0; i < p; ++i) m[i][p + i] = 1.0L;
  for (std::size_t c = 0; c < p; ++c) {  // Gauss-Jordan (A^T W A is positive definite)
    for (std::size_t i = 0; i < p; ++i) {
      if (i == c) continue;
      const long double f = m[i][c] / m[c][c];
      for (std::size_t j = 0; j <= 2 * p; ++j) m[i][j] -= f * m[c][j];
    }
  }
  for (std::size_t i = 0; i < p; ++i) {
    const double mean = double(m[i][2 * p] / m[i][i]),
                 sd = double(std::sqrt(m[i][p + i] / m[i][i]));
    const auto col =
        std::size_t(std::find(r.columns.begin(), r.columns.end(), names[i]) - r.columns.begin());
    ASSERT_LT(col, r.columns.size()) << names[i];
    double sum = 0, sum2 = 0;
    for (const auto& row : r.samples) sum += row[col];
    const double sample_mean = sum / double(r.samples.size());
    for (const auto& row : r.samples) sum2 += (row[col] - sample_mean) * (row[col] - sample_mean);
    const double sample_sd = std::sqrt(sum2 / double(r.samples.size() - 1));
    const double ess = r.get(names[i]).ess;
    EXPECT_LE(std::fabs(sample_mean - mean), 5 * sd / std::sqrt(ess))
        << names[i] << ": chains' mean " << sample_mean << ", posterior mean " << mean << ", sd "
        << sd << ", ESS " << ess;
    EXPECT_NEAR(sample_sd / sd, 1.0, 0.15)
        << names[i] << ": chains' sd " << sample_sd << ", posterior sd " << sd;
  }
}

TEST(KeplerSearch, SamplerMatchesAnalyticGaussianPosterior) {
  using namespace kosmos::kepler;
  const double epoch = 2456000.0, offsets[2] = {3.0, -2.0};
  const auto data = synthetic({}, epoch, 0.01, -2e-5, 80, 11, offsets);
  auto options = small_budget(epoch);
  options.planets = 0;
  options.trend = 2;
  options.chains = 24;
  options.burn = 300;
  options.steps = 1000;
  options.thin = 2;
  options.priors = {parse_prior("jitter_A fixed 0", "test"),
                    parse_prior("jitter_B fixed 0", "test")};
  const auto r = search(data, options);
  std::vector<std::vector<double>> design(4, std::vector<double>(data.size()));
  for (std::size_t k = 0; k < data.size(); ++k) {
    const double dt = data.time[k] - epoch;
    design[0][k] = data.instrument[k] == 0;
    design[1][k] = data.instrument[k] == 1;
    design[2][k] = dt;
    design[3][k] = dt * dt;
  }
  expect_linear_gaussian_posterior(r, data, {"gamma_A", "gamma_B", "dvdt", "curv"}, design);
  EXPECT_GT(r.acceptance, 0.1);
}

// Fixed e (not 0), omega and Tc: only K of the orbit stays free, and with the jitters fixed the
// model is linear in K, the offsets and dvdt, so the posterior is the analytic Gaussian; the
// fixed elements come back exactly and n_free counts only the free parameters.
TEST(KeplerSearch, FixedEccentricityOmegaAndTc) {
  using namespace kosmos::kepler;
  const double epoch = 2456000.0, offsets[2] = {3.0, -2.0}, tc = 2456003.7, e = 0.3,
               omega_deg = 40.0;
  const double omega = omega_deg * 3.14159265358979323846 / 180;
  const Orbit truth{17.3, 8.0, e, omega, mean_anomaly_from_conjunction(17.3, e, omega, tc, epoch)};
  const auto data = synthetic({truth}, epoch, 0.004, 0.0, 80, 5, offsets);
  auto options = small_budget(epoch);
  options.planets = 1;
  options.trend = 1;
  options.chains = 24;
  options.burn = 300;
  options.steps = 1000;
  options.thin = 2;
  for (const char* fix : {"P_b fixed 17.3", "e_b fixed 0.3", "omega_b fixed 40",
                          "Tc_b fixed 2456003.7", "jitter_A fixed 0", "jitter_B fixed 0"})
    options.priors.push_back(parse_prior(fix, "test"));
  const auto r = search(data, options);
  EXPECT_EQ(r.n_free, 4);  // K, gamma_A, gamma_B, dvdt
  EXPECT_DOUBLE_EQ(r.get("e_b").lower, e);
  EXPECT_DOUBLE_EQ(r.get("e_b").upper, e);
  EXPECT_NEAR(r.get("omega_deg_b").median, omega_deg, 1e-9);
  EXPECT_NEAR(r.get("Tc_b").lower, tc, 1e-6);
  EXPECT_NEAR(r.get("Tc_b").upper, tc, 1e-6);
  Orbit unit = truth;
  unit.K = 1;
  std::vector<std::vector<double>> design(4, std::vector<double>(data.size()));
  for (std::size_t k = 0; k < data.size(); ++k) {
    design[0][k] = radial_velocity(unit, data.time[k], epoch);
    design[1][k] = data.instrument[k] == 0;
    design[2][k] = data.instrument[k] == 1;
    design[3][k] = data.time[k] - epoch;
  }
  expect_linear_gaussian_posterior(r, data, {"K_b", "gamma_A", "gamma_B", "dvdt"}, design);
}

// e fixed (not 0) with omega free, and omega fixed with e free: the other element is recovered
// and the fixed one comes back exactly.
TEST(KeplerSearch, FixedEccentricityOrOmegaAlone) {
  using namespace kosmos::kepler;
  const double epoch = 2456000.0, offsets[2] = {3.0, -2.0}, jitters[2] = {1.0, 1.0};
  const Orbit truth{17.3, 8.0, 0.3, 40.0 * 3.14159265358979323846 / 180, 1.0};
  const auto data = synthetic({truth}, epoch, 0.0, 0.0, 80, 9, offsets, jitters);
  auto options = small_budget(epoch);
  options.planets = 1;
  options.priors = {parse_prior("e_b fixed 0.3", "test")};
  const auto e_fixed = search(data, options);
  EXPECT_EQ(e_fixed.n_free, 4 + 4);  // ln P, K, omega, lambda; 2 x (gamma, jitter)
  EXPECT_DOUBLE_EQ(e_fixed.get("e_b").median, 0.3);
  expect_within(e_fixed, "omega_deg_b", 40.0);
  expect_within(e_fixed, "K_b", truth.K);
  options.priors = {parse_prior("omega_b fixed 40", "test")};
  const auto w_fixed = search(data, options);
  EXPECT_EQ(w_fixed.n_free, 4 + 4);  // ln P, K, e, lambda; 2 x (gamma, jitter)
  EXPECT_NEAR(w_fixed.get("omega_deg_b").lower, 40.0, 1e-9);
  EXPECT_NEAR(w_fixed.get("omega_deg_b").upper, 40.0, 1e-9);
  expect_within(w_fixed, "e_b", truth.e);
  expect_within(w_fixed, "P_b", truth.P);
}

// The posterior file through the binary I/O layer: samples, column names, chains and attributes
// read back as written; a text path gives the text table.
TEST(KeplerSearch, PosteriorFileIsHdf5ForH5Paths) {
  using namespace kosmos::kepler;
  SearchResult r;
  r.epoch = 2456000.25;
  r.planets = 1;
  r.n_obs = 42;
  r.max_rhat = 1.01;
  r.columns = {"P_b", "K_b", "lnL"};
  r.samples = {{10.123456789012345, 5.5, -100.25}, {10.2, 5.25, -101.5}};
  r.sample_chain = {0, 1};
  RVData data;
  data.path = "star.txt";
  const std::string text = ::testing::TempDir() + "kosmos_rv_posterior.txt";
  write_samples(text, r, data);
  std::ifstream in(text);
  std::string line;
  while (std::getline(in, line) && line.rfind("#", 0) == 0) {
  }
  EXPECT_EQ(line, "P_b K_b lnL");
  double p = 0, k = 0, ll = 0;
  in >> p >> k >> ll;
  EXPECT_EQ(p, r.samples[0][0]);  // full precision: the same double back
  EXPECT_EQ(ll, r.samples[0][2]);
  std::remove(text.c_str());
  if (!kosmos::io::hdf5_enabled()) GTEST_SKIP() << "built without HDF5 (KOSMOS_ENABLE_HDF5=OFF)";
  const std::string path = ::testing::TempDir() + "kosmos_rv_posterior.h5";
  write_samples(path, r, data);
  kosmos::io::H5Reader h5(path);
  std::vector<std::size_t> dims;
  const auto flat = h5.read<double>("samples", &dims);
  ASSERT_EQ(dims, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(flat[0], r.samples[0][0]);
  EXPECT_EQ(flat[5], r.samples[1][2]);
  EXPECT_EQ(h5.read_strings("columns"), r.columns);
  EXPECT_EQ(h5.read<std::int32_t>("chain"), (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(h5.attribute_double("/", "epoch"), r.epoch);
  EXPECT_EQ(h5.attribute_integer("/", "planets"), 1);
  EXPECT_EQ(h5.attribute_string("/", "data"), "star.txt");
  std::remove(path.c_str());
}

TEST(KeplerSearch, RejectsBadOptions) {
  using namespace kosmos::kepler;
  RVData data;
  data.instrument_names = {"A"};
  for (int k = 0; k < 20; ++k) {
    data.time.push_back(k);
    data.velocity.push_back(std::sin(k));
    data.sigma.push_back(1.0);
    data.instrument.push_back(0);
  }
  SearchOptions o;
  o.planets = 9;
  EXPECT_THROW(search(data, o), kosmos::invalid_input);
  o = SearchOptions();
  o.trend = 3;
  EXPECT_THROW(search(data, o), kosmos::invalid_input);
  o = SearchOptions();
  o.chains = 11;
  EXPECT_THROW(search(data, o), kosmos::invalid_input);
  o = SearchOptions();
  o.period_min = 100;
  o.period_max = 50;
  EXPECT_THROW(search(data, o), kosmos::invalid_input);
  o = SearchOptions();
  o.e_max = 1.0;
  EXPECT_THROW(search(data, o), kosmos::invalid_input);
}
}  // namespace
