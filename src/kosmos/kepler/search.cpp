#include <kosmos/kepler/search.hpp>

#include <kosmos/core/error.hpp>
#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/kepler/chi2.hpp>
#include <kosmos/kepler/impl/de_mcmc.hpp>
#include <kosmos/kepler/impl/posterior.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>

namespace kosmos {
namespace kepler {
namespace Impl {
// Observations on the host, each star's times about its own epoch (the survey concatenates
// several stars).
struct HostObservations {
  std::vector<double> t, v, sigma;
  std::vector<int> inst;
  int n_inst = 1;
  double epoch = 0;
  HostObservations() = default;
  HostObservations(const RVData& d, double ep)
      : t(d.time),
        v(d.velocity),
        sigma(d.sigma),
        inst(d.instrument),
        n_inst(d.n_instruments()),
        epoch(ep) {}
};
constexpr double kTwoPi = 6.283185307179586476925;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kInf = std::numeric_limits<double>::infinity();
// The periodogram's frequency step: a fifth of the resolution 1 / baseline. A 20-year survey
// down to 0.5 d scans 7e4 frequencies; 1e7 (three 80 MB arrays) is generous.
double periodogram_step(double baseline) { return 0.2 / baseline; }
constexpr double max_periodogram_frequencies = 1e7;

// A user prior bound to the parameter it constrains.
struct BoundPrior {
  Prior prior;
  PriorTarget target;
  int index;  // planet or instrument
};

std::vector<BoundPrior> bind_priors(const std::vector<Prior>& priors,
                                    const std::vector<std::string>& instruments, int max_planets,
                                    int trend) {
  constexpr const char* where = "kosmos::kepler::search";
  const std::string letters = "bcdefghi";
  std::vector<BoundPrior> out;
  for (const auto& p : priors) {
    const std::string& name = p.parameter;
    const auto underscore = name.rfind('_');
    const std::string base = name.substr(0, underscore),
                      suffix = underscore == std::string::npos ? "" : name.substr(underscore + 1);
    BoundPrior bp{p, target_P, 0};
    bool known = true;
    if (name == "dvdt" || name == "curv") {
      bp.target = name == "dvdt" ? target_dvdt : target_curv;
      kosmos::Impl::require(trend >= (name == "dvdt" ? 1 : 2), where, "prior on ", name,
                            " needs trend >= ", name == "dvdt" ? 1 : 2, " (trend = ", trend, ")");
    } else if ((name.rfind("gamma_", 0) == 0 || name.rfind("jitter_", 0) == 0)) {
      const std::string inst = name.substr(name.find('_') + 1);
      const auto it = std::find(instruments.begin(), instruments.end(), inst);
      kosmos::Impl::require(it != instruments.end(), where, "prior on ", name, ": no instrument '",
                            inst, "' in the data");
      bp.target = name[0] == 'g' ? target_gamma : target_jitter;
      bp.index = int(it - instruments.begin());
    } else if (suffix.size() == 1 && letters.find(suffix[0]) != std::string::npos) {
      bp.index = int(letters.find(suffix[0]));
      kosmos::Impl::require(bp.index < max_planets, where, "prior on ", name, ": planet ", suffix,
                            " is beyond the ", max_planets, " planet(s) fitted");
      if (base == "P")
        bp.target = target_P;
      else if (base == "K")
        bp.target = target_K;
      else if (base == "e")
        bp.target = target_e;
      else if (base == "omega")
        bp.target = target_omega;
      else if (base == "Tc")
        bp.target = target_Tc;
      else
        known = false;
    } else {
      known = false;
    }
    kosmos::Impl::require(known, where, "unknown parameter '", name,
                          "' in a prior (P_b, K_b, e_b, omega_b, Tc_b, gamma_<instrument>, "
                          "jitter_<instrument>, dvdt, "
                          "curv)");
    if (p.kind == Prior::fixed) {
      kosmos::Impl::require(bp.target != target_e || (p.a >= 0 && p.a < 1), where, name, " = ", p.a,
                            " is outside [0, 1)");
      kosmos::Impl::require(bp.target != target_omega || (p.a >= -360 && p.a <= 360), where, name,
                            " = ", p.a, " deg is outside [-360, 360]");
      kosmos::Impl::require(bp.target != target_P || p.a > 0, where, name, " = ", p.a,
                            " is not a positive period");
      for (const auto& other : out)
        kosmos::Impl::require(!(other.prior.kind == Prior::fixed && other.target == bp.target &&
                                other.index == bp.index),
                              where, name, " is fixed twice");
    }
    out.push_back(bp);
  }
  return out;
}

// The model fitted for one planet count: the device-callable spec (layout, bounds, fixed
// orbital elements, prior terms), the fixed value of each vector entry and the prior terms.
struct Model : ModelSpec {
  std::vector<PriorTerm> terms;  // those on parameters of this model
  std::vector<double> fixed;     // per vector entry: the fixed value, or NaN when free

