// Per-(cell, species) temperature solvers, shared by the portable Kokkos kernels and the CUDA
// specialization: a safeguarded Newton-Raphson iteration on Eq. 7 and the production method of
// sunrise, interpolation in a per-species table of emission versus temperature.
#pragma once

#include <kosmos/dust/planck.hpp>

namespace kosmos {
namespace dust {

// Outcome of one temperature solve (stored per cell and species).
enum TemperatureStatus : int {
  status_converged = 0,       // |emitted / absorbed - 1| <= tolerance (or interpolated from the table)
  status_at_floor = 1,        // 0 < heating < emission at min_temperature: T = min_temperature
  status_at_ceiling = 2,      // heating above the emission at max_temperature (also +inf, the overflow
                              // of a finite field): T = max_temperature, the grain would sublimate
  status_not_converged = 3,   // max_iterations reached; the last iterate is returned
  status_invalid_heating = 4, // heating is NaN or negative: T = NaN
  status_no_heating = 5,      // heating is exactly 0: T = 0, the grain emits nothing. A zero field, or
                              // one so weak that every I sigma dlambda underflows T (float: ~1e-45)
  status_above_sublimation = 6  // converged, but above the species' sublimation temperature (set by
                                // EmissionStream from StreamOptions::sublimation_temperature)
};
constexpr int temperature_status_count = 7;

namespace Impl {

// Device-side copy of the solver settings in the working precision.
template <class T>
struct SolverParams {
  T tolerance;
  T log_min_t, log_max_t;  // natural logs of the temperature range
  T min_t, max_t;
  T log10_guess_floor;
  T k, beta1, beta2;  // Eq. 11
  int max_iterations;
};

// E = sum_l w_l / (e^{x_l/T} - 1) and D = dE/dlnT = sum_l w_l u q (1 + q), u = x_l/T, q = occupation.
template <class T, class Exp, class W, class X>
KOKKOS_FORCEINLINE_FUNCTION void emission_and_slope(const W& w, const X& x, int nl, T inv_t,
                                                    const Exp& exp_op, T& emission, T& slope) {
  T e = 0, d = 0;
  for (int l = 0; l < nl; ++l) {
    const T u = x[l] * inv_t;
    const T q = planck_occupation(u, exp_op);
    const T wq = w[l] * q;
    e += wq;
    d += wq * u * (T(1) + q);
  }
  emission = e;
  slope = d;
}

template <class T>
struct SolveResult {
  T temperature;
  int status;
  int iterations;
};

// Initial guess of Eqs. 11-12 with the 5 K floor: log10 T = k + b1 x + b2 x^2, where
// x = log10(L_scaled) + offset (offset holds log10 of the scale and the radius terms).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T initial_guess(const SolverParams<T>& p, T heating_scaled, T offset) {
  const T x = math::log10(heating_scaled) + offset;
  T log10_t = p.k + x * (p.beta1 + x * p.beta2);
  if (!(log10_t > p.log10_guess_floor)) log10_t = p.log10_guess_floor;  // also catches NaN
  const T t = math::pow(T(10), log10_t);
  return t < p.max_t ? t : p.max_t;
}

// The cases decided by the heating alone (zero, +inf, NaN, negative); false when a solve is needed.
// The scaled heating is the product of a finite heating and 1 / E(T_ref); +inf means it overflowed,
// which only a heating above E(max_temperature) can do (that emission is finite in T).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION bool decided_by_heating(T heating, const SolverParams<T>& p, SolveResult<T>& r) {
  if (heating == T(0)) {
    r = {T(0), status_no_heating, 0};
  } else if (heating > T(0) && math::isinf(heating)) {
    r = {p.max_t, status_at_ceiling, 0};
  } else if (!(heating > T(0))) {
    r = {T(NAN), status_invalid_heating, 0};
  } else {
    return false;
  }
  return true;
}

// Safeguarded Newton-Raphson on ln E(T) = ln L in the variable ln T: E grows like T^(4+beta), so
// the iteration is nearly linear there. A bracket [lo, hi] is kept from the signs of E - L; a step
// leaving it bisects instead, and the temperature range ends are evaluated before declaring the
// floor or ceiling. Stops when |E/L - 1| <= tolerance and returns that verified temperature.
template <class T, class Exp, class W, class X>
KOKKOS_INLINE_FUNCTION SolveResult<T> solve_newton(const W& w, const X& x, int nl, T heating,
                                                  T guess, const SolverParams<T>& p,
                                                  const Exp& exp_op) {
  SolveResult<T> decided;
  if (decided_by_heating(heating, p, decided)) return decided;
  const T log_l = math::log(heating);
  T lo = p.log_min_t, hi = p.log_max_t;
  bool lo_evaluated = false, hi_evaluated = false;
  T y = math::log(guess);
  if (!(y > lo)) y = lo;
  if (!(y < hi)) y = hi;
  for (int it = 0; it < p.max_iterations; ++it) {
    const T t = math::exp(y);
    T e, d;
    emission_and_slope(w, x, nl, T(1) / t, exp_op, e, d);
    if (math::fabs(e - heating) <= p.tolerance * heating) return {t, status_converged, it + 1};
    if (e > heating) {
      if (y <= p.log_min_t) return {p.min_t, status_at_floor, it + 1};
      hi = y;
      hi_evaluated = true;
    } else {
      if (y >= p.log_max_t) return {p.max_t, status_at_ceiling, it + 1};
      lo = y;
      lo_evaluated = true;
    }
    T y_new;
    if (e > T(0) && d > T(0)) {
      T step = (log_l - math::log(e)) * e / d;
      if (step > T(1)) step = T(1);
      if (step < T(-1)) step = T(-1);
      y_new = y + step;
    } else {
      y_new = hi;  // emission underflowed: heat up
    }
    if (!(y_new > lo)) y_new = lo_evaluated ? T(0.5) * (lo + hi) : lo;
    if (!(y_new < hi)) y_new = hi_evaluated ? T(0.5) * (lo + hi) : hi;
    y = y_new;
  }
  return {math::exp(y), status_not_converged, p.max_iterations};
}

// Table parameters: ln E_s(T_k) at T_k = exp(log_t0 + k dlog_t), k = 0..points-1.
template <class T>
struct TableParams {
  T log_t0, dlog_t;
  int points;
};

// Linear interpolation of ln T in ln E; outside the table: floor (when the table starts at the
// minimum temperature) or a Newton solve started from the table end.
template <class T, class Exp, class Table, class W, class X>
KOKKOS_INLINE_FUNCTION SolveResult<T> solve_table(const Table& log_e, const TableParams<T>& tp,
                                                 const W& w, const X& x, int nl, T heating,
                                                 const SolverParams<T>& p, const Exp& exp_op) {
  SolveResult<T> decided;
  if (decided_by_heating(heating, p, decided)) return decided;
  const T log_l = math::log(heating);
  const int n = tp.points;
  if (log_l < log_e[0]) {
    if (tp.log_t0 <= p.log_min_t) return {p.min_t, status_at_floor, 0};
    return solve_newton(w, x, nl, heating, math::exp(tp.log_t0), p, exp_op);
  }
  if (log_l > log_e[n - 1])
    return solve_newton(w, x, nl, heating, math::exp(tp.log_t0 + T(n - 1) * tp.dlog_t), p, exp_op);
  int a = 0, b = n - 1;  // log_e[a] <= log_l <= log_e[b]
  while (b - a > 1) {
    const int m = (a + b) / 2;
    if (log_e[m] <= log_l) a = m; else b = m;
  }
  const T span = log_e[b] - log_e[a];
  const T f = span > T(0) ? (log_l - log_e[a]) / span : T(0);
  return {math::exp(tp.log_t0 + (T(a) + f) * tp.dlog_t), status_converged, 0};
}
}  // namespace Impl
}  // namespace dust
}  // namespace kosmos
