// optimize_stars: the search's optimization stages for all stars of a survey in shared kernel
// launches (impl/survey_search.hpp).
#include <kosmos/core/compat.hpp>
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/chi2.hpp>
#include <kosmos/kepler/impl/de_mcmc.hpp>
#include <kosmos/kepler/impl/model_comparison.hpp>
#include <kosmos/kepler/impl/noise_model.hpp>
#include <kosmos/kepler/impl/parameter_scale.hpp>
#include <kosmos/kepler/impl/periodogram.hpp>
#include <kosmos/kepler/impl/survey_search.hpp>

#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace kosmos {
namespace kepler {
namespace Impl {
bool batched_search_supports(const SearchOptions& opt) {
  // its residual, periodogram and start kernels know neither GP noise nor activity regressors
  if (opt.noise != "white" || !opt.activity.empty()) return false;
  for (const auto& p : opt.priors) {
    const auto underscore = p.parameter.rfind('_');
    const std::string base = p.parameter.substr(0, underscore);
    if (underscore != std::string::npos && (base == "P" || base == "Tc")) return false;
  }
  return true;
}

// Not in an unnamed namespace, and every member function public: nvcc's extended lambdas may not
// be defined in private member functions.
constexpr int kPeaks = 3;              // periodogram peaks seeding each planet, as in search()
constexpr int kShrinkCheckEvery = 16;  // Nelder-Mead iterations between convergence checks

// Per star: what the host knows after the checks (bounds, priors) and the device index ranges.
struct StarSetup {
  PriorBounds bounds{};
  std::vector<BoundPrior> priors;
  int n_inst = 1;
};

template <class Space>
class BatchedSearch {
 public:
  using Rows = Kokkos::View<double**, Kokkos::LayoutRight, Space>;
  using Column = Kokkos::View<double*, Space>;
  using Index = Kokkos::View<int*, Space>;
  using Keys = Kokkos::View<std::uint64_t*, Space>;
  using Team = typename Kokkos::TeamPolicy<Space>::member_type;

  BatchedSearch(std::vector<StarFit>& fits, const SearchOptions& opt, std::uint64_t seed,
                Progress& progress)
      : fits_(fits),
        opt_(opt),
        seed_(seed),
        progress_(progress),
        n_stars_(int(fits.size())),
        obs_(concatenated(fits, opt)),
        evaluator_(Space(),
                   Observations<Space>(obs_.t, obs_.v, obs_.sigma, obs_.inst, obs_.n_inst, 0.0),
                   chi2_options(opt)) {
    for (const auto& f : fits) n_inst_ = std::max(n_inst_, f.data->n_instruments());
    width_ = 5 * opt.planets + 2 * n_inst_ + opt.trend;
    setups_.resize(fits.size());
    auto begin =
        Kokkos::create_mirror_view(begin_ = Index("kosmos::kepler::survey::begin", n_stars_));
    auto count =
        Kokkos::create_mirror_view(count_ = Index("kosmos::kepler::survey::count", n_stars_));
    auto baseline = Kokkos::create_mirror_view(
        baseline_ = Column("kosmos::kepler::survey::baseline", n_stars_));
    auto f_min =
        Kokkos::create_mirror_view(f_min_ = Column("kosmos::kepler::survey::f_min", n_stars_));
    auto df = Kokkos::create_mirror_view(df_ = Column("kosmos::kepler::survey::df", n_stars_));
    auto p_limits = Kokkos::create_mirror_view(
        p_limits_ = Rows("kosmos::kepler::survey::period_limits", n_stars_, 2));
    auto freq_begin = Kokkos::create_mirror_view(
        freq_begin_ = Index("kosmos::kepler::survey::freq_begin", n_stars_ + 1));
    auto star_key = Kokkos::create_mirror_view(
        star_key_ = Keys("kosmos::kepler::survey::star_key", n_stars_));
    long long frequencies = 0;
    for (int s = 0; s < n_stars_; ++s) {
      const StarFit& fit = fits[std::size_t(s)];
      const RVData& d = *fit.data;
      StarSetup& setup = setups_[std::size_t(s)];
      const double p_max = opt.period_max > 0 ? opt.period_max : 2 * fit.baseline;
      setup.bounds = {std::log(opt.period_min), std::log(p_max), opt.k_max, opt.e_max,
                      opt.jitter_max};
      setup.priors = bind_priors(opt.priors, d.instrument_names, opt.planets, opt.trend);
      setup.n_inst = d.n_instruments();
      begin(s) = s == 0 ? 0 : begin(s - 1) + count(s - 1);
      count(s) = int(d.size());
      baseline(s) = fit.baseline;
      star_key(s) = fit.stream < 0 ? std::uint64_t(s) : std::uint64_t(fit.stream);
      p_limits(s, 0) = opt.period_min;
      p_limits(s, 1) = p_max;
      f_min(s) = 1 / p_max;
      df(s) = periodogram_step(fit.baseline);
      freq_begin(s) = int(frequencies);
      frequencies += (long long)((1 / opt.period_min - 1 / p_max) / df(s)) + 1;
    }
    kosmos::Impl::require(frequencies < (1LL << 31), "kosmos::kepler::survey",
                          "the periodograms of ", n_stars_, " stars would scan ", frequencies,
                          " frequencies; at most 2^31 in one survey: raise period_min");
    freq_begin(n_stars_) = int(frequencies);
    t_ = copy_to_device<double>(obs_.t, "kosmos::kepler::survey::t");
    v_ = copy_to_device<double>(obs_.v, "kosmos::kepler::survey::v");
    sigma_ = copy_to_device<double>(obs_.sigma, "kosmos::kepler::survey::sigma");
    inst_ = copy_to_device<int>(obs_.inst, "kosmos::kepler::survey::instrument");
    y_ = Column("kosmos::kepler::survey::residual", obs_.t.size());
    w_ = Column("kosmos::kepler::survey::weight", obs_.t.size());
    Kokkos::deep_copy(begin_, begin);
    Kokkos::deep_copy(count_, count);
    Kokkos::deep_copy(baseline_, baseline);
    Kokkos::deep_copy(f_min_, f_min);
    Kokkos::deep_copy(df_, df);
    Kokkos::deep_copy(p_limits_, p_limits);
    Kokkos::deep_copy(freq_begin_, freq_begin);
    Kokkos::deep_copy(star_key_, star_key);
    n_freq_ = int(frequencies);
    power_ = Column("kosmos::kepler::survey::power", n_freq_);
    amp_a_ = Column("kosmos::kepler::survey::amplitude_a", n_freq_);
    amp_b_ = Column("kosmos::kepler::survey::amplitude_b", n_freq_);
    peaks_ = Rows("kosmos::kepler::survey::peaks", std::size_t(n_stars_) * kPeaks, 4);
    n_peaks_ = Index("kosmos::kepler::survey::peak_count", n_stars_);
    spec_ = Kokkos::View<ModelSpec*, Space>("kosmos::kepler::survey::spec", n_stars_);
    fixed_ = Rows("kosmos::kepler::survey::fixed", n_stars_, width_);
    current_ = Rows("kosmos::kepler::survey::current", n_stars_, width_);
    current_fit_ = Column("kosmos::kepler::survey::current_fit", n_stars_);
    optimum_of_count_.assign(fits.size(), {});
  }

