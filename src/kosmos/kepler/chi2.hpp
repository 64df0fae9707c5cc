// Batched chi^2 and log-likelihood of n_sys Keplerian models x n_pl planets against one set of
// n_obs radial-velocity observations (Ford 2009, Sec. 4.2-4.4 and 5).
//
// Precision (kosmos/kepler/rv.hpp): Single, Double, or Mixed (double for t/P - floor(t/P) and
// the times and periods, float for the rest). Sums over planets and over observations are
// compensated float-pair (double-pair) sums. Layouts (Ford's two implementations):
//   Chi2Layout::fused    one kernel: Kepler + velocity + chi^2, observations in team scratch;
//   Chi2Layout::separate kernel 1 writes dv per (system, planet, observation) to a workspace of
//                        n_sys * n_pl * n_obs reals, kernel 2 reduces it to chi^2.
// Parameters: Models holds (n_sys, n_pl) LayoutRight Views (the planets of a system adjacent)
// and (n_sys, n_instruments) offsets and jitters. In CUDA builds, Kokkos::Cuda with Mixed
// precision and the fused layout runs the hand-tuned kernel of
// cuda_specializations/kosmos/kepler/chi2_cuda.hpp; evaluate_generic() always runs the Kokkos one.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/impl/chi2_generic.hpp>
#include <kosmos/kepler/rv.hpp>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