  Model(const ParamLayout& layout, const PriorBounds& b, double ep,
        const std::vector<BoundPrior>& all)
      : fixed(layout.dim(), std::numeric_limits<double>::quiet_NaN()) {
    L = layout;
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
// Small batches (one star's chains) run inline, as the DE-MCMC kernels' (kMinParallelRows).
template <class Body>
void host_for(const char* label, std::size_t n, const Body& body) {
  if (n < std::size_t(kMinParallelRows)) {
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

// One star through the search: the optimization stages, then the DE-MCMC state and output.
struct StarFit {
  const RVData* data = nullptr;
  double epoch = 0, baseline = 0;
  std::function<Model(int)> model_for;  // the model of a planet count
  std::unique_ptr<Model> model;         // the count sampled
  std::vector<double> current;          // its MAP
  SearchResult result;
  long long evaluations = 0;
  std::chrono::steady_clock::time_point start;
  // DE-MCMC state (chains x parameters), each parameter's jitter scale, and kept rows
  // (parameters, ln posterior, ln L) ordered (generation, chain).
  std::vector<double> chains, sigma, lnpost, lnlike;
  double start_lnpost = 0, start_lnlike = 0;  // at `current` when sampling began
  std::vector<std::vector<double>> kept;
  long long accepted = 0, proposed = 0;
};

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
  SamplerTiming timing;

 protected:
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

template <class Precision, class Space>
class BatchLikelihood : public Likelihood {
 public:
  // models[s] with observations [begin[s], begin[s] + count[s]) of obs; one star: all of them.
  BatchLikelihood(const HostObservations& obs, std::vector<Model> models, std::vector<int> begin,
                  std::vector<int> count, const Chi2Options& options)
      : models_(std::move(models)),
        begin_(std::move(begin)),
        count_(std::move(count)),
        evaluator_(Space(),
                   Observations<Space>(obs.t, obs.v, obs.sigma, obs.inst, obs.n_inst, obs.epoch),
                   options) {
    for (const auto& m : models_) n_inst_ = std::max(n_inst_, m.L.n_inst);
  }

  void evaluate_stars(const std::vector<const double*>& x, int rows, std::vector<double>& logpost,
                      std::vector<double>* loglike_out, std::vector<double>* chi2_out) override {
    const int n = int(models_.size()) * rows;
    Buffers& b = buffers(rows);
    auto& host = b.host;
    prior_.assign(n, 0.0);
    const Kokkos::DefaultHostExecutionSpace host_space;
    timed(host_space, timing.generation, [&] {
      host_for("kosmos::kepler::search::stage", std::size_t(n), [&](const std::size_t row) {
        const int r = int(row);
        const Model& model = models_[std::size_t(r / rows)];
        const ParamLayout& L = model.L;
        const double* xr = x[std::size_t(r / rows)] + std::size_t(r % rows) * L.dim();
        prior_[r] = model.log_prior(xr);
        model.stage(host, r, xr, prior_[r] > kNegInf);
      });
    });
    const Space space;
    timed(space, timing.transfers, [&] { host.copy_to(b.models); });
    timed(space, timing.likelihood, [&] { evaluator_.evaluate(b.models, b.chi2, b.ll); });
    Kokkos::View<double*, Kokkos::HostSpace> hl, hc;
    timed(space, timing.transfers, [&] {
      hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.ll);
      if (chi2_out) hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.chi2);
    });
    timed(host_space, timing.generation, [&] {
      logpost.resize(n);
      for (int r = 0; r < n; ++r)
        logpost[r] = prior_[r] > kNegInf && std::isfinite(hl(r)) ? hl(r) + prior_[r] : kNegInf;
      if (loglike_out) loglike_out->assign(hl.data(), hl.data() + n);
      if (chi2_out) chi2_out->assign(hc.data(), hc.data() + n);
    });
    evaluations += n;
  }

  void run_chains(const std::vector<StarFit*>& fits, const SearchOptions& opt, std::uint64_t seed,
                  Progress& progress) override {
    const int n_stars = int(models_.size()), n = opt.chains, half = n / 2;
    int width = 1;
    for (const auto& m : models_) width = std::max(width, m.L.dim());
    DeMcmcChains<Space> chains(n_stars, n, width, seed);
    {  // upload: models with their prior terms, scales and starting chains
      auto spec = Kokkos::create_mirror_view(chains.spec);
      auto sigma = Kokkos::create_mirror_view(chains.sigma);
      auto gamma = Kokkos::create_mirror_view(chains.de_gamma);
      auto state = Kokkos::create_mirror_view(chains.state);
      auto lnpost = Kokkos::create_mirror_view(chains.lnpost);
      auto lnlike = Kokkos::create_mirror_view(chains.lnlike);
      std::vector<PriorTerm> terms;
      for (int s = 0; s < n_stars; ++s) {
        const StarFit& fit = *fits[std::size_t(s)];
        const Model& m = models_[std::size_t(s)];
        const int dim = m.L.dim();
        spec(s) = m;
        spec(s).term_begin = int(terms.size());
        terms.insert(terms.end(), m.terms.begin(), m.terms.end());
        gamma(s) = 2.38 / std::sqrt(2.0 * std::max(1, fit.result.n_free));
        for (int d = 0; d < dim; ++d) sigma(s, d) = fit.sigma[std::size_t(d)];
        for (int c = 0; c < n; ++c) {
          const int row = s * n + c;
          for (int d = 0; d < dim; ++d) state(row, d) = fit.chains[std::size_t(c) * dim + d];
          lnpost(row) = fit.lnpost[std::size_t(c)];
          lnlike(row) = fit.lnlike[std::size_t(c)];
        }
      }
      chains.terms = Kokkos::View<PriorTerm*, Space>("kosmos::kepler::de_mcmc::terms",
                                                     std::max<std::size_t>(1, terms.size()));
      auto terms_host = Kokkos::create_mirror_view(chains.terms);
      std::copy(terms.begin(), terms.end(), terms_host.data());
      timed(Space(), timing.transfers, [&] {
        Kokkos::deep_copy(chains.spec, spec);
        Kokkos::deep_copy(chains.terms, terms_host);
        Kokkos::deep_copy(chains.sigma, sigma);
        Kokkos::deep_copy(chains.de_gamma, gamma);
        Kokkos::deep_copy(chains.state, state);
        Kokkos::deep_copy(chains.lnpost, lnpost);
        Kokkos::deep_copy(chains.lnlike, lnlike);
      });
    }
    // Kept generations go to the device in blocks of up to ~64 MiB, then to the host.
    const int n_keep = opt.steps / opt.thin + (opt.steps % opt.thin ? 1 : 0);
    const std::size_t generation_bytes = sizeof(double) * std::size_t(n_stars) * n * (width + 2);
    const int block = int(std::max<std::size_t>(
        1, std::min<std::size_t>(std::size_t(n_keep), (std::size_t(64) << 20) / generation_bytes)));
    Kokkos::View<double***, Kokkos::LayoutRight, Space> kept("kosmos::kepler::de_mcmc::kept", block,
                                                             std::size_t(n_stars) * n, width + 2);
    auto kept_host = Kokkos::create_mirror_view(kept);
    int filled = 0;
    auto flush = [&] {
      timed(Space(), timing.transfers, [&] { Kokkos::deep_copy(kept_host, kept); });
      timed(Kokkos::DefaultHostExecutionSpace(), timing.generation, [&] {
        host_for("kosmos::kepler::de_mcmc::unpack", std::size_t(n_stars), [&](const std::size_t s) {
          StarFit& fit = *fits[s];
          const int dim = models_[s].L.dim();
          for (int slot = 0; slot < filled; ++slot)
            for (int c = 0; c < n; ++c) {
              const double* src = &kept_host(slot, s * std::size_t(n) + std::size_t(c), 0);
              fit.kept.emplace_back(src, src + dim + 2);
              fit.result.sample_chain.push_back(c);
            }
        });
      });
      filled = 0;
    };
    Buffers& b = buffers(half);
    const Space space;
    const int generations = opt.burn + opt.steps;
    progress.reset();
    for (int g = 0; g < generations; ++g) {
      for (int part = 0; part < 2; ++part) {
        timed(space, timing.generation, [&] { chains.propose(g, part, b.models); });
        timed(space, timing.likelihood, [&] { evaluator_.evaluate(b.models, b.chi2, b.ll); });
        timed(space, timing.generation, [&] { chains.accept(g, part, b.ll); });
      }
      evaluations += std::int64_t(n_stars) * n;
      if (g >= opt.burn && (g - opt.burn) % opt.thin == 0) {
        timed(space, timing.generation, [&] { chains.keep(kept, filled); });
        if (++filled == block) flush();
      }
      const bool burn_in = g < opt.burn;
      const long long done = burn_in ? g + 1 : g + 1 - opt.burn,
                      total = burn_in ? opt.burn : opt.steps;
      std::string extra;
      if (n_stars == 1 && progress.due(done, total)) {  // the single search reports its chains
        auto accepted = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chains.accepted);
        auto lnpost = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chains.lnpost);
        long long sum = 0;
        for (int c = 0; c < n; ++c) sum += accepted(c);
        std::ostringstream o;
        o << ", acceptance " << std::fixed << std::setprecision(2)
          << double(sum) / (double(g + 1) * n)
          << ", best ln posterior = " << *std::max_element(lnpost.data(), lnpost.data() + n);
        extra = o.str();
      }
      progress.step(burn_in ? "DE-MCMC burn-in" : "DE-MCMC sampling", done, total, extra);
      if (g + 1 == opt.burn) progress.reset();
    }
    if (filled > 0) flush();
    auto accepted = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chains.accepted);
    for (int s = 0; s < n_stars; ++s) {
      StarFit& fit = *fits[std::size_t(s)];
      for (int c = 0; c < n; ++c) fit.accepted += accepted(s * n + c);
      fit.proposed += (long long)generations * n;
    }
  }

 private:
  // Device buffers per batch of `rows` rows per star (the DE population, Nelder-Mead's 1, 4 and
  // n + 1, a DE-MCMC half, ...).
  struct Buffers;
  Buffers& buffers(int rows) {
    const int n_stars = int(models_.size()), n = n_stars * rows;
    const ParamLayout& L0 = models_.front().L;
    Buffers& b = buffers_[rows];
    if (b.models.n_systems() != n) {
      b.models = Models<Precision, Space>(n, L0.n_pl, n_inst_, L0.n_trend);
      if (n_stars > 1) b.models.enable_observation_ranges();
      b.host = ModelsHostMirror<Precision, Space>(b.models);
      b.chi2 = Kokkos::View<double*, Space>("kosmos::kepler::search::chi2", n);
      b.ll = Kokkos::View<double*, Space>("kosmos::kepler::search::loglike", n);
      for (int r = 0; r < n && n_stars > 1; ++r) {
        b.host.obs_range(r, 0) = begin_[std::size_t(r / rows)];
        b.host.obs_range(r, 1) = count_[std::size_t(r / rows)];
      }
      // the survey layout's ranges go to the device once; parameters are staged per batch
      if (n_stars > 1) Kokkos::deep_copy(b.models.obs_range, b.host.obs_range);
    }
    return b;
  }
  struct Buffers {
    Models<Precision, Space> models;
    ModelsHostMirror<Precision, Space> host;
    Kokkos::View<double*, Space> chi2, ll;
  };
  std::vector<Model> models_;
  std::vector<int> begin_, count_;
  int n_inst_ = 0;
  Chi2Evaluator<Precision, Space> evaluator_;
  std::map<int, Buffers> buffers_;
  std::vector<double> prior_;
};

template <class Space>
std::unique_ptr<Likelihood> make_likelihood_on(const HostObservations& obs,
                                               std::vector<Model> models, std::vector<int> begin,
                                               std::vector<int> count, const SearchOptions& opt) {
  Chi2Options co;
  co.validate = false;  // every model is inside the prior (checked on the host)
  co.solver.solver = opt.solver;
  std::unique_ptr<Likelihood> lik;
  if (opt.mixed_precision)
    lik = std::make_unique<BatchLikelihood<Mixed, Space>>(obs, std::move(models), std::move(begin),
                                                          std::move(count), co);
  else
    lik = std::make_unique<BatchLikelihood<Double, Space>>(obs, std::move(models), std::move(begin),
                                                           std::move(count), co);
  lik->time_stages = opt.time_stages;
  return lik;
}
std::unique_ptr<Likelihood> make_likelihood(const HostObservations& obs, std::vector<Model> models,
                                            std::vector<int> begin, std::vector<int> count,
                                            const SearchOptions& opt) {
  if (opt.host_space)
    return make_likelihood_on<Kokkos::DefaultHostExecutionSpace>(
        obs, std::move(models), std::move(begin), std::move(count), opt);
  return make_likelihood_on<Kokkos::DefaultExecutionSpace>(obs, std::move(models), std::move(begin),
                                                           std::move(count), opt);
}
std::unique_ptr<Likelihood> make_likelihood(const HostObservations& obs, const Model& model,
                                            const SearchOptions& opt) {
  return make_likelihood(obs, {model}, {0}, {int(obs.t.size())}, opt);
}

// Generalized Lomb-Scargle power (Zechmeister & Kuerster 2009) on a frequency grid, plus the
// sinusoid's cos/sin amplitudes; one frequency per work item.
template <class Space>
struct GLSFunctor {
  Kokkos::View<const double*, Space> t, y, w;  // w normalized to sum 1
  Kokkos::View<double*, Space> power, a, b;
  double f0, df;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const double omega = math::two_pi<double>() * (f0 + i * df);
    double Y = 0, C = 0, S = 0, YY = 0, YC = 0, YS = 0, CC = 0, SS = 0, CS = 0;
    for (int k = 0; k < n; ++k) {
      const double c = math::cos(omega * t(k)), s = math::sin(omega * t(k)), wk = w(k), yk = y(k);
      Y += wk * yk;
      C += wk * c;
      S += wk * s;
      YY += wk * yk * yk;
      YC += wk * yk * c;
      YS += wk * yk * s;
      CC += wk * c * c;
      SS += wk * s * s;
      CS += wk * c * s;
    }
    YY -= Y * Y;
    YC -= Y * C;
    YS -= Y * S;
    CC -= C * C;
    SS -= S * S;
    CS -= C * S;
    const double D = CC * SS - CS * CS;
    power(i) = D > 0 && YY > 0 ? (SS * YC * YC + CC * YS * YS - 2 * CS * YC * YS) / (YY * D) : 0.0;
    a(i) = D > 0 ? (YC * SS - YS * CS) / D : 0.0;
    b(i) = D > 0 ? (YS * CC - YC * CS) / D : 0.0;
  }
};

struct Peak {
  double period, power, amplitude, phase;  // y ~ amplitude cos(2 pi t / P + phase)
};

template <class Space>
std::vector<Peak> periodogram_peaks_on(const std::vector<double>& t, const std::vector<double>& y,
                                       const std::vector<double>& w, double f_min, double f_max,
                                       double df, int max_peaks, double baseline) {
  const int n = int(t.size());
  const int nf = int((f_max - f_min) / df) + 1;  // <= max_periodogram_frequencies (search())
  Kokkos::View<double*, Space> dt("kosmos::kepler::gls::t", n), dy("kosmos::kepler::gls::y", n),
      dw("kosmos::kepler::gls::w", n), power("kosmos::kepler::gls::power", nf),
      a("kosmos::kepler::gls::a", nf), b("kosmos::kepler::gls::b", nf);
  auto ht = Kokkos::create_mirror_view(dt);
  auto hy = Kokkos::create_mirror_view(dy);
  auto hw = Kokkos::create_mirror_view(dw);
  double wsum = 0;
  for (int k = 0; k < n; ++k) wsum += w[k];
  for (int k = 0; k < n; ++k) {
    ht(k) = t[k];
    hy(k) = y[k];
    hw(k) = w[k] / wsum;
  }
  Kokkos::deep_copy(dt, ht);
  Kokkos::deep_copy(dy, hy);
  Kokkos::deep_copy(dw, hw);
  Kokkos::parallel_for("kosmos::kepler::periodogram", Kokkos::RangePolicy<Space>(0, nf),
                       GLSFunctor<Space>{dt, dy, dw, power, a, b, f_min, df, n});
  auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), power);
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  std::vector<int> maxima;
  for (int i = 0; i < nf; ++i)
    if ((i == 0 || hp(i) >= hp(i - 1)) && (i == nf - 1 || hp(i) >= hp(i + 1))) maxima.push_back(i);
  std::sort(maxima.begin(), maxima.end(), [&](int p, int q) { return hp(p) > hp(q); });
  std::vector<Peak> peaks;
  for (int i : maxima) {
    const double f = f_min + i * df;
    bool distinct = true;
    for (const auto& p : peaks)
      distinct = distinct && std::fabs(1.0 / p.period - f) > 1.5 / baseline;
    if (!distinct) continue;
    // y = a cos(w t) + b sin(w t) = A cos(w t + phase)
    peaks.push_back({1.0 / f, hp(i), std::hypot(ha(i), hb(i)), std::atan2(-hb(i), ha(i))});
    if (int(peaks.size()) == max_peaks) break;
  }
  return peaks;
}
std::vector<Peak> periodogram_peaks(bool host_space, const std::vector<double>& t,
                                    const std::vector<double>& y, const std::vector<double>& w,
                                    double f_min, double f_max, double df, int max_peaks,
                                    double baseline) {
  return host_space ? periodogram_peaks_on<Kokkos::DefaultHostExecutionSpace>(
                          t, y, w, f_min, f_max, df, max_peaks, baseline)
                    : periodogram_peaks_on<Kokkos::DefaultExecutionSpace>(t, y, w, f_min, f_max, df,
                                                                          max_peaks, baseline);
}

