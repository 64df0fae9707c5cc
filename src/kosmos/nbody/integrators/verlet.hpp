// Velocity Verlet in the team work model (impl/team_context.hpp; see integrators/README.md).
#pragma once

#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/impl/team_context.hpp>

namespace kosmos {
namespace nbody {
namespace Impl {

// Velocity Verlet (kick-drift-kick), fixed step, second order, symplectic.
struct VerletPropagator : FixedStepPropagator<false> {
  // Carried between launches (impl/carried.hpp), from Layout::a on: none: the accelerations are
  // those of the stored positions.
  static constexpr int carried_per_body = 0;

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
    ctx.accept_steps();
  }
};

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