namespace kosmos {
namespace kepler {
namespace Impl {
template <class ExecSpace>
struct HasCudaSpecialization : std::false_type {};
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS)
template <>
struct HasCudaSpecialization<Kokkos::Cuda> : std::true_type {};
#endif
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos

#if defined(KOKKOS_ENABLE_CUDA) && defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS)
#include <kosmos/kepler/chi2_cuda.hpp>
#endif

namespace kosmos {
namespace kepler {

enum class Chi2Layout : int { fused = 0, separate = 1 };
inline const char* layout_name(Chi2Layout l) {
  return l == Chi2Layout::fused ? "fused" : "separate";
}

struct Chi2Options {
  Chi2Layout layout = Chi2Layout::fused;
  SolverOptions solver{};  // Kepler solver inside the kernels
  Amplitude amplitude = Amplitude::semi_amplitude;
  // check every model parameter (and the survey layout's observation ranges) first (throws,
  // naming it)
  bool validate = true;
  bool use_cuda_specialization = true;
  // systems per team; 0: automatic (1 on CPUs; on GPUs 128 or less, in the survey layout 4 of
  // 32 vector lanes each)
  int team_size = 0;
  int max_tile = 0;  // observations per scratch tile; 0: as many as fit
};

// Radial-velocity observations on ExecSpace, stored in double: t - epoch, v, sigma, instrument.
template <class ExecSpace = Kokkos::DefaultExecutionSpace>
class Observations {
 public:
  using execution_space = ExecSpace;
  Observations() = default;
  // time[k] (absolute, e.g. BJD), velocity, sigma (> 0), instrument in [0, n_instruments).
  // Times are stored relative to `epoch` (the reference of M0).
  Observations(const std::vector<double>& time, const std::vector<double>& velocity,
               const std::vector<double>& sigma, const std::vector<int>& instrument,
               int n_instruments, double epoch)
      : n_instruments_(n_instruments), epoch_(epoch) {
    constexpr const char* where = "kosmos::kepler::Observations";
    const std::size_t n = time.size();
    kosmos::Impl::require(n > 0, where, "no observations (empty data)");
    kosmos::Impl::require(velocity.size() == n, where, "velocity has ", velocity.size(),
                          " entries, time has ", n);
    kosmos::Impl::require(sigma.size() == n, where, "sigma has ", sigma.size(),
                          " entries, time has ", n);
    kosmos::Impl::require(instrument.size() == n, where, "instrument has ", instrument.size(),
                          " entries, time has ", n);
    kosmos::Impl::require(n_instruments >= 1, where, "n_instruments = ", n_instruments,
                          " must be >= 1");
    kosmos::Impl::require(std::isfinite(epoch), where, "epoch = ", epoch, " is not finite");
    t_ = Kokkos::View<double*, ExecSpace>("kosmos::kepler::t", n);
    v_ = Kokkos::View<double*, ExecSpace>("kosmos::kepler::v", n);
    sigma_ = Kokkos::View<double*, ExecSpace>("kosmos::kepler::sigma", n);
    inst_ = Kokkos::View<int*, ExecSpace>("kosmos::kepler::instrument", n);
    auto ht = Kokkos::create_mirror_view(t_);
    auto hv = Kokkos::create_mirror_view(v_);
    auto hs = Kokkos::create_mirror_view(sigma_);
    auto hi = Kokkos::create_mirror_view(inst_);
    for (std::size_t k = 0; k < n; ++k) {
      kosmos::Impl::require(std::isfinite(time[k]), where, "time(", k, ") = ", time[k],
                            " is not finite");
      kosmos::Impl::require(std::isfinite(velocity[k]), where, "velocity(", k, ") = ", velocity[k],
                            " is not finite");
      kosmos::Impl::require(std::isfinite(sigma[k]) && sigma[k] > 0, where, "sigma(", k,
                            ") = ", sigma[k], " must be finite and > 0");
      kosmos::Impl::require(instrument[k] >= 0 && instrument[k] < n_instruments, where,
                            "instrument(", k, ") = ", instrument[k], " is outside [0, ",
                            n_instruments, ")");
      ht(k) = time[k] - epoch;
      hv(k) = velocity[k];
      hs(k) = sigma[k];
      hi(k) = instrument[k];
    }
    Kokkos::deep_copy(t_, ht);
    Kokkos::deep_copy(v_, hv);
    Kokkos::deep_copy(sigma_, hs);
    Kokkos::deep_copy(inst_, hi);
  }
  // Activity indicators as regressors (Models::activity): n_act values per observation
  // (row-major, n_obs x n_act), usually each less its mean; finite.
  void set_activity(const std::vector<double>& values, int n_act) {
    constexpr const char* where = "kosmos::kepler::Observations::set_activity";
    const std::size_t n = size();
    kosmos::Impl::require(n_act >= 0 && values.size() == n * std::size_t(n_act), where,
                          values.size(), " values for ", n, " observations x ", n_act,
                          " indicators");
    activity_ = Kokkos::View<double**, Kokkos::LayoutRight, ExecSpace>("kosmos::kepler::activity",
                                                                       n, std::size_t(n_act));
    auto h = Kokkos::create_mirror_view(activity_);
    for (std::size_t k = 0; k < n; ++k)
      for (int i = 0; i < n_act; ++i) {
        const double x = values[k * std::size_t(n_act) + std::size_t(i)];
        kosmos::Impl::require(std::isfinite(x), where, "activity(", k, ", ", i, ") = ", x,
                              " is not finite");
        h(k, i) = x;
      }
    Kokkos::deep_copy(activity_, h);
  }
  std::size_t size() const { return t_.extent(0); }
  int n_instruments() const { return n_instruments_; }
  int n_activity() const { return int(activity_.extent(1)); }
  Kokkos::View<const double**, Kokkos::LayoutRight, ExecSpace> activity() const {
    return activity_;
  }
  double epoch() const { return epoch_; }
  Kokkos::View<const double*, ExecSpace> time_since_epoch() const { return t_; }
  Kokkos::View<const double*, ExecSpace> velocity() const { return v_; }
  Kokkos::View<const double*, ExecSpace> sigma() const { return sigma_; }
  Kokkos::View<const int*, ExecSpace> instrument() const { return inst_; }