// Characteristic step of each parameter (starting scatter, finite-difference steps, simplex).
std::vector<double> parameter_scales(const std::vector<double>& x, const ParamLayout& L,
                                     double baseline) {
  std::vector<double> s(L.dim());
  for (int j = 0; j < L.n_pl; ++j) {
    const double P = std::exp(x[L.lnP(j)]);
    s[L.lnP(j)] = 0.05 * P / baseline;  // about a twentieth of the periodogram peak width
    s[L.K(j)] = 0.2;
    s[L.h(j)] = s[L.k(j)] = 0.03;
    s[L.lambda(j)] = 0.05;
  }
  for (int i = 0; i < L.n_inst; ++i) {
    s[L.gamma(i)] = 0.3;
    s[L.jitter(i)] = 0.3;
  }
  for (int i = 0; i < L.n_trend; ++i)
    s[L.trend(i)] = 0.3 / std::pow(baseline, i + 1);  // 0.3 m/s over the span
  return s;
}

// Differential-evolution optimization (current-to-best/1/bin, dithered F) of ln L.
void optimize(Likelihood& lik, const Model& model, std::vector<double>& pop,
              std::vector<double>& fit, int generations, std::mt19937_64& rng, Progress& progress,
              const std::string& stage) {
  const ParamLayout& L = model.L;
  const int dim = L.dim(), n = int(fit.size());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> pick(0, n - 1), pick_dim(0, dim - 1);
  std::vector<double> trial(pop.size()), trial_fit;
  progress.reset();
  for (int g = 0; g < generations; ++g) {
    const int best = int(std::max_element(fit.begin(), fit.end()) - fit.begin());
    for (int i = 0; i < n; ++i) {
      int a, b;
      do a = pick(rng);
      while (a == i);
      do b = pick(rng);
      while (b == i || b == a);
      const double F = 0.4 + 0.5 * u(rng), CR = 0.9;
      const int jr = pick_dim(rng);
      for (int d = 0; d < dim; ++d) {
        const double xi = pop[std::size_t(i) * dim + d];
        trial[std::size_t(i) * dim + d] =
            (d == jr || u(rng) < CR)
                ? xi + F * (pop[std::size_t(best) * dim + d] - xi) +
                      F * (pop[std::size_t(a) * dim + d] - pop[std::size_t(b) * dim + d])
                : xi;
      }
      // jitters fold back into [0, ...): |s|
      for (int q = 0; q < L.n_inst; ++q)
        trial[std::size_t(i) * dim + L.jitter(q)] =
            std::fabs(trial[std::size_t(i) * dim + L.jitter(q)]);
      model.apply_fixed(&trial[std::size_t(i) * dim]);
    }
    lik.evaluate(trial, n, trial_fit);
    for (int i = 0; i < n; ++i)
      if (trial_fit[i] > fit[i]) {
        fit[i] = trial_fit[i];
        std::copy(trial.begin() + std::size_t(i) * dim, trial.begin() + std::size_t(i + 1) * dim,
                  pop.begin() + std::size_t(i) * dim);
      }
    std::ostringstream extra;
    extra << ", best ln L = " << std::fixed << std::setprecision(2)
          << *std::max_element(fit.begin(), fit.end());
    progress.step(stage, g + 1, generations, extra.str());
  }
}

// The q-quantile (linear interpolation) of ascending values.
double sorted_percentile(const std::vector<double>& v, double q) {
  const double pos = q * (v.size() - 1);
  const std::size_t i = std::size_t(pos);
  const double f = pos - i;
  return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

// Nelder-Mead (adaptive coefficients of Gao & Han 2012) on the free parameters of `x`, maximizing
// ln posterior; each iteration's four trial points (reflection, expansion, both contractions)
// are one batched evaluation. Restarts from the best point until a restart gains < 1e-4.
// Returns the maximum; x holds its parameters.
double polish(Likelihood& lik, const Model& model, std::vector<double>& x,
              const std::vector<double>& scales) {
  const int dim = model.L.dim();
  std::vector<int> free;
  for (int d = 0; d < dim; ++d)
    if (!model.is_fixed(d)) free.push_back(d);
  const int n = int(free.size());
  std::vector<double> f;
  lik.evaluate(x, 1, f);
  double best = f[0];
  if (n == 0 || !std::isfinite(best)) return best;
  const double alpha = 1, beta = 1 + 2.0 / n, gamma = 0.75 - 0.5 / n, delta = 1 - 1.0 / n;
  auto point = [&](const std::vector<double>& base, const std::vector<double>& y) {
    std::vector<double> p = base;
    for (int i = 0; i < n; ++i) p[free[i]] = y[i];
    return p;
  };
  for (int restart = 0; restart < 5; ++restart) {
    // Simplex: x and x + scale along each free parameter; values are -ln posterior.
    std::vector<std::vector<double>> simplex(n + 1, std::vector<double>(n));
    for (int i = 0; i <= n; ++i)
      for (int q = 0; q < n; ++q) simplex[i][q] = x[free[q]] + (i == q + 1 ? scales[free[q]] : 0.0);
    std::vector<double> batch(std::size_t(n + 1) * dim);
    for (int i = 0; i <= n; ++i) {
      const auto p = point(x, simplex[i]);
      std::copy(p.begin(), p.end(), batch.begin() + std::size_t(i) * dim);
    }
    lik.evaluate(batch, n + 1, f);
    std::vector<double> value(n + 1);
    for (int i = 0; i <= n; ++i) value[i] = -f[i];
    std::vector<int> order(n + 1);
    for (int it = 0; it < 400 * n; ++it) {
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int a, int b) { return value[a] < value[b]; });
      const int lo = order[0], hi = order[n], second = order[n - 1];
      if (value[hi] - value[lo] < 1e-7)
        break;  // ln posterior resolved far below its 1-sigma scale of 0.5
      std::vector<double> centroid(n, 0.0);
      for (int i = 0; i <= n; ++i)
        if (i != hi)
          for (int q = 0; q < n; ++q) centroid[q] += simplex[i][q] / n;
      std::vector<std::vector<double>> trial(4, std::vector<double>(n));
      const double coef[4] = {alpha, alpha * beta, alpha * gamma,
                              -gamma};  // reflect, expand, outside, inside
      batch.assign(std::size_t(4) * dim, 0.0);
      for (int t = 0; t < 4; ++t) {
        for (int q = 0; q < n; ++q)
          trial[t][q] = centroid[q] + coef[t] * (centroid[q] - simplex[hi][q]);
        const auto p = point(x, trial[t]);
        std::copy(p.begin(), p.end(), batch.begin() + std::size_t(t) * dim);
      }
      lik.evaluate(batch, 4, f);
      const double fr = -f[0], fe = -f[1], foc = -f[2], fic = -f[3];
      int accept = -1;
      if (fr < value[lo])
        accept = fe < fr ? 1 : 0;
      else if (fr < value[second])
        accept = 0;
      else if (fr < value[hi])
        accept = foc <= fr ? 2 : 0;
      else if (fic < value[hi])
        accept = 3;
      if (accept >= 0) {
        simplex[hi] = trial[accept];
        value[hi] = -f[accept];
        continue;
      }
      // Shrink towards the best point.
      batch.assign(std::size_t(n) * dim, 0.0);
      int r = 0;
      for (int i = 0; i <= n; ++i) {
        if (i == lo) continue;
        for (int q = 0; q < n; ++q)
          simplex[i][q] = simplex[lo][q] + delta * (simplex[i][q] - simplex[lo][q]);
        const auto p = point(x, simplex[i]);
        std::copy(p.begin(), p.end(), batch.begin() + std::size_t(r++) * dim);
      }
      lik.evaluate(batch, n, f);
      r = 0;
      for (int i = 0; i <= n; ++i)
        if (i != lo) value[i] = -f[r++];
    }
    const int lo = int(std::min_element(value.begin(), value.end()) - value.begin());
    const double gain = -value[lo] - best;
    if (gain > 0) {
      best = -value[lo];
      x = point(x, simplex[lo]);
    }
    if (!(gain >= 1e-4)) break;
  }
  return best;
}

