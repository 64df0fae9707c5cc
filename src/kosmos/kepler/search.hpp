// Global search and Bayesian parameter estimation for n-planet Keplerian RV models, built on the
// batched log-likelihood (kosmos/kepler/chi2.hpp) on Kokkos' default execution space:
//  1. for each planet in turn: a generalized Lomb-Scargle periodogram (Zechmeister & Kuerster
//     2009) of the residuals, a random search of Keplerian orbits around its strongest peaks,
//     then differential-evolution optimization of all parameters of the model so far;
//  2. differential-evolution MCMC (ter Braak 2006) with hundreds of chains, updated in two
//     halves so that each batch of proposals is one kernel launch, started from the optimum
//     scattered by the curvature of ln L; Gelman-Rubin R-hat per parameter.
// Sampled parameters per planet: ln P, K, sqrt(e) cos w, sqrt(e) sin w, mean longitude
// lambda = M0 + w at the epoch; per instrument: offset gamma and jitter s. Priors: uniform in
// those (ln P in [ln P_min, ln P_max], 0 <= K <= K_max, e < e_max, 0 <= s <= s_max), which is
// uniform in e and omega.
#pragma once

#include <kosmos/kepler/rv.hpp>
#include <kosmos/kepler/rv_data.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kosmos {
namespace kepler {

struct SearchOptions {
  int planets = 2;
  int chains = 160;               // DE-MCMC chains (>= 2 * parameters + 2); also the DE population
  int burn = 1000;                // DE-MCMC burn-in generations
  int steps = 1000;               // DE-MCMC generations kept
  int thin = 4;                   // keep every thin-th generation
  int optimizer_generations = 150;
  int random_candidates = 8192;   // random-search orbits per planet
  double period_min = 0.5;        // days (ultra-short-period planets have P ~ 1 d)
  double period_max = 0.0;        // days; 0: 2 x the data's time span
  double k_max = 1000.0;          // m/s
  double e_max = 0.95;
  double jitter_max = 100.0;      // m/s
  double epoch = 0.0;             // reference time of M0 and lambda; 0: middle of the data
  bool mixed_precision = false;   // Mixed instead of Double for the likelihood
  Solver solver = Solver::Markley;
  std::uint64_t seed = 1;
  // Called with progress messages (stage, percentage); may be empty.
  std::function<void(const std::string&)> progress;
};

struct ParameterSummary {
  std::string name;
  double best = 0;    // maximum a posteriori sample
  double median = 0;  // posterior median and the 15.87 / 84.13 percentiles
  double lower = 0, upper = 0;
};

struct SearchResult {
  double epoch = 0;
  int n_obs = 0;
  std::vector<std::string> instruments;
  std::vector<double> periodogram_periods;  // strongest periodogram peak for each planet found
  // Maximum a posteriori model.
  std::vector<Orbit> best_orbits;
  std::vector<double> best_offsets, best_jitters;
  double best_loglike = 0, best_chi2 = 0;
  // Posterior: column names and samples (rows), sampled and derived quantities
  // (P, K, e, omega_deg, M0, Tc, Tp per planet; gamma, jitter per instrument; lnL).
  std::vector<std::string> columns;
  std::vector<std::vector<double>> samples;
  std::vector<ParameterSummary> summary;  // one per column
  double max_rhat = 0;                    // over the sampled parameters
  double acceptance = 0;                  // DE-MCMC acceptance rate
  double seconds = 0;
  long long likelihood_evaluations = 0;

  const ParameterSummary& get(const std::string& column) const;
};

// Runs the search on Kokkos::DefaultExecutionSpace. Throws kosmos::invalid_input for bad options.
SearchResult search(const RVData& data, const SearchOptions& options);

// Writes the posterior samples as a text table (header line with the column names).
void write_samples(const std::string& path, const SearchResult& result, const RVData& data);
}  // namespace kepler
}  // namespace kosmos
