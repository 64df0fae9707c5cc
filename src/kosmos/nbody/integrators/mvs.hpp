// Mixed-variable symplectic (democratic heliocentric) in the team work model (see
// integrators/README.md).
#pragma once

#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/impl/team_context.hpp>
#include <kosmos/nbody/kepler_drift.hpp>

namespace kosmos {
namespace nbody {
namespace Impl {

// Mixed-variable symplectic integrator in democratic heliocentric coordinates (Duncan, Levison &
// Lee 1998): Cartesian drift dt/2 (sun momentum term), interaction kick dt/2, Keplerian drift dt
// about body 0 (universal variables), kick dt/2, drift dt/2. Body 0 is the central body. The
// planet-planet accelerations after the Kepler drift are reused as the next step's first kick
// (the Cartesian drift moves all planets by the same vector).
struct MVSPropagator : FixedStepPropagator<true> {
  // Carried between launches (impl/carried.hpp), from Layout::a on: the planet-planet accelerations
  // after the last Kepler drift: the next first kick.
  static constexpr int carried_per_body = 3;

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
    // The planets' interaction kick dt/2 with the accelerations in L.a.
    const auto half_kick = [&] {
      ctx.for_live(3 * (n - 1), [&](int s, int k) {
        ctx.at(s, L.v + 3 + k) += 0.5 * ctx.sc(s, sc_dt) * ctx.at(s, L.a + 3 + k);
      });
    };
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
    half_kick();
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
    half_kick();
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
