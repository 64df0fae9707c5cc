// The team work model of the integration kernels: one Kokkos team integrates S systems whose
// state lives in team scratch, interleaved by system (element k of system s at k * S + s, so
// consecutive threads touch consecutive words). Each stage is a flattened TeamThreadRange over
// (item, system) followed by a barrier: items are body-components, bodies, body pairs or whole
// systems, the work models of Swarm-NG.
#pragma once

#include <kosmos/core/compensated.hpp>
#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/gravity.hpp>

namespace kosmos {
namespace nbody {
namespace Impl {

// Offsets (in doubles, per system) of the workspace shared by every propagator.
struct Layout {
  int n = 0, pairs = 0;
  int m = 0, x = 0, v = 0, a = 0, j = 0, pa = 0, pj = 0, scalars = 0, extra = 0, total = 0;
  static constexpr int n_scalars = 13;
  KOKKOS_INLINE_FUNCTION static Layout make(int n_bodies, int extra_per_body, int extra_fixed) {
    Layout l;
    l.n = n_bodies;
    l.pairs = n_bodies * (n_bodies - 1) / 2;
    l.m = 0;
    l.x = l.m + n_bodies;
    l.v = l.x + 3 * n_bodies;
    l.a = l.v + 3 * n_bodies;
    l.j = l.a + 3 * n_bodies;
    l.pa = l.j + 3 * n_bodies;
    l.pj = l.pa + 3 * l.pairs;
    l.scalars = l.pj + 3 * l.pairs;
    l.extra = l.scalars + n_scalars;
    l.total = l.extra + extra_per_body * n_bodies + extra_fixed;
    return l;
  }
};

// Scalars of a system (offsets from Layout::scalars).
enum Scalar : int {
  sc_time = 0,      // current time
  sc_dt = 1,        // step being taken
  sc_next_dt = 2,   // carried / proposed step (adaptive integrators)
  sc_log_index = 3, // index of the last interval log written
  sc_err = 4,       // scratch for error norms
  sc_aux = 5,       // 6 more scratch words (centre of mass etc.)
  sc_iter = 11,     // iterations taken in this call of integrate()
  sc_time_lo = 12,  // compensation of sc_time (time is a double-double within a launch)
};

// Flags of a system (ints).
enum Flag : int {
  fl_live = 0,      // integrated in the current iteration
  fl_fail = 1,      // StopReason of a numerical failure in this step (0: none)
  fl_valid = 2,     // slot holds a system
  fl_state = 3,     // SystemState
  fl_reason = 4,    // StopReason
  fl_paused = 5,    // log slots exhausted: wait for the next launch
  fl_logs = 6,      // log records written in this launch
  fl_accept = 7,    // the step was accepted (adaptive Runge-Kutta may reject)
  fl_removed = 8,   // bits of the bodies merged away (is_removed): no forces on or from them
  fl_merged = 9,    // bodies merged after this step: the propagator's forces need an update
  fl_carried = 10,  // the system continues from its carried values (impl/carried.hpp)
  n_flags = 11
};

// Bits of the bodies merged away in a system (bit b: body b). A removed body has mass 0, velocity
// 0 and stays where it was; it is left out of the force loops and the stop conditions.
KOKKOS_INLINE_FUNCTION bool is_removed(int removed, int b) {
  return (unsigned(removed) >> b) & 1u;
}
KOKKOS_INLINE_FUNCTION int with_removed(int removed, int b) {
  return int(unsigned(removed) | (1u << b));
}

template <class Member>
struct TeamContext {
  const Member& team;
  Layout L;
  int S;            // system slots in this team
  double* ws;       // S * L.total doubles
  int* flags;       // S * n_flags ints
  double destination = 0;  // the integration's destination time
  int shift = -1;          // log2(S) when S is a power of two (shifts instead of divisions)

  // Flattened index -> (system slot, item); slot fastest so neighbouring threads share an item.
  KOKKOS_INLINE_FUNCTION void split(int idx, int slots, int& s, int& item) const {
    if (shift >= 0 && slots == S) {
      s = idx & (S - 1);
      item = idx >> shift;
    } else {
      s = idx % slots;
      item = idx / slots;
    }
  }
  KOKKOS_INLINE_FUNCTION static int log2_if_power_of_two(int n) {
    int k = 0;
    while ((1 << k) < n) ++k;
    return (1 << k) == n ? k : -1;
  }

  // time += h, compensated (no drift over millions of steps); a step that reaches the
  // destination lands on it exactly.
  KOKKOS_INLINE_FUNCTION void advance_time(int s, double h) const {
    const double t = sc(s, sc_time);
    if (h >= time_left(destination, t, sc(s, sc_time_lo))) {
      sc(s, sc_time) = destination;
      sc(s, sc_time_lo) = 0;
      return;
    }
    double hi, lo;
    two_sum(t, h, hi, lo);
    lo += sc(s, sc_time_lo);
    fast_two_sum(hi, lo, sc(s, sc_time), sc(s, sc_time_lo));
  }

