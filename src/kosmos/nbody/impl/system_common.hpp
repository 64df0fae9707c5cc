// Pieces shared by the system-per-thread integrators (WHFast-class, IAS15-class): the per-system
// clock and landing rule (system_clock.hpp), Newtonian pair accelerations of a system held in
// local arrays, its stop conditions and merges.
#pragma once

#include <kosmos/nbody/impl/monitor.hpp>
#include <kosmos/nbody/impl/system_clock.hpp>
#include <kosmos/nbody/integrators/hermite.hpp>

namespace kosmos {
namespace nbody {
namespace Impl {

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

// load_system; conditions that hold before the first step (bodies that already overlap) stop
// the system too: returns false, the system made inactive with the monitor's reason, when one
// holds.
template <int N, class Ens>
KOKKOS_INLINE_FUNCTION bool load_unless_stopped(const Ens& ens, int sys,
                                                const SystemMonitor& monitor, double (&m)[N],
                                                double (&x)[3 * N], double (&v)[3 * N]) {
  load_system(ens, sys, m, x, v);
  const int stop = monitor.on ? monitor.reason<N>(m, x, v) : int(reason_none);
  if (stop == reason_none) return true;
  ens.state(sys) = state_inactive;
  ens.reason(sys) = stop;
  return false;
}

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
