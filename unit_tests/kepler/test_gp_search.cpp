// A synthetic active star: a quasi-periodic rotation signal (drawn from celerite2's rotation
// kernel through a dense Cholesky factor) plus a smaller planet. The white-noise search fits the
// rotation as the planet; the GP search (noise "gp-rotation", the rotation period known from
// photometry as a prior) recovers the planet.
#include <kosmos/core/error.hpp>
#include <kosmos/kepler/celerite.hpp>
#include <kosmos/kepler/impl/noise_model.hpp>
#include <kosmos/kepler/search.hpp>

#include "dense_gp_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

kosmos::kepler::RVData active_star(const kosmos::kepler::Orbit& planet, double epoch) {
  using namespace kosmos::kepler;
  const int n = 120;
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  RVData data;
  data.path = "active star";
  data.instrument_names = {"HARPS"};
  for (int k = 0; k < n; ++k) data.time.push_back(epoch - 100 + 200 * u(rng));
  std::sort(data.time.begin(), data.time.end());
  // Rotation signal: L z with K = L L^T the rotation kernel (sigma 12 m/s, P_rot 25 d, Q0 = dQ =
  // 4).
  const CeleriteTerms rotation = rotation_kernel(12.0, 25.0, 4.0, 4.0, 0.5);
  std::vector<double> L(std::size_t(n * n), 0.0), z(std::size_t(n), 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      double s = rotation.kernel(std::fabs(data.time[std::size_t(i)] - data.time[std::size_t(j)])) +
                 (i == j ? 1e-9 : 0.0);
      for (int k = 0; k < j; ++k) s -= L[std::size_t(i * n + k)] * L[std::size_t(j * n + k)];
      L[std::size_t(i * n + j)] = i == j ? std::sqrt(s) : s / L[std::size_t(j * n + j)];
    }
  for (auto& x : z) x = g(rng);
  for (int i = 0; i < n; ++i) {
    double activity = 0;
    for (int k = 0; k <= i; ++k) activity += L[std::size_t(i * n + k)] * z[std::size_t(k)];
    const double t = data.time[std::size_t(i)];
    data.velocity.push_back(activity + radial_velocity(planet, t, epoch) + 1.5 * g(rng));
    data.sigma.push_back(1.5);
    data.instrument.push_back(0);
  }
  return data;
}

TEST(KeplerGPSearch, RotationKernelRecoversThePlanetThatWhiteNoiseMisses) {
  using namespace kosmos::kepler;
  const double epoch = 2459000.0;
  const Orbit planet{5.8, 6.0, 0.0, 0.0, 1.0};
  const RVData data = active_star(planet, epoch);
  SearchOptions o;
  o.planets = 1;
  o.chains = 32;
  o.burn = 300;
  o.steps = 200;
  o.optimizer_generations = 80;
  o.random_candidates = 1024;
  o.period_max = 60;
  o.epoch = epoch;

  const auto white = search(data, o);
  const auto& white_P = white.get("P_b");
  std::printf("[kepler] white noise: P_b = %.3f (%.3f, %.3f) d\n", white_P.median, white_P.lower,
              white_P.upper);
  EXPECT_GT(std::fabs(white_P.median - planet.P), 0.2) << "white noise found the planet anyway";

  o.noise = "gp-rotation";
  o.priors = {parse_prior("gp_period gauss 25 2", "test"), parse_prior("gp_Q0 fixed 4", "test"),
              parse_prior("gp_dQ fixed 4", "test"), parse_prior("gp_f fixed 0.5", "test")};
  const auto gp = search(data, o);
  const auto& P = gp.get("P_b");
  const auto& K = gp.get("K_b");
  std::printf(
      "[kepler] gp-rotation: P_b = %.4f (%.4f, %.4f) d, K_b = %.2f (%.2f, %.2f) m/s, "
      "gp_sigma %.1f, gp_period %.1f, R-hat %.3f\n",
      P.median, P.lower, P.upper, K.median, K.lower, K.upper, gp.get("gp_sigma").median,
      gp.get("gp_period").median, gp.max_rhat);
  EXPECT_NEAR(P.median, planet.P, 0.05);
  EXPECT_NEAR(K.median, planet.K, 4 * 0.5 * (K.upper - K.lower));
  EXPECT_TRUE(gp.get("gp_Q0").fixed);
}