 private:
  Kokkos::View<double*, ExecSpace> t_, v_, sigma_;
  Kokkos::View<int*, ExecSpace> inst_;
  Kokkos::View<double**, Kokkos::LayoutRight, ExecSpace> activity_;
  int n_instruments_ = 0;
  double epoch_ = 0;
};

// Parameters of n_sys models with n_pl planets each (n_pl may be 0: offsets, jitters and trend
// only). P in the phase type, the rest in the real type of Precision. Angles in radians, M0 at
// the observations' epoch. Optional polynomial trend (RadVel's dvdt, curv) of degree
// n_trend <= 2 about the epoch: v += trend(s, 0) (t - epoch) + trend(s, 1) (t - epoch)^2.
// Optional activity coefficients (n_sys, n_act), n_act the observations' n_activity():
// v += sum_i activity(s, i) x_i(t) with the observations' indicators x_i.
template <class Precision, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct Models {
  using Phase = typename Precision::phase_type;
  using Real = typename Precision::real_type;
  Kokkos::View<Phase**, Kokkos::LayoutRight, ExecSpace> P;
  Kokkos::View<Real**, Kokkos::LayoutRight, ExecSpace> K, e, omega, M0;
  Kokkos::View<Real**, Kokkos::LayoutRight, ExecSpace> offset, jitter;  // (n_sys, n_instruments)
  Kokkos::View<Real**, Kokkos::LayoutRight, ExecSpace> trend;           // (n_sys, n_trend)
  Kokkos::View<Real**, Kokkos::LayoutRight, ExecSpace> activity;        // (n_sys, n_act)
  // Survey layout (fused only): system s uses observations [obs_range(s, 0), + obs_range(s, 1))
  // of a concatenation of many stars' observations, instrument indices local to each star.
  // Empty (the default): every system uses all observations.
  Kokkos::View<int**, Kokkos::LayoutRight, ExecSpace> obs_range;  // (n_sys, 2)

  Models() = default;
  Models(int n_sys, int n_pl, int n_instruments, int n_trend = 0, int n_act = 0)
      : P("kosmos::kepler::P", n_sys, n_pl),
        K("kosmos::kepler::K", n_sys, n_pl),
        e("kosmos::kepler::e", n_sys, n_pl),
        omega("kosmos::kepler::omega", n_sys, n_pl),
        M0("kosmos::kepler::M0", n_sys, n_pl),
        offset("kosmos::kepler::offset", n_sys, n_instruments),
        jitter("kosmos::kepler::jitter", n_sys, n_instruments),
        trend("kosmos::kepler::trend", n_sys, n_trend),
        activity("kosmos::kepler::activity_coefficients", n_sys, n_act) {}
  int n_systems() const { return int(P.extent(0)); }
  int n_trend() const { return int(trend.extent(1)); }
  int n_activity() const { return int(activity.extent(1)); }
  bool has_observation_ranges() const { return obs_range.extent(0) > 0; }
  void enable_observation_ranges() {
    obs_range = decltype(obs_range)("kosmos::kepler::obs_range", n_systems(), 2);
  }
  int n_planets() const { return int(P.extent(1)); }
  int n_instruments() const { return int(offset.extent(1)); }
};

// Host-side staging of a Models' parameters: fill the mirrors, then copy_to(models).
template <class Precision, class ExecSpace>
struct ModelsHostMirror {
  using Device = Models<Precision, ExecSpace>;
  host_mirror_t<decltype(Device::P)> P;
  host_mirror_t<decltype(Device::K)> K, e, omega, M0, offset, jitter, trend, activity;
  host_mirror_t<decltype(Device::obs_range)> obs_range;

  ModelsHostMirror() = default;
  explicit ModelsHostMirror(const Device& m)
      : P(Kokkos::create_mirror_view(m.P)),
        K(Kokkos::create_mirror_view(m.K)),
        e(Kokkos::create_mirror_view(m.e)),
        omega(Kokkos::create_mirror_view(m.omega)),
        M0(Kokkos::create_mirror_view(m.M0)),
        offset(Kokkos::create_mirror_view(m.offset)),
        jitter(Kokkos::create_mirror_view(m.jitter)),
        trend(Kokkos::create_mirror_view(m.trend)),
        activity(Kokkos::create_mirror_view(m.activity)),
        obs_range(Kokkos::create_mirror_view(m.obs_range)) {}