  void run() {
    no_planet_stage();
    for (int p = 0; p < opt_.planets; ++p) planet_stage(p);
    finish();
  }

  template <class T>
  static Kokkos::View<T*, Space> copy_to_device(const std::vector<T>& host, const char* label) {
    Kokkos::View<T*, Space> view(std::string(label), host.size());
    auto mirror = Kokkos::create_mirror_view(view);
    std::copy(host.begin(), host.end(), mirror.data());
    Kokkos::deep_copy(view, mirror);
    return view;
  }
  // Every row is inside the prior or staged as a placeholder: no validation launch.
  static Chi2Options chi2_options(const SearchOptions& opt) {
    Chi2Options o;
    o.validate = false;
    o.solver.solver = opt.solver;
    return o;
  }
  static HostObservations concatenated(std::vector<StarFit>& fits, const SearchOptions& opt) {
    std::vector<StarFit*> pointers;
    for (auto& fit : fits) pointers.push_back(&fit);
    std::vector<int> begin, count;
    return concatenate(pointers, begin, count, opt);
  }

  static constexpr bool on_host = kosmos::Impl::is_host_space<Space>();
  // body(i) for i in [0, n); small batches in a host space inline (kMinParallelRows: the
  // per-star kernels of a few stars cost less than a fork-join).
  template <class Body>
  static void for_rows(const char* label, int n, const Body& body) {
    if constexpr (on_host) {
      if (n < kMinParallelRows) {
        for (int i = 0; i < n; ++i) body(i);
        return;
      }
    }
    Kokkos::parallel_for(
        label,
        kosmos::Impl::non_blocking_policy(Kokkos::RangePolicy<Space, Kokkos::IndexType<int>>(0, n)),
        body);
  }
  static int count_true(const char* label, const Index& flags) {
    const int n_flags = int(flags.extent(0));
    int n = 0;
    if constexpr (on_host) {
      if (n_flags < kMinParallelRows) {
        for (int i = 0; i < n_flags; ++i) n += flags(i) != 0 ? 1 : 0;
        return n;
      }
    }
    Kokkos::parallel_reduce(
        label, Kokkos::RangePolicy<Space, Kokkos::IndexType<int>>(0, n_flags),
        KOKKOS_LAMBDA(const int i, int& acc) { acc += flags(i) != 0 ? 1 : 0; }, n);
    return n;
  }
  // An independent stream per (stage, use): the rows mix their index in.
  std::uint64_t key(int use) { return mix64(seed_ ^ mix64(std::uint64_t(++stream_) * 8 + use)); }

  Model model_for(int s, int n_pl) const {
    const StarSetup& setup = setups_[std::size_t(s)];
    const StarFit& fit = fits_[std::size_t(s)];
    return Model({n_pl, setup.n_inst, opt_.trend}, setup.bounds, fit.epoch, setup.priors);
  }

