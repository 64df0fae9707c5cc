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
#include <kosmos/nbody/impl/carried.hpp>
#include <kosmos/nbody/impl/team_context.hpp>

namespace kosmos {
namespace nbody {
namespace Impl {

struct PortableRsqrt {
  KOKKOS_INLINE_FUNCTION double operator()(double x) const { return 1.0 / math::sqrt(x); }
};

template <int N, class Rsqrt>
KOKKOS_INLINE_FUNCTION void register_acc_jerk(const double (&m)[N], const double (&x)[3 * N],
                                              const double (&v)[3 * N], double (&a)[3 * N],
                                              double (&j)[3 * N], const Rsqrt& rsqrt) {
  for (int k = 0; k < 3 * N; ++k) a[k] = j[k] = 0;
  for (int p = 0; p < N; ++p)
    for (int q = p + 1; q < N; ++q) {
      if (m[p] == 0 && m[q] == 0) continue;  // two test particles: no interaction
      double d[3], w[3];
      for (int c = 0; c < 3; ++c) {
        d[c] = x[3 * q + c] - x[3 * p + c];
        w[c] = v[3 * q + c] - v[3 * p + c];
      }
      const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
      const double rinv = rsqrt(r2);
      const double rinv2 = rinv * rinv, rinv3 = rinv2 * rinv;
      const double rv = 3.0 * (d[0] * w[0] + d[1] * w[1] + d[2] * w[2]) * rinv2;
      for (int c = 0; c < 3; ++c) {
        const double k = d[c] * rinv3, kj = (w[c] - rv * d[c]) * rinv3;
        a[3 * p + c] += m[q] * k;
        a[3 * q + c] -= m[p] * k;
        j[3 * p + c] += m[q] * kj;
        j[3 * q + c] -= m[p] * kj;
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
  double t = ens.time(sys), t_lo = ens.time_lo(sys);
  long long it = iterations(sys);
  const auto running = [&] {
    return time_left(p.destination, t, t_lo) > 0 && time_left(p.pause, t, t_lo) > 0 &&
           it < p.max_iterations;
  };
  if (!running()) return;
  double m[N], x[3 * N], v[3 * N], a[3 * N], j[3 * N];
  for (int b = 0; b < N; ++b) {
    m[b] = ens.m(sys, b);
    for (int c = 0; c < 3; ++c) {
      x[3 * b + c] = ens.x(sys, b, c);
      v[3 * b + c] = ens.v(sys, b, c);
    }
  }
  const auto state = [&](int b, int c) {
    return c < 3 ? x[3 * b + c] : c < 6 ? v[3 * b + c - 3] : m[b];
  };
  if (carried.valid(sys, t, t_lo, N, state)) {
    for (int k = 0; k < 3 * N; ++k) {
      a[k] = carried.at(sys, k);
      j[k] = carried.at(sys, 3 * N + k);
    }
  } else {
    register_acc_jerk<N>(m, x, v, a, j, rsqrt);
  }
  int reason = reason_none;
  for (int step = 0; step < p.steps; ++step) {
    if (!running()) break;
    double h = p.dt;
    if (p.tau > 0) {
      double sum = 0;
      for (int b = 0; b < N; ++b) {
        double a2 = 0, j2 = 0;
        for (int c = 0; c < 3; ++c) {
          a2 += a[3 * b + c] * a[3 * b + c];
          j2 += j[3 * b + c] * j[3 * b + c];
        }
        if (a2 > 0) sum += j2 / a2;
      }
      if (sum > 0) h = p.tau / math::sqrt(sum);
    }
    const double left = time_left(p.destination, t, t_lo);
    if (h > left || left - h < 1e-9 * h) h = left;
    if (!(h > 0) || !math::isfinite(h)) {
      reason = reason_bad_step;
      break;
    }
    // The corrector needs the start of the step only through two sums per component:
    //   v1 = [v0 + h/2 a0 + h^2/12 j0] + h/2 a1 - h^2/12 j1
    //   x1 = [x0 + h/2 v0 + h^2/12 a0] + h/2 v1 - h^2/12 a1
    // so 6 arrays of 3N live across the force evaluation instead of 8.
    const double half = 0.5 * h, h2_12 = h * h / 12.0;
    for (int k = 0; k < 3 * N; ++k) {
      sums.v(k) = v[k] + half * a[k] + h2_12 * j[k];
      sums.x(k) = x[k] + half * v[k] + h2_12 * a[k];
      x[k] = x[k] + h * (v[k] + h * (0.5 * a[k] + h * (1.0 / 6.0) * j[k]));
      v[k] = v[k] + h * (a[k] + h * 0.5 * j[k]);
    }
    for (int iter = 0; iter < 2; ++iter) {
      register_acc_jerk<N>(m, x, v, a, j, rsqrt);
      for (int k = 0; k < 3 * N; ++k) {
        v[k] = sums.v(k) + half * a[k] - h2_12 * j[k];
        x[k] = sums.x(k) + half * v[k] - h2_12 * a[k];
      }
    }
    if (h >= left) {
      t = p.destination;
      t_lo = 0;
    } else {
      double hi, lo;
      two_sum(t, h, hi, lo);
      lo += t_lo;
      fast_two_sum(hi, lo, t, t_lo);
    }
    ++it;
    bool finite = true;
    for (int k = 0; k < 3 * N; ++k) finite = finite && math::isfinite(x[k]) && math::isfinite(v[k]);
    if (!finite) {
      reason = reason_nonfinite;
      break;
    }
  }
  for (int b = 0; b < N; ++b)
    for (int c = 0; c < 3; ++c) {
      ens.x(sys, b, c) = x[3 * b + c];
      ens.v(sys, b, c) = v[3 * b + c];
    }
  ens.time(sys) = t;
  ens.time_lo(sys) = t_lo;
  iterations(sys) = it;
  if (carried.on()) {
    for (int k = 0; k < 3 * N; ++k) {
      carried.at(sys, k) = a[k];
      carried.at(sys, 3 * N + k) = j[k];
    }
    carried.seal(sys, t, t_lo, N, state);
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
      double a2 = 0, j2 = 0;
      for (int c = 0; c < 3; ++c) {
        const double a = ctx.at(s, ctx.L.a + 3 * b + c), j = ctx.at(s, ctx.L.j + 3 * b + c);
        a2 += a * a;
        j2 += j * j;
      }
      if (a2 > 0) sum += j2 / a2;
    }
    return sum > 0 ? tau / math::sqrt(sum) : dt;
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
      ctx.at(s, L.x + bc) = x + h * (v + h * (0.5 * a + h * (1.0 / 6.0) * j));
      ctx.at(s, L.v + bc) = v + h * (a + h * 0.5 * j);
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
    ctx.for_live(1, [&](int s, int) {
      ctx.advance_time(s, ctx.sc(s, sc_dt));
      ctx.flag(s, fl_accept) = 1;
    });
  }
};

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
