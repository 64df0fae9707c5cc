// The seam between the search's stages and its noise model: a batched ln posterior of parameter
// rows for one star or many, and the DE-MCMC of their chains on the execution space.
#pragma once

#include <kosmos/kepler/impl/search_model.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace kosmos {
namespace kepler {
namespace Impl {
// Batched ln posterior (ln L + ln prior) of parameter vectors, for one star or for many stars at
// once (the survey layout: each star's rows read only its slice of the concatenated
// observations); -inf outside the prior. Optionally ln L and chi^2 as well.
class Likelihood {
 public:
  virtual ~Likelihood() = default;
  // x[s] holds `rows` parameter rows of star s (its own layout); outputs are flat, star-major.
  virtual void evaluate_stars(const std::vector<const double*>& x, int rows,
                              std::vector<double>& logpost, std::vector<double>* loglike,
                              std::vector<double>* chi2) = 0;
  // One star's rows (the only star of a single-star likelihood).
  void evaluate(const std::vector<double>& x, int n, std::vector<double>& logpost,
                std::vector<double>* loglike = nullptr, std::vector<double>* chi2 = nullptr) {
    evaluate_stars({x.data()}, n, logpost, loglike, chi2);
  }
  // DE-MCMC generations (burn-in and kept) of every star's chains on the execution space, from
  // fits[s]->chains / lnpost / lnlike / sigma (star s of this likelihood); appends the kept rows
  // and counts acceptances. seed: the random streams' only input.
  virtual void run_chains(const std::vector<StarFit*>& fits, const SearchOptions& opt,
                          std::uint64_t seed, Progress& progress) = 0;
  long long evaluations = 0;
  // With time_stages, every stage below is fenced and its wall added to `timing` (total unused).
  bool time_stages = false;
  // Parallel tempering (evidence.cpp): > 0, the stars are ladders of this many temperatures
  // (StarFit::beta), one per star and model; chains are exchanged within a ladder.
  int temperature_ladder = 0;
  SamplerTiming timing;

 protected:
  // The DE-MCMC driver shared by the noise models (impl/sampler_driver.hpp).
  template <class Space, class HalfGeneration>
  void run_de_mcmc(const std::vector<Model>& models, const std::vector<StarFit*>& fits,
                   const SearchOptions& opt, std::uint64_t seed, Progress& progress,
                   const HalfGeneration& half_generation);
  // Runs body(); with time_stages, fences `space` (so that asynchronous kernels count in the stage
  // that launched them) and adds the wall time to `seconds`.
  template <class Space, class Body>
  void timed(const Space& space, double& seconds, const Body& body) const {
    if (!time_stages) {
      body();
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    body();
    space.fence();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

// The likelihood of SearchOptions' noise model for models[s] with observations
// [begin[s], begin[s] + count[s]) of obs.
std::unique_ptr<Likelihood> make_likelihood(const HostObservations& obs, std::vector<Model> models,
                                            std::vector<int> begin, std::vector<int> count,
                                            const SearchOptions& opt);
// One star: all of obs.
std::unique_ptr<Likelihood> make_likelihood(const HostObservations& obs, const Model& model,
                                            const SearchOptions& opt);
// The likelihood that printed and written numbers come from (the MAP's ln L and chi^2, the
// planet-count comparison): double precision whatever opt.mixed_precision (which only speeds up
// the search and the sampler), on the host when `on_host` (a few single-row evaluations).
std::unique_ptr<Likelihood> make_reporting_likelihood(const HostObservations& obs,
                                                      const Model& model, const SearchOptions& opt,
                                                      bool on_host);
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
