// WHFast-class Wisdom-Holman map (Wisdom & Holman 1991; Rein & Tamayo 2015, "WHFast") in the
// system-per-thread work model: one thread integrates one system of N bodies (N a compile-time
// constant), its state in local arrays, reading and writing the chunked ensemble once per launch.
//
// H = H_Kepler + H_interaction, drift-kick-drift, consecutive half drifts merged (one Kepler
// drift per step). Coordinates:
//  - Jacobi: body i >= 1 orbits the centre of mass of bodies 0..i-1 with mu_i = G M_i
//    (M_i = m_0 + ... + m_i); the kick is the Cartesian gravity without the 0-1 pair, moved to
//    Jacobi accelerations, plus G M_i Q_i / |Q_i|^3 for i >= 2 (the Kepler part taken out).
//    A two-body system is therefore integrated exactly (to round-off) at any step.
//  - democratic heliocentric (Duncan, Levison & Lee 1998): heliocentric positions, barycentric
//    velocities, mu = G m_0, planet-planet kicks, and the "jump" sum(m_i v_i) / m_0 split
//    symmetrically around each kick (as in REBOUND: Kepler drifts outermost, so they merge).
//  - WHDS (Hernandez & Dehnen 2017): heliocentric positions, velocities V_i = (m_0 + m_i) / m_0
//    times the barycentric ones, Kepler drifts with mu = G (m_0 + m_i), kicks scaled by
//    (m_0 + m_i) / m_0, and a jump by the momentum of the *other* planets only: the planets'
//    own reflex motion is in the Kepler part, so a star and one planet are integrated exactly
//    (to round-off) as in Jacobi coordinates, and every planet is treated alike.
// Symplectic correctors of order 3, 5, 7, 11 (Wisdom, Holman & Touma 1996; coefficients as
// tabulated to 50 digits by Rein & Tamayo 2015 and in REBOUND): applied once when a run of
// full steps starts and inverted for the stored (real) state at the end of a launch; the
// corrected state itself is carried to the next launch (impl/carried.hpp). A shortened step that
// lands on the destination is a corrected step of its own length.
// The Kepler drift is kepler_drift() (universal variables, any eccentricity).
#pragma once

#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/impl/carried.hpp>
#include <kosmos/nbody/impl/megno.hpp>
#include <kosmos/nbody/impl/system_common.hpp>
#include <kosmos/nbody/kepler_drift.hpp>

namespace kosmos {
namespace nbody {

// Coordinates of the Wisdom-Holman splitting.
enum class WHCoordinates { jacobi, democratic_heliocentric, whds };

namespace Impl {

struct WHFastParams {
  double destination = 0, dt = 1e-2;
  double pause = 0;   // systems stop after the first step that reaches it (no landing step)
  int corrector = 0;  // 0 (none), 3, 5, 7 or 11; Jacobi coordinates only
  WHCoordinates coordinates = WHCoordinates::jacobi;
  int steps = 1;
  long long max_iterations = 0;
  SystemMonitor monitor;
};

constexpr bool valid_corrector_order(int order) {
  return order == 0 || order == 3 || order == 5 || order == 7 || order == 11;
}

// Number of b coefficients of the corrector of `order` and the k-th of them (k = 1..count):
// Wisdom, Holman & Touma (1996), as listed by Rein & Tamayo (2015), Table 1.
KOKKOS_INLINE_FUNCTION int corrector_count(int order) {
  return order == 3 ? 1 : order == 5 ? 2 : order == 7 ? 3 : order == 11 ? 5 : 0;
}
KOKKOS_INLINE_FUNCTION double corrector_b(int order, int k) {
  const double b3[1] = {-0.024900596027799867499350357910273437184309981229127};
  const double b5[2] = {-0.0083001986759332891664501193034244790614366604097090,
                        0.041500993379666445832250596517122395307183302048545};
  const double b7[3] = {0.0024926811426922105779030593952776964450539008582219,
                        -0.018270923246702131478062356884535264841652263842597,
                        0.053964399093127498721765893493510877532452806339655};
  const double b11[5] = {0.00020361579647854651301632818774633716473696537436847,
                         -0.0023487215292295354188307328851055489876255097419754,
                         0.012309078592019946317544564763237909911330686448336,
                         -0.038121613681288650508647613260247372125243616270670,
                         0.072593394748842738674253180742744961827622366521517};
  return order == 3 ? b3[k - 1] : order == 5 ? b5[k - 1] : order == 7 ? b7[k - 1] : b11[k - 1];
}
// a_k = k alpha, alpha = sqrt(7/40).
constexpr double corrector_alpha = 0.41833001326703777398908601289259374469640768464934;

// One system in Wisdom-Holman coordinates: Q, V (body 0: centre of mass and its velocity).
template <int N, class Rsqrt>
struct WHSystem {
  Rsqrt rsqrt;
  bool jacobi = true;
  bool whds = false;  // with jacobi = false: WHDS, else democratic heliocentric
  bool ok = true;     // false once a Kepler drift failed
  double m[N], M[N];  // masses, prefix sums M[i] = m_0 + ... + m_i
  double Q[3 * N], V[3 * N];

