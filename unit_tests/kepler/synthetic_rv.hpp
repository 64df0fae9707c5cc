// Synthetic RV data for the search tests.
#pragma once

#include <kosmos/kepler/rv.hpp>
#include <kosmos/kepler/rv_data.hpp>
#include <kosmos/kepler/search.hpp>

#include <algorithm>
#include <random>
#include <vector>

namespace kosmos_test {
// One instrument "A": n times uniform in [start, start + span] (sorted), velocities offset +
// dvdt (t - epoch) + the orbits (RadVel convention, M0 at the epoch) + Gaussian noise of `sigma`,
// which is also each row's sigma.
inline kosmos::kepler::RVData one_instrument_star(const std::vector<kosmos::kepler::Orbit>& orbits,
                                                  double offset, double dvdt, double sigma, int n,
                                                  double start, double span, double epoch,
                                                  unsigned seed) {
  using namespace kosmos::kepler;
  RVData data;
  data.path = "synthetic";
  data.instrument_names = {"A"};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int k = 0; k < n; ++k) data.time.push_back(start + span * u(rng));
  std::sort(data.time.begin(), data.time.end());
  for (double t : data.time) {
    double v = offset + dvdt * (t - epoch) + sigma * g(rng);
    for (const auto& o : orbits) v += radial_velocity(o, t, epoch);
    data.velocity.push_back(v);
    data.sigma.push_back(sigma);
    data.instrument.push_back(0);
  }
  return data;
}

// A small search budget for unit tests: `generations` burn-in and as many kept, no extension
// rounds (a fixed cost).
inline kosmos::kepler::SearchOptions test_budget(int planets, int chains, int generations, int thin,
                                                 int optimizer_generations, int candidates) {
  kosmos::kepler::SearchOptions o;
  o.planets = planets;
  o.chains = chains;
  o.burn = o.steps = generations;
  o.thin = thin;
  o.max_extensions = 0;
  o.optimizer_generations = optimizer_generations;
  o.random_candidates = candidates;
  return o;
}
}  // namespace kosmos_test