  void copy_to(const Device& m) const {
    Kokkos::deep_copy(m.P, P);
    Kokkos::deep_copy(m.K, K);
    Kokkos::deep_copy(m.e, e);
    Kokkos::deep_copy(m.omega, omega);
    Kokkos::deep_copy(m.M0, M0);
    Kokkos::deep_copy(m.offset, offset);
    Kokkos::deep_copy(m.jitter, jitter);
    Kokkos::deep_copy(m.trend, trend);
    Kokkos::deep_copy(m.activity, activity);
    Kokkos::deep_copy(m.obs_range, obs_range);
  }
};

namespace Impl {
// Throws kosmos::invalid_input naming the first non-finite entry (s, j) of a (n_sys, m) View.
template <class ExecSpace, class View>
void require_finite_entries(const ExecSpace& space, const char* where, const View& v,
                            const char* name) {
  const int m = int(v.extent(1));
  const auto bad = kosmos::Impl::first_index_where(
      space, "kosmos::kepler::validate_models", std::int64_t(v.extent(0)) * m,
      KOKKOS_LAMBDA(std::int64_t i) { return !math::isfinite(v(int(i / m), int(i % m))); });
  if (bad >= 0)
    throw invalid_input(
        kosmos::Impl::concat(where, ": ", name, "(", bad / m, ", ", bad % m, ") is not finite"));
}

// Throws kosmos::invalid_input naming the first bad parameter.
template <class ExecSpace, class Precision>
void validate_models(const ExecSpace& space, const char* where,
                     const Models<Precision, ExecSpace>& m, Amplitude amplitude) {
  const int n_sys = m.n_systems(), n_pl = m.n_planets(), n_inst = m.n_instruments();
  kosmos::Impl::require(n_sys > 0, where, "models are empty (n_sys = ", n_sys, ")");
  kosmos::Impl::require(m.n_trend() <= 2 && m.trend.extent(0) == std::size_t(n_sys), where,
                        "trend has extents (", m.trend.extent(0), ", ", m.trend.extent(1),
                        "), expected (", n_sys, ", 0, 1 or 2)");
  for (const auto* v : {&m.K, &m.e, &m.omega, &m.M0}) {
    kosmos::Impl::require(v->extent(0) == std::size_t(n_sys) && v->extent(1) == std::size_t(n_pl),
                          where, v->label(), " has extents (", v->extent(0), ", ", v->extent(1),
                          "), expected (", n_sys, ", ", n_pl, ")");
  }
  kosmos::Impl::require(
      m.jitter.extent(0) == std::size_t(n_sys) && m.jitter.extent(1) == std::size_t(n_inst) &&
          m.offset.extent(0) == std::size_t(n_sys),
      where, "offset/jitter have extents (", m.offset.extent(0), ", ", m.offset.extent(1), ") / (",
      m.jitter.extent(0), ", ", m.jitter.extent(1), "), expected (", n_sys, ", n_instruments)");
  auto P = m.P;
  auto K = m.K;
  auto e = m.e;
  auto omega = m.omega;
  auto M0 = m.M0;
  const bool k_nonneg = amplitude == Amplitude::semi_amplitude;
  const auto bad = kosmos::Impl::first_index_where(
      space, "kosmos::kepler::validate_models", std::int64_t(n_sys) * n_pl,
      KOKKOS_LAMBDA(std::int64_t i) {
        const int s = int(i / n_pl), j = int(i % n_pl);
        return !(P(s, j) > 0) || !math::isfinite(P(s, j)) || !math::isfinite(K(s, j)) ||
               (k_nonneg && K(s, j) < 0) || !(e(s, j) >= 0 && e(s, j) < 1) ||
               !math::isfinite(omega(s, j)) || !math::isfinite(M0(s, j));
      });
  if (bad >= 0) {
    const int s = int(bad / n_pl), j = int(bad % n_pl);
    auto get = [&](const auto& view) {
      typename std::decay_t<decltype(view)>::non_const_value_type x{};
      Kokkos::deep_copy(Kokkos::View<decltype(x), Kokkos::HostSpace>(&x),
                        Kokkos::subview(view, s, j));
      return double(x);
    };
    const double p = get(P), k = get(K), ec = get(e), w = get(omega), m0 = get(M0);
    const auto at = kosmos::Impl::concat("(", s, ", ", j, ") = ");
    if (!(p > 0) || !std::isfinite(p))
      throw invalid_input(kosmos::Impl::concat(where, ": P", at, p, " must be finite and > 0"));
    if (!std::isfinite(k) || (k_nonneg && k < 0))
      throw invalid_input(kosmos::Impl::concat(where, ": K", at, k, " must be finite and >= 0"));
    if (!(ec >= 0 && ec < 1))
      throw invalid_input(kosmos::Impl::concat(where, ": e", at, ec, " is outside [0, 1)"));
    if (!std::isfinite(w))
      throw invalid_input(kosmos::Impl::concat(where, ": omega", at, w, " is not finite"));
    throw invalid_input(kosmos::Impl::concat(where, ": M0", at, m0, " is not finite"));
  }
  auto off = m.offset;
  auto jit = m.jitter;
  const auto bad_inst = kosmos::Impl::first_index_where(
      space, "kosmos::kepler::validate_models", std::int64_t(n_sys) * n_inst,
      KOKKOS_LAMBDA(std::int64_t i) {
        const int s = int(i / n_inst), j = int(i % n_inst);
        return !math::isfinite(off(s, j)) || !math::isfinite(jit(s, j)) || jit(s, j) < 0;
      });
  if (bad_inst >= 0) {
    const int s = int(bad_inst / n_inst), j = int(bad_inst % n_inst);
    typename Precision::real_type o{}, q{};
    Kokkos::deep_copy(Kokkos::View<decltype(o), Kokkos::HostSpace>(&o), Kokkos::subview(off, s, j));
    Kokkos::deep_copy(Kokkos::View<decltype(q), Kokkos::HostSpace>(&q), Kokkos::subview(jit, s, j));
    throw invalid_input(kosmos::Impl::concat(where, ": offset(", s, ", ", j, ") = ", o, ", jitter(",
                                             s, ", ", j, ") = ", q,
                                             ": both must be finite and jitter >= 0"));
  }
  require_finite_entries(space, where, m.trend, "trend");
  require_finite_entries(space, where, m.activity, "activity");
}
// Whether system s's observation range leaves [0, n_obs) or is empty. A named functor: the same
// predicate as a KOKKOS_LAMBDA, instantiated for Kokkos::OpenMP in a CUDA build, crashed in the
// survey benchmark on an H100 (a call through a null pointer in nvcc's extended-lambda wrapper).
template <class RangeView>
struct ObservationRangeOutside {
  RangeView range;
  int n_obs;
  KOKKOS_INLINE_FUNCTION bool operator()(std::int64_t s) const {
    return range(s, 0) < 0 || range(s, 1) < 1 || range(s, 0) > n_obs - range(s, 1);
  }
};

// Throws kosmos::invalid_input naming the first system whose range leaves [0, n_obs) or is empty.
template <class ExecSpace, class RangeView>
void validate_observation_ranges(const ExecSpace& space, const char* where, const RangeView& range,
                                 int n_obs) {
  const auto bad = kosmos::Impl::first_index_where(
      space, "kosmos::kepler::validate_ranges", std::int64_t(range.extent(0)),
      ObservationRangeOutside<RangeView>{range, n_obs});
  kosmos::Impl::require(bad < 0, where, "obs_range of system ", bad, " lies outside [0, ", n_obs,
                        ") or is empty");
}
}  // namespace Impl

// Evaluates chi^2 (and optionally ln L) for batches of models against fixed observations.
// Holds the observations converted to Precision and the separate layout's workspace.
template <class Precision, class ExecSpace = Kokkos::DefaultExecutionSpace>
class Chi2Evaluator {
 public:
  using Phase = typename Precision::phase_type;
  using Real = typename Precision::real_type;
  using models_type = Models<Precision, ExecSpace>;

