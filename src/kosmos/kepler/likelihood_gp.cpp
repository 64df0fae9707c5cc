// Correlated noise: a celerite Gaussian process (celerite.hpp) on the residuals of the Keplerian
// model, kernel hyper-parameters shared by all instruments with an amplitude scale per instrument
// after the first, white noise sigma^2 + s^2 per observation with the per-instrument jitter s. One
// thread per parameter row (chain x star) runs the O(N J^2) recursion over its star's observations,
// computing the Keplerian model on the fly (double, Markley solver). Noise models "gp-sho"
// (celerite2's SHOTerm) and "gp-rotation" (RotationTerm).
#include <kosmos/core/compat.hpp>
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/celerite.hpp>
#include <kosmos/kepler/impl/noise_model.hpp>
#include <kosmos/kepler/impl/periodogram.hpp>
#include <kosmos/kepler/impl/sampler_driver.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

namespace kosmos {
namespace kepler {
namespace Impl {
namespace {
// The velocities' scatter about each instrument's weighted mean (the GP amplitude's start).
double velocity_scatter(const RVData& data) {
  std::vector<double> sw(std::size_t(data.n_instruments()), 0.0), swv(sw);
  for (std::size_t k = 0; k < data.size(); ++k) {
    const double w = 1 / (data.sigma[k] * data.sigma[k]);
    sw[std::size_t(data.instrument[k])] += w;
    swv[std::size_t(data.instrument[k])] += w * data.velocity[k];
  }
  double sum = 0;
  for (std::size_t k = 0; k < data.size(); ++k) {
    const std::size_t i = std::size_t(data.instrument[k]);
    sum += (data.velocity[k] - swv[i] / sw[i]) * (data.velocity[k] - swv[i] / sw[i]);
  }
  return std::max(std::sqrt(sum / double(data.size())), 0.1);
}

HyperParameter log_hyper(const std::string& name, double lower, double upper, double start) {
  return {name, true, std::log(lower), std::log(upper),
          std::log(std::min(std::max(start, lower), upper))};
}

// Per instrument after the first: gp_scale_<instrument>, its GP amplitude relative to the first
// instrument's, in [0.1, 10] (ln; starting at 1).
std::vector<HyperParameter> with_instrument_scales(std::vector<HyperParameter> h,
                                                   const RVData& data) {
  const std::size_t n = h.size() + std::size_t(data.n_instruments()) - 1;
  kosmos::Impl::require(n <= std::size_t(kMaxNoise), "kosmos::kepler::search", data.path, ": ",
                        data.n_instruments(), " instruments need ", n,
                        " GP hyper-parameters, at most ", kMaxNoise);
  for (int i = 1; i < data.n_instruments(); ++i)
    h.push_back(log_hyper("gp_scale_" + data.instrument_names[std::size_t(i)], 0.1, 10, 1));
  return h;
}

// gp-sho: gp_sigma [m/s] in [0.01, k_max], gp_rho and gp_tau [d] in [period_min, 10 x span];
// all sampled in ln.
struct ShoNoise {
  static constexpr int n_kernel =
      3;  // hyper-parameters of the kernel; the instruments' scales follow
  static std::vector<HyperParameter> hyper_parameters(const RVData& data,
                                                      const SearchOptions& opt) {
    const double span = data.baseline(), lo = opt.period_min, hi = 10 * span;
    return with_instrument_scales(
        {log_hyper("gp_sigma", 0.01, opt.k_max, velocity_scatter(data)),
         log_hyper("gp_rho", lo, hi, 0.1 * span), log_hyper("gp_tau", lo, hi, 0.1 * span)},
        data);
  }
  KOKKOS_INLINE_FUNCTION static CeleriteTerms terms(const ModelSpec& m, const double* x) {
    return sho_kernel(m.noise_value(x, 0), m.noise_value(x, 1), m.noise_value(x, 2));
  }
};

// gp-rotation: gp_sigma [m/s] in [0.01, k_max], gp_period [d] in [period_min, span] (starting at
// the data's strongest periodogram peak), gp_Q0 and gp_dQ in [0.01, 100] (ln), gp_f in [0, 1].
struct RotationNoise {
  static constexpr int n_kernel = 5;
  static std::vector<HyperParameter> hyper_parameters(const RVData& data,
                                                      const SearchOptions& opt) {
    const double span = data.baseline();
    std::vector<double> t(data.size()), w(data.size());
    for (std::size_t k = 0; k < data.size(); ++k) {
      t[k] = data.time[k] - data.mid_time();
      w[k] = 1 / (data.sigma[k] * data.sigma[k]);
    }
    const auto peaks = periodogram_peaks(opt.host_space, t, data.velocity, w, 1 / span,
                                         1 / opt.period_min, periodogram_step(span), 1, span);
    const double start = peaks.empty() ? 0.1 * span : peaks[0].period;
    return with_instrument_scales(
        {log_hyper("gp_sigma", 0.01, opt.k_max, velocity_scatter(data)),
         log_hyper("gp_period", opt.period_min, span, start), log_hyper("gp_Q0", 0.01, 100, 1),
         log_hyper("gp_dQ", 0.01, 100, 1), HyperParameter{"gp_f", false, 0, 1, 0.5}},
        data);
  }
  KOKKOS_INLINE_FUNCTION static CeleriteTerms terms(const ModelSpec& m, const double* x) {
    return rotation_kernel(m.noise_value(x, 0), m.noise_value(x, 1), m.noise_value(x, 2),
                           m.noise_value(x, 3), m.noise_value(x, 4));
  }
};

// ln L of parameter rows: row r belongs to star r / rows_per_star.
template <class Space, class Noise>
struct GPRowsFunctor {
  Kokkos::View<const double*, Space> t, v, sigma;
  Kokkos::View<const int*, Space> inst, begin, count;
  Kokkos::View<const double**, Kokkos::LayoutRight, Space> activity;  // (n_obs, n_act)
  Kokkos::View<const ModelSpec*, Space> spec;
  Kokkos::View<const double**, Kokkos::LayoutRight, Space> x;
  Kokkos::View<const double*, Space> prior;
  Kokkos::View<double*, Space> loglike, chi2;
  int rows_per_star;

