#include <kosmos/kepler/search.hpp>

#include <kosmos/core/error.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/kepler/chi2.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>

namespace kosmos {
namespace kepler {
namespace Impl {
using SearchSpace = Kokkos::DefaultExecutionSpace;
constexpr double kTwoPi = 6.283185307179586476925;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Position of each sampled parameter in a model vector.
struct ParamLayout {
  int n_pl = 0, n_inst = 0;
  int dim() const { return 5 * n_pl + 2 * n_inst; }
  static int lnP(int j) { return 5 * j; }
  static int K(int j) { return 5 * j + 1; }
  static int h(int j) { return 5 * j + 2; }  // sqrt(e) cos w
  static int k(int j) { return 5 * j + 3; }  // sqrt(e) sin w
  static int lambda(int j) { return 5 * j + 4; }
  int gamma(int i) const { return 5 * n_pl + i; }
  int jitter(int i) const { return 5 * n_pl + n_inst + i; }
};

struct PriorBounds {
  double lnP_min, lnP_max, k_max, e_max, s_max;
};

bool in_prior(const double* x, const ParamLayout& L, const PriorBounds& b) {
  for (int j = 0; j < L.n_pl; ++j) {
    const double lnP = x[L.lnP(j)], K = x[L.K(j)], e = x[L.h(j)] * x[L.h(j)] + x[L.k(j)] * x[L.k(j)];
    if (!(lnP >= b.lnP_min && lnP <= b.lnP_max) || !(K >= 0 && K <= b.k_max) || !(e < b.e_max) ||
        !std::isfinite(x[L.lambda(j)]))
      return false;
  }
  for (int i = 0; i < L.n_inst; ++i) {
    const double s = x[L.jitter(i)];
    if (!(s >= 0 && s <= b.s_max) || !std::isfinite(x[L.gamma(i)])) return false;
  }
  return true;
}

double wrap_2pi(double a) { return a - kTwoPi * std::floor(a / kTwoPi); }

Orbit orbit_of(const double* x, int j) {
  Orbit o;
  o.P = std::exp(x[ParamLayout::lnP(j)]);
  o.K = x[ParamLayout::K(j)];
  const double h = x[ParamLayout::h(j)], k = x[ParamLayout::k(j)];
  o.e = h * h + k * k;
  o.omega = o.e > 0 ? wrap_2pi(std::atan2(k, h)) : 0.0;
  o.M0 = wrap_2pi(x[ParamLayout::lambda(j)] - o.omega);
  return o;
}

// Batched ln L of parameter vectors (rows of x); -inf outside the prior.
class Likelihood {
 public:
  virtual ~Likelihood() = default;
  virtual void evaluate(const std::vector<double>& x, int n, std::vector<double>& loglike,
                        std::vector<double>* chi2 = nullptr) = 0;
  long long evaluations = 0;
};

template <class Precision>
class BatchLikelihood : public Likelihood {
 public:
  BatchLikelihood(const Observations<SearchSpace>& obs, ParamLayout layout, PriorBounds bounds,
                  const Chi2Options& options)
      : layout_(layout), bounds_(bounds), evaluator_(SearchSpace(), obs, options) {}

  void evaluate(const std::vector<double>& x, int n, std::vector<double>& loglike,
                std::vector<double>* chi2_out) override {
    const int dim = layout_.dim(), n_pl = layout_.n_pl, n_inst = layout_.n_inst;
    if (models_.n_systems() != n) {
      models_ = Models<Precision, SearchSpace>(n, n_pl, n_inst);
      host_ = ModelsHostMirror<Precision, SearchSpace>(models_);
      chi2_ = Kokkos::View<double*, SearchSpace>("kosmos::kepler::search::chi2", n);
      ll_ = Kokkos::View<double*, SearchSpace>("kosmos::kepler::search::loglike", n);
    }
    valid_.assign(n, 0);
    for (int r = 0; r < n; ++r) {
      const double* xr = &x[std::size_t(r) * dim];
      const bool ok = in_prior(xr, layout_, bounds_);
      valid_[r] = ok;
      for (int j = 0; j < n_pl; ++j) {
        const Orbit o = ok ? orbit_of(xr, j) : Orbit{10.0, 0.0, 0.0, 0.0, 0.0};
        host_.P(r, j) = o.P;
        host_.K(r, j) = o.K;
        host_.e(r, j) = o.e;
        host_.omega(r, j) = o.omega;
        host_.M0(r, j) = o.M0;
      }
      for (int i = 0; i < n_inst; ++i) {
        host_.offset(r, i) = ok ? xr[layout_.gamma(i)] : 0.0;
        host_.jitter(r, i) = ok ? xr[layout_.jitter(i)] : 1.0;
      }
    }
    host_.copy_to(models_);
    evaluator_.evaluate(models_, chi2_, ll_);
    auto hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ll_);
    loglike.resize(n);
    for (int r = 0; r < n; ++r) loglike[r] = valid_[r] && std::isfinite(hl(r)) ? hl(r) : kNegInf;
    if (chi2_out) {
      auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chi2_);
      chi2_out->assign(hc.data(), hc.data() + n);
    }
    evaluations += n;
  }

