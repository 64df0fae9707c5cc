// The clock, landing rule and write-back of the integrators that hold a whole system in one thread
// (or a group of lanes): Hermite's register kernels, WHFast-class, IAS15-class.
#pragma once

#include <kosmos/core/compensated.hpp>
#include <kosmos/nbody/ensemble.hpp>

namespace kosmos {
namespace nbody {
namespace Impl {

// Time of a system: a double-double (Ensemble::time, time_lo), so millions of steps over many
// launches do not drift; a step that reaches the destination lands on it exactly. At `pause`
// (<= destination) the system stops after the step that reaches it, without landing on it.
struct SystemClock {
  double t = 0, lo = 0, destination = 0, pause = 0;
  KOKKOS_INLINE_FUNCTION double left() const { return time_left(destination, t, lo); }
  KOKKOS_INLINE_FUNCTION bool running() const { return left() > 0 && time_left(pause, t, lo) > 0; }
  KOKKOS_INLINE_FUNCTION void advance(double h) {
    if (h >= left()) {
      t = destination;
      lo = 0;
      return;
    }
    double hi, e;
    two_sum(t, h, hi, e);
    e += lo;
    fast_two_sum(hi, e, t, lo);
  }
};

// The step to take: dt, or what is left to the destination (no sliver step after it).
KOKKOS_INLINE_FUNCTION double landing_step(double dt, double left) {
  return (dt > left || left - dt < 1e-9 * dt) ? left : dt;
}

// The start of a launch of system `sys`: its masses, positions and velocities into local arrays.
template <int N, class Ens>
KOKKOS_INLINE_FUNCTION void load_system(const Ens& ens, int sys, double (&m)[N], double (&x)[3 * N],
                                        double (&v)[3 * N]) {
  for (int b = 0; b < N; ++b) {
    m[b] = ens.m(sys, b);
    for (int c = 0; c < 3; ++c) {
      x[3 * b + c] = ens.x(sys, b, c);
      v[3 * b + c] = ens.v(sys, b, c);
    }
  }
}

// The end of a launch of system `sys` held in local arrays: its positions, velocities, time and
// step count written back.
template <int N, class Ens, class IterView>
KOKKOS_INLINE_FUNCTION void store_system(const Ens& ens, const IterView& iterations, int sys,
                                         const double (&x)[3 * N], const double (&v)[3 * N],
                                         const SystemClock& clock, long long it) {
  for (int b = 0; b < N; ++b)
    for (int c = 0; c < 3; ++c) {
      ens.x(sys, b, c) = x[3 * b + c];
      ens.v(sys, b, c) = v[3 * b + c];
    }
  ens.time(sys) = clock.t;
  ens.time_lo(sys) = clock.lo;
  iterations(sys) = it;
}

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