  KOKKOS_INLINE_FUNCTION void operator()(const int r) const {
    const int s = r / rows_per_star;
    if (!(prior(r) > negative_infinity())) {
      loglike(r) = negative_infinity();
      chi2(r) = HUGE_VAL;
      return;
    }
    const ModelSpec m = spec(s);
    const ParamLayout& L = m.L;
    const double* xr = &x(r, 0);
    Orbit orbits[kMaxPlanets];
    for (int j = 0; j < L.n_pl; ++j) orbits[j] = m.orbit(xr, j);
    const int first = begin(s);
    double c2 = 0;
    loglike(r) = celerite_log_likelihood(
        Noise::terms(m, xr), count(s),
        [&](int i, double& ti, double& ri, double& vi, double& si) {
          const int k = first + i;
          ti = t(k);
          double model = xr[L.gamma(inst(k))];
          double power = 1;
          for (int q = 0; q < L.n_trend; ++q) {
            power *= ti;
            model += xr[L.trend(q)] * power;
          }
          for (int j = 0; j < L.n_pl; ++j) model += radial_velocity(orbits[j], ti, 0.0);
          model += m.activity_velocity(xr, activity, k);
          const double jitter = xr[L.jitter(inst(k))];
          ri = v(k) - model;
          vi = sigma(k) * sigma(k) + jitter * jitter;
          si = inst(k) == 0 ? 1.0 : m.noise_value(xr, Noise::n_kernel + inst(k) - 1);
        },
        c2);
    chi2(r) = c2;
  }
};

template <class Space, class Noise>
class GPLikelihood : public Likelihood {
 public:
  using Rows = Kokkos::View<double**, Kokkos::LayoutRight, Space>;
  using Column = Kokkos::View<double*, Space>;

