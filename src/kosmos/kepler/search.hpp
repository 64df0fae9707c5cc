// Global search and Bayesian parameter estimation for n-planet Keplerian RV models, built on the
// batched log-likelihood (kosmos/kepler/chi2.hpp) on Kokkos' default execution space (or the
// default host space, SearchOptions::host_space):
//  0. offsets, jitters and the optional trend alone (differential evolution);
//  1. for each planet in turn: a generalized Lomb-Scargle periodogram (Zechmeister & Kuerster
//     2009) of the residuals (or, for a planet with a prior on P, draws from that prior), a
//     random search of Keplerian orbits, differential-evolution optimization of all parameters
//     of the model so far, then a Nelder-Mead polish to the true optimum (the MAP);
//  2. with min_planets < planets, a table of ln L (at the polished optimum), BIC and AICc per
//     planet count and the preferred count (the rule: see ModelComparison);
//  3. differential-evolution MCMC (ter Braak 2006) with hundreds of chains for the chosen count,
//     started from the MAP scattered by the curvature of ln L, every generation on the execution
//     space: per half of the chains one kernel draws the proposals and their priors, one batched
//     likelihood launch, one kernel accepts or rejects; kept samples return to the host in
//     blocks. Random draws come from Kokkos' XorShift64 keyed on (seed, star, chain, generation):
//     the chains depend on the seed only (not on threads or scheduling; not the same numbers as
//     the host sampler of earlier versions). Rank-normalized split R-hat and bulk / tail effective
//     sample sizes per column (Vehtari et al. 2021; n/a for columns fixed parameters determine).
// The likelihood is that of SearchOptions::noise: white noise + jitter per instrument, or a
// celerite Gaussian process (kepler README) whose hyper-parameters follow the trend in the vector.
// Sampled parameters per planet: ln P, K, sqrt(e) cos w, sqrt(e) sin w, mean longitude
// lambda = M0 + w at the epoch; per instrument: offset gamma and jitter s; then dvdt and curv
// (m/s/d, m/s/d^2 about the epoch) for trend 1 or 2. Base prior: uniform in those inside the
// bounds (ln P in [ln P_min, ln P_max], 0 <= K <= K_max, e < e_max, 0 <= s <= s_max), i.e.
// uniform in e and omega; user priors (Prior) multiply it, and fixed parameters leave the fit.
#pragma once

#include <kosmos/kepler/row_table.hpp>
#include <kosmos/kepler/rv.hpp>
#include <kosmos/kepler/rv_data.hpp>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <string>
#include <vector>