constexpr double kGMSun = 1.3271244e20, kGMJupiter = 1.26686534e17,
                 kGMEarth = 3.986004e14;  // m^3/s^2 (IAU)
constexpr double kAu = 1.495978707e11;    // m
}  // namespace Impl

double Prior::log_density(double x) const {
  static_assert(int(uniform) == Impl::kind_uniform && int(log_uniform) == Impl::kind_log_uniform &&
                    int(gaussian) == Impl::kind_gaussian &&
                    int(truncated_gaussian) == Impl::kind_truncated_gaussian &&
                    int(fixed) == Impl::kind_fixed,
                "kosmos::kepler::Prior: the kinds must be numbered as Impl::PriorKind");
  return Impl::prior_log_density(int(kind), a, b, lower, upper, x);
}

Prior parse_prior(const std::string& spec, const std::string& where) {
  std::istringstream in(spec);
  std::vector<std::string> f;
  for (std::string w; in >> w;) f.push_back(w);
  const std::string usage =
      " (expected NAME uniform A B | loguniform A B | gauss MU SIGMA | tgauss MU SIGMA A B | fixed "
      "V)";
  if (f.size() < 2) throw invalid_input(where + ": prior '" + spec + "' is incomplete" + usage);
  Prior p;
  p.parameter = f[0];
  const std::string& kind = f[1];
  std::size_t n_args = 0;
  if (kind == "uniform")
    p.kind = Prior::uniform, n_args = 2;
  else if (kind == "loguniform")
    p.kind = Prior::log_uniform, n_args = 2;
  else if (kind == "gauss")
    p.kind = Prior::gaussian, n_args = 2;
  else if (kind == "tgauss")
    p.kind = Prior::truncated_gaussian, n_args = 4;
  else if (kind == "fixed")
    p.kind = Prior::fixed, n_args = 1;
  else
    throw invalid_input(where + ": unknown prior kind '" + kind + "' for " + p.parameter + usage);
  if (f.size() != 2 + n_args)
    throw invalid_input(where + ": prior " + kind + " for " + p.parameter + " takes " +
                        std::to_string(n_args) + " number(s), got " + std::to_string(f.size() - 2) +
                        usage);
  double v[4] = {0, 0, 0, 0};
  for (std::size_t i = 0; i < n_args; ++i)
    if (!io::parse_double(f[2 + i], v[i]) || !(std::fabs(v[i]) <= largest_rv_magnitude))
      throw invalid_input(where + ": prior on " + p.parameter + ": '" + f[2 + i] +
                          "' is not a finite number within +-1e100");
  p.a = v[0];
  p.b = v[1];
  p.lower = v[2];
  p.upper = v[3];
  const bool ok = p.kind == Prior::fixed ||
                  ((p.kind == Prior::uniform || p.kind == Prior::log_uniform) && p.b > p.a &&
                   (p.kind == Prior::uniform || p.a > 0)) ||
                  ((p.kind == Prior::gaussian || p.kind == Prior::truncated_gaussian) && p.b > 0 &&
                   (p.kind == Prior::gaussian || p.upper > p.lower));
  if (!ok)
    throw invalid_input(
        where + ": prior '" + spec +
        "' is empty or improper (need B > A, A > 0 for loguniform, SIGMA > 0, upper > lower)");
  return p;
}

std::vector<Prior> read_prior_file(const std::string& path) {
  io::TextReader reader(path);
  std::vector<Prior> out;
  io::Record r;
  while (reader.next(r)) {
    std::string line;
    for (const auto& w : r.fields) line += (line.empty() ? "" : " ") + w;
    try {
      out.push_back(parse_prior(line, "prior"));
    } catch (const invalid_input& e) {
      reader.fail(r.line_number, e.what());
    }
  }
  return out;
}

// Split R-hat and effective sample size of one quantity from `chains` (equal lengths), after
// Gelman et al., BDA3 Sec. 11.4-11.5: each chain is split in halves; ESS from the variogram
// autocorrelations summed in pairs while positive (Geyer's initial positive sequence).
void chain_diagnostics(const std::vector<std::vector<double>>& chains, double& rhat, double& ess) {
  kosmos::Impl::require(!chains.empty() && !chains.front().empty(),
                        "kosmos::kepler::chain_diagnostics", "no samples");
  std::vector<const double*> halves;
  const int len = int(chains.front().size()) / 2;
  // Split halves need 2 samples each for a variance: with fewer the diagnostics are unknown (NaN),
  // not a reassuring R-hat of 1.
  rhat = std::numeric_limits<double>::quiet_NaN();
  ess = std::numeric_limits<double>::quiet_NaN();
  if (len < 2) return;
  rhat = 1;
  ess = double(chains.size()) * chains.front().size();
  for (const auto& c : chains) {
    halves.push_back(c.data());
    halves.push_back(c.data() + len);
  }
  const int m = int(halves.size());
  std::vector<double> mean(m, 0.0);
  double W = 0, grand = 0;
  for (int c = 0; c < m; ++c) {
    for (int i = 0; i < len; ++i) mean[c] += halves[c][i] / len;
    double v = 0;
    for (int i = 0; i < len; ++i) v += (halves[c][i] - mean[c]) * (halves[c][i] - mean[c]);
    W += v / (len - 1) / m;
    grand += mean[c] / m;
  }
  double B = 0;
  for (int c = 0; c < m; ++c) B += (mean[c] - grand) * (mean[c] - grand) * len / (m - 1);
  const double var_plus = (len - 1.0) / len * W + B / len;
  if (!(W > 0) || !(var_plus > 0)) return;  // constant (fixed) quantity
  rhat = std::sqrt(var_plus / W);
  double sum_rho = 0;
  for (int t = 1; t + 1 < len; t += 2) {
    double pair = 0;
    for (int lag = t; lag <= t + 1; ++lag) {
      double variogram = 0;
      for (int c = 0; c < m; ++c)
        for (int i = lag; i < len; ++i)
          variogram += (halves[c][i] - halves[c][i - lag]) * (halves[c][i] - halves[c][i - lag]);
      variogram /= double(m) * (len - lag);
      pair += 1 - variogram / (2 * var_plus);
    }
    if (pair < 0) break;
    sum_rho += pair;
  }
  ess = std::min(double(m) * len / (1 + 2 * sum_rho), double(m) * len);
}

PlanetMass minimum_mass(const Orbit& o, double stellar_mass) {
  using namespace Impl;
  kosmos::Impl::require(stellar_mass > 0 && o.P > 0 && o.K >= 0 && o.e >= 0 && o.e < 1,
                        "kosmos::kepler::minimum_mass",
                        "need stellar mass > 0, P > 0, K >= 0, 0 <= e < 1 (got ", stellar_mass,
                        ", ", o.P, ", ", o.K, ", ", o.e, ")");
  const double gm_star = stellar_mass * kGMSun, P = o.P * 86400.0, K = o.K, e = o.e;
  const double factor = K * std::sqrt((1 - e) * (1 + e)) * std::cbrt(P / kTwoPi);
  double gm_planet = 0;  // fixed point of the mass function; m / M_star < 1 converges fast
  for (int it = 0; it < 60; ++it) gm_planet = factor * std::pow(gm_star + gm_planet, 2.0 / 3.0);
  PlanetMass m;
  m.msini_jupiter = gm_planet / kGMJupiter;
  m.msini_earth = gm_planet / kGMEarth;
  m.a_au = std::cbrt((gm_star + gm_planet) * P * P / (kTwoPi * kTwoPi)) / kAu;
  return m;
}