  GPLikelihood(const HostObservations& obs, std::vector<Model> models, std::vector<int> begin,
               std::vector<int> count)
      : models_(std::move(models)) {
    const std::size_t n = obs.t.size(), n_stars = models_.size();
    t_ = Column("kosmos::kepler::gp::t", n);
    v_ = Column("kosmos::kepler::gp::v", n);
    sigma_ = Column("kosmos::kepler::gp::sigma", n);
    inst_ = Kokkos::View<int*, Space>("kosmos::kepler::gp::instrument", n);
    begin_ = Kokkos::View<int*, Space>("kosmos::kepler::gp::begin", n_stars);
    count_ = Kokkos::View<int*, Space>("kosmos::kepler::gp::count", n_stars);
    spec_ = Kokkos::View<ModelSpec*, Space>("kosmos::kepler::gp::spec", n_stars);
    activity_ = Kokkos::View<double**, Kokkos::LayoutRight, Space>("kosmos::kepler::gp::activity",
                                                                   n, std::size_t(obs.n_act));
    auto ht = Kokkos::create_mirror_view(t_);
    auto hv = Kokkos::create_mirror_view(v_);
    auto hs = Kokkos::create_mirror_view(sigma_);
    auto hi = Kokkos::create_mirror_view(inst_);
    auto hb = Kokkos::create_mirror_view(begin_);
    auto hc = Kokkos::create_mirror_view(count_);
    auto hm = Kokkos::create_mirror_view(spec_);
    auto ha = Kokkos::create_mirror_view(activity_);
    for (std::size_t k = 0; k < n; ++k) {
      ht(k) = obs.t[k] - obs.epoch;
      hv(k) = obs.v[k];
      hs(k) = obs.sigma[k];
      hi(k) = obs.inst[k];
      for (int i = 0; i < obs.n_act; ++i) ha(k, i) = obs.activity[k * std::size_t(obs.n_act) + i];
    }
    for (std::size_t s = 0; s < n_stars; ++s) {
      hb(s) = begin[s];
      hc(s) = count[s];
      hm(s) = models_[s];
      width_ = std::max(width_, models_[s].L.dim());
    }
    Kokkos::deep_copy(t_, ht);
    Kokkos::deep_copy(v_, hv);
    Kokkos::deep_copy(sigma_, hs);
    Kokkos::deep_copy(inst_, hi);
    Kokkos::deep_copy(begin_, hb);
    Kokkos::deep_copy(count_, hc);
    Kokkos::deep_copy(spec_, hm);
    Kokkos::deep_copy(activity_, ha);
  }

  void evaluate_stars(const std::vector<const double*>& x, int rows, std::vector<double>& logpost,
                      std::vector<double>* loglike_out, std::vector<double>* chi2_out) override {
    const int n = int(models_.size()) * rows;
    Buffers& b = buffers(n);
    const Kokkos::DefaultHostExecutionSpace host_space;
    timed(host_space, timing.generation, [&] {
      host_for("kosmos::kepler::gp::stage", std::size_t(n), [&](const std::size_t row) {
        const int r = int(row);
        const Model& model = models_[std::size_t(r / rows)];
        const double* xr = x[std::size_t(r / rows)] + std::size_t(r % rows) * model.L.dim();
        b.host_prior(r) = model.log_prior(xr);
        for (int d = 0; d < model.L.dim(); ++d) b.host_rows(r, d) = xr[d];
      });
    });
    const Space space;
    timed(space, timing.transfers, [&] {
      Kokkos::deep_copy(b.rows, b.host_rows);
      Kokkos::deep_copy(b.prior, b.host_prior);
    });
    timed(space, timing.likelihood, [&] { run(b.rows, b.prior, rows, b.ll, b.chi2); });
    Kokkos::View<double*, Kokkos::HostSpace> hl, hc;
    timed(space, timing.transfers, [&] {
      hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.ll);
      hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.chi2);
    });
    logpost.resize(std::size_t(n));
    for (int r = 0; r < n; ++r) {
      const double prior = b.host_prior(r);
      logpost[std::size_t(r)] =
          prior > negative_infinity() && std::isfinite(hl(r)) ? hl(r) + prior : negative_infinity();
    }
    if (loglike_out) loglike_out->assign(hl.data(), hl.data() + n);
    if (chi2_out) chi2_out->assign(hc.data(), hc.data() + n);
    evaluations += n;
  }

