// The optimization stages of search() for every star of a survey at once on the execution space,
// and the survey's per-star host loop.
#pragma once

#include <kosmos/kepler/impl/search_stages.hpp>

#include <cstdint>
#include <vector>

namespace kosmos {
namespace kepler {
namespace Impl {
// Whether optimize_stars handles these options: white noise and no prior on a period or a time of
// conjunction (those seed the candidates from the prior on the host); the survey runs
// optimize_star per star otherwise.
bool batched_search_supports(const SearchOptions& opt);

// The observations of many stars concatenated (sampler.cpp), each star's times about its own
// epoch; appends each star's first row and row count to begin and count.
HostObservations concatenate(const std::vector<StarFit*>& fits, std::vector<int>& begin,
                             std::vector<int>& count, const SearchOptions& opt);

// optimize_star's stages (no planet, then per planet a periodogram of the residuals, a random
// search, differential evolution and a Nelder-Mead polish) for every star of `fits` at once: each
// stage is one sequence of kernel launches for all stars (the periodogram one work item per
// (star, frequency); the candidates, the DE population and the simplexes of all stars in shared
// likelihood launches), with one small transfer per stage and none per star. The candidates
// seed the DE population by the best of equal groups (not the overall best: the population keeps
// several periodogram peaks). Leaves what optimize_star leaves (fit.model, fit.current, the
// result's optimization fields; with opt.min_planets >= 0 the comparison of the counts).
void optimize_stars(std::vector<StarFit>& fits, const SearchOptions& opt, std::uint64_t seed,
                    Progress& progress);

// The optimization stages of a survey's stars (stars [first_star, first_star + stars.size()) of
// the whole survey; fits: one per star): each star's random streams numbered by its index in the
// survey (StarFit::stream, stream_rng); batched by optimize_stars where it supports the options
// (returns true), else optimize_star per star. rng: the survey's generator (one draw when
// batched).
bool optimize_survey(std::vector<StarFit>& fits, const std::vector<RVData>& stars,
                     const SearchOptions& opt, long long first_star, std::mt19937_64& rng,
                     Progress& progress);
// Samples every star together (fit->model: its count, which may differ between stars;
// fit->current: its MAP) in one DE-MCMC of shared launches, each star's summaries on host threads
// from the extension round its chains converge in. The chains draw from one generator of the seed
// and each star's own streams, so a star's chains do not depend on the stars beside it. The
// results in the order of `fits`. refine: as choose_map's.
std::vector<SearchResult> sample_together(const std::vector<StarFit*>& fits,
                                          const SearchOptions& opt, Progress& progress,
                                          bool refine);

inline std::vector<StarFit*> pointers(std::vector<StarFit>& fits) {
  std::vector<StarFit*> out;
  for (auto& fit : fits) out.push_back(&fit);
  return out;
}

}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