// The search's likelihood (the seam every stage uses) with activity regressors, white noise and
// gp-sho, coefficients shared by two instruments or one per instrument: ln L of one parameter
// row against an independent reference, the residuals v - gamma - dvdt t - K cos(M) -
// sum c (x - mean x) (a circular orbit; the means over all observations or over the
// instrument's) in long double, with the diagonal variances (white) or the closed-form SHO
// covariance by a dense Cholesky (GP).
TEST(KeplerGPSearch, ActivityRegressorsInTheSearchLikelihoodMatchReference) {
  using namespace kosmos::kepler;
  using LD = long double;
  const LD two_pi = 2 * 3.14159265358979323846264338327950288L;
  const int n = 50;
  const double epoch = 2458000.0;
  std::mt19937_64 rng(77);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  RVData data;
  data.path = "activity star";
  data.instrument_names = {"A", "B"};
  data.columns = {{"SValue", {}}, {"FWHM", {}}};
  for (int k = 0; k < n; ++k) data.time.push_back(epoch - 50 + 100 * u(rng));
  std::sort(data.time.begin(), data.time.end());
  for (int k = 0; k < n; ++k) {
    data.velocity.push_back(20 * (u(rng) - 0.5));
    data.sigma.push_back(1 + u(rng));
    data.instrument.push_back(k % 3 == 0 ? 1 : 0);
    data.columns[0].values.push_back(0.4 + 0.1 * u(rng) + 0.05 * (k % 3 == 0));
    data.columns[1].values.push_back(7 + u(rng));
  }
  const double P = 7.3, K = 5, M0 = 0.7, gamma = 1.2, jitter = 0.8, dvdt = 0.01;
  const double coefficients[4] = {80, -4, 30, 6}, gp[3] = {3, 12, 30};
  struct Case {
    const char* noise;
    bool per_instrument;
  };
  for (const Case c :
       {Case{"white", false}, Case{"gp-sho", false}, Case{"white", true}, Case{"gp-sho", true}}) {
    const int groups = c.per_instrument ? 2 : 1;
    // the reference residuals: indicator i, group g has coefficient i * groups + g
    LD sum[2][2] = {{0, 0}, {0, 0}}, count[2] = {0, 0};
    for (int k = 0; k < n; ++k) {
      const int g = c.per_instrument ? data.instrument[std::size_t(k)] : 0;
      count[g] += 1;
      for (int i = 0; i < 2; ++i) sum[i][g] += data.columns[std::size_t(i)].values[std::size_t(k)];
    }
    std::vector<double> r(static_cast<std::size_t>(n)), var(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) {
      const int g = c.per_instrument ? data.instrument[std::size_t(k)] : 0;
      const LD dt = LD(data.time[std::size_t(k)]) - epoch;
      LD model = gamma + dvdt * dt + K * cosl(two_pi * dt / P + M0);
      for (int i = 0; i < 2; ++i)
        model += coefficients[i * groups + g] *
                 (LD(data.columns[std::size_t(i)].values[std::size_t(k)]) - sum[i][g] / count[g]);
      r[std::size_t(k)] = double(LD(data.velocity[std::size_t(k)]) - model);
      var[std::size_t(k)] =
          data.sigma[std::size_t(k)] * data.sigma[std::size_t(k)] + jitter * jitter;
    }
    SearchOptions o;
    o.noise = c.noise;
    o.activity = {"svalue", "fwhm"};  // case-insensitive
    o.activity_per_instrument = c.per_instrument;
    o.epoch = epoch;
    const Impl::Model model(Impl::ParamLayout{1, 2, 1}, Impl::PriorBounds{0, 10, 100, 0.9, 10},
                            epoch, {}, Impl::extra_parameters(data, o));
    ASSERT_EQ(model.L.n_act, 2 * groups);
    EXPECT_EQ(model.noise_names[std::size_t(model.L.n_noise)],
              c.per_instrument ? "c_SValue_A" : "c_SValue");
    std::vector<double> x(std::size_t(model.L.dim()), 0.0);  // gp_scale_B: ln 1
    model.set_orbit(x.data(), 0, Orbit{P, K, 0, 0, M0});
    for (int i = 0; i < 2; ++i) {
      x[std::size_t(model.L.gamma(i))] = gamma;
      x[std::size_t(model.L.jitter(i))] = jitter;
    }
    x[std::size_t(model.L.trend(0))] = dvdt;
    for (int i = 0; i < model.L.n_noise && i < 3; ++i)
      x[std::size_t(model.L.noise(i))] = std::log(gp[i]);
    for (int i = 0; i < model.L.n_act; ++i) x[std::size_t(model.L.activity(i))] = coefficients[i];
    auto lik = Impl::make_likelihood(Impl::HostObservations(data, epoch, o), model, o);
    std::vector<double> logpost, loglike;
    lik->evaluate(x, 1, logpost, &loglike);
    double expected = 0;
    if (std::string(c.noise) == "white") {
      LD total = 0;
      for (int k = 0; k < n; ++k)
        total += LD(r[std::size_t(k)]) * r[std::size_t(k)] / var[std::size_t(k)] +
                 logl(two_pi * var[std::size_t(k)]);
      expected = double(-0.5L * total);
    } else {
      std::vector<double> C(std::size_t(n * n));
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          C[std::size_t(i * n + j)] =
              kosmos_test::sho_sigma_rho_tau(
                  gp[0], gp[1], gp[2],
                  std::fabs(data.time[std::size_t(i)] - data.time[std::size_t(j)])) +
              (i == j ? var[std::size_t(i)] : 0.0);
      expected = kosmos_test::dense_log_likelihood(C, r);
    }
    EXPECT_NEAR(loglike[0], expected, 1e-9 * std::fabs(expected))
        << c.noise << (c.per_instrument ? " per instrument" : "");
  }
}

TEST(KeplerGPSearch, UnknownNoiseModelIsNamed) {
  using namespace kosmos::kepler;
  RVData data;
  data.instrument_names = {"A"};
  for (int k = 0; k < 10; ++k) {
    data.time.push_back(k);
    data.velocity.push_back(std::sin(k));
    data.sigma.push_back(1);
    data.instrument.push_back(0);
  }
  SearchOptions o;
  o.planets = 0;
  o.chains = 24;
  o.noise = "red";
  try {
    search(data, o);
    ADD_FAILURE() << "noise 'red' was accepted";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("unknown noise model 'red' (white, gp-sho, gp-rotation)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
