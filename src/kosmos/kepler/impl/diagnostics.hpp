// Posterior summaries: quantiles of sorted samples.
#pragma once

#include <vector>

namespace kosmos {
namespace kepler {
namespace Impl {
// The q-quantile (linear interpolation) of ascending values.
double sorted_percentile(const std::vector<double>& v, double q);
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
