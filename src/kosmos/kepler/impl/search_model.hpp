// The host side of the search's parameter model, shared by its stages: observations about an
// epoch, user priors bound to parameters, the model of one planet count (layout, bounds, fixed
// values, prior terms), one star's fit state, progress reports and the host loop helper.
#pragma once

#include <kosmos/kepler/impl/de_mcmc.hpp>
#include <kosmos/kepler/impl/posterior.hpp>
#include <kosmos/kepler/search.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iomanip>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace kosmos {
namespace kepler {
namespace Impl {
// Observations on the host, each star's times about its own epoch (the survey concatenates
// several stars).
// The regressors of opt.activity for star d, n_obs x activity_columns(d, opt) row-major: each
// indicator column of d that opt.activity names (case-insensitive) less its mean; with
// opt.activity_per_instrument one column per (indicator, instrument), indicator-major, less the
// instrument's mean and 0 at the other instruments' observations. kosmos::invalid_input naming
// the column when d has none of that name, or "path:line" when a value is missing or not finite.
std::vector<double> centred_activity(const RVData& d, const SearchOptions& opt);
int activity_columns(const RVData& d, const SearchOptions& opt);

// activity: the regressors of SearchOptions::activity (centred_activity), n_act per observation
// (row-major; stars with fewer columns padded with zeros).
struct HostObservations {
  std::vector<double> t, v, sigma, activity;
  std::vector<int> inst;
  int n_inst = 1, n_act = 0;
  double epoch = 0;
  HostObservations() = default;
  HostObservations(const RVData& d, double ep, const SearchOptions& opt)
      : t(d.time),
        v(d.velocity),
        sigma(d.sigma),
        activity(centred_activity(d, opt)),
        inst(d.instrument),
        n_inst(d.n_instruments()),
        n_act(activity_columns(d, opt)),
        epoch(ep) {}
  // Appends star d's observations (times about `ep`; the survey and tempering layouts).
  void append(const RVData& d, double ep, const SearchOptions& opt) {
    const auto a = centred_activity(d, opt);
    const int m = activity_columns(d, opt), width = std::max(n_act, m);
    if (width > n_act) {  // widen the rows already there
      std::vector<double> wide(t.size() * std::size_t(width), 0.0);
      for (std::size_t k = 0; k < t.size(); ++k)
        for (int i = 0; i < n_act; ++i)
          wide[k * std::size_t(width) + std::size_t(i)] = activity[k * std::size_t(n_act) + i];
      activity = std::move(wide);
    }
    for (std::size_t k = 0; k < d.size(); ++k) {
      t.push_back(d.time[k] - ep);
      v.push_back(d.velocity[k]);
      sigma.push_back(d.sigma[k]);
      inst.push_back(d.instrument[k]);
      for (int i = 0; i < width; ++i)
        activity.push_back(i < m ? a[k * std::size_t(m) + std::size_t(i)] : 0.0);
    }
    n_inst = std::max(n_inst, d.n_instruments());
    n_act = width;
  }
};
constexpr double kTwoPi = 6.283185307179586476925;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A user prior bound to the parameter it constrains.
struct BoundPrior {
  Prior prior;
  PriorTarget target;
  int index;  // planet or instrument
};

// A hyper-parameter of the noise model: its name (prior and column name), whether it is sampled
// as its natural logarithm, the base prior's bounds and the starting value, both in the sampled
// variable.
// An activity coefficient (activity: true) is one too, sampled as itself, after the
// hyper-parameters.
struct HyperParameter {
  std::string name;
  bool log = true;
  double lower = 0, upper = 0, start = 0;
  bool activity = false;
};

// One coefficient c_<name> per activity indicator of opt.activity (c_<name>_<instrument> per
// instrument with opt.activity_per_instrument): uniform in [-C, C] with C = 10 R / (the
// regressor's range), R the range of the velocities plus 10 x the largest sigma (an activity
// signal up to ten times the velocities' spread); starting at the weighted least-squares fit of
// the velocities less each instrument's weighted mean on the regressors.
std::vector<HyperParameter> activity_parameters(const RVData& d, const SearchOptions& opt);

// The parameters after the trend: the noise model's hyper-parameters, then the activity
// coefficients.
std::vector<HyperParameter> extra_parameters(const RVData& d, const SearchOptions& opt);

// A draw of a user prior's own distribution (tgauss: clamped into its range; fixed: its value)
// from u (uniform in [0, 1)) and gauss (standard normal) on rng.
double draw_prior(const Prior& p, std::mt19937_64& rng, std::uniform_real_distribution<double>& u,
                  std::normal_distribution<double>& gauss);

// Binds each prior to its parameter (planets up to max_planets, the data's instruments, the
// trend order); throws kosmos::invalid_input for unknown names and bad fixed values.
std::vector<BoundPrior> bind_priors(const std::vector<Prior>& priors,
                                    const std::vector<std::string>& instruments, int max_planets,
                                    int trend, const std::vector<HyperParameter>& noise = {});

// The model fitted for one planet count: the device-callable spec (layout, bounds, fixed
// orbital elements, prior terms), the fixed value of each vector entry and the prior terms.
struct Model : ModelSpec {
  std::vector<PriorTerm> terms;          // those on parameters of this model
  std::vector<double> fixed;             // per vector entry: the fixed value, or NaN when free
  std::vector<std::string> noise_names;  // of the extra parameters (noise, then activity)

