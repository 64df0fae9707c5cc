// Planet counts compared at their polished optima.
#pragma once

#include <kosmos/kepler/impl/likelihood.hpp>

#include <functional>
#include <vector>

namespace kosmos {
namespace kepler {
namespace Impl {
// ln L at each count's polished optimum (optimum_of_count[c]), BIC and AICc for the counts
// opt.min_planets..opt.planets into result.comparison (and result.comparison_rule); returns the
// preferred count: the fewest planets that no larger count improves by delta BIC >
// opt.bic_threshold. Adds the likelihood evaluations to `evaluations`.
int compare_planet_counts(const HostObservations& obs, const std::function<Model(int)>& model_for,
                          const std::vector<std::vector<double>>& optimum_of_count,
                          const SearchOptions& opt, SearchResult& result, long long& evaluations);
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