  KOKKOS_INLINE_FUNCTION void load(const double (&x)[3 * N], const double (&v)[3 * N]) {
    M[0] = m[0];
    for (int i = 1; i < N; ++i) M[i] = M[i - 1] + m[i];
    if (jacobi) {
      to_jacobi(x, Q);
      to_jacobi(v, V);
      return;
    }
    double xc[3] = {0, 0, 0}, vc[3] = {0, 0, 0};
    for (int i = 0; i < N; ++i)
      for (int c = 0; c < 3; ++c) {
        xc[c] += m[i] * x[3 * i + c];
        vc[c] += m[i] * v[3 * i + c];
      }
    for (int c = 0; c < 3; ++c) {
      Q[c] = xc[c] / M[N - 1];
      V[c] = vc[c] / M[N - 1];
    }
    for (int i = 1; i < N; ++i)
      for (int c = 0; c < 3; ++c) {
        Q[3 * i + c] = x[3 * i + c] - x[c];
        V[3 * i + c] = (v[3 * i + c] - V[c]) / barycentric_velocity_factor(i);
      }
  }
  // The planet's barycentric velocity over V_i: m_0 / (m_0 + m_i) in WHDS, 1 otherwise.
  KOKKOS_INLINE_FUNCTION double barycentric_velocity_factor(int i) const {
    return whds ? m[0] / (m[0] + m[i]) : 1.0;
  }
  KOKKOS_INLINE_FUNCTION void store(double (&x)[3 * N], double (&v)[3 * N]) const {
    if (jacobi) {
      from_jacobi(Q, x);
      from_jacobi(V, v);
      return;
    }
    heliocentric_positions(x);
    double p[3] = {0, 0, 0};
    for (int i = 1; i < N; ++i)
      for (int c = 0; c < 3; ++c) {
        const double vb = V[3 * i + c] * barycentric_velocity_factor(i);
        p[c] += m[i] * vb;
        v[3 * i + c] = vb + V[c];
      }
    for (int c = 0; c < 3; ++c) v[c] = V[c] - p[c] / m[0];
  }

  // Jacobi coordinates of a Cartesian vector field w (positions or velocities): w'_i = w_i - the
  // mass-weighted mean of w_0..w_{i-1}; w'_0 = the mean of all.
  KOKKOS_INLINE_FUNCTION void to_jacobi(const double (&w)[3 * N], double (&wj)[3 * N]) const {
    double s[3];
    for (int c = 0; c < 3; ++c) s[c] = m[0] * w[c];
    for (int i = 1; i < N; ++i)
      for (int c = 0; c < 3; ++c) {
        wj[3 * i + c] = w[3 * i + c] - s[c] / M[i - 1];
        s[c] += m[i] * w[3 * i + c];
      }
    for (int c = 0; c < 3; ++c) wj[c] = s[c] / M[N - 1];
  }
  KOKKOS_INLINE_FUNCTION void from_jacobi(const double (&wj)[3 * N], double (&w)[3 * N]) const {
    double mean[3] = {wj[0], wj[1], wj[2]};  // mean of bodies 0..i
    for (int i = N - 1; i >= 1; --i)
      for (int c = 0; c < 3; ++c) {
        mean[c] -= (m[i] / M[i]) * wj[3 * i + c];  // now the mean of bodies 0..i-1
        w[3 * i + c] = mean[c] + wj[3 * i + c];
      }
    for (int c = 0; c < 3; ++c) w[c] = mean[c];
  }
  KOKKOS_INLINE_FUNCTION void heliocentric_positions(double (&x)[3 * N]) const {
    double mq[3] = {0, 0, 0};
    for (int i = 1; i < N; ++i)
      for (int c = 0; c < 3; ++c) mq[c] += m[i] * Q[3 * i + c];
    for (int c = 0; c < 3; ++c) x[c] = Q[c] - mq[c] / M[N - 1];
    for (int i = 1; i < N; ++i)
      for (int c = 0; c < 3; ++c) x[3 * i + c] = Q[3 * i + c] + x[c];
  }