  // Makes the model of n_pl planets current: specs, prior terms and fixed values on the device.
  void set_count(int n_pl) {
    n_pl_ = n_pl;
    buffers_.clear();
    auto spec = Kokkos::create_mirror_view(spec_);
    auto fixed = Kokkos::create_mirror_view(fixed_);
    std::vector<PriorTerm> terms;
    max_free_ = 0;
    free_.assign(fits_.size(), 0);
    for (int s = 0; s < n_stars_; ++s) {
      const Model m = model_for(s, n_pl);
      spec(s) = m;
      spec(s).term_begin = int(terms.size());
      terms.insert(terms.end(), m.terms.begin(), m.terms.end());
      for (int d = 0; d < width_; ++d) fixed(s, d) = d < m.L.dim() ? m.fixed[std::size_t(d)] : 0.0;
      free_[std::size_t(s)] = m.n_free();
      max_free_ = std::max(max_free_, m.n_free());
    }
    terms_ = Kokkos::View<PriorTerm*, Space>("kosmos::kepler::survey::terms",
                                             std::max<std::size_t>(1, terms.size()));
    auto terms_host = Kokkos::create_mirror_view(terms_);
    std::copy(terms.begin(), terms.end(), terms_host.data());
    Kokkos::deep_copy(terms_, terms_host);
    Kokkos::deep_copy(spec_, spec);
    Kokkos::deep_copy(fixed_, fixed);
  }

  // Device buffers of a batch of `per_star` rows per star for the current count.
  struct Buffers {
    Models<Double, Space> models;
    Column prior, chi2, ll;
  };
  Buffers& buffers(int per_star) {
    Buffers& b = buffers_[per_star];
    const int n = n_stars_ * per_star;
    if (b.models.n_systems() == n) return b;
    b.models = Models<Double, Space>(n, n_pl_, n_inst_, opt_.trend);
    b.models.enable_observation_ranges();
    b.prior = Column("kosmos::kepler::survey::prior", n);
    b.chi2 = Column("kosmos::kepler::survey::chi2", n);
    b.ll = Column("kosmos::kepler::survey::loglike", n);
    const auto range = b.models.obs_range;
    const auto begin = begin_;
    const auto count = count_;
    for_rows(
        "kosmos::kepler::survey::ranges", n, KOKKOS_LAMBDA(const int r) {
          range(r, 0) = begin(r / per_star);
          range(r, 1) = count(r / per_star);
        });
    return b;
  }

  // ln posterior of rows (star r / per_star each, current count) into logpost; -inf outside the
  // prior or where ln L is not finite.
  void evaluate(const Rows& rows, int per_star, const Column& logpost) {
    Buffers& b = buffers(per_star);
    const int n = n_stars_ * per_star;
    const auto spec = spec_;
    const auto terms = terms_;
    const auto models = b.models;
    const auto prior = b.prior;
    for_rows(
        "kosmos::kepler::survey::stage", n, KOKKOS_LAMBDA(const int r) {
          const ModelSpec m = spec(r / per_star);
          const double lp = m.log_prior(terms.data(), &rows(r, 0));
          prior(r) = lp;
          m.stage(models, r, &rows(r, 0), lp > negative_infinity());
        });
    evaluator_.evaluate(b.models, b.chi2, b.ll);
    const auto ll = b.ll;
    for_rows(
        "kosmos::kepler::survey::posterior", n, KOKKOS_LAMBDA(const int r) {
          logpost(r) = prior(r) > negative_infinity() && math::isfinite(ll(r))
                           ? ll(r) + prior(r)
                           : negative_infinity();
        });
    evaluations_ += n;
  }

  // |jitter| and the fixed values of star s on a parameter row.
  struct Tidy {
    Kokkos::View<ModelSpec*, Space> spec;
    Rows fixed;
    KOKKOS_INLINE_FUNCTION void operator()(int s, double* x) const {
      const ParamLayout L = spec(s).L;
      for (int q = 0; q < L.n_inst; ++q) x[L.jitter(q)] = math::fabs(x[L.jitter(q)]);
      for (int d = 0; d < L.dim(); ++d)
        if (!math::isnan(fixed(s, d))) x[d] = fixed(s, d);
    }
  };
  Tidy tidy() const { return Tidy{spec_, fixed_}; }

  // 0. Offsets, jitters and trend: DE from the per-instrument weighted means.
  void no_planet_stage() {
    set_count(0);
    const int n = opt_.chains;
    Rows pop("kosmos::kepler::survey::population", std::size_t(n_stars_) * n, width_);
    const auto spec = spec_;
    const auto begin = begin_;
    const auto count = count_;
    const auto v = v_;
    const auto sigma = sigma_;
    const auto inst = inst_;
    const auto baseline = baseline_;
    const auto fix = tidy();
    const std::uint64_t k = key(0);
    const auto star_key = star_key_;
    for_rows(
        "kosmos::kepler::survey::no_planet_start", n_stars_ * n, KOKKOS_LAMBDA(const int r) {
          const int s = r / n, i = r % n;
          const ParamLayout L = spec(s).L;
          double* x = &pop(r, 0);
          for (int q = 0; q < L.n_inst; ++q) {
            double sw = 0, swv = 0;
            for (int o = begin(s); o < begin(s) + count(s); ++o)
              if (inst(o) == q) {
                const double w = 1 / (sigma(o) * sigma(o));
                sw += w;
                swv += w * v(o);
              }
            x[L.gamma(q)] = sw > 0 ? swv / sw : 0.0;
            x[L.jitter(q)] = 1.0;
          }
          for (int q = 0; q < L.n_trend; ++q) x[L.trend(q)] = 0.0;
          if (i > 0) {
            Kokkos::Random_XorShift64<Space> rand(mix64(k ^ item_stream(star_key(s), n, i)), 0);
            for (int d = 0; d < L.dim(); ++d)
              x[d] += 10 * parameter_scale(L, x, d, baseline(s)) * rand.normal();
          }
          fix(s, x);
        });
    optimize_population(pop, "no planet");
    keep_optimum(0);
  }