  Chi2Evaluator(const ExecSpace& space, const Observations<ExecSpace>& obs,
                const Chi2Options& options = {})
      : space_(space),
        options_(options),
        n_obs_(int(obs.size())),
        n_inst_(obs.n_instruments()),
        n_act_(obs.n_activity()) {
    constexpr const char* where = "kosmos::kepler::Chi2Evaluator";
    kosmos::Impl::require(n_obs_ > 0, where, "no observations (empty data)");
    kosmos::Impl::require(
        options.solver.max_iterations >= 1 && options.solver.max_iterations <= 1000, where,
        "max_iterations = ", options.solver.max_iterations, " is outside [1, 1000]");
    kosmos::Impl::require(options.solver.tolerance >= 0 && options.solver.tolerance < 1, where,
                          "tolerance = ", options.solver.tolerance, " is outside [0, 1)");
    kosmos::Impl::require(options.team_size >= 0, where, "team_size = ", options.team_size,
                          " must be >= 0");
    kosmos::Impl::require(options.max_tile >= 0, where, "max_tile = ", options.max_tile,
                          " must be >= 0");
    obs_.t = Kokkos::View<Phase*, ExecSpace>("kosmos::kepler::t", n_obs_);
    obs_.v = Kokkos::View<Real*, ExecSpace>("kosmos::kepler::v", n_obs_);
    obs_.var = Kokkos::View<Real*, ExecSpace>("kosmos::kepler::var", n_obs_);
    obs_.inst = Kokkos::View<int*, ExecSpace>("kosmos::kepler::instrument", n_obs_);
    obs_.activity = Kokkos::View<Real**, Kokkos::LayoutRight, ExecSpace>("kosmos::kepler::activity",
                                                                         n_obs_, n_act_);
    Kokkos::parallel_for("kosmos::kepler::convert_observations",
                         Kokkos::RangePolicy<ExecSpace>(space, 0, n_obs_),
                         Impl::ConvertObservations<Precision, ExecSpace>{
                             obs_, obs.time_since_epoch(), obs.velocity(), obs.sigma(),
                             obs.instrument(), obs.activity()});
  }

