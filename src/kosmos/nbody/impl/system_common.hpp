// Pieces shared by the system-per-thread integrators (WHFast-class, IAS15-class): the per-system
// clock, the landing rule, and Newtonian pair accelerations of a system held in local arrays.
#pragma once

#include <kosmos/core/compensated.hpp>
#include <kosmos/nbody/integrators/hermite.hpp>
#include <kosmos/nbody/impl/monitor.hpp>

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

// Which pairs pair_accelerations() leaves out.
enum class PairSkip { none, first_pair, central_body };

// a_i = sum_j m_j (x_j - x_i) / |x_j - x_i|^3 (G = 1) over the pairs not skipped (and not two
// test particles, and no body merged away: is_removed).
template <int N, class Rsqrt>
KOKKOS_INLINE_FUNCTION void pair_accelerations(const double (&m)[N], const double (&x)[3 * N],
                                               double (&a)[3 * N], const Rsqrt& rsqrt,
                                               PairSkip skip, int removed = 0) {
  for (int k = 0; k < 3 * N; ++k) a[k] = 0;
  for (int p = skip == PairSkip::central_body ? 1 : 0; p < N; ++p)
    for (int q = p + 1; q < N; ++q) {
      if (skip == PairSkip::first_pair && p == 0 && q == 1) continue;
      if (m[p] == 0 && m[q] == 0) continue;  // two test particles: no interaction
      if (is_removed(removed, p) || is_removed(removed, q)) continue;
      const double d[3] = {x[3 * q] - x[3 * p], x[3 * q + 1] - x[3 * p + 1],
                           x[3 * q + 2] - x[3 * p + 2]};
      const double rinv = rsqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      const double rinv3 = rinv * rinv * rinv;
      for (int c = 0; c < 3; ++c) {
        a[3 * p + c] += m[q] * d[c] * rinv3;
        a[3 * q + c] -= m[p] * d[c] * rinv3;
      }
    }
}

// The stop conditions of MonitorConfig (check_stop) on a system held in local arrays.
struct SystemMonitor {
  MonitorConfig config;
  bool on = false;  // config.any_stop_condition()

  // radius: this system's collision radii (null: config.radius); removed: its merged-away bodies.
  template <int N>
  KOKKOS_INLINE_FUNCTION int reason(const double (&m)[N], const double (&x)[3 * N],
                                    const double (&v)[3 * N], const double* radius = nullptr,
                                    int removed = 0) const {
    const LocalState<N> state(m, x, v);
    return check_stop(state, 0, config, radius ? radius : config.radius, removed);
  }

  // check_stop's view of the arrays: Layout::make(N, 0, 0) places m, x, v one after the other.
  template <int N>
  struct LocalState {
    Layout L = Layout::make(N, 0, 0);
    mutable double s[7 * N];  // merge_collisions writes through at()
    KOKKOS_INLINE_FUNCTION LocalState(const double (&m)[N], const double (&x)[3 * N],
                                      const double (&v)[3 * N]) {
      for (int b = 0; b < N; ++b) s[b] = m[b];
      for (int k = 0; k < 3 * N; ++k) {
        s[N + k] = x[k];
        s[4 * N + k] = v[k];
      }
    }
    KOKKOS_INLINE_FUNCTION double& at(int, int k) const { return s[k]; }
  };
};

// merge_collisions on system sys held in local arrays (m, x, v updated, removed gains the merged
// bodies, the energy taken added to merge.energy_offset(sys)); true when bodies merged.
template <int N, class Merge>
KOKKOS_INLINE_FUNCTION bool merge_local(const Merge& merge, int sys, double (&m)[N],
                                        double (&x)[3 * N], double (&v)[3 * N], int& removed) {
  const SystemMonitor::LocalState<N> state(m, x, v);
  const int before = removed;
  const double lost = merge_collisions(state, 0, &merge.radii(sys, 0), removed);
  if (removed == before) return false;
  merge.energy_offset(sys) += lost;
  for (int b = 0; b < N; ++b) m[b] = state.s[b];
  for (int k = 0; k < 3 * N; ++k) {
    x[k] = state.s[N + k];
    v[k] = state.s[4 * N + k];
  }
  return true;
}

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