namespace kosmos {
namespace kepler {

struct EvidenceResult;  // kosmos/kepler/evidence.hpp

// A prior on one parameter, or its fixed value. Parameters (planet letters b, c, ...):
//   P_b [d], K_b [m/s], e_b, omega_b [deg], Tc_b (time of conjunction, any transit: the prior
//   is applied to the conjunction nearest its centre), gamma_<instrument>, jitter_<instrument>,
//   dvdt [m/s/d], curv [m/s/d^2].
// Kinds: uniform A B, loguniform A B (A > 0), gauss MU SIGMA, tgauss MU SIGMA A B (Gaussian
// truncated to [A, B]), beta A B (A, B > 0; on [0, 1): e.g. Kipping 2013's eccentricity prior
// "e_b beta 0.867 3.03", kipping_eccentricity_prior), fixed V. Every parameter can be fixed: e in
// [0, 1) (e = 0: omega drops out unless fixed too; e below e_max), omega in [-360, 360] deg, Tc any
// time (M0 then follows from P, e, omega and Tc); a parameter is fixed at most once.
struct Prior {
  enum Kind { uniform, log_uniform, gaussian, truncated_gaussian, fixed, beta };
  std::string parameter;
  Kind kind = uniform;
  double a = 0, b = 0, lower = 0, upper = 0;  // (A, B) | (MU, SIGMA) [+ truncation bounds] | (V)
  double log_density(double x) const;         // up to a constant; -inf outside the support
};

// "NAME KIND ARGS..." (the syntax above); `where` prefixes errors (kosmos::invalid_input).
Prior parse_prior(const std::string& spec, const std::string& where);
// The kind's name in that syntax ("uniform", "loguniform", "gauss", "tgauss", "beta", "fixed").
const char* prior_kind_name(Prior::Kind kind);
// "NAME KIND ARGS..." that parse_prior reads back to the same prior (numbers to 17 digits).
std::string format_prior(const Prior& prior);
// One prior per non-empty line ('#' comments); errors name file:line (kosmos::file_error).
std::vector<Prior> read_prior_file(const std::string& path);
// Kipping (2013, MNRAS 434, L51) Beta(0.867, 3.03) on the eccentricity of each of `planets`
// planets (e_b, e_c, ...): the distribution of the eccentricities of RV planets.
std::vector<Prior> kipping_eccentricity_prior(int planets);

constexpr int kAutoTrend = -1;

struct SearchOptions {
  int planets = 2;       // 0..8
  int min_planets = -1;  // >= 0 and < planets: fit every count min_planets..planets
  int trend = 0;         // 0, 1 (dvdt) or 2 (dvdt, curv); select_model: kAutoTrend compares 0..2
  std::vector<Prior> priors;
  double bic_threshold = 10;      // a planet more is preferred when BIC drops by more than this
  double stellar_mass = 0;        // M_sun; > 0: derive m sin i and a per sample
  double stellar_mass_sigma = 0;  // its Gaussian uncertainty, propagated through the samples
  int chains = 160;               // DE-MCMC chains (>= 2 * parameters + 2); also the DE population
  int burn = 1000;                // DE-MCMC burn-in generations
  int steps = 1000;               // DE-MCMC generations kept
  int thin = 4;                   // keep every thin-th generation
  // Chains not converged after burn + steps (rank-normalized split R-hat of a free parameter or
  // of ln L >= target_rhat) run on: round r (1..max_extensions) doubles the generations after
  // burn-in (steps x 2^(r-1) more) and keeps every (thin x 2^r)-th of them all (the sample count
  // stays); 0: no rounds.
  int max_extensions = 3;
  double target_rhat = 1.01;
  int optimizer_generations = 150;
  int random_candidates = 8192;  // random-search orbits per planet
  double period_min = 0.5;       // days (ultra-short-period planets have P ~ 1 d)
  double period_max = 0.0;       // days; 0: 2 x the data's time span
  double k_max = 1000.0;         // m/s
  double e_max = 0.95;
  double jitter_max = 100.0;  // m/s
  // Noise model (noise_model_names()): "white" (jitter per instrument).
  std::string noise = "white";
  // Activity indicators (data columns by header name, e.g. {"fwhm", "bis", "svalue"}, at most
  // 8) as linear regressors: v_model += sum_i c_<name> (x_i - mean x_i), one coefficient per
  // indicator shared by the instruments, with every noise model.
  std::vector<std::string> activity;
  // One coefficient per indicator and instrument (c_<name>_<instrument>), each indicator centred
  // per instrument; at most 8 coefficients.
  bool activity_per_instrument = false;
  double epoch = 0.0;            // reference time of M0 and lambda; 0: middle of the data
  bool mixed_precision = false;  // Mixed instead of Double for the likelihood
  bool host_space = false;       // run on Kokkos::DefaultHostExecutionSpace, not the default space
  // Fence after every DE-MCMC stage and fill SearchResult::sampler_timing (profiling: a device
  // synchronization per stage slows short launches).
  bool time_stages = false;
  Solver solver = Solver::Markley;
  std::uint64_t seed = 1;
  // Called with progress messages (stage, percentage); may be empty.
  std::function<void(const std::string&)> progress;
};

struct ParameterSummary {
  std::string name;
  double best = 0;    // at the maximum a posteriori model (the polished optimum)
  double median = 0;  // posterior median and the 15.87 / 84.13 percentiles
  double lower = 0, upper = 0;
  // Rank-normalized diagnostics over all chains (rank_diagnostics): bulk and tail effective
  // sample sizes and split R-hat. NaN for a column that only fixed parameters determine (`fixed`):
  // its samples vary by round-off at most, and its diagnostics would measure that.
  double ess = 0;  // bulk ESS
  double ess_tail = 0;
  double rhat = 0;
  bool fixed = false;
};

// One planet count of the comparison. n_free counts every free parameter (orbits, offsets,
// jitters, trend); BIC = n_free ln n_obs - 2 ln L, AICc = 2 n_free - 2 ln L +
// 2 n_free (n_free + 1) / (n_obs - n_free - 1), ln L at the polished optimum.
struct ModelComparison {
  int planets = 0, n_free = 0;
  double loglike = 0, bic = 0, aicc = 0;
  std::vector<Orbit> orbits;  // at the optimum
};

// Where the DE-MCMC's wall time went, in seconds (a survey samples all stars together: every
// star's result holds the shared run's times); all but total are 0 unless
// SearchOptions::time_stages. likelihood: the batched ln L kernel (fenced);
// generation: the per-generation work around it (proposals, priors, accept/reject, staging the
// parameter rows, keeping samples); transfers: host <-> device copies; total: the whole sampling
// stage, its setup (starting scatter, curvature probes) included. Always filled, parts of total:
// kept_rows, copying the kept rows to the host and into each star's block; convergence, the
// R-hat checks that decide the extension rounds (host threads). survey() also fills, always:
// summaries, the summaries of the stars sampled together (derived columns, quantiles,
// diagnostics, modes; host threads, from the extension round a star's chains converge in, beside
// the rounds of the stars not yet converged), and optimization, the optimization stages of all
// stars before any sampling (shared by every star of the survey).
struct SamplerTiming {
  double likelihood = 0, generation = 0, transfers = 0, total = 0;
  double kept_rows = 0, convergence = 0;
  double summaries = 0, optimization = 0;
};

// One mode of a period posterior: its median and 15.87 / 84.13 percentiles, and the fraction of
// the samples in it.
struct PeriodMode {
  double period = 0, lower = 0, upper = 0, weight = 0;
};

// The modes of a period posterior (e.g. aliases): the samples sorted in frequency 1 / P and split
// where two neighbours are more than 0.3 / baseline apart (a third of the frequency resolution;
// aliases lie 1 / baseline, 1 / yr or 1 / d apart, one peak is narrower); groups holding under
// 2 % of the samples join the neighbour nearest in frequency. Ordered by weight, largest first.
std::vector<PeriodMode> period_modes(const std::vector<double>& periods, double baseline);

struct SearchResult {
  double epoch = 0;  // reference time of M0, lambda and the trend
  int planets = 0;   // the count sampled (the preferred one when counts were compared)
  int trend = 0;
  int n_obs = 0;
  std::vector<std::string> instruments;
  std::vector<double> periodogram_periods;  // strongest periodogram peak for each planet found
  // Per planet found (in the order found): the false-alarm probability of its signal, Baluev
  // (2008) for the GLS power at its fitted period in the periodogram of the residuals of the
  // previous planets (false_alarm_probability over the searched band).
  std::vector<double> false_alarm;
  std::vector<ModelComparison> comparison;  // one per count when counts were compared
  std::string comparison_rule;
  // Maximum a posteriori model (the polished optimum).
  std::vector<Orbit> best_orbits;
  std::vector<double> best_offsets, best_jitters, best_trend;
  double best_loglike = 0, best_chi2 = 0;
  int n_free = 0;
  // Posterior: column names and samples (rows), sampled and derived quantities
  // (P, K, e, omega_deg, M0_deg, Tc, Tp [, msini_jup, msini_earth, a_au] per planet; gamma,
  // jitter per instrument; dvdt, curv; lnL).
  std::vector<std::string> columns;
  RowTable samples;
  std::vector<int> sample_chain;          // the chain of each sample row
  std::vector<ParameterSummary> summary;  // one per column
  // Per planet: the modes of its period posterior (period_modes; one when unimodal). With more
  // than one, the median and interval of P span several alias modes and a warning says so.
  std::vector<std::vector<PeriodMode>> period_modes;
  double max_rhat = 0;    // rank-normalized split R-hat, worst over free columns
  double min_ess = 0;     // smallest bulk or tail ESS over the free columns
  double acceptance = 0;  // DE-MCMC acceptance rate
  // DE-MCMC generations run (burn-in and extensions included), and the extension rounds
  // (SearchOptions::max_extensions) the chains needed; the samples span every generation after
  // burn-in.
  int generations = 0, extensions = 0;
  // Things a user should look at: a prior truncated by period_min / period_max / k_max / e_max /
  // jitter_max, a posterior piled up at one of them, velocities that look like km/s.
  std::vector<std::string> warnings;
  double seconds = 0;
  long long likelihood_evaluations = 0;
  SamplerTiming sampler_timing;