const ParameterSummary& SearchResult::get(const std::string& column) const {
  for (const auto& s : summary)
    if (s.name == column) return s;
  throw invalid_input("kosmos::kepler::SearchResult::get: no column '" + column + "'");
}

namespace Impl {
void optimize_star(StarFit& fit, const SearchOptions& opt, std::mt19937_64& rng,
                   Progress& progress) {
  const RVData& data = *fit.data;
  constexpr const char* where = "kosmos::kepler::search";
  fit.start = std::chrono::steady_clock::now();
  kosmos::Impl::require(data.size() >= 5, where, "need at least 5 observations, got ", data.size());
  kosmos::Impl::require(opt.planets >= 0 && opt.planets <= 8, where, "planets = ", opt.planets,
                        " is outside [0, 8]");
  kosmos::Impl::require(opt.min_planets < opt.planets, where, "min_planets = ", opt.min_planets,
                        " must be < planets = ", opt.planets, " (or < 0: no comparison)");
  kosmos::Impl::require(opt.trend >= 0 && opt.trend <= 2, where, "trend = ", opt.trend,
                        " is not 0, 1 or 2");
  const double baseline = data.baseline();
  kosmos::Impl::require(baseline > 0, where, "the observations span no time");
  const double p_max = opt.period_max > 0 ? opt.period_max : 2 * baseline;
  kosmos::Impl::require(opt.period_min > 0 && p_max > opt.period_min, where, "period range [",
                        opt.period_min, ", ", p_max, "] is empty or not positive");
  // The periodogram scans frequencies from 1 / p_max to 1 / period_min.
  const double frequencies = (1 / opt.period_min - 1 / p_max) / periodogram_step(baseline) + 1;
  kosmos::Impl::require(frequencies <= max_periodogram_frequencies, where, "the periodogram would scan ",
                        frequencies, " frequencies (observations spanning ", baseline,
                        " d, periods down to ", opt.period_min, " d); at most ", max_periodogram_frequencies,
                        ": raise period_min, or check that the times are in days");
  kosmos::Impl::require(opt.e_max > 0 && opt.e_max < 1, where, "e_max = ", opt.e_max,
                        " is outside (0, 1)");
  kosmos::Impl::require(opt.k_max > 0 && opt.jitter_max > 0, where,
                        "k_max and jitter_max must be > 0");
  // Above 1000 solar masses (no star is) the masses' arithmetic overflows to inf and NaN.
  kosmos::Impl::require(opt.stellar_mass >= 0 && opt.stellar_mass_sigma >= 0 && opt.stellar_mass <= 1e3 &&
                            opt.stellar_mass_sigma <= 1e3,
                        where, "stellar mass ", opt.stellar_mass, " +- ", opt.stellar_mass_sigma,
                        " must be within [0, 1000] solar masses");
  const double epoch = opt.epoch != 0 ? opt.epoch : data.mid_time();
  // Times enter as t - epoch: 1e7 d (27000 years) from the data keeps their phases exact to
  // ~1e-9 d in double; an epoch of 1e20 gave wrong fits.
  kosmos::Impl::require(std::fabs(epoch - data.mid_time()) <= 1e7, where, "epoch ", epoch,
                        " is more than 1e7 d from the observations (mid time ", data.mid_time(), ")");
  fit.epoch = epoch;
  fit.baseline = baseline;
  const PriorBounds bounds{std::log(opt.period_min), std::log(p_max), opt.k_max, opt.e_max,
                           opt.jitter_max};
  const auto bound_priors = bind_priors(opt.priors, data.instrument_names, opt.planets, opt.trend);
  auto model_for = [&](int n_pl) {
    return Model({n_pl, data.n_instruments(), opt.trend}, bounds, epoch, bound_priors);
  };
  fit.model_for = model_for;
  const Model full = model_for(opt.planets);
  const int dim_full = full.n_free();
  kosmos::Impl::require(opt.chains >= 2 * dim_full + 2 && opt.chains % 2 == 0, where,
                        "chains = ", opt.chains,
                        " must be even and >= 2 x parameters + 2 = ", 2 * dim_full + 2);
  kosmos::Impl::require(opt.burn >= 0 && opt.steps >= 1 && opt.thin >= 1, where,
                        "burn = ", opt.burn, ", steps = ", opt.steps, ", thin = ", opt.thin,
                        ": need burn >= 0, steps >= 1, thin >= 1");
  kosmos::Impl::require(opt.optimizer_generations >= 1 && opt.random_candidates >= opt.chains,
                        where, "optimizer_generations = ", opt.optimizer_generations,
                        ", random_candidates = ", opt.random_candidates,
                        ": need >= 1 and >= chains");
  {
    std::vector<double> x(full.L.dim(), 0.0);
    for (int j = 0; j < full.L.n_pl; ++j)
      x[full.L.lnP(j)] = 0.5 * (bounds.lnP_min + bounds.lnP_max);
    for (int d = 0; d < full.L.dim(); ++d)
      if (full.is_fixed(d)) x[d] = full.fixed[d];
    kosmos::Impl::require(
        full.in_bounds(x.data()), where,
        "a fixed value lies outside the search bounds (period range, K <= k_max, e < e_max, "
        "0 <= jitter <= jitter_max)");
  }
  const HostObservations obs(data, epoch);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> gauss(0.0, 1.0);
  SearchResult& result = fit.result;
  result.epoch = epoch;
  result.n_obs = int(data.size());
  result.trend = opt.trend;
  result.instruments = data.instrument_names;
  long long& evaluations = fit.evaluations;
  const bool compare = opt.min_planets >= 0;
  std::vector<std::vector<double>> optimum_of_count;  // polished optimum per planet count

  // Runs DE on `pop` (already filled), polishes the best member and returns it.
  auto optimize_and_polish = [&](Likelihood& lik, const Model& model, std::vector<double>& pop,
                                 const std::string& stage) {
    const int n = int(pop.size()) / model.L.dim();
    std::vector<double> fit;
    lik.evaluate(pop, n, fit);
    optimize(lik, model, pop, fit, opt.optimizer_generations, rng, progress,
             stage + " optimization");
    const int best = int(std::max_element(fit.begin(), fit.end()) - fit.begin());
    std::vector<double> x(pop.begin() + std::size_t(best) * model.L.dim(),
                          pop.begin() + std::size_t(best + 1) * model.L.dim());
    const long long before = lik.evaluations;
    const double polished = polish(lik, model, x, parameter_scales(x, model.L, baseline));
    std::ostringstream m;
    m << stage << ": ln posterior " << std::setprecision(10) << fit[best] << " (DE) -> " << polished
      << " (Nelder-Mead, " << lik.evaluations - before << " evaluations)";
    progress.message(m.str());
    return x;
  };

  // 0. Offsets, jitters and trend: DE from the per-instrument weighted means.
  std::vector<double> current;
  {
    const Model m0 = model_for(0);
    const int d0 = m0.L.dim();
    std::vector<double> start(d0, 0.0);
    std::vector<double> sw(m0.L.n_inst, 0), swv(m0.L.n_inst, 0);
    for (std::size_t k = 0; k < data.size(); ++k) {
      const double w = 1 / (data.sigma[k] * data.sigma[k]);
      sw[data.instrument[k]] += w;
      swv[data.instrument[k]] += w * data.velocity[k];
    }
    for (int i = 0; i < m0.L.n_inst; ++i) {
      start[m0.L.gamma(i)] = swv[i] / sw[i];
      start[m0.L.jitter(i)] = 1.0;
    }
    const auto scales = parameter_scales(start, m0.L, baseline);
    std::vector<double> pop(std::size_t(opt.chains) * d0);
    for (int i = 0; i < opt.chains; ++i) {
      double* x = &pop[std::size_t(i) * d0];
      for (int d = 0; d < d0; ++d) x[d] = start[d] + (i == 0 ? 0.0 : 10 * scales[d] * gauss(rng));
      for (int q = 0; q < m0.L.n_inst; ++q) x[m0.L.jitter(q)] = std::fabs(x[m0.L.jitter(q)]);
      m0.apply_fixed(x);
    }
    auto lik = make_likelihood(obs, m0, opt);
    current = optimize_and_polish(*lik, m0, pop, "no planet");
    evaluations += lik->evaluations;
    optimum_of_count.push_back(current);
  }

  // 1. One planet at a time: periodogram of the residuals (or the prior on P), random search,
  //    DE optimization, Nelder-Mead polish.
  for (int p = 0; p < opt.planets; ++p) {
    const Model mo = model_for(p), mn = model_for(p + 1);
    const ParamLayout &Lo = mo.L, &Ln = mn.L;
    std::vector<double> t(data.size()), y(data.size()), w(data.size());
    for (std::size_t k = 0; k < data.size(); ++k) {
      const double dt = data.time[k] - epoch;
      double model = current[Lo.gamma(data.instrument[k])];
      for (int i = 0; i < Lo.n_trend; ++i) model += current[Lo.trend(i)] * std::pow(dt, i + 1);
      for (int j = 0; j < p; ++j)
        model += radial_velocity(mo.orbit(current.data(), j), data.time[k], epoch);
      const double s = current[Lo.jitter(data.instrument[k])];
      t[k] = dt;
      y[k] = data.velocity[k] - model;
      w[k] = 1 / (data.sigma[k] * data.sigma[k] + s * s);
    }
    const auto peaks = periodogram_peaks(opt.host_space, t, y, w, 1 / p_max, 1 / opt.period_min,
                                         periodogram_step(baseline), 3, baseline);
    kosmos::Impl::require(!peaks.empty(), where, "no periodogram peak for planet ", p + 1);
    {
      std::ostringstream m;
      m << "planet " << p + 1 << ": periodogram peaks at";
      for (const auto& pk : peaks)
        m << " " << std::setprecision(6) << pk.period << " d (power " << std::setprecision(3)
          << pk.power << ")";
      progress.message(m.str());
    }
    result.periodogram_periods.push_back(peaks[0].period);
    double rms = 0;
    for (double v : y) rms += v * v / double(y.size());
    rms = std::sqrt(rms);
    // A prior on this planet's P (or Tc) replaces the periodogram's period (and phase).
    const Prior* p_prior = nullptr;
    const Prior* tc_prior = nullptr;
    for (const auto& bp : bound_priors)
      if (bp.index == p && (bp.target == target_P || bp.target == target_Tc))
        (bp.target == target_P ? p_prior : tc_prior) = &bp.prior;
    auto draw = [&](const Prior& pr) {
      switch (pr.kind) {
        case Prior::uniform:
          return pr.a + (pr.b - pr.a) * u(rng);
        case Prior::log_uniform:
          return pr.a * std::pow(pr.b / pr.a, u(rng));
        case Prior::gaussian:
          return pr.a + pr.b * gauss(rng);
        case Prior::truncated_gaussian:
          return std::min(std::max(pr.a + pr.b * gauss(rng), pr.lower), pr.upper);
        case Prior::fixed:
          return pr.a;
      }
      return pr.a;
    };

    const int nc = opt.random_candidates, dn = Ln.dim();
    std::vector<double> cand(std::size_t(nc) * dn);
    for (int c = 0; c < nc; ++c) {
      double* x = &cand[std::size_t(c) * dn];
      for (int j = 0; j < p; ++j)
        for (int q = 0; q < 5; ++q) x[5 * j + q] = current[5 * j + q];
      for (int i = 0; i < Ln.n_inst; ++i) {
        x[Ln.gamma(i)] = current[Lo.gamma(i)];
        x[Ln.jitter(i)] = current[Lo.jitter(i)];
      }
      for (int i = 0; i < Ln.n_trend; ++i) x[Ln.trend(i)] = current[Lo.trend(i)];
      const Peak& pk = peaks[c % peaks.size()];
      double P, K, phase;
      if (p_prior) {
        P = draw(*p_prior);
        K = rms * (0.2 + 1.3 * u(rng));
        phase = kTwoPi * u(rng);
      } else {
        const double f = 1 / pk.period + (u(rng) - 0.5) / baseline;
        P = 1 / std::max(f, 1 / p_max);
        K = pk.amplitude * (0.7 + 0.8 * u(rng));
        phase = pk.phase + 0.5 * gauss(rng);
      }
      P = std::min(std::max(P, opt.period_min), p_max);
      const double e = 0.6 * u(rng) * u(rng), omega = kTwoPi * u(rng);
      // the periodogram's phase is the mean longitude of a circular orbit
      const double M0 = tc_prior
                            ? mean_anomaly_from_conjunction(P, e, omega, draw(*tc_prior), epoch)
                            : phase - omega;
      mn.set_orbit(x, p, Orbit{P, std::min(K, opt.k_max), e, omega, M0});
      mn.apply_fixed(x);
    }
    auto lik = make_likelihood(obs, mn, opt);
    std::vector<double> cand_fit;
    lik->evaluate(cand, nc, cand_fit);
    std::vector<int> order(nc);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + opt.chains, order.end(),
                      [&](int a, int b) { return cand_fit[a] > cand_fit[b]; });
    const auto scales = parameter_scales(cand, Ln, baseline);
    std::vector<double> pop(std::size_t(opt.chains) * dn, 0);
    for (int i = 0; i < opt.chains; ++i) {
      const double* src = &cand[std::size_t(order[i]) * dn];
      double* dst = &pop[std::size_t(i) * dn];
      for (int d = 0; d < dn; ++d) dst[d] = src[d];
      if (i > 0)  // diversity in the parameters carried over from the previous stage
        for (int d = 0; d < dn; ++d)
          if (d < 5 * p || d >= 5 * (p + 1)) dst[d] += 0.3 * scales[d] * gauss(rng);
      for (int q = 0; q < Ln.n_inst; ++q) dst[Ln.jitter(q)] = std::fabs(dst[Ln.jitter(q)]);
      mn.apply_fixed(dst);
    }
    std::ostringstream stage;
    stage << "planet " << p + 1;
    current = optimize_and_polish(*lik, mn, pop, stage.str());
    evaluations += lik->evaluations;
    optimum_of_count.push_back(current);
    const Orbit o = mn.orbit(current.data(), p);
    std::ostringstream m;
    m << "planet " << p + 1 << ": P = " << std::setprecision(10) << o.P
      << " d, K = " << std::setprecision(6) << o.K << " m/s, e = " << std::setprecision(4) << o.e;
    progress.message(m.str());
  }

