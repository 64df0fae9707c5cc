// Evidence (marginal likelihood) per planet count over parallel-tempered DE-MCMC: for each
// count, `temperatures` copies of the model sample prior x L^beta on the ladder
// beta_k = (k / (T - 1))^ladder_power (beta_0 = 0: the prior), all of them in the same kernel
// launches (the survey layout, one "star" per temperature), adjacent temperatures exchanging
// chains after every generation. ln Z by stepping-stone sampling (Xie et al. 2011, Syst. Biol. 60,
// 150): Z = prod_k <L^(beta_k+1 - beta_k)>_beta_k, each factor a log-sum-exp over the samples of
// temperature k; its error from the spread of the same estimate over each chain's samples and the
// drift between the first and second half of the kept generations (in quadrature). The
// thermodynamic integral of the same samples (trapezoid rule with the end-point correction of
// Friel, Hurn & Wyse 2014) is reported beside it (ln_z_ti) as a cross-check: it carries a
// discretization bias on short ladders that the stepping stones do not. The priors must be
// proper: every offset and trend coefficient needs a user prior (gauss, uniform, ...;
// select_model adds data-derived ones); the bounds (period_min/max, k_max, e_max, jitter_max, the
// noise model's) bound the rest. Constant factors of the prior densities cancel (the estimate
// is of the evidence under the normalized prior).
#pragma once

#include <kosmos/kepler/search.hpp>

#include <string>
#include <vector>

