// The search on synthetic data with a known injected planet, two instruments with different
// offsets and jitters: the truth must lie inside the posterior (4 posterior standard deviations).
#include <kosmos/core/error.hpp>
#include <kosmos/kepler/search.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

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
  std::printf("[kepler] search: %lld likelihood evaluations in %.2f s, max R-hat %.3f\n", r.likelihood_evaluations,
              r.seconds, r.max_rhat);
  auto within = [&](const char* name, double value, double slack = 0) {
    const auto& s = r.get(name);
    const double sd = 0.5 * (s.upper - s.lower);
    EXPECT_LE(std::fabs(s.median - value), 4 * sd + slack)
        << name << ": median " << s.median << " (" << s.lower << ", " << s.upper << "), truth " << value;
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