  void run_chains(const std::vector<StarFit*>& fits, const SearchOptions& opt, std::uint64_t seed,
                  Progress& progress) override {
    const int half = opt.chains / 2;
    Buffers& b = buffers(int(models_.size()) * half);
    const Space space;
    run_de_mcmc<Space>(
        models_, fits, opt, seed, progress,
        [&](const DeMcmcChains<Space>& chains, int g, int part) {
          timed(space, timing.generation, [&] { chains.propose(g, part, NoStaging{}); });
          timed(space, timing.likelihood,
                [&] { run(chains.proposals(), chains.proposal_priors(), half, b.ll, b.chi2); });
          timed(space, timing.generation, [&] { chains.accept(g, part, b.ll); });
        });
  }

 private:
  struct Buffers {
    Rows rows;
    Column prior, ll, chi2;
    host_mirror_t<Rows> host_rows;
    host_mirror_t<Column> host_prior;
  };
  Buffers& buffers(int n) {
    Buffers& b = buffers_[n];
    if (b.ll.extent(0) != std::size_t(n)) {
      b.rows = Rows("kosmos::kepler::gp::rows", n, width_);
      b.prior = Column("kosmos::kepler::gp::prior", n);
      b.ll = Column("kosmos::kepler::gp::loglike", n);
      b.chi2 = Column("kosmos::kepler::gp::chi2", n);
      b.host_rows = Kokkos::create_mirror_view(b.rows);
      b.host_prior = Kokkos::create_mirror_view(b.prior);
    }
    return b;
  }
  void run(const Rows& x, const Column& prior, int rows_per_star, const Column& ll,
           const Column& chi2) const {
    Kokkos::parallel_for(
        "kosmos::kepler::gp::loglike",
        kosmos::Impl::non_blocking_policy(
            Kokkos::RangePolicy<Space>(0, int(models_.size()) * rows_per_star)),
        GPRowsFunctor<Space, Noise>{t_, v_, sigma_, inst_, begin_, count_, activity_, spec_, x,
                                    prior, ll, chi2, rows_per_star});
  }

  std::vector<Model> models_;
  int width_ = 1;
  Column t_, v_, sigma_;
  Kokkos::View<int*, Space> inst_, begin_, count_;
  Kokkos::View<ModelSpec*, Space> spec_;
  Kokkos::View<double**, Kokkos::LayoutRight, Space> activity_;
  std::map<int, Buffers> buffers_;
};

template <class Noise>
std::unique_ptr<Likelihood> make_gp_likelihood(const HostObservations& obs,
                                               std::vector<Model> models, std::vector<int> begin,
                                               std::vector<int> count, const SearchOptions& opt) {
  std::unique_ptr<Likelihood> lik;
  if (opt.host_space)
    lik = std::make_unique<GPLikelihood<Kokkos::DefaultHostExecutionSpace, Noise>>(
        obs, std::move(models), std::move(begin), std::move(count));
  else
    lik = std::make_unique<GPLikelihood<Kokkos::DefaultExecutionSpace, Noise>>(
        obs, std::move(models), std::move(begin), std::move(count));
  lik->time_stages = opt.time_stages;
  return lik;
}

template <class Noise>
void gp_predict(const HostObservations& obs, const Model& model, const double* x,
                const std::vector<double>& residual, std::vector<double>& prediction) {
  std::vector<double> t(obs.t.size()), var(obs.t.size()), scale(obs.t.size());
  for (std::size_t k = 0; k < t.size(); ++k) {
    const int i = obs.inst[k];
    const double s = x[model.L.jitter(i)];
    t[k] = obs.t[k] - obs.epoch;
    var[k] = obs.sigma[k] * obs.sigma[k] + s * s;
    scale[k] = i == 0 ? 1.0 : model.noise_value(x, Noise::n_kernel + i - 1);
  }
  prediction = gp_conditional_mean(Noise::terms(model, x), t, residual, var, scale);
}
}  // namespace

const NoiseModel gp_sho_noise{
    "gp-sho", "celerite GP with an SHO kernel (gp_sigma, gp_rho, gp_tau) + jitter per instrument",
    &ShoNoise::hyper_parameters, &make_gp_likelihood<ShoNoise>, &gp_predict<ShoNoise>};
const NoiseModel gp_rotation_noise{
    "gp-rotation",
    "celerite GP with celerite2's rotation kernel (gp_sigma, gp_period, gp_Q0, gp_dQ, gp_f) + "
    "jitter per instrument",
    &RotationNoise::hyper_parameters, &make_gp_likelihood<RotationNoise>,
    &gp_predict<RotationNoise>};
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