namespace kosmos {
namespace kepler {

struct EvidenceOptions {
  int temperatures = 32;    // >= 3
  // DE-MCMC chains per temperature where SearchOptions::chains is more, raised to 2 x free
  // parameters + 2 where fewer (even; 0: SearchOptions::chains). The beta = 1 chains of the
  // supported count are select_model's posterior (and that of a survey star whose count every
  // count's ladder decided).
  int ladder_chains = 32;
  double ladder_power = 5;  // > 0
  // A model with more planets (or a higher trend order) is preferred only when it raises ln Z by
  // more than this (ln odds; 5: odds of about 150, Kass & Raftery 1995's "very strong").
  double log_odds_threshold = 5;
  // survey_evidence: each star's counts first by importance sampling around its optimum
  // (importance_draws draws per count); a star whose count those estimates decide, even with
  // each ln Z raised by its margin for the period modes the draws cannot see, keeps that count
  // and samples only its posterior; every other star runs the ladders. false: every star runs
  // the ladders. Models it does not support (noise models, fixed orbital elements, user priors
  // other than on the offsets, jitters and trend) always run the ladders.
  bool screen_by_importance = true;
  int importance_draws = 4096;  // in the last round (>= 256)
};

struct CountEvidence {
  int planets = 0, trend = 0;
  // The stepping-stone estimate and its error: the chains' spread and the drift between the two
  // halves of the kept generations (ln_z_drift: second half less first), in quadrature.
  double ln_z = 0, ln_z_error = 0, ln_z_drift = 0;
  double ln_z_ti = 0;      // the thermodynamic integral of the same samples (a cross-check)
  double probability = 0;  // of this model among those compared, equal prior odds
  std::vector<double> beta, mean_loglike;  // the ladder and <ln L> at each temperature
  // "stepping stones" (the ladder) or "importance" (survey_evidence's screening: no ladder,
  // ln_z_ti NaN, ln_z_drift 0). An importance estimate can miss modes far from the optimum (other
  // period aliases): ln Z may be up to ln_z_margin larger (0 for the ladder and for no planet),
  // and importance_ess is the draws' effective sample size (Kish).
  std::string method = "stepping stones";
  double ln_z_margin = 0, importance_ess = 0;
};

struct EvidenceResult {
  // options.min_planets..options.planets (or planets alone), for each trend order compared
  // (trend order major, then planets).
  std::vector<CountEvidence> counts;
  // The supported model: the fewest planets, then the lowest trend order, whose ln Z + 2 sigma
  // is within log_odds_threshold of the largest ln Z - 2 sigma (an uncertain evidence keeps the
  // simpler model).
  int preferred = 0, preferred_trend = 0;
  // The supported count is the largest compared: more planets may be there.
  bool top_of_range = false;
  std::string rule;
  // Priors select_model added where the user gave none (the offsets and trend need proper ones).
  std::vector<Prior> default_priors;
  // survey_evidence: "importance" where the importance estimates decided the count; "importance
  // and ladder: " and why where they did with the ladders of the counts they could not estimate
  // (or, where their margins left it open, of the counts with planets); else "ladder: " and why
  // (every count laddered but one estimated with no margin); "ladder" elsewhere.
  std::string decided_by = "ladder";
  double seconds = 0;
  // survey_evidence: the whole survey's wall seconds per stage (the same in every star's
  // result; zero elsewhere): the optimization stages, the importance screening, the ladders of
  // the stars it left, the screened stars' posteriors (their summaries included), the ladder
  // stars' summaries.
  struct StageSeconds {
    double optimization = 0, importance = 0, ladders = 0, posteriors = 0, summaries = 0;
  } survey_stages;
  // ln of the odds of count a against count b (at the preferred trend order).
  double log_odds(int a, int b) const;
  const CountEvidence& get(int planets, int trend) const;
};

// Uses options' planets (and min_planets), trend, priors, bounds, noise, chains, burn, steps,
// thin, seed, host_space, mixed_precision. Throws kosmos::invalid_input for improper priors or
// bad options.
EvidenceResult planet_count_evidence(const RVData& data, const SearchOptions& options,
                                     const EvidenceOptions& evidence = {});

// The model of one star chosen by evidence, and its posterior: the default workflow of
// `kosmos rv` (`--planets auto`), one call per star.
struct ModelSelection {
  EvidenceResult evidence;
  // The supported model's posterior: the beta = 1 chains of its parallel-tempered run (swaps
  // carry the chains between modes, e.g. period aliases), summarized as search() does.
  SearchResult posterior;
};

// Compares planet counts options.min_planets..options.planets (min_planets < 0: planets alone)
// and, with options.trend = kAutoTrend, trend orders 0..2 by their evidence
// (planet_count_evidence's method, every model with the same sampling budget), and samples the
// supported one. The optimization stages run once per trend order (all counts). Offsets and
// trend coefficients without a user prior get data-derived uniform ones (listed in
// evidence.default_priors): gamma_<inst> in [mean_inst - R, mean_inst + R] with R the range of
// all velocities plus 10 x the largest sigma; dvdt in [-2 R / span, 2 R / span]; curv in
// [-8 R / span^2, 8 R / span^2]. The trend's odds depend on those widths; the planet counts'
// on the period range, k_max and e_max (the priors of the orbits).
ModelSelection select_model(const RVData& data, const SearchOptions& options,
                            const EvidenceOptions& evidence = {});

// select_model for a survey (`kosmos rv --batch --evidence`): each star's planet count chosen by
// its evidence among options.min_planets..options.planets (min_planets < 0: planets alone) at
// options.trend (one order, 0..2, for every star), batched across stars: the survey's
// optimization stages (survey()'s, batched where it batches them); with
// evidence.screen_by_importance every star's counts by importance sampling (the stars those
// estimates decide sample only their count's posterior at beta = 1, as survey() does); then per
// count every other star's ladder of `temperatures` tempered copies in the same kernel launches
// (stars x temperatures "stars" of the survey layout, chains exchanged only within a star's
// ladder), ln Z by stepping stones per (star, count), the count by select_model's rule, and the
// supported count's beta = 1 chains as the star's posterior. Per star its own default priors on the
// offsets and trend (select_model's, from its data). `stars` are stars [first_star, first_star +
// stars.size()) of a survey: each star's random streams are numbered by its index there, so its
// result does not depend on the other stars of the call (or on the MPI rank count).
// Cost per star: (counts compared) x temperatures x chains x (burn + steps) likelihood
// evaluations, all stars' in shared launches. EvidenceResult::seconds: the call's wall time
// divided by the stars.
std::vector<ModelSelection> survey_evidence(const std::vector<RVData>& stars,
                                            const SearchOptions& options,
                                            const EvidenceOptions& evidence = {},
                                            long long first_star = 0);
}  // namespace kepler
}  // namespace kosmos
