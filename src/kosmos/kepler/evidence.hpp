// Evidence (marginal likelihood) per planet count by thermodynamic integration over parallel-
// tempered DE-MCMC: for each count, `temperatures` copies of the model sample prior x L^beta on
// the ladder beta_k = (k / (T - 1))^ladder_power (beta_0 = 0: the prior), all of them in the same
// kernel launches (the survey layout, one "star" per temperature), adjacent temperatures
// exchanging chains after every generation; ln Z = integral over beta of <ln L>_beta
// (trapezoid rule with the end-point correction of Friel, Hurn & Wyse 2014). Its uncertainty combines the Monte Carlo error of each mean (from the spread
// of the chains' means) and the discretization error (the trapezoid on every other temperature
// against the full ladder, as ptemcee does). The priors must be proper: every offset and trend
// coefficient needs a user prior (gauss, uniform, ...); the bounds (period_min/max, k_max, e_max,
// jitter_max, the noise model's) bound the rest.
#pragma once

#include <kosmos/kepler/search.hpp>

#include <string>
#include <vector>

namespace kosmos {
namespace kepler {

struct EvidenceOptions {
  int temperatures = 32;    // >= 3
  double ladder_power = 5;  // > 0
};

struct CountEvidence {
  int planets = 0;
  double ln_z = 0, ln_z_error = 0;
  double probability = 0;                  // of this count among those compared, equal prior odds
  std::vector<double> beta, mean_loglike;  // the ladder and <ln L> at each temperature
};

struct EvidenceResult {
  std::vector<CountEvidence> counts;  // options.min_planets..options.planets (or planets alone)
  int preferred = 0;                  // the count of the largest ln Z
  double seconds = 0;
  // ln of the odds of count a against count b.
  double log_odds(int a, int b) const;
};

// Uses options' planets (and min_planets), trend, priors, bounds, noise, chains, burn, steps,
// thin, seed, host_space, mixed_precision. Throws kosmos::invalid_input for improper priors or
// bad options.
EvidenceResult planet_count_evidence(const RVData& data, const SearchOptions& options,
                                     const EvidenceOptions& evidence = {});
}  // namespace kepler
}  // namespace kosmos