  // 2. Model comparison: ln L at each count's polished optimum, BIC, AICc; the preferred count.
  int count = opt.planets;
  if (compare) {
    const double n_obs = double(data.size());
    for (int c = opt.min_planets; c <= opt.planets; ++c) {
      const Model m = model_for(c);
      auto lik = make_likelihood(obs, m, opt);
      std::vector<double> lp, ll;
      lik->evaluate(optimum_of_count[c], 1, lp, &ll);
      ModelComparison mc;
      mc.planets = c;
      mc.n_free = m.n_free();
      mc.loglike = ll[0];
      const double k = mc.n_free;
      mc.bic = k * std::log(n_obs) - 2 * mc.loglike;
      mc.aicc =
          2 * k - 2 * mc.loglike + (n_obs - k - 1 > 0 ? 2 * k * (k + 1) / (n_obs - k - 1) : kInf);
      for (int j = 0; j < c; ++j) mc.orbits.push_back(m.orbit(optimum_of_count[c].data(), j));
      result.comparison.push_back(mc);
      evaluations += lik->evaluations;
    }
    count = opt.min_planets;
    double bic = result.comparison.front().bic;
    for (const auto& mc : result.comparison)
      if (bic - mc.bic > opt.bic_threshold) {
        count = mc.planets;
        bic = mc.bic;
      }
    std::ostringstream rule;
    rule << "fewest planets that no larger count improves by delta BIC > " << opt.bic_threshold
         << " (Kass & Raftery 1995: very strong evidence)";
    result.comparison_rule = rule.str();
  }
  result.planets = count;
  fit.model = std::make_unique<Model>(model_for(count));
  fit.current = optimum_of_count[std::size_t(count)];
  result.n_free = fit.model->n_free();
}

// DE-MCMC (ter Braak 2006) for every star at once, started from each star's MAP scattered by
// the curvature of its ln posterior (host, once; each star from its own stream seeded from rng in
// star order), then every generation on the execution space (Likelihood::run_chains): each half
// of every star's chains is updated from the other half, all stars' proposals in one launch.
// The result depends on the seed only, not on the thread count.
void sample_stars(const std::vector<StarFit*>& fits, Likelihood& lik, const SearchOptions& opt,
                  std::mt19937_64& rng, Progress& progress) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t n_stars = fits.size();
  std::vector<std::mt19937_64> star_rng(n_stars);
  for (auto& r : star_rng) r.seed(rng());
  const int n = opt.chains;
  std::vector<const double*> x(fits.size());
  std::vector<double> f, ll;
  {
    // Conditional widths from the curvature of ln posterior (central differences, one batch).
    int rows = 0;
    for (auto* fit : fits) rows = std::max(rows, 2 * fit->model->L.dim() + 1);
    std::vector<std::vector<double>> probes(fits.size());
    std::vector<std::vector<double>> steps(fits.size());
    for (std::size_t s = 0; s < fits.size(); ++s) {
      const StarFit& fit = *fits[s];
      const int dim = fit.model->L.dim();
      steps[s] = parameter_scales(fit.current, fit.model->L, fit.baseline);
      for (int r = 0; r < rows; ++r) {
        probes[s].insert(probes[s].end(), fit.current.begin(), fit.current.end());
        if (r > 0 && r < 2 * dim + 1)
          probes[s][std::size_t(r) * dim + (r - 1) / 2] += (r % 2 ? 1 : -1) * steps[s][(r - 1) / 2];
      }
    }
    for (std::size_t s = 0; s < n_stars; ++s) x[s] = probes[s].data();
    lik.evaluate_stars(x, rows, f, &ll, nullptr);
    for (std::size_t s = 0; s < fits.size(); ++s) {
      StarFit& fit = *fits[s];
      const int dim = fit.model->L.dim();
      const double* fs = &f[s * rows];
      const auto& h = steps[s];
      fit.sigma.assign(dim, 0.0);
      for (int d = 0; d < dim; ++d) {
        const double curv = (fs[2 * d + 1] + fs[2 * d + 2] - 2 * fs[0]) / (h[d] * h[d]);
        fit.sigma[d] = fit.model->is_fixed(d)            ? 0.0
                       : std::isfinite(curv) && curv < 0 ? std::min(1 / std::sqrt(-curv), 20 * h[d])
                                                         : h[d];
      }
    }
  }
  host_for("kosmos::kepler::search::scatter", n_stars, [&](const std::size_t s) {
    std::normal_distribution<double> gauss(0.0, 1.0);
    StarFit& fit = *fits[s];
    const int dim = fit.model->L.dim();
    fit.chains.resize(std::size_t(n) * dim);
    for (int i = 0; i < n; ++i) {
      double* xi = &fit.chains[std::size_t(i) * dim];
      for (int attempt = 0; attempt < 100; ++attempt) {
        for (int d = 0; d < dim; ++d)
          xi[d] = fit.current[d] + (i == 0 ? 0.0 : fit.sigma[d] * gauss(star_rng[s]));
        if (fit.model->log_prior(xi) > kNegInf) break;
        std::copy(fit.current.begin(), fit.current.end(), xi);
      }
    }
  });
  for (std::size_t s = 0; s < n_stars; ++s) x[s] = fits[s]->chains.data();
  lik.evaluate_stars(x, n, f, &ll, nullptr);
  for (std::size_t s = 0; s < fits.size(); ++s) {
    fits[s]->lnpost.assign(f.begin() + s * n, f.begin() + (s + 1) * n);
    fits[s]->lnlike.assign(ll.begin() + s * n, ll.begin() + (s + 1) * n);
    fits[s]->start_lnpost = fits[s]->lnpost[0];  // chain 0 starts at the MAP
    fits[s]->start_lnlike = fits[s]->lnlike[0];
    // Else no chain could move: a posterior of one point, reported as converged.
    kosmos::Impl::require(std::isfinite(fits[s]->start_lnpost), "kosmos::kepler::search", fits[s]->data->path,
                          ": the best model found has ln posterior ", fits[s]->start_lnpost,
                          ": the priors exclude the searched models (check each prior's range against "
                          "period_min, period_max, k_max and e_max)");
  }
  lik.run_chains(fits, opt, rng(), progress);
  SamplerTiming timing = lik.timing;
  timing.total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (auto* fit : fits) fit->result.sampler_timing = timing;
}

