// Checks that warn (SearchResult::warnings) rather than fail: user priors that the search's hard
// bounds truncate, posteriors piled up at a bound, velocities that look like km/s.
#pragma once

#include <kosmos/kepler/impl/search_model.hpp>

#include <string>
#include <vector>

namespace kosmos {
namespace kepler {
namespace Impl {
// A prior on P, K, e or a jitter whose support (uniform, loguniform, tgauss: its range; gauss:
// mu +- 3 sigma) reaches beyond period_min / period_max, k_max, e_max or jitter_max.
std::vector<std::string> truncated_prior_warnings(const std::vector<BoundPrior>& priors,
                                                  double period_min, double period_max,
                                                  const SearchOptions& opt);

// Free P, K, e and jitter columns of which more than 5 % of the samples lie within 1 % of the
// bound's range from period_max (or period_min, in ln P), k_max, e_max or jitter_max; a
// posterior that the bound does not truncate puts about 1 % there at most.
std::vector<std::string> bound_pileup_warnings(const SearchResult& result, double period_min,
                                               double period_max, const SearchOptions& opt);

// Every sigma below 0.05: no spectrograph reaches 5 cm/s, while km/s data have sigmas of
// 0.001-0.05 km/s. The search works in m/s (k_max, jitter_max, m sin i).
std::vector<std::string> unit_warnings(const RVData& data);

inline void append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
