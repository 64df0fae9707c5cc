// Propagators: one step of each integrator, written against the team work model of
// team_context.hpp. Each propagator provides
//   extra_per_body / extra_fixed     workspace it needs beyond the common layout
//   init(ctx, force)                 after the state is loaded (e.g. first force evaluation)
//   proposed_dt(ctx, s)              the step system s wants to take next
//   advance(ctx, force)              one step of every live system (sets fl_accept, fl_fail)
#pragma once

#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/impl/team_context.hpp>
#include <kosmos/nbody/kepler_drift.hpp>

namespace kosmos {
namespace nbody {
namespace Impl {

// Time-symmetric 4th-order Hermite, P(EC)^2 (Kokubo, Yoshinaga & Makino 1998; Algorithm 2 of
// Dindar et al. 2013). Fixed step dt, or adaptive dt = tau [sum |j|^2/|a|^2]^(-1/2) (eq. 5).
struct HermitePropagator {
  double dt = 1e-3;
  double tau = 0;  // > 0: adaptive
  static constexpr int extra_per_body = 12;  // x0, v0, a0, j0
  static constexpr int extra_fixed = 0;

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

// Velocity Verlet (kick-drift-kick), fixed step, second order, symplectic.
struct VerletPropagator {
  double dt = 1e-3;
  static constexpr int extra_per_body = 0;
  static constexpr int extra_fixed = 0;

  template <class Ctx, class Force>
  KOKKOS_INLINE_FUNCTION void init(const Ctx& ctx, const Force& force) const {
    ctx.forces(force, ctx.L.x, ctx.L.v, ctx.L.a, false);
  }
  template <class Ctx>
  KOKKOS_INLINE_FUNCTION double proposed_dt(const Ctx&, int) const { return dt; }
  template <class Ctx, class Force>
  KOKKOS_INLINE_FUNCTION void advance(const Ctx& ctx, const Force& force) const {
    const Layout L = ctx.L;
    ctx.for_live(3 * L.n, [&](int s, int bc) {
      const double h = ctx.sc(s, sc_dt);
      const double v = ctx.at(s, L.v + bc) + 0.5 * h * ctx.at(s, L.a + bc);
      ctx.at(s, L.v + bc) = v;
      ctx.at(s, L.x + bc) += h * v;
    });
    ctx.forces(force, L.x, L.v, L.a, false);
    ctx.for_live(3 * L.n, [&](int s, int bc) {
      ctx.at(s, L.v + bc) += 0.5 * ctx.sc(s, sc_dt) * ctx.at(s, L.a + bc);
    });
    ctx.for_live(1, [&](int s, int) {
      ctx.advance_time(s, ctx.sc(s, sc_dt));
      ctx.flag(s, fl_accept) = 1;
    });
  }
};

// Cash-Karp Butcher tableau.
KOKKOS_INLINE_FUNCTION double rkck_a(int i, int j) {
  const double A[6][5] = {{0, 0, 0, 0, 0},
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
  double tolerance = 0;  // > 0: adaptive
  static constexpr int extra_per_body = 42;  // y0 (6 per body) + 6 stages x 6
  static constexpr int extra_fixed = 0;

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
      if (!(next > 1e-15 * (math::fabs(ctx.sc(s, sc_time)) + 1.0))) ctx.flag(s, fl_fail) = reason_step_underflow;
    });
    ctx.for_live(n3, [&](int s, int bc) {
      if (ctx.flag(s, fl_accept)) return;
      ctx.at(s, L.x + bc) = ctx.at(s, Y0 + bc);
      ctx.at(s, L.v + bc) = ctx.at(s, Y0 + n3 + bc);
    });
  }
};

// Mixed-variable symplectic integrator in democratic heliocentric coordinates (Duncan, Levison &
// Lee 1998): Cartesian drift dt/2 (sun momentum term), interaction kick dt/2, Keplerian drift dt
// about body 0 (universal variables), kick dt/2, drift dt/2. Body 0 is the central body. The
// planet-planet accelerations after the Kepler drift are reused as the next step's first kick
// (the Cartesian drift moves all planets by the same vector).
struct MVSPropagator {
  double dt = 1e-2;
  static constexpr int extra_per_body = 0;
  static constexpr int extra_fixed = 0;

  template <class Ctx, class Force>
  KOKKOS_INLINE_FUNCTION void init(const Ctx& ctx, const Force& force) const {
    ctx.forces(force, ctx.L.x, ctx.L.v, ctx.L.a, false, true);
  }
  template <class Ctx>
  KOKKOS_INLINE_FUNCTION double proposed_dt(const Ctx&, int) const { return dt; }

