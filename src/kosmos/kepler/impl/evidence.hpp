// The stages of the evidence path shared by select_model (evidence.cpp) and the survey's
// survey_evidence (survey_evidence.cpp): proper default priors, the parallel-tempered runs of
// one planet count (one ladder of temperatures per star, every ladder in the same kernel
// launches), the supported model and its posterior.
#pragma once

#include <kosmos/kepler/evidence.hpp>
#include <kosmos/kepler/impl/search_stages.hpp>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace kosmos {
namespace kepler {
namespace Impl {
// One model's parallel-tempered run of one star: its evidence and its beta = 1 chains (the
// posterior).
struct TemperedRun {
  CountEvidence evidence;
  StarFit cold;
  int chains = 0;  // per temperature (ladder_chain_count)
};

// The DE-MCMC chains per temperature of a ladder of `model`: ev.ladder_chains or opt.chains,
// whichever is fewer (opt.chains where ladder_chains is 0), at least the 2 x free parameters + 2
// that DE-MCMC needs.
int ladder_chain_count(const Model& model, const SearchOptions& opt, const EvidenceOptions& ev);

// One star's ladder of one planet count in a batched tempered run.
struct LadderStar {
  const RVData* data = nullptr;
  const SearchOptions* opt = nullptr;            // with the star's proper priors
  const std::vector<double>* optimum = nullptr;  // the optimization stages' optimum of the count
  std::mt19937_64* rng = nullptr;                // the host draws of its starting chains
  // Its index in the survey: temperature k of count c of star i draws the device streams of key
  // (i x (kMaxPlanets + 1) + c) x temperatures + k (-1: keyed by the position in the batch).
  long long stream = -1;
  int planets = 0;  // the count
};

// The tempered runs of every ladder (a star may come once per count), all of them (ladders x
// temperatures "stars" of the survey layout, whatever their counts) in the same kernel launches,
// chains exchanged within a ladder. The options other than the priors are the first star's.
// seed_source: its next draw, after every ladder's starting chains (drawn in the order of
// `stars`), seeds the device streams. One star with stream -1: the single-star run of
// select_model and planet_count_evidence.
std::vector<TemperedRun> tempered_runs_of_ladders(const std::vector<LadderStar>& stars,
                                                  const EvidenceOptions& ev,
                                                  std::mt19937_64& seed_source);

// The model of `planets` planets of one star for its tempered run, its bound priors (those of
// the largest count compared; priors on planets beyond this count drop out), after the checks
// that the priors are proper and the chains enough (kosmos::invalid_input).
Model ladder_model(const RVData& data, const SearchOptions& opt, int planets,
                   std::vector<BoundPrior>& priors);

// ln Z of `planets` planets of every star by importance sampling around its optimization
// optimum (evidence_importance.cpp; survey_evidence's screening): a multivariate Student-t
// proposal from the Hessian of ln L there, in coordinates where an orbit's posterior is close
// to Gaussian (e cos omega, e sin omega in place of the sampled sqrt(e) cos omega, sqrt(e) sin
// omega), mixed with a defensive part that follows the prior's shape where the posterior
// reaches e = 0 or a jitter of 0, so that every weight is bounded (Hesterberg 1995,
// Technometrics 37, 185). The estimate is unbiased; what it misses in practice is the mass of
// modes far from the proposal (period aliases), which the screening bounds (evidence.hpp).
// method "importance"; usable false with the reason where the optimum is not a peak of ln L,
// the draws' effective sample size is too small, or the model is not one this estimate
// supports (importance_unsupported). Draws keyed on seed, the count and each star's stream.
struct ImportanceRun {
  CountEvidence evidence;
  bool usable = false;
  std::string reason;
  // Per planet of the count's optimum: its period and its part of evidence.ln_z_margin.
  std::vector<double> periods, margins;
};
std::vector<ImportanceRun> importance_runs_of_count(const std::vector<LadderStar>& stars,
                                                    const EvidenceOptions& ev, int planets,
                                                    std::uint64_t seed);

// Whether importance_runs_of_count supports this star's model: white noise with jitters, no
// fixed orbital element, and user priors only uniform or Gaussian ones on the offsets and trend
// and uniform ones on the jitters (the prior's normalization in closed form). Else the reason.
std::string importance_unsupported(const Model& model);

// ln of the number of period modes a planet's posterior can split into: the periodogram's
// independent frequencies between 1 / period_max and 1 / period_min over the data's baseline.
double log_period_modes(const RVData& data, const SearchOptions& opt);

// Whether importance estimates (one run per count compared) decide the count: choose()'s rule
// prefers the same count p for every combination of each other count's ln Z at its estimate or
// raised by the margins of its planets that p's optimum lacks (no planet of p within 2 % in
// period). A period alternative of a planet both models hold raises both ln Z alike.
bool importance_decides(const std::vector<ImportanceRun>& runs, double log_odds_threshold);

// The preferred count (index into counts) by choose()'s rule, for ln Z values z and errors.
std::size_t preferred_index(const std::vector<CountEvidence>& counts, const std::vector<double>& z,
                            double log_odds_threshold);

// The checks of a tempered run of `planets` planets (proper priors on the offsets and trend,
// enough chains) without running it: kosmos::invalid_input.
void check_ladder_model(const RVData& data, const SearchOptions& opt, int planets);

// Checks of the options shared by planet_count_evidence, select_model and survey_evidence.
void check_evidence_options(const RVData& data, const SearchOptions& opt,
                            const EvidenceOptions& ev);

// Uniform priors on the offsets and trend coefficients (options.trend: 0..2 or kAutoTrend) that
// options.priors leaves without one (select_model's rule, evidence.hpp).
std::vector<Prior> evidence_default_priors(const RVData& data, const SearchOptions& options);

// Probabilities (equal prior odds) and the supported model of `result.counts`.
void choose(EvidenceResult& result, const EvidenceOptions& ev, int largest_count);

// A tempered run's beta = 1 chains as the posterior of its model, summarized as search() does
// by choose_map and finish_star (search_stages.hpp): takes the optimization stages' result
// (`optimization`: the star's SearchResult before sampling). evaluations: the star's total.
void prepare_tempered_posterior(StarFit& cold, const SearchResult& optimization,
                                long long evaluations, std::chrono::steady_clock::time_point start);
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