// The MAP (the polished optimum, or a sample above it, polished again), derived columns and
// summaries of one star after sampling.
// refine: polish a sample above the MAP (and evaluate the MAP again); otherwise the MAP is the
// best of the start and the samples, its chi^2 from its ln L (the survey benchmark's path).
void finish_star(StarFit& fit, const SearchOptions& opt, std::mt19937_64& rng, bool refine) {
  const RVData& data = *fit.data;
  const Model& model = *fit.model;
  const ParamLayout& L = model.L;
  const int dim = L.dim(), n = opt.chains;
  const double epoch = fit.epoch;
  SearchResult& result = fit.result;
  std::vector<double>& current = fit.current;
  const auto& kept = fit.kept;
  std::unique_ptr<Likelihood> lik;
  if (refine) lik = make_likelihood(HostObservations(data, epoch), model, opt);
  result.acceptance = double(fit.accepted) / std::max(1LL, fit.proposed);
  double map_loglike = fit.start_lnlike;
  {
    const auto top = std::max_element(
        kept.begin(), kept.end(), [&](const auto& a, const auto& b) { return a[dim] < b[dim]; });
    if ((*top)[dim] > fit.start_lnpost) {
      current.assign(top->begin(), top->begin() + dim);
      map_loglike = (*top)[dim + 1];
      if (refine) polish(*lik, model, current, parameter_scales(current, L, fit.baseline));
    }
  }
  // Derived columns; ln L (not the posterior) as the last.
  const std::string letters = "bcdefghi";
  const bool masses = opt.stellar_mass > 0;
  for (int j = 0; j < L.n_pl; ++j) {
    for (const char* q : {"P", "K", "e", "omega_deg", "M0_deg", "Tc", "Tp"})
      result.columns.push_back(std::string(q) + "_" + letters[j]);
    if (masses)
      for (const char* q : {"msini_jup", "msini_earth", "a_au"})
        result.columns.push_back(std::string(q) + "_" + letters[j]);
  }
  for (const auto& name : data.instrument_names) result.columns.push_back("gamma_" + name);
  for (const auto& name : data.instrument_names) result.columns.push_back("jitter_" + name);
  if (L.n_trend >= 1) result.columns.push_back("dvdt");
  if (L.n_trend >= 2) result.columns.push_back("curv");
  result.columns.push_back("lnL");
  std::vector<double> map_w(L.n_pl), map_m0(L.n_pl), map_tc(L.n_pl), map_tp(L.n_pl);
  for (int j = 0; j < L.n_pl; ++j) {
    const Orbit o = model.orbit(current.data(), j);
    map_w[j] = o.omega * 180 / (kTwoPi / 2);
    map_m0[j] = o.M0 * 180 / (kTwoPi / 2);
    map_tc[j] = conjunction_from_mean_anomaly(o.P, o.e, o.omega, o.M0, epoch);
    map_tp[j] = periastron_from_mean_anomaly(o.P, o.M0, epoch);
  }
  auto near = [](double value, double center, double period) {
    return value + period * std::round((center - value) / period);
  };
  auto derived = [&](const double* x, double loglike, double m_star) {
    std::vector<double> out;
    for (int j = 0; j < L.n_pl; ++j) {
      const Orbit o = model.orbit(x, j);
      out.push_back(o.P);
      out.push_back(o.K);
      out.push_back(o.e);
      out.push_back(near(o.omega * 180 / (kTwoPi / 2), map_w[j], 360));
      out.push_back(near(o.M0 * 180 / (kTwoPi / 2), map_m0[j], 360));
      out.push_back(
          near(conjunction_from_mean_anomaly(o.P, o.e, o.omega, o.M0, epoch), map_tc[j], o.P));
      out.push_back(near(periastron_from_mean_anomaly(o.P, o.M0, epoch), map_tp[j], o.P));
      if (masses) {
        const PlanetMass pm = minimum_mass(o, m_star);
        out.push_back(pm.msini_jupiter);
        out.push_back(pm.msini_earth);
        out.push_back(pm.a_au);
      }
    }
    for (int i = 0; i < L.n_inst; ++i) out.push_back(x[L.gamma(i)]);
    for (int i = 0; i < L.n_inst; ++i) out.push_back(x[L.jitter(i)]);
    for (int i = 0; i < L.n_trend; ++i) out.push_back(x[L.trend(i)]);
    out.push_back(loglike);
    return out;
  };
  std::normal_distribution<double> mass_draw(opt.stellar_mass, opt.stellar_mass_sigma);
  for (std::size_t r = 0; r < kept.size(); ++r) {
    double m_star = opt.stellar_mass;
    if (masses && opt.stellar_mass_sigma > 0) do
        m_star = mass_draw(rng);
      while (!(m_star > 0));
    result.samples.push_back(derived(kept[r].data(), kept[r][dim + 1], m_star));
  }
  // Angles were unwrapped around the MAP; shift each angle column by whole turns so that its
  // median lies in [0, 360) (the MAP value moves with it).
  std::vector<double> map_row;
  if (refine) {
    std::vector<double> f, ll, c2;
    lik->evaluate(current, 1, f, &ll, &c2);
    result.best_loglike = ll[0];
    result.best_chi2 = c2[0];
  } else {  // ln L = -(chi^2 + sum ln(2 pi (sigma^2 + s^2))) / 2
    double log_var = 0;
    for (std::size_t k = 0; k < data.size(); ++k) {
      const double s = current[L.jitter(data.instrument[k])];
      log_var += std::log(kTwoPi * (data.sigma[k] * data.sigma[k] + s * s));
    }
    result.best_loglike = map_loglike;
    result.best_chi2 = -2 * map_loglike - log_var;
  }
  map_row = derived(current.data(), result.best_loglike, opt.stellar_mass);
  const std::size_t n_cols = result.columns.size();
  for (std::size_t c = 0; c < n_cols; ++c) {
    const std::string& name = result.columns[c];
    std::vector<double> col(result.samples.size());
    for (std::size_t r = 0; r < col.size(); ++r) col[r] = result.samples[r][c];
    std::vector<double> sorted = col;
    std::sort(sorted.begin(), sorted.end());
    if (name.rfind("omega_deg_", 0) == 0 || name.rfind("M0_deg_", 0) == 0) {
      const double turn = 360 * std::floor(sorted_percentile(sorted, 0.5) / 360);
      for (auto& row : result.samples) row[c] -= turn;
      for (auto* values : {&col, &sorted})
        for (auto& v : *values) v -= turn;
      map_row[c] -= turn;
    }
    ParameterSummary s;
    s.name = name;
    s.best = map_row[c];
    s.median = sorted_percentile(sorted, 0.5);
    s.lower = sorted_percentile(sorted, 0.158655);
    s.upper = sorted_percentile(sorted, 0.841345);
    std::vector<std::vector<double>> per_chain(n);
    for (std::size_t r = 0; r < col.size(); ++r)
      per_chain[result.sample_chain[r]].push_back(col[r]);
    chain_diagnostics(per_chain, s.rhat, s.ess);
    result.summary.push_back(s);
  }
  result.max_rhat = 0;
  result.min_ess = kInf;
  for (const auto& s : result.summary) {  // NaN (too few samples) stays NaN
    result.max_rhat = std::isnan(s.rhat) ? s.rhat : std::max(result.max_rhat, s.rhat);
    result.min_ess = std::isnan(s.ess) ? s.ess : std::min(result.min_ess, s.ess);
  }
  for (int j = 0; j < L.n_pl; ++j) result.best_orbits.push_back(model.orbit(current.data(), j));
  for (int i = 0; i < L.n_inst; ++i) {
    result.best_offsets.push_back(current[L.gamma(i)]);
    result.best_jitters.push_back(current[L.jitter(i)]);
  }
  for (int i = 0; i < L.n_trend; ++i) result.best_trend.push_back(current[L.trend(i)]);
  result.likelihood_evaluations = fit.evaluations + (lik ? lik->evaluations : 0);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - fit.start).count();
}

}  // namespace Impl