  // Every live system's step (sc_dt) taken and accepted: how a propagator's advance() ends when
  // it rejects no step.
  KOKKOS_INLINE_FUNCTION void accept_steps() const {
    for_live(1, [&](int s, int) {
      advance_time(s, sc(s, sc_dt));
      flag(s, fl_accept) = 1;
    });
  }

  KOKKOS_INLINE_FUNCTION double& at(int s, int k) const { return ws[k * S + s]; }
  KOKKOS_INLINE_FUNCTION double& sc(int s, int k) const { return ws[(L.scalars + k) * S + s]; }
  KOKKOS_INLINE_FUNCTION int& flag(int s, int f) const { return flags[f * S + s]; }
  KOKKOS_INLINE_FUNCTION bool live(int s) const { return flags[fl_live * S + s] != 0; }

  // f(s, item) for every live system s and item in [0, count); then a barrier.
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_live(int count, const F& f) const {
    const int S_ = S;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count * S_), [&](const int idx) {
      int s, item;
      split(idx, S_, s, item);
      if (flags[fl_live * S_ + s]) f(s, item);
    });
    barrier();
  }
  // Same over every slot in [0, slots), live or not.
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_all(int slots, int count, const F& f) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count * slots), [&](const int idx) {
      int s, item;
      split(idx, slots, s, item);
      f(s, item);
    });
    barrier();
  }
  // Teams of one thread (the CPU configuration) need no barrier.
  KOKKOS_INLINE_FUNCTION void barrier() const {
    if (team.team_size() > 1) team.team_barrier();
  }
  KOKKOS_INLINE_FUNCTION bool any_live() const {
    for (int s = 0; s < S; ++s)
      if (flags[fl_live * S + s]) return true;
    return false;
  }

  // a (and j if with_jerk) of every body from x (and v), for live systems. Pairs of massless
  // bodies (test particles) and pairs with a removed body (fl_removed) are skipped. With
  // planets_only, pairs involving body 0 are skipped (the interaction part of democratic
  // heliocentric MVS).
  template <class Force>
  KOKKOS_INLINE_FUNCTION void forces(const Force& force, int x_off, int v_off, int a_off, bool with_jerk,
                                     bool planets_only = false) const {
    const int n = L.n;
    for_live(L.pairs, [&](int s, int p) {
      int i, j;
      pair_bodies(p, n, i, j);
      if (planets_only && i == 0) return;
      const int removed = flag(s, fl_removed);
      if ((at(s, L.m + i) == 0 && at(s, L.m + j) == 0) ||  // two test particles: no interaction
          is_removed(removed, i) || is_removed(removed, j)) {
        for (int c = 0; c < 3; ++c) at(s, L.pa + 3 * p + c) = at(s, L.pj + 3 * p + c) = 0;
        return;
      }
      double d[3], k[3];
      for (int c = 0; c < 3; ++c) d[c] = at(s, x_off + 3 * j + c) - at(s, x_off + 3 * i + c);
      if (with_jerk) {
        double w[3], kj[3];
        for (int c = 0; c < 3; ++c) w[c] = at(s, v_off + 3 * j + c) - at(s, v_off + 3 * i + c);
        force.acc_jerk(d, w, k, kj);
        for (int c = 0; c < 3; ++c) at(s, L.pj + 3 * p + c) = kj[c];
      } else {
        force.acc(d, k);
      }
      for (int c = 0; c < 3; ++c) at(s, L.pa + 3 * p + c) = k[c];
    });
    for_live(3 * n, [&](int s, int bc) {
      const int b = bc / 3, c = bc % 3;
      double acc = 0, jerk = 0;
      if (!(planets_only && b == 0)) {
        for (int o = planets_only ? 1 : 0; o < n; ++o) {
          if (o == b) continue;
          const double mo = at(s, L.m + o);
          if (b < o) {
            const int p = pair_index(b, o, n);
            acc += mo * at(s, L.pa + 3 * p + c);
            if (with_jerk) jerk += mo * at(s, L.pj + 3 * p + c);
          } else {
            const int p = pair_index(o, b, n);
            acc -= mo * at(s, L.pa + 3 * p + c);
            if (with_jerk) jerk -= mo * at(s, L.pj + 3 * p + c);
          }
        }
      }
      at(s, a_off + bc) = acc;
      if (with_jerk) at(s, L.j + bc) = jerk;
    });
  }
};

// The scaffold of the fixed-step propagators that need no workspace beyond the common layout
// (Verlet, MVS): the step dt every step, and the accelerations (no jerk) of the stored positions
// before the first step; InteractionOnly: of the planet pairs only (the interaction part of
// democratic heliocentric splittings).
template <bool InteractionOnly>
struct FixedStepPropagator {
  double dt = 1e-3;
  static constexpr int extra_per_body = 0;
  static constexpr int extra_fixed = 0;

  template <class Ctx, class Force>
  KOKKOS_INLINE_FUNCTION void init(const Ctx& ctx, const Force& force) const {
    ctx.forces(force, ctx.L.x, ctx.L.v, ctx.L.a, false, InteractionOnly);
  }
  template <class Ctx>
  KOKKOS_INLINE_FUNCTION double proposed_dt(const Ctx&, int) const {
    return dt;
  }
};

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
