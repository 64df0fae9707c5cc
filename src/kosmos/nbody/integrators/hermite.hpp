// Hermite, both work models (integrators/README.md): HermitePropagator in the team work model,
// and hermite_system in the system-per-thread work model: one thread integrates one system of N
// bodies (N a compile-time constant, every loop unrolled), its whole state in registers, reading
// and writing the chunked ensemble once per launch (consecutive threads take consecutive systems of
// a chunk: coalesced). No monitors or logs: integrate() uses it only when none are requested.
// The same device function runs as a Kokkos RangePolicy kernel on any space and, on Kokkos::Cuda,
// inside the hand-tuned kernel of cuda_specializations/ (hardware rsqrt, launch bounds).
#pragma once

#include <kosmos/core/compensated.hpp>
#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/gravity.hpp>
#include <kosmos/nbody/impl/carried.hpp>
#include <kosmos/nbody/impl/system_clock.hpp>
#include <kosmos/nbody/impl/team_context.hpp>

namespace kosmos {
namespace nbody {
namespace Impl {

struct PortableRsqrt {
  KOKKOS_INLINE_FUNCTION double operator()(double x) const { return 1.0 / math::sqrt(x); }
};

// The Hermite formulas of every Hermite kernel: hermite_system, HermitePropagator and the CUDA
// lane-per-body kernel (cuda_specializations/kosmos/nbody/hermite_cuda.hpp).

// Body term of the adaptive step's sum (eq. 5): |j|^2 / |a|^2 (0 where a = 0).
KOKKOS_INLINE_FUNCTION double hermite_step_term(const double* a, const double* j) {
  double a2 = 0, j2 = 0;
  for (int c = 0; c < 3; ++c) {
    a2 += a[c] * a[c];
    j2 += j[c] * j[c];
  }
  return a2 > 0 ? j2 / a2 : 0.0;
}
// The adaptive step tau / sqrt(sum) from the sum of hermite_step_term over the bodies; dt where
// the sum is 0.
KOKKOS_INLINE_FUNCTION double hermite_adaptive_step(double tau, double sum, double dt) {
  return sum > 0 ? tau / math::sqrt(sum) : dt;
}
// One component of the predictor of a step h (the Taylor series to the jerk).
KOKKOS_INLINE_FUNCTION void hermite_predict(double h, double x, double v, double a, double j,
                                            double& x_pred, double& v_pred) {
  x_pred = x + h * (v + h * (0.5 * a + h * (1.0 / 6.0) * j));
  v_pred = v + h * (a + h * 0.5 * j);
}
// A step h of the register kernels, per component. Their corrector needs the start of the step
// only through two sums per component:
//   v1 = [v0 + h/2 a0 + h^2/12 j0] + h/2 a1 - h^2/12 j1
//   x1 = [x0 + h/2 v0 + h^2/12 a0] + h/2 v1 - h^2/12 a1
// so 6 arrays of 3N live across the force evaluation instead of 8.
struct HermiteRegisterStep {
  double h, half, h2_12;
  KOKKOS_INLINE_FUNCTION explicit HermiteRegisterStep(double step)
      : h(step), half(0.5 * step), h2_12(step * step / 12.0) {}
  // (x, v) predicted in place; the two sums of the start of the step.
  KOKKOS_INLINE_FUNCTION void predict(double& x, double& v, double a, double j, double& x_sum,
                                      double& v_sum) const {
    v_sum = v + half * a + h2_12 * j;
    x_sum = x + half * v + h2_12 * a;
    hermite_predict(h, x, v, a, j, x, v);
  }
  // One corrector iteration with the end-of-step a, j.
  KOKKOS_INLINE_FUNCTION void correct(double& x, double& v, double a, double j, double x_sum,
                                      double v_sum) const {
    v = v_sum + half * a - h2_12 * j;
    x = x_sum + half * v - h2_12 * a;
  }
};

template <int N, class Rsqrt>
KOKKOS_INLINE_FUNCTION void register_acc_jerk(const double (&m)[N], const double (&x)[3 * N],
                                              const double (&v)[3 * N], double (&a)[3 * N],
                                              double (&j)[3 * N], const Rsqrt& rsqrt) {
  for (int k = 0; k < 3 * N; ++k) a[k] = j[k] = 0;
  for (int p = 0; p < N; ++p)
    for (int q = p + 1; q < N; ++q) {
      if (m[p] == 0 && m[q] == 0) continue;  // two test particles: no interaction
      double d[3], w[3], k[3], kj[3];
      for (int c = 0; c < 3; ++c) {
        d[c] = x[3 * q + c] - x[3 * p + c];
        w[c] = v[3 * q + c] - v[3 * p + c];
      }
      inverse_square_acc_jerk(d, w, squared_norm(d), k, kj, rsqrt);
      for (int c = 0; c < 3; ++c) {
        a[3 * p + c] += m[q] * k[c];
        a[3 * q + c] -= m[p] * k[c];
        j[3 * p + c] += m[q] * kj[c];
        j[3 * q + c] -= m[p] * kj[c];
      }
    }
}

struct HermiteSystemParams {
  double destination = 0, dt = 1e-3, tau = 0;  // tau > 0: adaptive
  double pause = 0;  // systems stop after the first step that reaches it (no landing step)
  int steps = 1;
  long long max_iterations = 0;
};

// The corrector's two start-of-step sums per component (see hermite_system), in the thread's own
// arrays.
template <int N>
struct LocalCorrectorSums {
  double v_sum[3 * N], x_sum[3 * N];
  KOKKOS_INLINE_FUNCTION double& v(int k) { return v_sum[k]; }
  KOKKOS_INLINE_FUNCTION double& x(int k) { return x_sum[k]; }
};

// Values carried between launches (CarriedState), in both work models: a and j of the last
// corrector iteration (the next step's predictor and, adaptive, its step), 3n each.
constexpr int hermite_carried_width(int n) {
  return 6 * n;
}

// Integrates system `sys` for at most p.steps steps; same scheme, step choice, time
// compensation, landing rule and carried state as the team kernel (HermitePropagator).
template <int N, class Ens, class IterView, class Rsqrt, class Sums, class Carried>
KOKKOS_INLINE_FUNCTION void hermite_system(const Ens& ens, const IterView& iterations, int sys,
                                           const HermiteSystemParams& p, const Rsqrt& rsqrt,
                                           Sums& sums, const Carried& carried) {
  if (ens.state(sys) != state_active) return;
  SystemClock clock{ens.time(sys), ens.time_lo(sys), p.destination, p.pause};
  long long it = iterations(sys);
  if (!clock.running() || it >= p.max_iterations) return;
  double m[N], x[3 * N], v[3 * N], a[3 * N], j[3 * N];
  load_system(ens, sys, m, x, v);
  const auto state = [&](int b, int c) {
    return c < 3 ? x[3 * b + c] : c < 6 ? v[3 * b + c - 3] : m[b];
  };
  if (carried.valid(sys, clock.t, clock.lo, N, state)) {
    for (int k = 0; k < 3 * N; ++k) {
      a[k] = carried.at(sys, k);
      j[k] = carried.at(sys, 3 * N + k);
    }
  } else {
    register_acc_jerk<N>(m, x, v, a, j, rsqrt);
  }
  int reason = reason_none;
  for (int step = 0; step < p.steps && clock.running() && it < p.max_iterations; ++step) {
    double h = p.dt;
    if (p.tau > 0) {
      double sum = 0;
      for (int b = 0; b < N; ++b) sum += hermite_step_term(&a[3 * b], &j[3 * b]);
      h = hermite_adaptive_step(p.tau, sum, p.dt);
    }
    h = landing_step(h, clock.left());
    if (!(h > 0) || !math::isfinite(h)) {
      reason = reason_bad_step;
      break;
    }
    const HermiteRegisterStep hs(h);
    for (int k = 0; k < 3 * N; ++k) hs.predict(x[k], v[k], a[k], j[k], sums.x(k), sums.v(k));
    for (int iter = 0; iter < 2; ++iter) {
      register_acc_jerk<N>(m, x, v, a, j, rsqrt);
      for (int k = 0; k < 3 * N; ++k) hs.correct(x[k], v[k], a[k], j[k], sums.x(k), sums.v(k));
    }
    clock.advance(h);
    ++it;
    bool finite = true;
    for (int k = 0; k < 3 * N; ++k) finite = finite && math::isfinite(x[k]) && math::isfinite(v[k]);
    if (!finite) {
      reason = reason_nonfinite;
      break;
    }
  }
  store_system<N>(ens, iterations, sys, x, v, clock, it);
  if (carried.on()) {
    for (int k = 0; k < 3 * N; ++k) {
      carried.at(sys, k) = a[k];
      carried.at(sys, 3 * N + k) = j[k];
    }
    carried.seal(sys, clock.t, clock.lo, N, state);
  }
  if (reason != reason_none) {
    ens.state(sys) = state_disabled;
    ens.reason(sys) = reason;
  }
}

template <int N, class MemorySpace>
struct HermiteSystemKernel {
  Ensemble<MemorySpace> ens;
  Kokkos::View<long long*, MemorySpace> iterations;
  HermiteSystemParams params;
  CarriedState<MemorySpace> carried;
  KOKKOS_INLINE_FUNCTION void operator()(const int sys) const {
    LocalCorrectorSums<N> sums;
    hermite_system<N>(ens, iterations, sys, params, PortableRsqrt(), sums, carried);
  }
};

// Time-symmetric 4th-order Hermite, P(EC)^2 (Kokubo, Yoshinaga & Makino 1998; Algorithm 2 of
// Dindar et al. 2013). Fixed step dt, or adaptive dt = tau [sum |j|^2/|a|^2]^(-1/2) (eq. 5).
struct HermitePropagator {
  double dt = 1e-3;
  double tau = 0;                            // > 0: adaptive
  static constexpr int extra_per_body = 12;  // x0, v0, a0, j0
  static constexpr int extra_fixed = 0;
  // Carried between launches (impl/carried.hpp), from Layout::a on: a, j of the last corrector
  // iteration: the next predictor (and step).
  static constexpr int carried_per_body = 6;

