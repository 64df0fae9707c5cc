// Posterior summaries: quantiles of sorted samples, rank diagnostics of flat chains.
#pragma once

#include <kosmos/kepler/search.hpp>

#include <cstddef>
#include <vector>

namespace kosmos {
namespace kepler {
namespace Impl {
// The q-quantile (linear interpolation) of ascending values.
double sorted_percentile(const std::vector<double>& v, double q);

// The row indices of each chain in turn (chain 0's rows in order, then chain 1's, ...): the
// order in which rank_diagnostics takes the draws of rows labelled by chain.
std::vector<std::size_t> rows_chain_after_chain(const std::vector<int>& chain_of_row, int chains);

// rank_diagnostics of `chains` equally long chains stored chain after chain (draw i of chain c at
// draws[c * n + i]); the effective sample sizes only with with_ess; with `sorted`, also every
// draw in ascending order there (the diagnostics' own sort).
RankDiagnostics rank_diagnostics(const std::vector<double>& draws, std::size_t chains,
                                 bool with_ess, std::vector<double>* sorted);
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