  // layout.n_noise and n_act are taken from `noise` (the extra parameters, extra_parameters()).
  Model(const ParamLayout& layout, const PriorBounds& b, double ep,
        const std::vector<BoundPrior>& all, const std::vector<HyperParameter>& noise = {}) {
    L = layout;
    L.n_act = int(std::count_if(noise.begin(), noise.end(),
                                [](const HyperParameter& h) { return h.activity; }));
    L.n_noise = int(noise.size()) - L.n_act;
    fixed.assign(std::size_t(L.dim()), std::numeric_limits<double>::quiet_NaN());
    for (int i = 0; i < kMaxExtra; ++i) {
      noise_lower[i] = noise_upper[i] = 0;
      noise_log[i] = false;
    }
    for (int i = 0; i < L.n_extra(); ++i) {
      const HyperParameter& h = noise[std::size_t(i)];
      noise_lower[i] = h.lower;
      noise_upper[i] = h.upper;
      noise_log[i] = h.log;
      noise_names.push_back(h.name);
    }
    bounds = b;
    epoch = ep;
    for (int j = 0; j < kMaxPlanets; ++j)
      e_fixed[j] = omega_fixed[j] = tc_fixed[j] = std::numeric_limits<double>::quiet_NaN();
    for (const auto& bp : all) {
      const bool planet = bp.target <= target_Tc;
      if (planet && bp.index >= L.n_pl) continue;
      if ((bp.target == target_dvdt && L.n_trend < 1) ||
          (bp.target == target_curv && L.n_trend < 2))
        continue;
      if (bp.prior.kind != Prior::fixed) {
        terms.push_back({int(bp.prior.kind), int(bp.target), bp.index, bp.prior.a, bp.prior.b,
                         bp.prior.lower, bp.prior.upper});
        continue;
      }
      const double v = bp.prior.a;
      switch (bp.target) {
        case target_P:
          fixed[L.lnP(bp.index)] = std::log(v);
          break;
        case target_K:
          fixed[L.K(bp.index)] = v;
          break;
        case target_e:
          e_fixed[bp.index] = v;
          break;
        case target_omega:
          omega_fixed[bp.index] = wrap_2pi(v * kTwoPi / 360);
          break;
        case target_Tc:
          tc_fixed[bp.index] = v;
          break;
        case target_gamma:
          fixed[L.gamma(bp.index)] = v;
          break;
        case target_jitter:
          fixed[L.jitter(bp.index)] = v;
          break;
        case target_dvdt:
          fixed[L.trend(0)] = v;
          break;
        case target_curv:
          fixed[L.trend(1)] = v;
          break;
        case target_noise:
          fixed[L.noise(bp.index)] = noise_log[bp.index] ? std::log(v) : v;
          break;
        default:
          break;
      }
    }
    // The slots a fixed e, omega or Tc leaves unused (the layout of ParamLayout); a circular
    // orbit's omega drops out (held at 0 unless fixed).
    for (int j = 0; j < L.n_pl; ++j) {
      const bool e_is_fixed = !std::isnan(e_fixed[j]);
      if (e_is_fixed && e_fixed[j] == 0 && std::isnan(omega_fixed[j])) omega_fixed[j] = 0;
      const bool w_is_fixed = !std::isnan(omega_fixed[j]);
      if (e_is_fixed || w_is_fixed) fixed[L.k(j)] = 0;
      if (e_is_fixed && w_is_fixed) fixed[L.h(j)] = 0;
      if (!std::isnan(tc_fixed[j])) fixed[L.lambda(j)] = 0;
    }
    term_count = int(terms.size());
  }
  bool is_fixed(int d) const { return !std::isnan(fixed[d]); }
  int n_free() const {
    int n = 0;
    for (int d = 0; d < L.dim(); ++d) n += is_fixed(d) ? 0 : 1;
    return n;
  }
  void apply_fixed(double* x) const {
    for (int d = 0; d < L.dim(); ++d)
      if (is_fixed(d)) x[d] = fixed[d];
  }
  // ln prior up to a constant; -inf outside the bounds or a prior's support.
  double log_prior(const double* x) const { return ModelSpec::log_prior(terms.data(), x); }
};

// body(i) for i in [0, n) on the host execution space: the per-row and per-star host work
// (staging, the DE-MCMC's starting scatter, unpacking kept samples, summaries), each index
// independent.
// Batches under min_parallel (default: one star's chains, as the DE-MCMC kernels'
// kMinParallelRows) run inline; per-star work of a survey (summaries: ~0.1 s a star) passes 2.
template <class Body>
void host_for(const char* label, std::size_t n, const Body& body,
              std::size_t min_parallel = std::size_t(kMinParallelRows)) {
  if (n < min_parallel) {
    for (std::size_t i = 0; i < n; ++i) body(i);
    return;
  }
  Kokkos::parallel_for(label, Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, n), body);
}

class Progress {
 public:
  explicit Progress(const std::function<void(const std::string&)>& sink) : sink_(sink) {}
  void message(const std::string& m) const {
    if (sink_) sink_(m);
  }
  // Whether step(_, done, total) will report.
  bool due(long long done, long long total) const {
    return sink_ && total > 0 && (int(100 * done / total) / 10 != last_ / 10 || done == total);
  }
  // Reports at every 10% of `total`.
  void step(const std::string& stage, long long done, long long total,
            const std::string& extra = "") {
    if (!sink_ || total <= 0) return;
    const int pct = int(100 * done / total);
    if (pct / 10 != last_ / 10 || done == total) {
      last_ = pct;
      std::ostringstream o;
      o << stage << ": " << std::setw(3) << pct << "% (" << done << "/" << total << ")" << extra;
      sink_(o.str());
    }
  }
  void reset() { last_ = -10; }