  template <class Ctx>
  KOKKOS_INLINE_FUNCTION static void sun_drift(const Ctx& ctx, int s, double h) {
    const Layout L = ctx.L;
    double p[3] = {0, 0, 0};
    for (int b = 1; b < L.n; ++b)
      for (int c = 0; c < 3; ++c) p[c] += ctx.at(s, L.m + b) * ctx.at(s, L.v + 3 * b + c);
    const double f = h / ctx.at(s, L.m);
    for (int b = 1; b < L.n; ++b)
      for (int c = 0; c < 3; ++c) ctx.at(s, L.x + 3 * b + c) += f * p[c];
  }

  template <class Ctx, class Force>
  KOKKOS_INLINE_FUNCTION void advance(const Ctx& ctx, const Force& force) const {
    const Layout L = ctx.L;
    const int n = L.n;
    // Cartesian -> democratic heliocentric (planets: Q = x - x0, V = v - v_cm); keep x_cm, v_cm.
    ctx.for_live(1, [&](int s, int) {
      double M = 0, xc[3] = {0, 0, 0}, vc[3] = {0, 0, 0};
      for (int b = 0; b < n; ++b) {
        const double m = ctx.at(s, L.m + b);
        M += m;
        for (int c = 0; c < 3; ++c) {
          xc[c] += m * ctx.at(s, L.x + 3 * b + c);
          vc[c] += m * ctx.at(s, L.v + 3 * b + c);
        }
      }
      for (int c = 0; c < 3; ++c) {
        xc[c] /= M;
        vc[c] /= M;
        ctx.sc(s, sc_aux + c) = xc[c];
        ctx.sc(s, sc_aux + 3 + c) = vc[c];
      }
      for (int b = 1; b < n; ++b)
        for (int c = 0; c < 3; ++c) {
          ctx.at(s, L.x + 3 * b + c) -= ctx.at(s, L.x + c);
          ctx.at(s, L.v + 3 * b + c) -= vc[c];
        }
      sun_drift(ctx, s, 0.5 * ctx.sc(s, sc_dt));
    });
    ctx.for_live(3 * (n - 1), [&](int s, int k) {
      ctx.at(s, L.v + 3 + k) += 0.5 * ctx.sc(s, sc_dt) * ctx.at(s, L.a + 3 + k);
    });
    ctx.for_live(n - 1, [&](int s, int k) {
      const int b = k + 1;
      double r[3], v[3];
      for (int c = 0; c < 3; ++c) {
        r[c] = ctx.at(s, L.x + 3 * b + c);
        v[c] = ctx.at(s, L.v + 3 * b + c);
      }
      if (kepler_drift(ctx.at(s, L.m), ctx.sc(s, sc_dt), r, v)) {
        for (int c = 0; c < 3; ++c) {
          ctx.at(s, L.x + 3 * b + c) = r[c];
          ctx.at(s, L.v + 3 * b + c) = v[c];
        }
      } else {
        ctx.flag(s, fl_fail) = reason_kepler_failure;  // benign race: every writer writes this
      }
    });
    ctx.forces(force, L.x, L.v, L.a, false, true);
    ctx.for_live(3 * (n - 1), [&](int s, int k) {
      ctx.at(s, L.v + 3 + k) += 0.5 * ctx.sc(s, sc_dt) * ctx.at(s, L.a + 3 + k);
    });
    // Drift dt/2, then back to Cartesian about the moved centre of mass.
    ctx.for_live(1, [&](int s, int) {
      const double h = ctx.sc(s, sc_dt);
      sun_drift(ctx, s, 0.5 * h);
      double M = 0, mq[3] = {0, 0, 0}, mv[3] = {0, 0, 0};
      for (int b = 0; b < n; ++b) M += ctx.at(s, L.m + b);
      for (int b = 1; b < n; ++b)
        for (int c = 0; c < 3; ++c) {
          mq[c] += ctx.at(s, L.m + b) * ctx.at(s, L.x + 3 * b + c);
          mv[c] += ctx.at(s, L.m + b) * ctx.at(s, L.v + 3 * b + c);
        }
      double x0[3], v0[3];
      for (int c = 0; c < 3; ++c) {
        const double xc = ctx.sc(s, sc_aux + c) + h * ctx.sc(s, sc_aux + 3 + c);
        const double vc = ctx.sc(s, sc_aux + 3 + c);
        x0[c] = xc - mq[c] / M;
        v0[c] = vc - mv[c] / ctx.at(s, L.m);
        ctx.at(s, L.x + c) = x0[c];
        ctx.at(s, L.v + c) = v0[c];
      }
      for (int b = 1; b < n; ++b)
        for (int c = 0; c < 3; ++c) {
          ctx.at(s, L.x + 3 * b + c) += x0[c];
          ctx.at(s, L.v + 3 * b + c) += ctx.sc(s, sc_aux + 3 + c);
        }
      ctx.advance_time(s, h);
      ctx.flag(s, fl_accept) = 1;
    });
  }
};

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