  const ParameterSummary& get(const std::string& column) const;
};

// The names of the noise models SearchOptions::noise accepts.
std::vector<std::string> noise_model_names();

// Runs the search on Kokkos::DefaultExecutionSpace. Throws kosmos::invalid_input for bad options.
SearchResult search(const RVData& data, const SearchOptions& options);

// Survey mode: many stars, one planet count (SearchOptions::planets; no comparison). Each star
// goes through the optimization stages of search() one at a time; then one DE-MCMC samples every
// star, all stars' chains in the same kernel launches (the survey layout of the chi^2 kernel:
// options.chains x stars models per half-generation). Results in the order of `stars`.
// Priors must apply to every star (their instrument names must exist in each). Each star draws
// its random numbers from streams of its own, numbered by its index in the survey: `stars` are
// stars [first_star, first_star + stars.size()) of a survey cut into parts (e.g. over MPI ranks),
// and every star's result is the one the whole survey in one call gives.
std::vector<SearchResult> survey(const std::vector<RVData>& stars, const SearchOptions& options,
                                 long long first_star = 0);

// A starting model for survey_from: orbits (RadVel convention), one offset and jitter per
// instrument, options.trend trend coefficients.
struct StartModel {
  std::vector<Orbit> orbits;
  std::vector<double> offsets, jitters, trend;
};
// The survey's shared DE-MCMC alone, from given starting models (what the survey benchmark
// times): skips the per-star optimization; the MAP is the best of the start and the samples.
std::vector<SearchResult> survey_from(const std::vector<RVData>& stars,
                                      const std::vector<StartModel>& starts,
                                      const SearchOptions& options);

// Split R-hat and effective sample size of one quantity from equally long chains (Gelman et al.,
// BDA3 Sec. 11.4-11.5: each chain split in halves; ESS from variogram autocorrelations summed in
// pairs while positive, Geyer's initial positive sequence). A constant quantity gives R-hat 1 and
// ESS = all samples; chains of fewer than 4 samples give NaN for both (not estimable).
void chain_diagnostics(const std::vector<std::vector<double>>& chains, double& rhat, double& ess);

// Rank-normalized split R-hat and bulk / tail effective sample sizes of one quantity from equally
// long chains (Vehtari, Gelman, Simpson, Carpenter & Buerkner 2021, Bayesian Analysis 16, 667;
// the definitions of ArviZ's rhat(method="rank") and ess(method="bulk" / "tail")): chains split
// in halves (first and last floor(n / 2) draws), draws replaced by the normal quantiles of their
// pooled average ranks; R-hat the larger of those of the draws and of |draw - median|; bulk ESS
// that of the normalized draws, tail ESS the smaller of those of the indicators draw <= 5 % and
// <= 95 % quantile. A constant quantity gives R-hat 1 and ESS = all samples; chains of fewer than
// 4 draws or with non-finite draws give NaN.
struct RankDiagnostics {
  double rhat = std::numeric_limits<double>::quiet_NaN();
  double ess_bulk = std::numeric_limits<double>::quiet_NaN();
  double ess_tail = std::numeric_limits<double>::quiet_NaN();
};
RankDiagnostics rank_diagnostics(const std::vector<std::vector<double>>& chains);
// rank_diagnostics' R-hat alone (without the effective sample sizes, most of its cost).
double rank_rhat(const std::vector<std::vector<double>>& chains);

// False-alarm probability of a generalized Lomb-Scargle peak (Zechmeister & Kuerster 2009
// normalization, floating mean: power = 1 - chi^2(f) / chi^2 of a constant) of `power` in a
// periodogram searched up to frequency f_max [1/d] of observations at times t with weights w:
// Baluev (2008, MNRAS 385, 1279), FAP = 1 - (1 - (1 - z)^((n-3)/2)) exp(-tau),
// tau = gamma(n-1) W (1 - z)^((n-4)/2) sqrt((n-1) z / 2), W = f_max sqrt(4 pi var_w(t)),
// gamma(N) = sqrt(2 / N) Gamma(N / 2) / Gamma((N - 1) / 2) (astropy's method="baluev"). An upper
// bound on the probability that white noise alone reaches this power anywhere in the band,
// accurate for small values.
double false_alarm_probability(double power, const std::vector<double>& t,
                               const std::vector<double>& w, double f_max);

// Minimum mass and semi-major axis of a planet from its orbit (P [d], K [m/s], e) and the stellar
// mass [M_sun]: the mass function solved for m sin i with m sin i in M_star + m (sin i = 1 in
// that small term), a from Kepler's third law; IAU nominal GM of Sun, Jupiter and Earth.
struct PlanetMass {
  double msini_jupiter = 0, msini_earth = 0, a_au = 0;
};
PlanetMass minimum_mass(const Orbit& orbit, double stellar_mass);

// Writes the posterior samples: HDF5 when io::is_hdf5_path(path) (datasets "samples" (rows x
// columns), "columns", "chain" (index of each row's chain); attributes data, epoch, planets,
// trend, n_obs, max_rhat, acceptance, map_loglike, units), else a text table (header line with the
// column names).
void write_samples(const std::string& path, const SearchResult& result, const RVData& data);

// A survey's posteriors in one HDF5 file: a group per star (survey_group(s): "star_00000", ...)
// holding write_samples' datasets (samples, columns, chain) and attributes; datasets "stars"
// (the group names) and "data" (each star's file) at the root. kosmos::invalid_input unless the
// path ends in .h5 / .hdf5.
void write_survey_samples(const std::string& path, const std::vector<RVData>& stars,
                          const std::vector<SearchResult>& results);
std::string survey_group(std::size_t star);
// A survey's parameter table, one line per (star, posterior column): star planets parameter
// median lower upper map rhat ess_bulk ess_tail, columns as SearchResult::columns (P, K, e,
// omega_deg, M0_deg, Tc, Tp [, msini_jup, msini_earth, a_au] per planet; gamma and jitter per
// instrument; dvdt, curv; lnL).
void write_survey_table(std::ostream& out, const std::vector<RVData>& stars,
                        const std::vector<SearchResult>& results);
// The table's two header lines, and one star's lines (a survey split over processes writes its
// stars' lines apart and puts them together in star order).
// With the star's evidence (survey_evidence) its rows end with one line per count compared,
// "lnZ_<count>_planets ln_z ln_z - error ln_z + error nan nan nan nan".
void write_survey_table_header(std::ostream& out);
void write_survey_table_rows(std::ostream& out, const RVData& star, const SearchResult& result,
                             const EvidenceResult* evidence = nullptr);

// The survey's line per star (what `kosmos rv --batch` prints): star n_obs planets; for each of
// `planets` planets P, P_err, K, K_err, e, e_err (posterior medians and half their 68 %
// intervals; "- -" each beyond the star's count); lnL_MAP max_rhat min_ess; with the star's
// evidence also lnZ_<c> lnZ_err_<c> per count compared (first_count..planets), ln_odds (ln Z of
// the supported count less the best other's; 0 with one count), top_of_range (yes / no) and
// evidence_method (importance: the survey's importance screening decided the count;
// importance+ladder: its estimates with the ladders of the counts it could not estimate; ladder).
void write_survey_lines_header(std::ostream& out, int planets, int first_count, bool evidence);
void write_survey_line(std::ostream& out, const RVData& star, const SearchResult& result,
                       int planets, const EvidenceResult* evidence = nullptr);
}  // namespace kepler
}  // namespace kosmos