  const Chi2Options& options() const { return options_; }
  // True when evaluate() runs the hand-tuned CUDA kernel for models with n_pl planets and a
  // trend of degree n_trend: Kokkos::Cuda, Mixed precision, fused layout, Solver::Markley,
  // 1 <= n_pl <= 8, no trend, no activity indicators, use_cuda_specialization.
  bool uses_cuda_specialization(int n_pl, int n_trend = 0) const {
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS)
    if constexpr (Impl::HasCudaSpecialization<ExecSpace>::value &&
                  std::is_same<Precision, Mixed>::value)
      return options_.layout == Chi2Layout::fused && options_.use_cuda_specialization &&
             options_.solver.solver == Solver::Markley && n_pl >= 1 &&
             n_pl <= Impl::cuda_max_planets && n_trend == 0 && n_act_ == 0;
#endif
    (void)n_pl;
    (void)n_trend;
    return false;
  }
  int n_observations() const {
    return n_obs_;
  }
  int n_instruments() const {
    return n_inst_;
  }
  int n_activity() const {
    return n_act_;
  }

  // chi2(n_sys) always; loglike of extent n_sys, or extent 0 to skip it.
  template <class OutView>
  void evaluate(const models_type& models, const OutView& chi2, const OutView& loglike) {
    kosmos::Impl::ScopedRegion region("kosmos::kepler::chi2");
    check(models, chi2, loglike);
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS)
    if constexpr (Impl::HasCudaSpecialization<ExecSpace>::value &&
                  std::is_same<Precision, Mixed>::value) {
      if (uses_cuda_specialization(models.n_planets(), models.n_trend()) &&
          !models.has_observation_ranges()) {
        Impl::fused_chi2_mixed_cuda(space_, obs_, models, chi2, loglike, loglike.extent(0) > 0,
                                    options_.amplitude);
        return;
      }
    }
#endif
    run_generic(models, chi2, loglike);
  }
  template <class OutView>
  void evaluate(const models_type& models, const OutView& chi2) {
    evaluate(models, chi2, OutView());
  }
  // The portable Kokkos path, whatever the execution space (used to test the specialization).
  template <class OutView>
  void evaluate_generic(const models_type& models, const OutView& chi2, const OutView& loglike) {
    kosmos::Impl::ScopedRegion region("kosmos::kepler::chi2_generic");
    check(models, chi2, loglike);
    run_generic(models, chi2, loglike);
  }

 private:
  Real tolerance() const {
    return options_.solver.tolerance > 0 ? Real(options_.solver.tolerance)
                                         : default_tolerance<Real>();
  }