SearchResult search(const RVData& data, const SearchOptions& opt) {
  using namespace Impl;
  kosmos::Impl::ScopedRegion region("kosmos::kepler::search");
  Progress progress(opt.progress);
  std::mt19937_64 rng(opt.seed);
  StarFit fit;
  fit.data = &data;
  optimize_star(fit, opt, rng, progress);
  const HostObservations obs(data, fit.epoch);
  auto lik = make_likelihood(obs, *fit.model, opt);
  sample_stars({&fit}, *lik, opt, rng, progress);
  fit.evaluations += lik->evaluations;
  finish_star(fit, opt, rng, true);
  return std::move(fit.result);
}

namespace Impl {
// The DE-MCMC of many prepared stars in shared launches, then each star's summaries.
std::vector<SearchResult> sample_survey(std::vector<StarFit>& fits, const SearchOptions& opt,
                                        std::mt19937_64& rng, Progress& progress, bool refine) {
  constexpr const char* where = "kosmos::kepler::survey";
  std::vector<double> t, v, sig;
  std::vector<int> inst, begin, count;
  std::vector<Model> models;
  std::vector<StarFit*> pointers;
  int n_inst = 1;
  for (auto& fit : fits) {
    const RVData& d = *fit.data;
    kosmos::Impl::require(fit.model->L.n_pl == fits.front().model->L.n_pl, where,
                          "every star needs the same planet count (", d.path, ")");
    begin.push_back(int(t.size()));
    count.push_back(int(d.size()));
    for (std::size_t k = 0; k < d.size(); ++k) {
      t.push_back(d.time[k] - fit.epoch);  // each star about its own epoch
      v.push_back(d.velocity[k]);
      sig.push_back(d.sigma[k]);
      inst.push_back(d.instrument[k]);
    }
    n_inst = std::max(n_inst, d.n_instruments());
    models.push_back(*fit.model);
    pointers.push_back(&fit);
  }
  HostObservations obs;
  obs.t = std::move(t);
  obs.v = std::move(v);
  obs.sigma = std::move(sig);
  obs.inst = std::move(inst);
  obs.n_inst = n_inst;
  auto lik = make_likelihood(obs, models, begin, count, opt);
  sample_stars(pointers, *lik, opt, rng, progress);
  std::vector<std::mt19937_64> star_rng(fits.size());
  for (std::size_t s = 0; s < fits.size(); ++s) {
    star_rng[s].seed(rng());
    fits[s].evaluations +=
        lik->evaluations / (long long)fits.size();  // the shared launches, evenly
  }
  auto finish = [&](const std::size_t s) { finish_star(fits[s], opt, star_rng[s], refine); };
  if (refine)  // polishing launches kernels of its own: one star at a time
    for (std::size_t s = 0; s < fits.size(); ++s) finish(s);
  else
    host_for("kosmos::kepler::survey::finish", fits.size(), finish);
  std::vector<SearchResult> out;
  for (auto& fit : fits) out.push_back(std::move(fit.result));
  return out;
}
}  // namespace Impl

std::vector<SearchResult> survey(const std::vector<RVData>& stars, const SearchOptions& opt) {
  using namespace Impl;
  kosmos::Impl::ScopedRegion region("kosmos::kepler::survey");
  kosmos::Impl::require(!stars.empty(), "kosmos::kepler::survey", "no stars");
  kosmos::Impl::require(opt.min_planets < 0, "kosmos::kepler::survey",
                        "a survey fits one planet count (min_planets must be < 0)");
  Progress progress(opt.progress);
  Progress quiet(nullptr);
  std::mt19937_64 rng(opt.seed);
  std::vector<StarFit> fits(stars.size());
  for (std::size_t s = 0; s < stars.size(); ++s) {
    fits[s].data = &stars[s];
    try {
      optimize_star(fits[s], opt, rng, quiet);
    } catch (const kosmos::invalid_input& e) {  // which star of the survey
      throw kosmos::invalid_input(stars[s].path + ": " + e.what());
    }
    std::ostringstream m;
    m << "optimized " << s + 1 << "/" << stars.size() << ": " << stars[s].path;
    progress.message(m.str());
  }
  return sample_survey(fits, opt, rng, progress, true);
}

std::vector<SearchResult> survey_from(const std::vector<RVData>& stars,
                                      const std::vector<StartModel>& starts,
                                      const SearchOptions& opt) {
  using namespace Impl;
  constexpr const char* where = "kosmos::kepler::survey_from";
  kosmos::Impl::ScopedRegion region(where);
  kosmos::Impl::require(!stars.empty() && starts.size() == stars.size(), where, stars.size(),
                        " stars and ", starts.size(), " starting models");
  Progress progress(opt.progress);
  std::mt19937_64 rng(opt.seed);
  std::vector<StarFit> fits(stars.size());
  for (std::size_t s = 0; s < stars.size(); ++s) {
    const RVData& d = stars[s];
    const StartModel& st = starts[s];
    StarFit& fit = fits[s];
    fit.data = &d;
    fit.start = std::chrono::steady_clock::now();
    fit.epoch = opt.epoch != 0 ? opt.epoch : d.mid_time();
    fit.baseline = d.baseline();
    const double p_max = opt.period_max > 0 ? opt.period_max : 2 * fit.baseline;
    const PriorBounds bounds{std::log(opt.period_min), std::log(p_max), opt.k_max, opt.e_max,
                             opt.jitter_max};
    const int n_pl = int(st.orbits.size());
    kosmos::Impl::require(st.offsets.size() == std::size_t(d.n_instruments()) &&
                              st.jitters.size() == std::size_t(d.n_instruments()) &&
                              st.trend.size() == std::size_t(opt.trend),
                          where, "star ", s,
                          ": the start needs one offset and jitter per instrument and ", opt.trend,
                          " trend coefficient(s)");
    fit.model =
        std::make_unique<Model>(ParamLayout{n_pl, d.n_instruments(), opt.trend}, bounds, fit.epoch,
                                bind_priors(opt.priors, d.instrument_names, n_pl, opt.trend));
    const ParamLayout& L = fit.model->L;
    fit.current.assign(L.dim(), 0.0);
    for (int j = 0; j < n_pl; ++j)
      fit.model->set_orbit(fit.current.data(), j, st.orbits[std::size_t(j)]);
    for (int i = 0; i < L.n_inst; ++i) {
      fit.current[L.gamma(i)] = st.offsets[std::size_t(i)];
      fit.current[L.jitter(i)] = st.jitters[std::size_t(i)];
    }
    for (int i = 0; i < L.n_trend; ++i) fit.current[L.trend(i)] = st.trend[std::size_t(i)];
    fit.model->apply_fixed(fit.current.data());
    kosmos::Impl::require(fit.model->log_prior(fit.current.data()) > kNegInf, where, "star ", s,
                          ": the starting model lies outside the prior");
    fit.result.epoch = fit.epoch;
    fit.result.n_obs = int(d.size());
    fit.result.trend = opt.trend;
    fit.result.planets = n_pl;
    fit.result.instruments = d.instrument_names;
    fit.result.n_free = fit.model->n_free();
    kosmos::Impl::require(opt.chains >= 2 * fit.result.n_free + 2 && opt.chains % 2 == 0, where,
                          "chains = ", opt.chains,
                          " must be even and >= 2 x parameters + 2 = ", 2 * fit.result.n_free + 2);
  }
  return sample_survey(fits, opt, rng, progress, false);
}

void write_samples(const std::string& path, const SearchResult& result, const RVData& data) {
  if (io::is_hdf5_path(path)) {
    io::H5Writer out(path);
    const std::size_t rows = result.samples.size(), cols = result.columns.size();
    std::vector<double> flat;
    flat.reserve(rows * cols);
    for (const auto& row : result.samples) flat.insert(flat.end(), row.begin(), row.end());
    out.write<double>("samples", flat.data(), {rows, cols});
    out.write_strings("columns", result.columns);
    out.write(std::string("chain"),
              std::vector<std::int32_t>(result.sample_chain.begin(), result.sample_chain.end()));
    out.attribute("/", "data", data.path);
    out.attribute("/", "epoch", result.epoch);
    out.attribute("/", "planets", (long long)result.planets);
    out.attribute("/", "trend", (long long)result.trend);
    out.attribute("/", "n_obs", (long long)result.n_obs);
    out.attribute("/", "max_rhat", result.max_rhat);
    out.attribute("/", "acceptance", result.acceptance);
    out.attribute("/", "map_loglike", result.best_loglike);
    out.attribute(
        "/", "units",
        "angles in degrees, times in the data's units; M0 at the epoch; Tc, Tp: conjunction and "
        "periastron; dvdt [m/s/d], curv [m/s/d^2] about the epoch");
    out.commit();
    return;
  }
  io::write_atomically(path, [&](std::ostream& out) {
    out << "# kosmos rv posterior samples (DE-MCMC): data " << data.path << ", epoch "
        << std::setprecision(17) << result.epoch << ", " << result.samples.size() << " samples, "
        << result.planets << " planet(s), trend " << result.trend << "\n";
    out << "# angles in degrees, times in the data's units; M0 at the epoch; Tc, Tp: conjunction "
           "and periastron; "
           "dvdt [m/s/d], curv [m/s/d^2] about the epoch\n";
    for (std::size_t c = 0; c < result.columns.size(); ++c)
      out << (c ? " " : "") << result.columns[c];
    out << "\n" << std::setprecision(17);
    for (const auto& row : result.samples) {
      for (std::size_t c = 0; c < row.size(); ++c) out << (c ? " " : "") << row[c];
      out << "\n";
    }
  });
}
}  // namespace kepler
}  // namespace kosmos
