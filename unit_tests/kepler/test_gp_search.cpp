// A synthetic active star: a quasi-periodic rotation signal (drawn from celerite2's rotation
// kernel through a dense Cholesky factor) plus a smaller planet. The white-noise search fits the
// rotation as the planet; the GP search (noise "gp-rotation", the rotation period known from
// photometry as a prior) recovers the planet.
#include <kosmos/core/error.hpp>
#include <kosmos/kepler/celerite.hpp>
#include <kosmos/kepler/search.hpp>

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
