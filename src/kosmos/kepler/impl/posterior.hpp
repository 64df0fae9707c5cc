// The search's parameter vector and ln prior as device-callable functions on plain structs, so
// that the host stages (DE, Nelder-Mead) and the DE-MCMC kernels evaluate the same prior.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/kepler/rv.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>

namespace kosmos {
namespace kepler {
namespace Impl {

constexpr int kMaxPlanets = 8;
// Hyper-parameters of the noise model (impl/noise_model.hpp), at most.
constexpr int kMaxNoise = 12;
// Activity-indicator coefficients (SearchOptions::activity), at most.
constexpr int kMaxActivity = 8;
// Parameters after the trend (hyper-parameters, then activity coefficients), at most.
constexpr int kMaxExtra = kMaxNoise + kMaxActivity;

KOKKOS_INLINE_FUNCTION constexpr double negative_infinity() {
  return -HUGE_VAL;
}

// Position of each sampled parameter in a model vector. Per planet five slots: ln P, K, then
// (h, k) = (sqrt(e) cos w, sqrt(e) sin w) when e and omega are free, (omega, unused) when only e
// is fixed, (e, unused) when only omega is fixed, and the mean longitude lambda = M0 + omega at
// the epoch (unused when Tc is fixed). Per instrument: offset gamma, jitter s; then the trend,
// then the noise model's hyper-parameters (none for white noise), then one coefficient per
// activity indicator. The hyper-parameters and the coefficients are the "extra" parameters
// (bounds, priors and columns by name, as HyperParameter); coefficient i is extra n_noise + i.
struct ParamLayout {
  int n_pl = 0, n_inst = 0, n_trend = 0, n_noise = 0, n_act = 0;
  KOKKOS_INLINE_FUNCTION int dim() const {
    return 5 * n_pl + 2 * n_inst + n_trend + n_noise + n_act;
  }
  KOKKOS_INLINE_FUNCTION int n_extra() const { return n_noise + n_act; }
  KOKKOS_INLINE_FUNCTION static int lnP(int j) { return 5 * j; }
  KOKKOS_INLINE_FUNCTION static int K(int j) { return 5 * j + 1; }
  KOKKOS_INLINE_FUNCTION static int h(int j) { return 5 * j + 2; }
  KOKKOS_INLINE_FUNCTION static int k(int j) { return 5 * j + 3; }
  KOKKOS_INLINE_FUNCTION static int lambda(int j) { return 5 * j + 4; }
  KOKKOS_INLINE_FUNCTION int gamma(int i) const { return 5 * n_pl + i; }
  KOKKOS_INLINE_FUNCTION int jitter(int i) const { return 5 * n_pl + n_inst + i; }
  KOKKOS_INLINE_FUNCTION int trend(int i) const { return 5 * n_pl + 2 * n_inst + i; }
  // Extra parameter i (hyper-parameters for i < n_noise, then the activity coefficients).
  KOKKOS_INLINE_FUNCTION int noise(int i) const { return 5 * n_pl + 2 * n_inst + n_trend + i; }
  KOKKOS_INLINE_FUNCTION int activity(int i) const { return noise(n_noise + i); }
};

struct PriorBounds {
  double lnP_min, lnP_max, k_max, e_max, s_max;
};

// A user prior bound to the parameter it constrains (kind: PriorKind, numbered as Prior::Kind;
// target: PriorTarget).
enum PriorKind {
  kind_uniform,
  kind_log_uniform,
  kind_gaussian,
  kind_truncated_gaussian,
  kind_fixed,
  kind_beta
};
enum PriorTarget {
  target_P,
  target_K,
  target_e,
  target_omega,
  target_Tc,
  target_gamma,
  target_jitter,
  target_dvdt,
  target_curv,
  target_noise
};
struct PriorTerm {
  int kind = 0, target = 0, index = 0;  // index: planet or instrument
  double a = 0, b = 0, lower = 0, upper = 0;
};

// ln density up to a constant of a prior of PriorKind `kind` with the arguments of Prior
// (A, B | MU, SIGMA [, truncation bounds]); -inf outside the support.
KOKKOS_INLINE_FUNCTION double prior_log_density(int kind, double a, double b, double lower,
                                                double upper, double x) {
  constexpr double neg_inf = negative_infinity();
  switch (kind) {
    case kind_uniform:
      return x >= a && x <= b ? 0.0 : neg_inf;
    case kind_log_uniform:
      return x >= a && x <= b ? -math::log(x) : neg_inf;
    case kind_gaussian:
      return -0.5 * (x - a) * (x - a) / (b * b);
    case kind_truncated_gaussian:
      return x >= lower && x <= upper ? -0.5 * (x - a) * (x - a) / (b * b) : neg_inf;
    case kind_beta:  // Beta(a, b) on (0, 1); x = 0 (a circular orbit) at the smallest positive x
      return x >= 0 && x < 1 ? (a - 1) * math::log(x > 0 ? x : 1e-300) + (b - 1) * math::log1p(-x)
                             : neg_inf;
    default:  // kind_fixed: no density
      return 0.0;
  }
}

KOKKOS_INLINE_FUNCTION double wrap_2pi(double a) {
  return a - math::two_pi<double>() * math::floor(a / math::two_pi<double>());
}

// One model (one star, one planet count) as a plain struct: layout, bounds, epoch, the orbital
// elements held fixed (NaN: free; omega in radians) and the range of its user prior terms.
struct ModelSpec {
  ParamLayout L;
  PriorBounds bounds{};
  double epoch = 0;
  double e_fixed[kMaxPlanets], omega_fixed[kMaxPlanets], tc_fixed[kMaxPlanets];
  // Per noise hyper-parameter: base prior bounds of the sampled value, which is the natural
  // logarithm of the hyper-parameter when noise_log (else the value itself).
  // The same for the activity coefficients (entries n_noise, ...; never in ln).
  double noise_lower[kMaxExtra], noise_upper[kMaxExtra];
  bool noise_log[kMaxExtra];
  int term_begin = 0, term_count = 0;

