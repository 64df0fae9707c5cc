// The stages of one star's search, in order: optimize_star (search.cpp), sample_stars
// (sampler.cpp, many stars at once), finish_star (summaries.cpp).
#pragma once

#include <kosmos/kepler/impl/likelihood.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace kosmos {
namespace kepler {
namespace Impl {
// Checks the options against the star's data, runs the optimization stages and the planet-count
// comparison; leaves fit.model (the count to sample), fit.current (its MAP) and fit.result's
// optimization fields. checks_only: stop after the checks (fit.epoch, fit.baseline and the
// result's warnings set), the batched survey search's first step.
void optimize_star(StarFit& fit, const SearchOptions& opt, std::mt19937_64& rng, Progress& progress,
                   bool checks_only = false);

// DE-MCMC (ter Braak 2006) for every star at once, started from each star's MAP scattered by
// the curvature of its ln posterior; every generation on the execution space.
void sample_stars(const std::vector<StarFit*>& fits, Likelihood& lik, const SearchOptions& opt,
                  std::mt19937_64& rng, Progress& progress);

// The likelihood of the stars together (one planet count; each star about its own epoch).
std::unique_ptr<Likelihood> stars_likelihood(const std::vector<StarFit*>& fits,
                                             const SearchOptions& opt);

// Throws kosmos::invalid_input (naming `where`) for extension options extend_unconverged cannot
// run with; the searches check them before any work.
void require_extension_options(const SearchOptions& opt, const char* where);

// After sample_stars: each star whose chains have not converged (SearchOptions::target_rhat over
// its free parameters and ln L) continues from its chains' state for steps x 2^(r-1) more
// generations in round r = 1..max_extensions, all such stars together: the generations after
// burn-in double, the rows kept so far are thinned by 2 and the new ones kept every
// (thin x 2^r)-th, so the sample count stays. The rounds draw from `seed` only. on_final, if
// given, receives the indices (in fits) of the stars whose samples are final as soon as they are
// (converged at a round's check, and after the last round all others), so that their summaries
// can start while the rest sample on.
using FinalStars = std::function<void(const std::vector<std::size_t>&)>;
void extend_unconverged(const std::vector<StarFit*>& fits, const SearchOptions& opt,
                        std::uint64_t seed, Progress& progress, const FinalStars& on_final = {});

// The MAP of one star after sampling (fit.current): the best of the chains' start and the kept
// samples, with refine a sample above the start polished; its ln L and chi^2 in
// fit.result.best_loglike / best_chi2 from make_reporting_likelihood (on the host without a
// refine). Launches kernels: call it from the thread that drives the device.
void choose_map(StarFit& fit, const SearchOptions& opt, bool refine);
// choose_map of many stars (the same trend order); without a refine their ln L and chi^2 in one
// batched evaluation in double (stars_likelihood) instead of a host likelihood per star.
void choose_maps(const std::vector<StarFit*>& fits, const SearchOptions& opt, bool refine);
// The derived columns and summaries of one star after choose_map. Uses no Kokkos: survey stars
// run it on host threads.
void finish_star(StarFit& fit, const SearchOptions& opt, std::mt19937_64& rng);
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