  template <class OutView>
  void check(const models_type& models, const OutView& chi2, const OutView& loglike) {
    static_assert(
        std::is_same<typename OutView::value_type, double>::value && OutView::rank == 1,
        "kosmos::kepler::Chi2Evaluator::evaluate: chi2 and loglike must be rank-1 Views of double");
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename OutView::memory_space>::accessible,
                  "kosmos::kepler::Chi2Evaluator::evaluate: outputs must be accessible from the "
                  "execution space");
    constexpr const char* where = "kosmos::kepler::chi2";
    const std::size_t n_sys = std::size_t(models.n_systems());
    kosmos::Impl::require(models.n_instruments() == n_inst_, where, "models have ",
                          models.n_instruments(), " instruments, the observations ", n_inst_);
    kosmos::Impl::require(models.n_activity() == n_act_, where, "models have ", models.n_activity(),
                          " activity coefficients, the observations ", n_act_, " indicators");
    kosmos::Impl::require_extent(where, "chi2", chi2, 0, n_sys);
    kosmos::Impl::require(loglike.extent(0) == 0 || loglike.extent(0) == n_sys, where,
                          "loglike.extent(0) is ", loglike.extent(0), ", expected 0 or ", n_sys);
    if (models.has_observation_ranges()) {
      kosmos::Impl::require(options_.layout == Chi2Layout::fused, where,
                            "observation ranges (survey layout) need the fused layout");
      kosmos::Impl::require(models.obs_range.extent(0) == n_sys, where, "obs_range has ",
                            models.obs_range.extent(0), " rows, expected ", n_sys);
      if (options_.validate)
        Impl::validate_observation_ranges(space_, where, models.obs_range, n_obs_);
    }
    if (options_.validate) Impl::validate_models(space_, where, models, options_.amplitude);
  }