  template <class Ctx, class Force>
  KOKKOS_INLINE_FUNCTION void init(const Ctx& ctx, const Force& force) const {
    ctx.forces(force, ctx.L.x, ctx.L.v, ctx.L.a, true);
  }
  template <class Ctx>
  KOKKOS_INLINE_FUNCTION double proposed_dt(const Ctx& ctx, int s) const {
    if (!(tau > 0)) return dt;
    double sum = 0;
    for (int b = 0; b < ctx.L.n; ++b) {
      double a[3], j[3];
      for (int c = 0; c < 3; ++c) {
        a[c] = ctx.at(s, ctx.L.a + 3 * b + c);
        j[c] = ctx.at(s, ctx.L.j + 3 * b + c);
      }
      sum += hermite_step_term(a, j);
    }
    return hermite_adaptive_step(tau, sum, dt);
  }
  template <class Ctx, class Force>
  KOKKOS_INLINE_FUNCTION void advance(const Ctx& ctx, const Force& force) const {
    const Layout L = ctx.L;
    const int E = L.extra, n3 = 3 * L.n;
    ctx.for_live(n3, [&](int s, int bc) {
      const double h = ctx.sc(s, sc_dt);
      const double x = ctx.at(s, L.x + bc), v = ctx.at(s, L.v + bc);
      const double a = ctx.at(s, L.a + bc), j = ctx.at(s, L.j + bc);
      ctx.at(s, E + bc) = x;
      ctx.at(s, E + n3 + bc) = v;
      ctx.at(s, E + 2 * n3 + bc) = a;
      ctx.at(s, E + 3 * n3 + bc) = j;
      hermite_predict(h, x, v, a, j, ctx.at(s, L.x + bc), ctx.at(s, L.v + bc));
    });
    for (int k = 0; k < 2; ++k) {
      ctx.forces(force, L.x, L.v, L.a, true);
      ctx.for_live(n3, [&](int s, int bc) {
        const double h = ctx.sc(s, sc_dt);
        const double x0 = ctx.at(s, E + bc), v0 = ctx.at(s, E + n3 + bc);
        const double a0 = ctx.at(s, E + 2 * n3 + bc), j0 = ctx.at(s, E + 3 * n3 + bc);
        const double a1 = ctx.at(s, L.a + bc), j1 = ctx.at(s, L.j + bc);
        const double v1 = v0 + 0.5 * h * (a0 + a1) + (h * h / 12.0) * (j0 - j1);
        ctx.at(s, L.v + bc) = v1;
        ctx.at(s, L.x + bc) = x0 + 0.5 * h * (v0 + v1) + (h * h / 12.0) * (a0 - a1);
      });
    }
    ctx.accept_steps();
  }
};

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