  // Residuals of the current model (count p) and their GLS weights, normalized per star.
  void residuals() {
    const auto spec = spec_;
    const auto begin = begin_;
    const auto count = count_;
    const auto t = t_;
    const auto v = v_;
    const auto sigma = sigma_;
    const auto inst = inst_;
    const auto y = y_;
    const auto w = w_;
    const auto current = current_;
    Kokkos::parallel_for(
        "kosmos::kepler::survey::residuals",
        kosmos::Impl::non_blocking_policy(Kokkos::TeamPolicy<Space>(n_stars_, Kokkos::AUTO)),
        KOKKOS_LAMBDA(const Team& team) {
          const int s = team.league_rank(), b = begin(s);
          const ModelSpec m = spec(s);
          const double* x = &current(s, 0);
          double wsum = 0;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, count(s)),
              [&](const int k, double& acc) {
                const int o = b + k, q = inst(o);
                const double dt = t(o);
                double model = x[m.L.gamma(q)], power = 1;
                for (int i = 0; i < m.L.n_trend; ++i) {
                  power *= dt;
                  model += x[m.L.trend(i)] * power;
                }
                for (int j = 0; j < m.L.n_pl; ++j) model += radial_velocity(m.orbit(x, j), dt, 0.0);
                const double jitter = x[m.L.jitter(q)];
                y(o) = v(o) - model;
                w(o) = 1 / (sigma(o) * sigma(o) + jitter * jitter);
                acc += w(o);
              },
              wsum);
          team.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count(s)),
                               [&](const int k) { w(b + k) /= wsum; });
        });
  }

  // The GLS periodogram of every star's residuals (one work item per (star, frequency)), then the
  // kPeaks strongest local maxima per star at least 1.5 / baseline apart (one team per star).
  void periodograms() {
    const auto freq_begin = freq_begin_;
    const auto f_min = f_min_;
    const auto df = df_;
    const auto begin = begin_;
    const auto count = count_;
    const auto t = t_;
    const auto y = y_;
    const auto w = w_;
    const auto power = power_;
    const auto a = amp_a_;
    const auto b = amp_b_;
    const int n_stars = n_stars_;
    for_rows(
        "kosmos::kepler::survey::periodogram", n_freq_, KOKKOS_LAMBDA(const int i) {
          int lo = 0, hi = n_stars;  // the star s with freq_begin(s) <= i < freq_begin(s + 1)
          while (hi - lo > 1) {
            const int mid = (lo + hi) / 2;
            (freq_begin(mid) <= i ? lo : hi) = mid;
          }
          const double f = f_min(lo) + (i - freq_begin(lo)) * df(lo);
          gls_at(math::two_pi<double>() * f, t, y, w, begin(lo), count(lo), power(i), a(i), b(i));
        });
    const auto peaks = peaks_;
    const auto n_peaks = n_peaks_;
    const auto baseline = baseline_;
    Kokkos::parallel_for(
        "kosmos::kepler::survey::peaks",
        kosmos::Impl::non_blocking_policy(Kokkos::TeamPolicy<Space>(n_stars_, Kokkos::AUTO)),
        KOKKOS_LAMBDA(const Team& team) {
          const int s = team.league_rank(), f0 = freq_begin(s), nf = freq_begin(s + 1) - f0;
          const double separation = 1.5 / baseline(s);
          int found = 0;
          for (int round = 0; round < kPeaks; ++round) {
            using Reducer = Kokkos::MaxLoc<double, int>;
            typename Reducer::value_type best;
            Kokkos::parallel_reduce(
                Kokkos::TeamThreadRange(team, nf),
                [&](const int i, typename Reducer::value_type& acc) {
                  const double p = power(f0 + i);
                  const bool maximum =
                      (i == 0 || p >= power(f0 + i - 1)) && (i == nf - 1 || p >= power(f0 + i + 1));
                  const double f = f_min(s) + i * df(s);
                  bool distinct = true;
                  for (int q = 0; q < found; ++q)
                    distinct =
                        distinct && math::fabs(1.0 / peaks(s * kPeaks + q, 0) - f) > separation;
                  if (maximum && distinct && p > acc.val) {
                    acc.val = p;
                    acc.loc = i;
                  }
                },
                Reducer(best));
            if (best.loc < 0 || best.loc >= nf || !(best.val > negative_infinity())) break;
            team.team_barrier();
            Kokkos::single(Kokkos::PerTeam(team), [&]() {
              const int i = f0 + best.loc;
              const int row = s * kPeaks + found;
              // y = a cos(w t) + b sin(w t) = A cos(w t + phase)
              peaks(row, 0) = 1.0 / (f_min(s) + best.loc * df(s));
              peaks(row, 1) = power(i);
              peaks(row, 2) = math::sqrt(a(i) * a(i) + b(i) * b(i));
              peaks(row, 3) = math::atan2(-b(i), a(i));
            });
            team.team_barrier();
            ++found;
          }
          Kokkos::single(Kokkos::PerTeam(team), [&]() { n_peaks(s) = found; });
        });
  }

  // A candidate orbit for planet p (0-based) after the optimum of p planets: the periodogram's
  // peaks in turn, frequency within the peak, K about its amplitude, random e and omega;
  // the earlier planets, offsets, jitters and trend carried over. A function of (key, star,
  // candidate) only, so that the selected candidates are made again instead of kept.
  struct Candidate {
    Kokkos::View<ModelSpec*, Space> spec;
    Rows current, peaks, p_limits;
    Index n_peaks;
    Column baseline;
    Keys star_key;
    Tidy fix;
    std::uint64_t key;
    int p, candidates;
    double k_max;
    KOKKOS_INLINE_FUNCTION void operator()(int s, int c, double* x) const {
      const ModelSpec mn = spec(s);
      const ParamLayout Ln = mn.L;
      ParamLayout Lo = Ln;
      Lo.n_pl = p;
      const double* old = &current(s, 0);
      for (int d = 0; d < 5 * p; ++d) x[d] = old[d];
      for (int i = 0; i < Ln.n_inst; ++i) {
        x[Ln.gamma(i)] = old[Lo.gamma(i)];
        x[Ln.jitter(i)] = old[Lo.jitter(i)];
      }
      for (int i = 0; i < Ln.n_trend; ++i) x[Ln.trend(i)] = old[Lo.trend(i)];
      Kokkos::Random_XorShift64<Space> rand(
          mix64(key ^ item_stream(star_key(s), candidates, c)), 0);
      const int row = s * kPeaks + c % (n_peaks(s) > 0 ? n_peaks(s) : 1);
      const double p_min = p_limits(s, 0), p_max = p_limits(s, 1);
      const double f = 1 / peaks(row, 0) + (rand.drand() - 0.5) / baseline(s);
      double P = 1 / math::fmax(f, 1 / p_max);
      P = math::fmin(math::fmax(P, p_min), p_max);
      const double K = peaks(row, 2) * (0.7 + 0.8 * rand.drand());
      const double phase = peaks(row, 3) + 0.5 * rand.normal();
      const double u = rand.drand();
      const double e = 0.6 * u * rand.drand(), omega = math::two_pi<double>() * rand.drand();
      // the periodogram's phase is the mean longitude of a circular orbit
      Orbit o;
      o.P = P;
      o.K = math::fmin(K, k_max);
      o.e = e;
      o.omega = omega;
      o.M0 = phase - omega;
      mn.set_orbit(x, p, o);
      fix(s, x);
    }
  };

  // 1. Planet p + 1: periodogram of the residuals, random search, DE, Nelder-Mead.
  void planet_stage(int p) {
    residuals();
    periodograms();
    {
      auto n_peaks = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), n_peaks_);
      auto peaks = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), peaks_);
      for (int s = 0; s < n_stars_; ++s) {
        kosmos::Impl::require(n_peaks(s) > 0, "kosmos::kepler::survey",
                              fits_[std::size_t(s)].data->path, ": no periodogram peak for planet ",
                              p + 1);
        fits_[std::size_t(s)].result.periodogram_periods.push_back(peaks(s * kPeaks, 0));
      }
    }
    set_count(p + 1);
    const int nc = opt_.random_candidates, n = opt_.chains;
    const Candidate make{spec_,     current_, peaks_, p_limits_, n_peaks_, baseline_,
                         star_key_, tidy(),   key(1), p,         nc,       opt_.k_max};
    // Candidates in chunks of at most ~2^21 rows; only their ln posterior is kept.
    const int chunk = std::min(nc, std::max(1, (1 << 21) / n_stars_));
    Rows rows("kosmos::kepler::survey::candidates", std::size_t(n_stars_) * chunk, width_);
    Column chunk_fit("kosmos::kepler::survey::candidate_chunk_fit", std::size_t(n_stars_) * chunk);
    Column fit("kosmos::kepler::survey::candidate_fit", std::size_t(n_stars_) * nc);
    for (int c0 = 0; c0 < nc; c0 += chunk) {
      for_rows(
          "kosmos::kepler::survey::candidates", n_stars_ * chunk, KOKKOS_LAMBDA(const int r) {
            const int c = c0 + r % chunk;
            make(r / chunk, c < nc ? c : nc - 1, &rows(r, 0));
          });
      evaluate(rows, chunk, chunk_fit);
      for_rows(
          "kosmos::kepler::survey::candidate_fit", n_stars_ * chunk, KOKKOS_LAMBDA(const int r) {
            const int s = r / chunk, c = c0 + r % chunk;
            if (c < nc) fit(s * nc + c) = chunk_fit(r);
          });
    }
    // The DE population: the best candidate of each of `chains` equal groups, scattered in the
    // parameters carried over from the previous stage (diversity there).
    Rows pop("kosmos::kepler::survey::population", std::size_t(n_stars_) * n, width_);
    const auto spec = spec_;
    const auto baseline = baseline_;
    const auto fix = tidy();
    const std::uint64_t k = key(2);
    const auto star_key = star_key_;
    for_rows(
        "kosmos::kepler::survey::select_candidates", n_stars_ * n, KOKKOS_LAMBDA(const int r) {
          const int s = r / n, i = r % n;
          const int first = int((long long)(i)*nc / n), last = int((long long)(i + 1) * nc / n);
          int best = first;
          for (int c = first + 1; c < last; ++c)
            if (fit(s * nc + c) > fit(s * nc + best)) best = c;
          double* x = &pop(r, 0);
          make(s, best, x);
          if (i == 0) return;
          const ParamLayout L = spec(s).L;
          Kokkos::Random_XorShift64<Space> rand(mix64(k ^ item_stream(star_key(s), n, i)), 0);
          for (int d = 0; d < L.dim(); ++d)
            if (d < 5 * p || d >= 5 * (p + 1))
              x[d] += 0.3 * parameter_scale(L, x, d, baseline(s)) * rand.normal();
          fix(s, x);
        });
    std::ostringstream stage;
    stage << "planet " << p + 1;
    optimize_population(pop, stage.str());
    keep_optimum(p + 1);
  }

  // DE on the population of every star (current-to-best/1/bin, dithered F, as optimize()), then
  // the best member of each star polished by Nelder-Mead into current_.
  void optimize_population(const Rows& pop, const std::string& stage) {
    const int n = opt_.chains, rows = n_stars_ * n;
    Column fit("kosmos::kepler::survey::population_fit", rows);
    Column trial_fit("kosmos::kepler::survey::trial_fit", rows);
    Rows trial("kosmos::kepler::survey::trial", rows, width_);
    evaluate(pop, n, fit);
    const auto spec = spec_;
    const auto fix = tidy();
    progress_.reset();
    for (int g = 0; g < opt_.optimizer_generations; ++g) {
      const std::uint64_t k = key(3);
      const auto star_key = star_key_;
      for_rows(
          "kosmos::kepler::survey::de_mutate", rows, KOKKOS_LAMBDA(const int r) {
            const int s = r / n, i = r % n, base = s * n;
            int best = 0;
            for (int j = 1; j < n; ++j)
              if (fit(base + j) > fit(base + best)) best = j;
            Kokkos::Random_XorShift64<Space> rand(mix64(k ^ item_stream(star_key(s), n, i)), 0);
            int a = i, b = i;
            while (a == i) a = int(rand.urand(std::uint32_t(n)));
            while (b == i || b == a) b = int(rand.urand(std::uint32_t(n)));
            const double F = 0.4 + 0.5 * rand.drand(), CR = 0.9;
            const int dim = spec(s).L.dim();
            const int jr = int(rand.urand(std::uint32_t(dim > 0 ? dim : 1)));
            for (int d = 0; d < dim; ++d) {
              const double xi = pop(r, d);
              trial(r, d) = (d == jr || rand.drand() < CR)
                                ? xi + F * (pop(base + best, d) - xi) +
                                      F * (pop(base + a, d) - pop(base + b, d))
                                : xi;
            }
            fix(s, &trial(r, 0));
          });
      evaluate(trial, n, trial_fit);
      for_rows(
          "kosmos::kepler::survey::de_select", rows, KOKKOS_LAMBDA(const int r) {
            if (!(trial_fit(r) > fit(r))) return;
            fit(r) = trial_fit(r);
            for (int d = 0; d < spec(r / n).L.dim(); ++d) pop(r, d) = trial(r, d);
          });
      progress_.step(stage + " optimization (all stars)", g + 1, opt_.optimizer_generations);
    }
    const auto current = current_;
    const auto current_fit = current_fit_;
    for_rows(
        "kosmos::kepler::survey::de_best", n_stars_, KOKKOS_LAMBDA(const int s) {
          int best = 0;
          for (int j = 1; j < n; ++j)
            if (fit(s * n + j) > fit(s * n + best)) best = j;
          for (int d = 0; d < spec(s).L.dim(); ++d) current(s, d) = pop(s * n + best, d);
          current_fit(s) = fit(s * n + best);
        });
    polish();
  }

  // Nelder-Mead (adaptive coefficients of Gao & Han 2012, as polish()) on the free parameters of
  // every star's current_ at once: per iteration one kernel makes each star's four trial points
  // (reflection, expansion, both contractions), one likelihood launch evaluates them all and one
  // kernel updates the simplexes; a shrink evaluates the shrinking stars' simplexes in one more
  // launch. Restarts from the best point while a restart gains >= 1e-4, at most 5 times.
  // The simplex spans only free parameters: fixed entries are equal in every vertex, and affine
  // combinations keep them.
  void polish() {
    const int V = max_free_ + 1, n_rows = n_stars_ * V;
    if (max_free_ == 0) return;
    Rows simplex("kosmos::kepler::survey::simplex", n_rows, width_);
    Rows trial("kosmos::kepler::survey::nm_trial", std::size_t(n_stars_) * 4, width_);
    Column value("kosmos::kepler::survey::nm_value", n_rows);
    Column lp("kosmos::kepler::survey::nm_logpost", n_rows);
    Column trial_lp("kosmos::kepler::survey::nm_trial_logpost", std::size_t(n_stars_) * 4);
    Column best("kosmos::kepler::survey::nm_best", n_stars_);
    Index active("kosmos::kepler::survey::nm_active", n_stars_);
    Index iterating("kosmos::kepler::survey::nm_iterating", n_stars_);
    Index shrink("kosmos::kepler::survey::nm_shrink", n_stars_);
    Index n_free("kosmos::kepler::survey::nm_free", n_stars_);
    Kokkos::View<int**, Kokkos::LayoutRight, Space> extremes("kosmos::kepler::survey::nm_extremes",
                                                             n_stars_, 3);
    {
      auto h = Kokkos::create_mirror_view(n_free);
      for (int s = 0; s < n_stars_; ++s) h(s) = free_[std::size_t(s)];
      Kokkos::deep_copy(n_free, h);
    }
    const auto spec = spec_;
    const auto fixed = fixed_;
    const auto current = current_;
    const auto baseline = baseline_;
    evaluate(current_, 1, best);
    for_rows(
        "kosmos::kepler::survey::nm_active", n_stars_, KOKKOS_LAMBDA(const int s) {
          active(s) = n_free(s) > 0 && math::isfinite(best(s)) ? 1 : 0;
        });
    for (int restart = 0; restart < 5; ++restart) {
      // Simplex: x and x + scale along each free parameter (extra vertices of stars with fewer
      // free parameters: copies of x, never used); trial rows start as x.
      for_rows(
          "kosmos::kepler::survey::nm_start", n_stars_, KOKKOS_LAMBDA(const int s) {
            const ParamLayout L = spec(s).L;
            const double* x = &current(s, 0);
            for (int v = 0; v < V; ++v)
              for (int d = 0; d < L.dim(); ++d) simplex(s * V + v, d) = x[d];
            for (int t = 0; t < 4; ++t)
              for (int d = 0; d < L.dim(); ++d) trial(s * 4 + t, d) = x[d];
            int q = 0;
            for (int d = 0; d < L.dim(); ++d)
              if (math::isnan(fixed(s, d)))
                simplex(s * V + ++q, d) += parameter_scale(L, x, d, baseline(s));
            iterating(s) = active(s);
          });
      evaluate(simplex, V, lp);
      for_rows(
          "kosmos::kepler::survey::nm_values", n_rows,
          KOKKOS_LAMBDA(const int r) { value(r) = -lp(r); });
      for (int it = 0; it < 400 * max_free_; ++it) {
        for_rows(
            "kosmos::kepler::survey::nm_trials", n_stars_, KOKKOS_LAMBDA(const int s) {
              if (!iterating(s)) return;
              const int n = n_free(s), dim = spec(s).L.dim(), base = s * V;
              int lo = 0, hi = 0;
              for (int i = 1; i <= n; ++i) {
                if (value(base + i) < value(base + lo)) lo = i;
                if (value(base + i) > value(base + hi)) hi = i;
              }
              int second = lo;
              for (int i = 0; i <= n; ++i)
                if (i != hi && value(base + i) > value(base + second)) second = i;
              // ln posterior resolved far below its 1-sigma scale of 0.5
              if (!(value(base + hi) - value(base + lo) >= 1e-7)) {
                iterating(s) = 0;
                return;
              }
              extremes(s, 0) = lo;
              extremes(s, 1) = hi;
              extremes(s, 2) = second;
              const double beta = 1 + 2.0 / n, gamma = 0.75 - 0.5 / n;
              const double coef[4] = {1.0, beta, gamma, -gamma};  // reflect, expand, out, in
              for (int d = 0; d < dim; ++d) {
                double centroid = 0;
                for (int i = 0; i <= n; ++i)
                  if (i != hi) centroid += simplex(base + i, d) / n;
                for (int t = 0; t < 4; ++t)
                  trial(s * 4 + t, d) = centroid + coef[t] * (centroid - simplex(base + hi, d));
              }
            });
        evaluate(trial, 4, trial_lp);
        for_rows(
            "kosmos::kepler::survey::nm_update", n_stars_, KOKKOS_LAMBDA(const int s) {
              shrink(s) = 0;
              if (!iterating(s)) return;
              const int n = n_free(s), dim = spec(s).L.dim(), base = s * V;
              const int lo = extremes(s, 0), hi = extremes(s, 1), second = extremes(s, 2);
              const double fr = -trial_lp(s * 4), fe = -trial_lp(s * 4 + 1),
                           foc = -trial_lp(s * 4 + 2), fic = -trial_lp(s * 4 + 3);
              int accept = -1;
              if (fr < value(base + lo))
                accept = fe < fr ? 1 : 0;
              else if (fr < value(base + second))
                accept = 0;
              else if (fr < value(base + hi))
                accept = foc <= fr ? 2 : 0;
              else if (fic < value(base + hi))
                accept = 3;
              if (accept >= 0) {
                for (int d = 0; d < dim; ++d) simplex(base + hi, d) = trial(s * 4 + accept, d);
                value(base + hi) = -trial_lp(s * 4 + accept);
                return;
              }
              const double delta = 1 - 1.0 / n;  // shrink towards the best point
              for (int i = 0; i <= n; ++i)
                if (i != lo)
                  for (int d = 0; d < dim; ++d)
                    simplex(base + i, d) = simplex(base + lo, d) +
                                           delta * (simplex(base + i, d) - simplex(base + lo, d));
              shrink(s) = 1;
            });
        if (count_true("kosmos::kepler::survey::nm_shrinking", shrink) > 0) {
          evaluate(simplex, V, lp);
          for_rows(
              "kosmos::kepler::survey::nm_shrunk", n_rows, KOKKOS_LAMBDA(const int r) {
                if (shrink(r / V)) value(r) = -lp(r);
              });
        }
        if ((it + 1) % kShrinkCheckEvery == 0 &&
            count_true("kosmos::kepler::survey::nm_iterating", iterating) == 0)
          break;
      }
      for_rows(
          "kosmos::kepler::survey::nm_restart", n_stars_, KOKKOS_LAMBDA(const int s) {
            if (!active(s)) return;
            const int n = n_free(s), base = s * V;
            int lo = 0;
            for (int i = 1; i <= n; ++i)
              if (value(base + i) < value(base + lo)) lo = i;
            const double gain = -value(base + lo) - best(s);
            if (gain > 0) {
              best(s) = -value(base + lo);
              for (int d = 0; d < spec(s).L.dim(); ++d) current(s, d) = simplex(base + lo, d);
            }
            active(s) = gain >= 1e-4 ? 1 : 0;
          });
      if (count_true("kosmos::kepler::survey::nm_active", active) == 0) break;
    }
    Kokkos::deep_copy(current_fit_, best);
  }

  // Copies every star's optimum of n_pl planets to the host.
  void keep_optimum(int n_pl) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), current_);
    for (int s = 0; s < n_stars_; ++s) {
      const int dim = 5 * n_pl + 2 * setups_[std::size_t(s)].n_inst + opt_.trend;
      optimum_of_count_[std::size_t(s)].push_back(std::vector<double>(&h(s, 0), &h(s, 0) + dim));
    }
    std::ostringstream m;
    m << (n_pl == 0 ? std::string("no planet") : "planet " + std::to_string(n_pl)) << ": optimized "
      << n_stars_ << " stars together (" << evaluations_ << " likelihood evaluations so far)";
    progress_.message(m.str());
  }

  // Per star: the count to sample (the comparison's with opt.min_planets >= 0), its model and
  // optimum, the result's optimization fields.
  void finish() {
    for (int s = 0; s < n_stars_; ++s) {
      StarFit& fit = fits_[std::size_t(s)];
      SearchResult& result = fit.result;
      result.epoch = fit.epoch;
      result.n_obs = int(fit.data->size());
      result.trend = opt_.trend;
      result.instruments = fit.data->instrument_names;
      fit.evaluations += evaluations_ / n_stars_;  // the shared launches, evenly
      const auto& optima = optimum_of_count_[std::size_t(s)];
      const int count = opt_.min_planets >= 0 ? compare_planet_counts(
                                                    HostObservations(*fit.data, fit.epoch, opt_),
                                                    [&](int c) { return model_for(s, c); }, optima,
                                                    opt_, result, fit.evaluations)
                                              : opt_.planets;
      result.planets = count;
      fit.model = std::make_unique<Model>(model_for(s, count));
      fit.current = optima[std::size_t(count)];
      fit.optimum_of_count = optima;  // the survey's evidence starts each count's ladder there
      result.n_free = fit.model->n_free();
    }
  }

  std::vector<StarFit>& fits_;
  const SearchOptions& opt_;
  std::uint64_t seed_;
  Progress& progress_;
  int n_stars_, n_inst_ = 1, width_ = 0, n_pl_ = 0, max_free_ = 0, n_freq_ = 0;
  std::uint64_t stream_ = 0;
  long long evaluations_ = 0;
  std::vector<StarSetup> setups_;
  std::vector<int> free_;
  std::vector<std::vector<std::vector<double>>> optimum_of_count_;
  HostObservations obs_;  // all stars' (before evaluator_, which is made from them)
  Chi2Evaluator<Double, Space> evaluator_;
  std::map<int, Buffers> buffers_;
  Column t_, v_, sigma_, y_, w_, baseline_, f_min_, df_, power_, amp_a_, amp_b_, current_fit_;
  Index inst_, begin_, count_, freq_begin_, n_peaks_;
  Rows p_limits_, peaks_, fixed_, current_;
  Kokkos::View<ModelSpec*, Space> spec_;
  Kokkos::View<PriorTerm*, Space> terms_;
  // Per star the number of its random streams (its index in the whole survey): a star draws the
  // same numbers whichever stars share its batch or rank.
  Keys star_key_;
};

void optimize_stars(std::vector<StarFit>& fits, const SearchOptions& opt, std::uint64_t seed,
                    Progress& progress) {
  kosmos::Impl::ScopedRegion region("kosmos::kepler::survey::optimize");
  Progress quiet(nullptr);
  std::mt19937_64 unused(seed);
  for (auto& fit : fits) {
    try {
      optimize_star(fit, opt, unused, quiet, true);
    } catch (const kosmos::invalid_input& e) {  // which star of the survey
      throw kosmos::invalid_input(fit.data->path + ": " + e.what());
    }
  }
  if (opt.host_space) {
    BatchedSearch<Kokkos::DefaultHostExecutionSpace> search(fits, opt, seed, progress);
    search.run();
  } else {
    BatchedSearch<Kokkos::DefaultExecutionSpace> search(fits, opt, seed, progress);
    search.run();
  }
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