  template <class OutView>
  void run_generic(const models_type& models, const OutView& chi2, const OutView& loglike) {
    constexpr const char* where = "kosmos::kepler::chi2";
    const int n_sys = models.n_systems(), n_pl = models.n_planets();
    const bool separate = options_.layout == Chi2Layout::separate;
    if (separate) {
      const std::int64_t rows = std::int64_t(n_sys) * n_pl;
      if (dv_.extent(0) != std::size_t(rows) || dv_.extent(1) != std::size_t(n_obs_))
        dv_ = Kokkos::View<Real**, ExecSpace>(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "kosmos::kepler::dv"), rows, n_obs_);
      Impl::DeltaVFunctor<Precision, ExecSpace> f{obs_.t,
                                                  models.P,
                                                  models.K,
                                                  models.e,
                                                  models.omega,
                                                  models.M0,
                                                  dv_,
                                                  n_pl,
                                                  n_obs_,
                                                  options_.solver.solver,
                                                  tolerance(),
                                                  options_.solver.max_iterations,
                                                  options_.amplitude};
      Kokkos::parallel_for(
          "kosmos::kepler::delta_v",
          kosmos::Impl::non_blocking_policy(
              Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space_, 0, rows)),
          f);
    }
    const bool on_host = kosmos::Impl::is_host_space<ExecSpace>();
    using Inputs = Impl::Chi2Inputs<Precision, ExecSpace>;
    const Inputs inputs{obs_.t,
                        obs_.v,
                        obs_.var,
                        obs_.inst,
                        models.P,
                        models.K,
                        models.e,
                        models.omega,
                        models.M0,
                        models.offset,
                        models.jitter,
                        models.trend,
                        models.activity,
                        obs_.activity,
                        separate ? Kokkos::View<const Real**, ExecSpace>(dv_)
                                 : Kokkos::View<const Real**, ExecSpace>(),
                        models.obs_range,
                        chi2,
                        loglike,
                        loglike.extent(0) > 0,
                        n_sys,
                        n_pl,
                        n_obs_,
                        options_.solver.solver,
                        tolerance(),
                        options_.solver.max_iterations,
                        options_.amplitude};
    if (models.has_observation_ranges()) {
      run_ranges(inputs, on_host);
      return;
    }
    int team_size = options_.team_size > 0 ? options_.team_size : (on_host ? 1 : 128);
    // CPUs: one thread per team handles up to 16 systems per staged tile, fewer for small batches
    // so that every thread gets several teams.
    int groups = 1;
    if (on_host) {
      const int per_thread = n_sys / (4 * (space_.concurrency() > 0 ? space_.concurrency() : 1));
      groups = per_thread < 1 ? 1 : (per_thread > 16 ? 16 : per_thread);
    }
    using Fused = Impl::Chi2TeamFunctor<Precision, ExecSpace, false>;
    using FromDv = Impl::Chi2TeamFunctor<Precision, ExecSpace, true>;
    const int max_bytes = Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0);
    const std::size_t budget = std::size_t(max_bytes < 40000 ? max_bytes : 40000);
    auto scratch = [&](int tile_size) {
      return separate ? FromDv::scratch_bytes(tile_size, team_size, n_pl)
                      : Fused::scratch_bytes(tile_size, team_size, n_pl);
    };
    // Automatic team size: halve until the planet constants leave room for a 64-observation tile.
    while (options_.team_size == 0 && team_size > 32 && scratch(64) >= budget) team_size /= 2;
    const std::size_t fixed = scratch(0);
    const std::size_t per_obs = scratch(64) - fixed;
    kosmos::Impl::require(fixed + per_obs < budget, where,
                          "team scratch does not fit: team_size = ", team_size, " x n_pl = ", n_pl,
                          " needs ", fixed + per_obs, " bytes, the limit is ", budget,
                          " (use a smaller team_size)");
    int tile = int((budget - fixed) / (per_obs / 64 + 1));
    tile = tile > n_obs_ ? n_obs_ : tile;
    if (options_.max_tile > 0 && tile > options_.max_tile) tile = options_.max_tile;
    tile = tile > 64 ? tile / 32 * 32 : tile;
    const std::size_t bytes = scratch(tile);
    const int per_team = team_size * groups;
    const int league = (n_sys + per_team - 1) / per_team;
    Kokkos::TeamPolicy<ExecSpace> policy(space_, league, team_size);
    policy.set_scratch_size(0, Kokkos::PerTeam(bytes));
    // The fused and the separate (dv of kernel 1) team functors take the same members.
    auto launch = [&](auto from_dv, const char* label) {
      using Functor = std::conditional_t<decltype(from_dv)::value, FromDv, Fused>;
      const Functor f{inputs, tile, team_size, groups};
      Kokkos::parallel_for(label, kosmos::Impl::non_blocking_policy(policy), f);
    };
    if (separate)
      launch(std::true_type(), "kosmos::kepler::chi2_from_dv");
    else
      launch(std::false_type(), "kosmos::kepler::chi2_fused");
  }

  // The survey layout: on GPUs a warp's lanes per system (its observations), a few systems per
  // team; on CPUs a thread per system.
  void run_ranges(const Impl::Chi2Inputs<Precision, ExecSpace>& inputs, bool on_host) {
    using Functor = Impl::Chi2RangesFunctor<Precision, ExecSpace>;
    const int lanes = on_host ? 1 : 32;
    const int team_size =
        options_.team_size > 0 ? std::min(options_.team_size, 1024 / lanes) : (on_host ? 1 : 4);
    const int league = (inputs.n_sys + team_size - 1) / team_size;
    Kokkos::TeamPolicy<ExecSpace> policy(space_, league, team_size, lanes);
    policy.set_scratch_size(0, Kokkos::PerTeam(Functor::scratch_bytes(team_size, inputs.n_pl)));
    Kokkos::parallel_for("kosmos::kepler::chi2_ranges", kosmos::Impl::non_blocking_policy(policy),
                         Functor{inputs, team_size});
  }

  ExecSpace space_;
  Chi2Options options_;
  int n_obs_, n_inst_, n_act_;
  Impl::DeviceObservations<Precision, ExecSpace> obs_;
  Kokkos::View<Real**, ExecSpace> dv_;
};

// One-shot convenience: builds an evaluator and runs it.
template <class Precision, class ExecSpace, class OutView>
void chi2(const ExecSpace& space, const Observations<ExecSpace>& obs,
          const Models<Precision, ExecSpace>& models, const OutView& chi2_out,
          const OutView& loglike_out, const Chi2Options& options = {}) {
  Chi2Evaluator<Precision, ExecSpace> evaluator(space, obs, options);
  evaluator.evaluate(models, chi2_out, loglike_out);
}
template <class Precision, class ExecSpace, class OutView>
void chi2(const Observations<ExecSpace>& obs, const Models<Precision, ExecSpace>& models,
          const OutView& chi2_out, const OutView& loglike_out, const Chi2Options& options = {}) {
  chi2(ExecSpace(), obs, models, chi2_out, loglike_out, options);
}
}  // namespace kepler
}  // namespace kosmos