 private:
  using M = Models<Precision, SearchSpace>;
  ParamLayout layout_;
  PriorBounds bounds_;
  Chi2Evaluator<Precision, SearchSpace> evaluator_;
  M models_;
  ModelsHostMirror<Precision, SearchSpace> host_;
  Kokkos::View<double*, SearchSpace> chi2_, ll_;
  std::vector<char> valid_;
};

std::unique_ptr<Likelihood> make_likelihood(const Observations<SearchSpace>& obs, ParamLayout layout,
                                            PriorBounds bounds, const SearchOptions& opt) {
  Chi2Options co;
  co.validate = false;  // every model is inside the prior (checked on the host)
  co.solver.solver = opt.solver;
  if (opt.mixed_precision) return std::make_unique<BatchLikelihood<Mixed>>(obs, layout, bounds, co);
  return std::make_unique<BatchLikelihood<Double>>(obs, layout, bounds, co);
}

// Generalized Lomb-Scargle power (Zechmeister & Kuerster 2009) on a frequency grid, plus the
// sinusoid's cos/sin amplitudes; one frequency per work item.
struct GLSFunctor {
  Kokkos::View<const double*, SearchSpace> t, y, w;  // w normalized to sum 1
  Kokkos::View<double*, SearchSpace> power, a, b;
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

std::vector<Peak> periodogram_peaks(const std::vector<double>& t, const std::vector<double>& y,
                                    const std::vector<double>& w, double f_min, double f_max, double df,
                                    int max_peaks, double baseline) {
  const int n = int(t.size());
  const int nf = int((f_max - f_min) / df) + 1;
  Kokkos::View<double*, SearchSpace> dt("kosmos::kepler::gls::t", n), dy("kosmos::kepler::gls::y", n),
      dw("kosmos::kepler::gls::w", n), power("kosmos::kepler::gls::power", nf), a("kosmos::kepler::gls::a", nf),
      b("kosmos::kepler::gls::b", nf);
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
  Kokkos::parallel_for("kosmos::kepler::periodogram", Kokkos::RangePolicy<SearchSpace>(0, nf),
                       GLSFunctor{dt, dy, dw, power, a, b, f_min, df, n});
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
    for (const auto& p : peaks) distinct = distinct && std::fabs(1.0 / p.period - f) > 1.5 / baseline;
    if (!distinct) continue;
    // y = a cos(w t) + b sin(w t) = A cos(w t + phase)
    peaks.push_back({1.0 / f, hp(i), std::hypot(ha(i), hb(i)), std::atan2(-hb(i), ha(i))});
    if (int(peaks.size()) == max_peaks) break;
  }
  return peaks;
}

// Characteristic step of each parameter (starting scatter, finite-difference steps).
std::vector<double> parameter_scales(const std::vector<double>& x, const ParamLayout& L, double baseline) {
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
  return s;
}

class Progress {
 public:
  explicit Progress(const std::function<void(const std::string&)>& sink) : sink_(sink) {}
  void message(const std::string& m) const {
    if (sink_) sink_(m);
  }
  // Reports at every 10% of `total`.
  void step(const std::string& stage, long long done, long long total, const std::string& extra = "") {
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

// Differential-evolution optimization (current-to-best/1/bin, dithered F) of ln L.
void optimize(Likelihood& lik, const ParamLayout& L, std::vector<double>& pop, std::vector<double>& fit, int generations,
              std::mt19937_64& rng, Progress& progress, const std::string& stage) {
  const int dim = L.dim(), n = int(fit.size());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> pick(0, n - 1), pick_dim(0, dim - 1);
  std::vector<double> trial(pop.size()), trial_fit;
  progress.reset();
  for (int g = 0; g < generations; ++g) {
    const int best = int(std::max_element(fit.begin(), fit.end()) - fit.begin());
    for (int i = 0; i < n; ++i) {
      int a, b;
      do a = pick(rng); while (a == i);
      do b = pick(rng); while (b == i || b == a);
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
      for (int q = 0; q < L.n_inst; ++q) trial[std::size_t(i) * dim + L.jitter(q)] = std::fabs(trial[std::size_t(i) * dim + L.jitter(q)]);
    }
    lik.evaluate(trial, n, trial_fit);
    for (int i = 0; i < n; ++i)
      if (trial_fit[i] > fit[i]) {
        fit[i] = trial_fit[i];
        std::copy(trial.begin() + std::size_t(i) * dim, trial.begin() + std::size_t(i + 1) * dim,
                  pop.begin() + std::size_t(i) * dim);
      }
    std::ostringstream extra;
    extra << ", best ln L = " << std::fixed << std::setprecision(2) << *std::max_element(fit.begin(), fit.end());
    progress.step(stage, g + 1, generations, extra.str());
  }
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * (v.size() - 1);
  const std::size_t i = std::size_t(pos);
  const double f = pos - i;
  return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}
}  // namespace Impl

const ParameterSummary& SearchResult::get(const std::string& column) const {
  for (const auto& s : summary)
    if (s.name == column) return s;
  throw invalid_input("kosmos::kepler::SearchResult::get: no column '" + column + "'");
}

SearchResult search(const RVData& data, const SearchOptions& opt) {
  using namespace Impl;
  constexpr const char* where = "kosmos::kepler::search";
  kosmos::Impl::ScopedRegion region(where);
  const auto start_time = std::chrono::steady_clock::now();
  kosmos::Impl::require(data.size() >= 5, where, "need at least 5 observations, got ", data.size());
  kosmos::Impl::require(opt.planets >= 1 && opt.planets <= 8, where, "planets = ", opt.planets, " is outside [1, 8]");
  const double baseline = data.baseline();
  kosmos::Impl::require(baseline > 0, where, "the observations span no time");
  const ParamLayout L{opt.planets, data.n_instruments()};
  const int dim = L.dim();
  kosmos::Impl::require(opt.chains >= 2 * dim + 2 && opt.chains % 2 == 0, where, "chains = ", opt.chains,
                        " must be even and >= 2 x parameters + 2 = ", 2 * dim + 2);
  kosmos::Impl::require(opt.burn >= 0 && opt.steps >= 1 && opt.thin >= 1, where, "burn = ", opt.burn, ", steps = ",
                        opt.steps, ", thin = ", opt.thin, ": need burn >= 0, steps >= 1, thin >= 1");
  kosmos::Impl::require(opt.optimizer_generations >= 1 && opt.random_candidates >= opt.chains, where,
                        "optimizer_generations = ", opt.optimizer_generations, ", random_candidates = ",
                        opt.random_candidates, ": need >= 1 and >= chains");
  const double p_max = opt.period_max > 0 ? opt.period_max : 2 * baseline;
  kosmos::Impl::require(opt.period_min > 0 && p_max > opt.period_min, where, "period range [", opt.period_min, ", ",
                        p_max, "] is empty or not positive");
  kosmos::Impl::require(opt.e_max > 0 && opt.e_max < 1, where, "e_max = ", opt.e_max, " is outside (0, 1)");
  kosmos::Impl::require(opt.k_max > 0 && opt.jitter_max > 0, where, "k_max and jitter_max must be > 0");
  const double epoch = opt.epoch != 0 ? opt.epoch : data.mid_time();
  const PriorBounds bounds{std::log(opt.period_min), std::log(p_max), opt.k_max, opt.e_max, opt.jitter_max};
  const Observations<SearchSpace> obs(data.time, data.velocity, data.sigma, data.instrument, data.n_instruments(),
                                      epoch);
  Progress progress(opt.progress);
  std::mt19937_64 rng(opt.seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> gauss(0.0, 1.0);
  SearchResult result;
  result.epoch = epoch;
  result.n_obs = int(data.size());
  result.instruments = data.instrument_names;
  long long evaluations = 0;

  // Start: per-instrument weighted means, jitter 1 m/s, no planets.
  std::vector<double> current(2 * L.n_inst);
  {
    std::vector<double> sw(L.n_inst, 0), swv(L.n_inst, 0);
    for (std::size_t k = 0; k < data.size(); ++k) {
      const double w = 1 / (data.sigma[k] * data.sigma[k]);
      sw[data.instrument[k]] += w;
      swv[data.instrument[k]] += w * data.velocity[k];
    }
    for (int i = 0; i < L.n_inst; ++i) {
      current[i] = swv[i] / sw[i];
      current[L.n_inst + i] = 1.0;
    }
  }

  // 1. One planet at a time: periodogram of the residuals, random search, DE optimization.
  std::vector<double> pop, fit;
  for (int p = 0; p < opt.planets; ++p) {
    const ParamLayout Lo{p, L.n_inst}, Ln{p + 1, L.n_inst};
    std::vector<double> t(data.size()), y(data.size()), w(data.size());
    for (std::size_t k = 0; k < data.size(); ++k) {
      double model = current[Lo.gamma(data.instrument[k])];
      for (int j = 0; j < p; ++j) model += radial_velocity(orbit_of(current.data(), j), data.time[k], epoch);
      const double s = current[Lo.jitter(data.instrument[k])];
      t[k] = data.time[k] - epoch;
      y[k] = data.velocity[k] - model;
      w[k] = 1 / (data.sigma[k] * data.sigma[k] + s * s);
    }
    const auto peaks = periodogram_peaks(t, y, w, 1 / p_max, 1 / opt.period_min, 0.2 / baseline, 3, baseline);
    kosmos::Impl::require(!peaks.empty(), where, "no periodogram peak for planet ", p + 1);
    {
      std::ostringstream m;
      m << "planet " << p + 1 << ": periodogram peaks at";
      for (const auto& pk : peaks) m << " " << std::setprecision(6) << pk.period << " d (power " << std::setprecision(3) << pk.power << ")";
      progress.message(m.str());
    }
    result.periodogram_periods.push_back(peaks[0].period);

    auto lik = make_likelihood(obs, Ln, bounds, opt);
    const int nc = opt.random_candidates, dn = Ln.dim();
    std::vector<double> cand(std::size_t(nc) * dn);
    for (int c = 0; c < nc; ++c) {
      double* x = &cand[std::size_t(c) * dn];
      for (int j = 0; j < p; ++j)
        for (int q = 0; q < 5; ++q) x[5 * j + q] = current[5 * j + q];
      for (int i = 0; i < L.n_inst; ++i) {
        x[Ln.gamma(i)] = current[Lo.gamma(i)];
        x[Ln.jitter(i)] = current[Lo.jitter(i)];
      }
      const Peak& pk = peaks[c % peaks.size()];
      const double f = 1 / pk.period + (u(rng) - 0.5) / baseline;
      const double P = 1 / std::max(f, 1 / p_max);
      const double e = 0.6 * u(rng) * u(rng), omega = kTwoPi * u(rng);
      x[Ln.lnP(p)] = std::log(std::min(std::max(P, opt.period_min), p_max));
      x[Ln.K(p)] = std::min(pk.amplitude * (0.7 + 0.8 * u(rng)), opt.k_max);
      x[Ln.h(p)] = std::sqrt(e) * std::cos(omega);
      x[Ln.k(p)] = std::sqrt(e) * std::sin(omega);
      // circular orbit: v = K cos(lambda + 2 pi t / P) (omega = 0, nu = M)
      x[Ln.lambda(p)] = wrap_2pi(pk.phase + 0.5 * gauss(rng));
    }
    std::vector<double> cand_fit;
    lik->evaluate(cand, nc, cand_fit);
    std::vector<int> order(nc);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + opt.chains, order.end(),
                      [&](int a, int b) { return cand_fit[a] > cand_fit[b]; });
    const auto scales = parameter_scales(cand, Ln, baseline);
    pop.assign(std::size_t(opt.chains) * dn, 0);
    fit.assign(opt.chains, 0);
    for (int i = 0; i < opt.chains; ++i) {
      const double* src = &cand[std::size_t(order[i]) * dn];
      double* dst = &pop[std::size_t(i) * dn];
      for (int d = 0; d < dn; ++d) dst[d] = src[d];
      if (i > 0)  // diversity in the parameters carried over from the previous stage
        for (int d = 0; d < dn; ++d)
          if (d < 5 * p || d >= 5 * (p + 1)) dst[d] += 0.3 * scales[d] * gauss(rng);
      for (int q = 0; q < L.n_inst; ++q) dst[Ln.jitter(q)] = std::fabs(dst[Ln.jitter(q)]);
    }
    lik->evaluate(pop, opt.chains, fit);
    std::ostringstream stage;
    stage << "planet " << p + 1 << " optimization";
    optimize(*lik, Ln, pop, fit, opt.optimizer_generations, rng, progress, stage.str());
    const int best = int(std::max_element(fit.begin(), fit.end()) - fit.begin());
    current.assign(pop.begin() + std::size_t(best) * dn, pop.begin() + std::size_t(best + 1) * dn);
    evaluations += lik->evaluations;
    const Orbit o = orbit_of(current.data(), p);
    std::ostringstream m;
    m << "planet " << p + 1 << ": P = " << std::setprecision(7) << o.P << " d, K = " << std::setprecision(4) << o.K
      << " m/s, e = " << std::setprecision(3) << o.e << ", ln L = " << std::setprecision(8) << fit[best];
    progress.message(m.str());
  }

  // 2. DE-MCMC around the optimum.
  auto lik = make_likelihood(obs, L, bounds, opt);
  const int n = opt.chains, half = n / 2;
  std::vector<double> sigma(dim);
  {
    // Conditional widths from the curvature of ln L (central differences, one batch).
    const auto h = parameter_scales(current, L, baseline);
    std::vector<double> x(std::size_t(2 * dim + 1) * dim), f;
    for (int r = 0; r < 2 * dim + 1; ++r) {
      std::copy(current.begin(), current.end(), x.begin() + std::size_t(r) * dim);
      if (r > 0) x[std::size_t(r) * dim + (r - 1) / 2] += (r % 2 ? 1 : -1) * h[(r - 1) / 2];
    }
    lik->evaluate(x, 2 * dim + 1, f);
    for (int d = 0; d < dim; ++d) {
      const double curv = (f[2 * d + 1] + f[2 * d + 2] - 2 * f[0]) / (h[d] * h[d]);
      sigma[d] = std::isfinite(curv) && curv < 0 ? std::min(1 / std::sqrt(-curv), 20 * h[d]) : h[d];
    }
  }
  std::vector<double> chains(std::size_t(n) * dim), lnl(n);
  for (int i = 0; i < n; ++i) {
    double* x = &chains[std::size_t(i) * dim];
    for (int attempt = 0; attempt < 100; ++attempt) {
      for (int d = 0; d < dim; ++d) x[d] = current[d] + (i == 0 ? 0.0 : sigma[d] * gauss(rng));
      if (in_prior(x, L, bounds)) break;
      std::copy(current.begin(), current.end(), x);
    }
  }
  lik->evaluate(chains, n, lnl);
  const double gamma0 = 2.38 / std::sqrt(2.0 * dim);
  const int generations = opt.burn + opt.steps;
  std::vector<double> proposal(std::size_t(half) * dim), prop_lnl;
  std::vector<std::vector<double>> kept;  // rows: dim params + lnL, ordered (generation, chain)
  std::vector<int> kept_chain;
  long long accepted = 0, proposed = 0;
  progress.reset();
  for (int g = 0; g < generations; ++g) {
    const double gamma = (g % 10 == 9) ? 1.0 : gamma0;  // occasional mode jumps (ter Braak 2006)
    for (int part = 0; part < 2; ++part) {
      const int base = part * half, other = (1 - part) * half;
      std::uniform_int_distribution<int> pick(0, half - 1);
      for (int i = 0; i < half; ++i) {
        const int a = other + pick(rng);
        int b;
        do b = other + pick(rng); while (b == a);
        for (int d = 0; d < dim; ++d)
          proposal[std::size_t(i) * dim + d] = chains[std::size_t(base + i) * dim + d] +
                                               gamma * (chains[std::size_t(a) * dim + d] - chains[std::size_t(b) * dim + d]) +
                                               1e-3 * sigma[d] * gauss(rng);
      }
      lik->evaluate(proposal, half, prop_lnl);
      for (int i = 0; i < half; ++i) {
        ++proposed;
        if (std::log(u(rng)) < prop_lnl[i] - lnl[base + i]) {
          ++accepted;
          lnl[base + i] = prop_lnl[i];
          std::copy(proposal.begin() + std::size_t(i) * dim, proposal.begin() + std::size_t(i + 1) * dim,
                    chains.begin() + std::size_t(base + i) * dim);
        }
      }
    }
    if (g >= opt.burn && (g - opt.burn) % opt.thin == 0)
      for (int i = 0; i < n; ++i) {
        std::vector<double> row(chains.begin() + std::size_t(i) * dim, chains.begin() + std::size_t(i + 1) * dim);
        row.push_back(lnl[i]);
        kept.push_back(std::move(row));
        kept_chain.push_back(i);
      }
    std::ostringstream extra;
    extra << ", acceptance " << std::fixed << std::setprecision(2) << double(accepted) / std::max(1LL, proposed)
          << ", best ln L = " << *std::max_element(lnl.begin(), lnl.end());
    progress.step(g < opt.burn ? "DE-MCMC burn-in" : "DE-MCMC sampling", g < opt.burn ? g + 1 : g + 1 - opt.burn,
                  g < opt.burn ? opt.burn : opt.steps, extra.str());
    if (g + 1 == opt.burn) progress.reset();
  }
  evaluations += lik->evaluations;
  result.acceptance = double(accepted) / std::max(1LL, proposed);

  // Gelman-Rubin R-hat per sampled parameter (angles excluded: they may wrap).
  {
    const int m = n, len = int(kept.size()) / n;
    double worst = 0;
    if (len >= 2)
      for (int d = 0; d < dim; ++d) {
        if (d < 5 * L.n_pl && d % 5 == 4) continue;
        std::vector<double> mean(m, 0), var(m, 0);
        for (std::size_t r = 0; r < kept.size(); ++r) mean[kept_chain[r]] += kept[r][d] / len;
        for (std::size_t r = 0; r < kept.size(); ++r) {
          const double dd = kept[r][d] - mean[kept_chain[r]];
          var[kept_chain[r]] += dd * dd / (len - 1);
        }
        const double grand = std::accumulate(mean.begin(), mean.end(), 0.0) / m;
        double B = 0, W = 0;
        for (int c = 0; c < m; ++c) {
          B += (mean[c] - grand) * (mean[c] - grand) * len / (m - 1);
          W += var[c] / m;
        }
        if (W > 0) worst = std::max(worst, std::sqrt(((len - 1.0) / len * W + B / len) / W));
      }
    result.max_rhat = worst;
  }

  // Derived columns.
  const std::string letters = "bcdefghi";
  for (int j = 0; j < L.n_pl; ++j)
    for (const char* q : {"P", "K", "e", "omega_deg", "M0_deg", "Tc", "Tp"})
      result.columns.push_back(std::string(q) + "_" + letters[j]);
  for (const auto& name : data.instrument_names) result.columns.push_back("gamma_" + name);
  for (const auto& name : data.instrument_names) result.columns.push_back("jitter_" + name);
  result.columns.push_back("lnL");
  const int best_row = int(std::max_element(kept.begin(), kept.end(),
                                            [&](const auto& a, const auto& b) { return a[dim] < b[dim]; }) - kept.begin());
  const double* xb = kept[best_row].data();
  std::vector<double> best_tc(L.n_pl), best_tp(L.n_pl), best_w(L.n_pl), best_m0(L.n_pl);
  for (int j = 0; j < L.n_pl; ++j) {
    const Orbit o = orbit_of(xb, j);
    best_tc[j] = conjunction_from_mean_anomaly(o.P, o.e, o.omega, o.M0, epoch);
    best_tp[j] = periastron_from_mean_anomaly(o.P, o.M0, epoch);
    best_w[j] = o.omega * 180 / (kTwoPi / 2);
    best_m0[j] = o.M0 * 180 / (kTwoPi / 2);
  }
  auto near = [](double value, double center, double period) {
    return value + period * std::round((center - value) / period);
  };
  for (const auto& row : kept) {
    std::vector<double> out;
    for (int j = 0; j < L.n_pl; ++j) {
      const Orbit o = orbit_of(row.data(), j);
      out.push_back(o.P);
      out.push_back(o.K);
      out.push_back(o.e);
      out.push_back(near(o.omega * 180 / (kTwoPi / 2), best_w[j], 360));
      out.push_back(near(o.M0 * 180 / (kTwoPi / 2), best_m0[j], 360));
      out.push_back(near(conjunction_from_mean_anomaly(o.P, o.e, o.omega, o.M0, epoch), best_tc[j], o.P));
      out.push_back(near(periastron_from_mean_anomaly(o.P, o.M0, epoch), best_tp[j], o.P));
    }
    for (int i = 0; i < L.n_inst; ++i) out.push_back(row[L.gamma(i)]);
    for (int i = 0; i < L.n_inst; ++i) out.push_back(row[L.jitter(i)]);
    out.push_back(row[dim]);
    result.samples.push_back(std::move(out));
  }
  // Angles were unwrapped around the MAP sample; shift each angle column by a whole turn so that
  // its median lies in [0, 360).
  for (std::size_t c = 0; c < result.columns.size(); ++c) {
    const std::string& name = result.columns[c];
    if (name.rfind("omega_deg_", 0) != 0 && name.rfind("M0_deg_", 0) != 0) continue;
    std::vector<double> col(result.samples.size());
    for (std::size_t r = 0; r < col.size(); ++r) col[r] = result.samples[r][c];
    const double turn = 360 * std::floor(percentile(col, 0.5) / 360);
    for (auto& row : result.samples) row[c] -= turn;
  }
  for (std::size_t c = 0; c < result.columns.size(); ++c) {
    std::vector<double> col(result.samples.size());
    for (std::size_t r = 0; r < col.size(); ++r) col[r] = result.samples[r][c];
    ParameterSummary s;
    s.name = result.columns[c];
    s.best = result.samples[best_row][c];
    s.median = percentile(col, 0.5);
    s.lower = percentile(col, 0.158655);
    s.upper = percentile(col, 0.841345);
    result.summary.push_back(s);
  }
  for (int j = 0; j < L.n_pl; ++j) result.best_orbits.push_back(orbit_of(xb, j));
  for (int i = 0; i < L.n_inst; ++i) {
    result.best_offsets.push_back(xb[L.gamma(i)]);
    result.best_jitters.push_back(xb[L.jitter(i)]);
  }
  {
    std::vector<double> x(xb, xb + dim), f, c2;
    lik->evaluate(x, 1, f, &c2);
    result.best_loglike = f[0];
    result.best_chi2 = c2[0];
  }
  result.likelihood_evaluations = evaluations + 1;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  return result;
}

void write_samples(const std::string& path, const SearchResult& result, const RVData& data) {
  io::write_atomically(path, [&](std::ostream& out) {
    out << "# kosmos rv posterior samples (DE-MCMC): data " << data.path << ", epoch " << std::setprecision(12)
        << result.epoch << ", " << result.samples.size() << " samples\n";
    out << "# angles in degrees, times in the data's units; M0 at the epoch; Tc, Tp: conjunction and periastron\n";
    for (std::size_t c = 0; c < result.columns.size(); ++c) out << (c ? " " : "") << result.columns[c];
    out << "\n" << std::setprecision(12);
    for (const auto& row : result.samples) {
      for (std::size_t c = 0; c < row.size(); ++c) out << (c ? " " : "") << row[c];
      out << "\n";
    }
  });
}
}  // namespace kepler
}  // namespace kosmos