  // Hyper-parameter i of the noise model in its own units.
  KOKKOS_INLINE_FUNCTION double noise_value(const double* x, int i) const {
    return noise_log[i] ? math::exp(x[L.noise(i)]) : x[L.noise(i)];
  }

  // The orbit (RadVel convention, M0 at the epoch) of planet j of parameter vector x.
  KOKKOS_INLINE_FUNCTION Orbit orbit(const double* x, int j) const {
    Orbit o;
    o.P = math::exp(x[L.lnP(j)]);
    o.K = x[L.K(j)];
    const bool e_free = math::isnan(e_fixed[j]), w_free = math::isnan(omega_fixed[j]);
    const double h = x[L.h(j)], k = x[L.k(j)];
    if (e_free && w_free) {
      o.e = h * h + k * k;
      o.omega = o.e > 0 ? wrap_2pi(math::atan2(k, h)) : 0.0;
    } else {
      o.e = e_free ? h : e_fixed[j];
      o.omega = w_free ? wrap_2pi(h) : omega_fixed[j];
    }
    o.M0 = math::isnan(tc_fixed[j])
               ? wrap_2pi(x[L.lambda(j)] - o.omega)
               : mean_anomaly_from_conjunction(o.P, o.e, o.omega, tc_fixed[j], epoch);
    return o;
  }
  // The inverse of orbit() for the free slots of planet j (fixed slots: set them afterwards).
  KOKKOS_INLINE_FUNCTION void set_orbit(double* x, int j, const Orbit& o) const {
    const bool e_free = math::isnan(e_fixed[j]), w_free = math::isnan(omega_fixed[j]);
    x[L.lnP(j)] = math::log(o.P);
    x[L.K(j)] = o.K;
    x[L.h(j)] = e_free && w_free ? math::sqrt(o.e) * math::cos(o.omega) : e_free ? o.e : o.omega;
    x[L.k(j)] = e_free && w_free ? math::sqrt(o.e) * math::sin(o.omega) : 0.0;
    x[L.lambda(j)] = wrap_2pi(o.M0 + o.omega);
  }
  // Inside the base prior's bounds: ln P range, 0 <= K <= k_max, 0 <= e < e_max,
  // 0 <= s <= s_max, noise hyper-parameters within their bounds, everything finite.
  KOKKOS_INLINE_FUNCTION bool in_bounds(const double* x) const {
    for (int j = 0; j < L.n_pl; ++j) {
      const double lnP = x[L.lnP(j)], K = x[L.K(j)];
      if (!(lnP >= bounds.lnP_min && lnP <= bounds.lnP_max) || !(K >= 0 && K <= bounds.k_max) ||
          !math::isfinite(x[L.h(j)]) || !math::isfinite(x[L.k(j)]) ||
          !math::isfinite(x[L.lambda(j)]))
        return false;
      const double e = orbit(x, j).e;
      if (!(e >= 0 && e < bounds.e_max)) return false;
    }
    for (int i = 0; i < L.n_inst; ++i) {
      const double s = x[L.jitter(i)];
      if (!(s >= 0 && s <= bounds.s_max) || !math::isfinite(x[L.gamma(i)])) return false;
    }
    for (int i = 0; i < L.n_trend; ++i)
      if (!math::isfinite(x[L.trend(i)])) return false;
    for (int i = 0; i < L.n_extra(); ++i) {
      const double h = x[L.noise(i)];
      if (!(h >= noise_lower[i] && h <= noise_upper[i])) return false;
    }
    return true;
  }
  // The value a prior term constrains, in the prior's units (angles and times: the turn or
  // conjunction nearest the prior's centre).
  KOKKOS_INLINE_FUNCTION double value_of(const PriorTerm& t, const double* x) const {
    switch (t.target) {
      case target_P:
        return math::exp(x[L.lnP(t.index)]);
      case target_K:
        return x[L.K(t.index)];
      case target_gamma:
        return x[L.gamma(t.index)];
      case target_jitter:
        return x[L.jitter(t.index)];
      case target_dvdt:
        return x[L.trend(0)];
      case target_curv:
        return x[L.trend(1)];
      case target_noise:
        return noise_value(x, t.index);
      default:
        break;
    }
    const Orbit o = orbit(x, t.index);
    const double centre =
        t.kind == kind_gaussian || t.kind == kind_truncated_gaussian ? t.a : 0.5 * (t.a + t.b);
    if (t.target == target_e) return o.e;
    if (t.target == target_omega) {
      const double w = o.omega * 180 / math::pi<double>();
      return w + 360 * math::floor((centre - w) / 360 + 0.5);
    }
    const double tc = conjunction_from_mean_anomaly(o.P, o.e, o.omega, o.M0, epoch);
    return tc + o.P * math::floor((centre - tc) / o.P + 0.5);
  }
  // ln prior up to a constant; -inf outside the bounds or a term's support. terms: the whole
  // prior-term array (this model's are [term_begin, term_begin + term_count)).
  KOKKOS_INLINE_FUNCTION double log_prior(const PriorTerm* terms, const double* x) const {
    if (!in_bounds(x)) return negative_infinity();
    double lp = 0;
    for (int q = term_begin; q < term_begin + term_count; ++q) {
      const PriorTerm& t = terms[q];
      lp += prior_log_density(t.kind, t.a, t.b, t.lower, t.upper, value_of(t, x));
    }
    return lp;
  }
  // Writes row r of a Models (or its host mirror) from x; a row outside the prior (ok false)
  // gets a harmless placeholder. Instrument columns beyond this model's are unused.
  template <class ModelsT>
  KOKKOS_INLINE_FUNCTION void stage(const ModelsT& m, int r, const double* x, bool ok) const {
    for (int j = 0; j < L.n_pl; ++j) {
      Orbit o;
      o.P = 10.0;
      if (ok) o = orbit(x, j);
      m.P(r, j) = o.P;
      m.K(r, j) = o.K;
      m.e(r, j) = o.e;
      m.omega(r, j) = o.omega;
      m.M0(r, j) = o.M0;
    }
    // Rows wider than the model (a batch of stars with different planet counts): planets of
    // zero amplitude, which the chi^2 kernels skip.
    for (int j = L.n_pl; j < int(m.K.extent(1)); ++j) {
      m.P(r, j) = 10.0;
      m.K(r, j) = 0.0;
      m.e(r, j) = 0.0;
      m.omega(r, j) = 0.0;
      m.M0(r, j) = 0.0;
    }
    for (int i = 0; i < int(m.offset.extent(1)); ++i) {
      m.offset(r, i) = ok && i < L.n_inst ? x[L.gamma(i)] : 0.0;
      m.jitter(r, i) = ok && i < L.n_inst ? x[L.jitter(i)] : 1.0;
    }
    for (int i = 0; i < L.n_trend; ++i) m.trend(r, i) = ok ? x[L.trend(i)] : 0.0;
    for (int i = 0; i < L.n_act; ++i) m.activity(r, i) = ok ? x[L.activity(i)] : 0.0;
  }
  // The activity terms sum_i c_i a(k, i) of row x at observation k (a: centred indicators).
  template <class ActivityView>
  KOKKOS_INLINE_FUNCTION double activity_velocity(const double* x, const ActivityView& a,
                                                  int k) const {
    double v = 0;
    for (int i = 0; i < L.n_act; ++i) v += x[L.activity(i)] * a(k, i);
    return v;
  }
};

}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