 private:
  std::function<void(const std::string&)> sink_;
  int last_ = -10;
};

// Characteristic step of each parameter (starting scatter, finite-difference steps, simplex).
std::vector<double> parameter_scales(const std::vector<double>& x, const ParamLayout& L,
                                     double baseline);

// One star through the search: the optimization stages, then the DE-MCMC state and output.
struct StarFit {
  const RVData* data = nullptr;
  double epoch = 0, baseline = 0;
  std::unique_ptr<Model> model;  // the count sampled
  std::vector<double> current;   // its MAP
  // The polished optimum of every count 0..planets the optimization stages fitted.
  std::vector<std::vector<double>> optimum_of_count;
  SearchResult result;
  long long evaluations = 0;
  std::chrono::steady_clock::time_point start;
  // DE-MCMC state (chains x parameters), each parameter's jitter scale, and kept rows
  // (parameters, ln posterior, ln L) ordered (generation, chain).
  std::vector<double> chains, sigma, lnpost, lnlike;
  double start_lnpost = 0;  // at `current` when sampling began
  RowTable kept;
  // ln L of every kept row (also when kept is not filled), and whether kept holds the rows (a
  // tempered run's hotter temperatures feed only the evidence, which needs ln L alone).
  std::vector<double> kept_loglike;
  bool keep_parameters = true;
  long long accepted = 0, proposed = 0;
  double beta = 1;  // inverse temperature of the DE-MCMC's target prior x L^beta
  // The star's index in its survey, which numbers its random streams (-1: they come from the
  // caller's generator in batch order), and its host generator, seeded from the seed and that
  // index: the star draws the same numbers whichever stars share its batch or rank.
  long long stream = -1;
  std::mt19937_64 stream_rng;
};
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
