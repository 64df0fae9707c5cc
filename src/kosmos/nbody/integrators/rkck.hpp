// Runge-Kutta Cash-Karp in the team work model (impl/team_context.hpp; see integrators/README.md).
#pragma once

#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/impl/team_context.hpp>

namespace kosmos {
namespace nbody {
namespace Impl {

// Cash-Karp Butcher tableau.
KOKKOS_INLINE_FUNCTION double rkck_a(int i, int j) {
  const double A[6][5] = {
      {0, 0, 0, 0, 0},
      {1.0 / 5, 0, 0, 0, 0},
      {3.0 / 40, 9.0 / 40, 0, 0, 0},
      {3.0 / 10, -9.0 / 10, 6.0 / 5, 0, 0},
      {-11.0 / 54, 5.0 / 2, -70.0 / 27, 35.0 / 27, 0},
      {1631.0 / 55296, 175.0 / 512, 575.0 / 13824, 44275.0 / 110592, 253.0 / 4096}};
  return A[i][j];
}
KOKKOS_INLINE_FUNCTION double rkck_b5(int i) {
  const double B[6] = {37.0 / 378, 0, 250.0 / 621, 125.0 / 594, 0, 512.0 / 1771};
  return B[i];
}
KOKKOS_INLINE_FUNCTION double rkck_b4(int i) {
  const double B[6] = {2825.0 / 27648, 0, 18575.0 / 48384, 13525.0 / 55296, 277.0 / 14336, 1.0 / 4};
  return B[i];
}

// Runge-Kutta Cash-Karp (embedded 5(4)). Fixed step dt, or adaptive: a step is accepted when
//   err = max over bodies and components of max(|dx| / X, |dv| / V) <= tolerance,
// with X, V the largest |x|, |v| of the system; the next step is dt * clamp(0.9 (tol/err)^(1/5),
// 0.2, 5). Rejected steps leave the state and time untouched.
struct RKCKPropagator {
  double dt = 1e-3;
  double tolerance = 0;                      // > 0: adaptive
  static constexpr int extra_per_body = 42;  // y0 (6 per body) + 6 stages x 6
  static constexpr int extra_fixed = 0;
  // Carried between launches (impl/carried.hpp), from Layout::a on: none (rkck_adaptive: the next
  // step, Ensemble::step).
  static constexpr int carried_per_body = 0;

  template <class Ctx, class Force>
  KOKKOS_INLINE_FUNCTION void init(const Ctx&, const Force&) const {}
  template <class Ctx>
  KOKKOS_INLINE_FUNCTION double proposed_dt(const Ctx& ctx, int s) const {
    const double carried = ctx.sc(s, sc_next_dt);
    return tolerance > 0 && carried > 0 ? carried : dt;
  }
  template <class Ctx, class Force>
  KOKKOS_INLINE_FUNCTION void advance(const Ctx& ctx, const Force& force) const {
    const Layout L = ctx.L;
    const int n3 = 3 * L.n, Y0 = L.extra, K = L.extra + 6 * L.n;  // stage i: K + 6n i (x', v')
    ctx.for_live(n3, [&](int s, int bc) {
      ctx.at(s, Y0 + bc) = ctx.at(s, L.x + bc);
      ctx.at(s, Y0 + n3 + bc) = ctx.at(s, L.v + bc);
    });
    for (int i = 0; i < 6; ++i) {
      if (i > 0) {
        ctx.for_live(n3, [&](int s, int bc) {
          const double h = ctx.sc(s, sc_dt);
          double dx = 0, dv = 0;
          for (int j = 0; j < i; ++j) {
            dx += rkck_a(i, j) * ctx.at(s, K + 2 * n3 * j + bc);
            dv += rkck_a(i, j) * ctx.at(s, K + 2 * n3 * j + n3 + bc);
          }
          ctx.at(s, L.x + bc) = ctx.at(s, Y0 + bc) + h * dx;
          ctx.at(s, L.v + bc) = ctx.at(s, Y0 + n3 + bc) + h * dv;
        });
      }
      ctx.forces(force, L.x, L.v, L.a, false);
      ctx.for_live(n3, [&](int s, int bc) {
        ctx.at(s, K + 2 * n3 * i + bc) = ctx.at(s, L.v + bc);
        ctx.at(s, K + 2 * n3 * i + n3 + bc) = ctx.at(s, L.a + bc);
      });
    }
    // 5th-order solution into x, v; error estimates into the a (position) and j (velocity) areas.
    ctx.for_live(n3, [&](int s, int bc) {
      const double h = ctx.sc(s, sc_dt);
      double dx = 0, dv = 0, ex = 0, ev = 0;
      for (int j = 0; j < 6; ++j) {
        const double kx = ctx.at(s, K + 2 * n3 * j + bc), kv = ctx.at(s, K + 2 * n3 * j + n3 + bc);
        dx += rkck_b5(j) * kx;
        dv += rkck_b5(j) * kv;
        ex += (rkck_b5(j) - rkck_b4(j)) * kx;
        ev += (rkck_b5(j) - rkck_b4(j)) * kv;
      }
      ctx.at(s, L.x + bc) = ctx.at(s, Y0 + bc) + h * dx;
      ctx.at(s, L.v + bc) = ctx.at(s, Y0 + n3 + bc) + h * dv;
      ctx.at(s, L.a + bc) = h * ex;
      ctx.at(s, L.j + bc) = h * ev;
    });
    ctx.for_live(1, [&](int s, int) {
      const double h = ctx.sc(s, sc_dt);
      if (!(tolerance > 0)) {
        ctx.advance_time(s, h);
        ctx.flag(s, fl_accept) = 1;
        return;
      }
      double X = 0, V = 0;
      for (int b = 0; b < L.n; ++b) {
        double x2 = 0, v2 = 0;
        for (int c = 0; c < 3; ++c) {
          x2 += ctx.at(s, Y0 + 3 * b + c) * ctx.at(s, Y0 + 3 * b + c);
          v2 += ctx.at(s, Y0 + n3 + 3 * b + c) * ctx.at(s, Y0 + n3 + 3 * b + c);
        }
        X = math::fmax(X, x2);
        V = math::fmax(V, v2);
      }
      X = math::sqrt(X);
      V = math::sqrt(V);
      double err = 0;
      for (int k = 0; k < n3; ++k) {
        err = math::fmax(err, math::fabs(ctx.at(s, L.a + k)) / X);
        err = math::fmax(err, math::fabs(ctx.at(s, L.j + k)) / V);
      }
      if (!(err == err)) err = 1e300;  // NaN: reject
      const double factor =
          err > 0 ? math::fmin(5.0, math::fmax(0.2, 0.9 * math::pow(tolerance / err, 0.2))) : 5.0;
      const bool accept = err <= tolerance;
      ctx.flag(s, fl_accept) = accept ? 1 : 0;
      if (accept) ctx.advance_time(s, h);
      // A shortened final step (to land on the destination) does not shrink the carried step.
      const double carried = ctx.sc(s, sc_next_dt);
      const double next = (accept && carried > h) ? carried : h * factor;
      ctx.sc(s, sc_next_dt) = next;
      if (!(next > 1e-15 * (math::fabs(ctx.sc(s, sc_time)) + 1.0)))
        ctx.flag(s, fl_fail) = reason_step_underflow;
    });
    ctx.for_live(n3, [&](int s, int bc) {
      if (ctx.flag(s, fl_accept)) return;
      ctx.at(s, L.x + bc) = ctx.at(s, Y0 + bc);
      ctx.at(s, L.v + bc) = ctx.at(s, Y0 + n3 + bc);
    });
  }
};

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