  // Not inlined: the Kepler solver is large and is called from several places (drift, the
  // corrector stages); inlined (and unrolled over bodies) it made the CUDA kernels ~50k PTX
  // lines each. (__attribute__((noinline)) is what nvcc's __noinline__ expands to.)
  KOKKOS_FUNCTION __attribute__((noinline)) void kepler(double h) {
    for (int i = 1; i < N; ++i) {
      double r[3] = {Q[3 * i], Q[3 * i + 1], Q[3 * i + 2]},
             w[3] = {V[3 * i], V[3 * i + 1], V[3 * i + 2]};
      if (!kepler_drift(jacobi ? M[i] : whds ? m[0] + m[i] : m[0], h, r, w)) ok = false;
      for (int c = 0; c < 3; ++c) {
        Q[3 * i + c] = r[c];
        V[3 * i + c] = w[c];
      }
    }
  }
  // Democratic heliocentric: positions move with the total planet momentum / m_0 (WHDS: that of
  // the other planets).
  KOKKOS_INLINE_FUNCTION void jump(double h) {
    double mv[3 * N], p[3] = {0, 0, 0};  // planet momenta (barycentric) and their sum
    for (int i = 1; i < N; ++i)
      for (int c = 0; c < 3; ++c) {
        mv[3 * i + c] = m[i] * V[3 * i + c] * barycentric_velocity_factor(i);
        p[c] += mv[3 * i + c];
      }
    for (int i = 1; i < N; ++i)
      for (int c = 0; c < 3; ++c) Q[3 * i + c] += h * (whds ? p[c] - mv[3 * i + c] : p[c]) / m[0];
  }
  KOKKOS_INLINE_FUNCTION void kick(double h) {
    double x[3 * N], a[3 * N];
    if (jacobi)
      from_jacobi(Q, x);
    else
      for (int k = 0; k < 3 * N; ++k) x[k] = Q[k];  // heliocentric: only planet pairs, differences
    // Jacobi: every pair but 0-1 (its force is all Kepler part); heliocentric: planet pairs.
    pair_accelerations<N>(m, x, a, rsqrt, jacobi ? PairSkip::first_pair : PairSkip::central_body);
    if (!jacobi) {
      for (int k = 3; k < 3 * N; ++k) V[k] += h * a[k] / barycentric_velocity_factor(k / 3);
      return;
    }
    double s[3] = {m[0] * a[0], m[0] * a[1], m[0] * a[2]};
    for (int i = 1; i < N; ++i) {
      double back = 0;
      if (i >= 2) {
        const double* q = &Q[3 * i];
        const double rinv = rsqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
        back = M[i] * rinv * rinv * rinv;
      }
      for (int c = 0; c < 3; ++c) {
        V[3 * i + c] += h * (a[3 * i + c] - s[c] / M[i - 1] + back * Q[3 * i + c]);
        s[c] += m[i] * a[3 * i + c];
      }
    }
  }
  // The free motion of the centre of mass.
  KOKKOS_INLINE_FUNCTION void com_drift(double h) {
    for (int c = 0; c < 3; ++c) Q[c] += h * V[c];
  }
  // The closing half Kepler drift of the last step, merged into the next step's opening one
  // (wh_step, wh_sync).
  double pending = 0;
  static constexpr int bodies = N;
  static constexpr bool variational = false;  // WHVariationalSystem: with the deviation
};

// The compositions of the operators of a Wisdom-Holman system w (WHSystem or
// WHVariationalSystem: each calls w's own kepler, kick and com_drift, so the deviation of the
// variational system moves with the bodies).
// Drift-kick-drift step h; in democratic heliocentric and WHDS coordinates the kick is wrapped
// in half jumps (REBOUND's ordering). The closing half drift stays pending (w.pending).
template <class System>
KOKKOS_INLINE_FUNCTION void wh_step(System& w, double h) {
  w.kepler(w.pending + 0.5 * h);
  if (!w.jacobi) w.jump(0.5 * h);
  w.kick(h);
  if (!w.jacobi) w.jump(0.5 * h);
  w.com_drift(h);
  w.pending = 0.5 * h;
}
template <class System>
KOKKOS_INLINE_FUNCTION void wh_sync(System& w) {
  if (w.pending != 0) w.kepler(w.pending);
  w.pending = 0;
}
// Corrector stage Z(a, b) = K(a) I(-b) K(-2a) I(b) K(a) (Wisdom et al. 1996), K the Kepler
// drift, I the interaction kick.
template <class System>
KOKKOS_INLINE_FUNCTION void wh_corrector_stage(System& w, double a, double b) {
  w.kepler(a);
  w.kick(-b);
  w.kepler(-2 * a);
  w.kick(b);
  w.kepler(a);
}
// The corrector of `order` for step dt (inv = +1), or its inverse (inv = -1). Jacobi only.
template <class System>
KOKKOS_INLINE_FUNCTION void wh_correct(System& w, double inv, double dt, int order) {
  const int count = corrector_count(order);
  // The third-order corrector is tabulated with the opposite sign convention for a.
  const double sa = order == 3 ? -1.0 : 1.0;
  for (int k = count; k >= 1; --k)
    wh_corrector_stage(w, -sa * k * corrector_alpha * dt,
                       -inv * corrector_b(order, count + 1 - k) * dt);
  for (int k = 1; k <= count; ++k)
    wh_corrector_stage(w, sa * k * corrector_alpha * dt,
                       inv * corrector_b(order, count + 1 - k) * dt);
}

// The end of a launch: the state, time and steps of system `sys` written back, and the system
// disabled (a failed drift, ok false: `failure`; or a non-finite state) or stopped (stop).
template <int N, class Ens, class IterView>
KOKKOS_INLINE_FUNCTION void store_whfast_result(const Ens& ens, const IterView& iterations, int sys,
                                                const double (&x)[3 * N], const double (&v)[3 * N],
                                                const SystemClock& clock, long long it, bool ok,
                                                bool finite, int stop,
                                                int failure = reason_kepler_failure) {
  store_system<N>(ens, iterations, sys, x, v, clock, it);
  if (!ok || !finite) {
    ens.state(sys) = state_disabled;
    ens.reason(sys) = !ok ? failure : reason_nonfinite;
  } else if (stop != reason_none) {
    ens.state(sys) = state_inactive;
    ens.reason(sys) = stop;
  }
}

// Values carried between launches (CarriedState): Q, V, the pending half drift and whether the
// corrector is applied, and in MEGNO runs the deviation dQ, dV, so that a launch continues exactly
// where the last one stopped.
constexpr int whfast_carried_width(int n, bool variational = false) {
  return 6 * n + 2 + (variational ? 6 * n : 0);
}

// Integrates system `sys` for at most p.steps steps (one launch) with the Wisdom-Holman system
// `System` (WHSystem; MEGNO runs: WHVariationalSystem, Jacobi coordinates, with the deviation
// and MEGNO sums of `megno`). Landing rule: every step is dt except the last one before
// p.destination, which is what is left (a step within 1e-9 dt of the destination reaches it);
// with a corrector that step is a corrected step of its own length: the dt corrector is undone,
// the state synchronized, and C(h)^-1 K(h) C(h) applied (Wisdom et al. 1996's corrector holds for
// any step). Steps stop without landing at p.pause. MEGNO runs synchronize after every step (two
// Kepler drifts a step, as REBOUND's safe mode that its MEGNO needs) and add REBOUND's rectangle
// rule dY = h 2 (t - t0) (delta . delta_dot / |delta|^2) on the synchronized state (with a
// corrector: the corrected one, which REBOUND un-corrects every step: O(eps dt^2) apart).
template <class System, class Ens, class IterView, class Rsqrt, class Carried,
          class Megno = MegnoState<typename Ens::memory_space>>
KOKKOS_INLINE_FUNCTION void whfast_system(const Ens& ens, const IterView& iterations, int sys,
                                          const WHFastParams& p, const Rsqrt& rsqrt,
                                          const Carried& carried, const Megno& megno = {}) {
  constexpr int N = System::bodies;
  constexpr bool variational = System::variational;
  if (ens.state(sys) != state_active) return;
  SystemClock clock{ens.time(sys), ens.time_lo(sys), p.destination, p.pause};
  long long it = iterations(sys);
  if (!clock.running() || it >= p.max_iterations) return;
  System w;
  w.rsqrt = rsqrt;
  w.jacobi = p.coordinates == WHCoordinates::jacobi;
  w.whds = p.coordinates == WHCoordinates::whds;
  double x[3 * N], v[3 * N];
  [[maybe_unused]] double dx[3 * N], dv[3 * N], ysum[megno_sums];  // the deviation, MEGNO sums
  if (!load_unless_stopped(ens, sys, p.monitor, w.m, x, v)) return;
  if constexpr (variational) {
    for (int q = 0; q < 3 * N; ++q) {
      dx[q] = megno.delta(sys, q);
      dv[q] = megno.delta(sys, 3 * N + q);
    }
    for (int k = 0; k < int(megno_sums); ++k) ysum[k] = megno.sums(sys, k);
  }
  // The key's view of the stored state (MEGNO runs: each word folded with its deviation).
  const auto state = [&](int b, int c) {
    const double own = c < 3 ? x[3 * b + c] : c < 6 ? v[3 * b + c - 3] : w.m[b];
    if constexpr (variational)
      if (c < 6) return fold_deviation(own, c < 3 ? dx[3 * b + c] : dv[3 * b + c - 3]);
    return own;
  };
  int stop = reason_none;
  w.load(x, v);
  if constexpr (variational) w.load_deviation(dx, dv);
  bool corrected = false;
  if (carried.valid(sys, clock.t, clock.lo, N, state)) {
    for (int k = 0; k < 3 * N; ++k) {
      w.Q[k] = carried.at(sys, k);
      w.V[k] = carried.at(sys, 3 * N + k);
    }
    w.pending = carried.at(sys, 6 * N);
    corrected = carried.at(sys, 6 * N + 1) != 0;
    if constexpr (variational)
      for (int k = 0; k < 3 * N; ++k) {
        w.dQ[k] = carried.at(sys, 6 * N + 2 + k);
        w.dV[k] = carried.at(sys, 9 * N + 2 + k);
      }
  }
  for (int step = 0;
       step < p.steps && clock.running() && it < p.max_iterations && w.ok && stop == reason_none;
       ++step) {
    const double h = landing_step(p.dt, clock.left());
    const bool full = !(h < p.dt * (1 - 1e-9));
    if (p.corrector != 0 && full && !corrected) {
      wh_sync(w);
      wh_correct(w, 1.0, p.dt, p.corrector);
      corrected = true;
    }
    if (p.corrector != 0 && !full) {
      wh_sync(w);
      if (corrected) wh_correct(w, -1.0, p.dt, p.corrector);
      wh_correct(w, 1.0, h, p.corrector);
      wh_step(w, h);
      wh_sync(w);
      wh_correct(w, -1.0, h, p.corrector);
      corrected = false;
    } else {
      wh_step(w, h);
    }
    clock.advance(h);
    ++it;
    if constexpr (variational) {
      wh_sync(w);
      const double since = clock.t - ysum[megno_initial_t];
      megno_update(ysum, since, h * 2 * since * w.megno_rate(), h);
    }
    if (p.monitor.on) {
      // On the synchronized state (with a corrector: the corrected map's, O(dt^2 eps) away).
      wh_sync(w);
      w.store(x, v);
      stop = p.monitor.reason<N>(w.m, x, v);
    }
  }
  if (carried.on()) {
    for (int k = 0; k < 3 * N; ++k) {
      carried.at(sys, k) = w.Q[k];
      carried.at(sys, 3 * N + k) = w.V[k];
    }
    carried.at(sys, 6 * N) = w.pending;
    carried.at(sys, 6 * N + 1) = corrected ? 1.0 : 0.0;
    if constexpr (variational)
      for (int k = 0; k < 3 * N; ++k) {
        carried.at(sys, 6 * N + 2 + k) = w.dQ[k];
        carried.at(sys, 9 * N + 2 + k) = w.dV[k];
      }
  }
  wh_sync(w);
  if (corrected) wh_correct(w, -1.0, p.dt, p.corrector);
  w.store(x, v);
  bool finite = true;
  for (int k = 0; k < 3 * N; ++k) finite = finite && math::isfinite(x[k]) && math::isfinite(v[k]);
  if constexpr (variational) {
    w.store_deviation(dx, dv);
    for (int q = 0; q < 3 * N; ++q) {
      finite = finite && math::isfinite(dx[q]) && math::isfinite(dv[q]);
      megno.delta(sys, q) = dx[q];
      megno.delta(sys, 3 * N + q) = dv[q];
    }
    for (int k = 0; k < int(megno_sums); ++k) megno.sums(sys, k) = ysum[k];
  }
  store_whfast_result<N>(ens, iterations, sys, x, v, clock, it, w.ok, finite, stop);
  carried.seal(sys, clock.t, clock.lo, N, state);
}

template <int N, class MemorySpace, class Rsqrt = PortableRsqrt>
struct WHFastSystemKernel {
  Ensemble<MemorySpace> ens;
  Kokkos::View<long long*, MemorySpace> iterations;
  WHFastParams params;
  CarriedState<MemorySpace> carried;
  KOKKOS_INLINE_FUNCTION void operator()(const int sys) const {
    whfast_system<WHSystem<N, Rsqrt>>(ens, iterations, sys, params, Rsqrt(), carried);
  }
};

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
