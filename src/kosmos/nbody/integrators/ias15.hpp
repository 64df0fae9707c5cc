// IAS15-class integrator (Everhart 1985; Rein & Spiegel 2015, "IAS15"): each system of N bodies
// with its own adaptive step, integrated by one thread (SystemPerThread: the generic kernel) or by
// a group of threads, one per body (the CUDA specialization's BodyPerLane: the predictor-corrector
// state of a body fits in registers where a whole system's would not).
//
// Within a step of length dt the acceleration is a polynomial in s = (t - t0) / dt,
//   a(s) = a0 + b0 s + b1 s^2 + ... + b6 s^7
//        = a0 + g0 s + g1 s (s - h1) + ... + g6 s (s - h1) ... (s - h6),
// sampled at the 8 Gauss-Radau nodes h0 = 0 < h1 < ... < h7 < 1. A predictor-corrector loop
// evaluates the forces at the nodes (positions from integrating the polynomial), updates the g
// (divided differences) and from them the b, until the change of b6 relative to the largest
// acceleration is below 1e-16 (or stops decreasing, at most 12 iterations). The next step is
// (5040 epsilon)^(1/7) times the smallest time scale of the step's polynomial (Pham, Rein &
// Spiegel 2024, prs_timescale2); a step whose proposal is below 1/4 of it is rejected and redone,
// growth is capped at 4x per step (Rein & Spiegel 2015, Section 2.6-2.7). Round-off is kept from
// accumulating into a drift: positions and velocities are double-word compensated sums updated
// one term at a time, the b are accumulated with Kahan compensation within a step and the
// divided differences divide by the node spacings. The polynomial of an accepted step predicts
// the next step's b (shifted and rescaled), corrected by the previous prediction's error.
#pragma once

#include <kosmos/core/compensated.hpp>
#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/impl/carried.hpp>
#include <kosmos/nbody/impl/megno.hpp>
#include <kosmos/nbody/impl/system_common.hpp>

namespace kosmos {
namespace nbody {
namespace Impl {

// Gauss-Radau constants derived from the nodes (computed once on the host; plain data).
struct IAS15Constants {
  double h[8];      // Gauss-Radau spacings on [0, 1]
  double dh[8][8];  // dh[n][j] = h[n] - h[j], j < n: divisors (a rounded reciprocal would bias
                    // every g the same way, step after step: a secular energy drift)
  double c[7][7];  // b_k = sum_{j >= k} c[k][j] g_j (c[k][j]: s^k coefficient of prod_{i=1..j} (s -
                   // h_i))
  double d[7][7];  // the inverse: g_j = sum_{k >= j} d[j][k] b_k
  double shift[7][7];  // shift[j][k] = binomial(k + 1, j + 1): re-expanding a(s) about s = 1
  // 1 / ((j + 2)(j + 3)), for the predicted positions at the nodes only: there a rounded
  // reciprocal moves the force evaluation by an ulp of the b terms, far below one of x, and saves
  // 7 divisions per coordinate, node and iteration; the state update keeps exact divisions.
  double predict[7];
  double w[8];  // Gauss-Radau weights of the nodes, summing to 2 (REBOUND's w: MEGNO's quadrature)

  static IAS15Constants make() {
    IAS15Constants k{};
    // Nodes of 8-point Gauss-Radau quadrature on [0, 1] (Everhart 1985).
    const double h[8] = {0.0,
                         0.0562625605369221464656521910318,
                         0.180240691736892364987579942780,
                         0.352624717113169637373907769648,
                         0.547153626330555383001448554766,
                         0.734210177215410531523210605558,
                         0.885320946839095768090359771030,
                         0.977520613561287501891174488626};
    for (int n = 0; n < 8; ++n) {
      k.h[n] = h[n];
      for (int j = 0; j < n; ++j) k.dh[n][j] = h[n] - h[j];
    }
    // Coefficients of prod_{i=1..j} (s - h_i), built up one factor at a time.
    double poly[7] = {1, 0, 0, 0, 0, 0, 0};
    for (int j = 0; j < 7; ++j) {
      if (j > 0)
        for (int p = j; p >= 0; --p) poly[p] = (p > 0 ? poly[p - 1] : 0.0) - h[j] * poly[p];
      for (int p = 0; p < 7; ++p) k.c[p][j] = poly[p];
    }
    // Back substitution of the unit upper triangular c.
    for (int j = 6; j >= 0; --j)
      for (int col = 0; col < 7; ++col) {
        double v = (j == col) ? 1.0 : 0.0;
        for (int q = j + 1; q < 7; ++q) v -= k.c[j][q] * k.d[q][col];
        k.d[j][col] = v;
      }
    for (int j = 0; j < 7; ++j) k.predict[j] = 1.0 / ((j + 2) * (j + 3));
    const double w[8] = {0.03125,
                         0.185358154802979278540728972807180754479812609,
                         0.304130620646785128975743291458180383736715043,
                         0.376517545389118556572129261157225608762708603,
                         0.391572167452493593082499533303669362149363727,
                         0.347014795634501068709955597003528601733139176,
                         0.249647901329864963257869294715235590174262844,
                         0.114508814744257199342353731044292225247093225};
    for (int n = 0; n < 8; ++n) k.w[n] = w[n];
    for (int j = 0; j < 7; ++j)
      for (int q = 0; q < 7; ++q) {
        double binom = 1;  // binomial(q + 1, j + 1)
        for (int i = 0; i < j + 1; ++i) binom = binom * (q + 1 - i) / (i + 1);
        k.shift[j][q] = q >= j ? binom : 0.0;
      }
    return k;
  }
};

struct IAS15Params {
  double destination = 0, dt = 1e-3;  // dt: first step of systems without a carried one
  double pause = 0;        // systems stop after the first step that reaches it (no landing step)
  double step_factor = 0;  // (5040 epsilon)^(1/7): PRS23's step in time scales (REBOUND's scaling)
  int steps = 1;
  long long max_iterations = 0;
  SystemMonitor monitor;
  IAS15Constants k;
};

// sum + x with the rounding error carried in `lost` (the negated low part, Kahan's convention).
KOKKOS_INLINE_FUNCTION void kahan_add(double& sum, double& lost, double x) {
  const double y = x - lost;
  const double t = sum + y;
  lost = (t - sum) - y;
  sum = t;
}

// Step-size criterion of Pham, Rein & Spiegel (2024, "PRS23", REBOUND's default): per body with
// a nonzero acceleration, the time scale sqrt(2 y2 / (y3 + sqrt(y2 y4))) in units of the step just
// taken, with y2 = |a|^2, y3 = |jerk h|^2, y4 = |snap h^2|^2 at the end of the step (s = 1 of the
// polynomial); the smallest over the first B bodies (the real ones: variational deviations of
// MEGNO runs, after them, do not set the step, as in REBOUND). Unlike max|b6| / max|a| it does not
// depend on the round-off floor of the last coefficient, so the steps stay longer and fewer. Here
// the square of the smallest over the B bodies in a0 and b: 0 when none is accelerated, NaN when
// the polynomial is not finite.
template <int B, int Len>
KOKKOS_INLINE_FUNCTION double prs_timescale2(const double (&a0)[Len], const double (&b)[7][Len]) {
  static_assert(3 * B <= Len, "prs_timescale2: more bodies than coordinates");
  double min_timescale2 = 0;  // 0: none yet
  for (int i = 0; i < B; ++i) {
    double a2 = 0, y2 = 0, y3 = 0, y4 = 0;
    for (int q = 3 * i; q < 3 * i + 3; ++q) {
      a2 += a0[q] * a0[q];
      const double acc =
          a0[q] + b[0][q] + b[1][q] + b[2][q] + b[3][q] + b[4][q] + b[5][q] + b[6][q];
      const double jerk = b[0][q] + 2 * b[1][q] + 3 * b[2][q] + 4 * b[3][q] + 5 * b[4][q] +
                          6 * b[5][q] + 7 * b[6][q];
      const double snap =
          2 * b[1][q] + 6 * b[2][q] + 12 * b[3][q] + 20 * b[4][q] + 30 * b[5][q] + 42 * b[6][q];
      y2 += acc * acc;
      y3 += jerk * jerk;
      y4 += snap * snap;
    }
    if (!(y2 + y3 + y4 >= 0)) return y2 + y3 + y4;  // NaN
    if (!(a2 > 0)) continue;                        // not accelerated (a test particle alone)
    const double timescale2 = 2 * y2 / (y3 + math::sqrt(y2 * y4));
    if (timescale2 > 0 && (min_timescale2 == 0 || timescale2 < min_timescale2))
      min_timescale2 = timescale2;
  }
  return min_timescale2;
}

// Values carried between launches (CarriedState) per coordinate (3n, with the deviation of MEGNO
// runs 6n): the predicted b and the prediction e (7 each), x and v as double-words (hi, lo); then
// whether b holds a prediction. The step itself is Ensemble::step.
constexpr int ias15_carried_per_coordinate = 18;
constexpr int ias15_carried_width(int coordinates) {
  return ias15_carried_per_coordinate * coordinates + 1;
}

// The generic work model: one thread holds all 3N coordinates of its system (a Layout of
// ias15_system; the other is the CUDA specialization's BodyPerLane). A Layout says which bodies a
// thread holds (body(i) of its `bodies`, >= N: none), combines per-thread values over the threads
// of a system (max, all, min_timescale2), evaluates the accelerations of its bodies and the
// monitors, and merges bodies (only where the whole system is in one thread).
template <int N>
struct SystemPerThread {
  static constexpr int bodies = N;
  KOKKOS_INLINE_FUNCTION int body(int i) const { return i; }
  KOKKOS_INLINE_FUNCTION bool leader() const { return true; }
  KOKKOS_INLINE_FUNCTION double max(double x) const { return x; }
  KOKKOS_INLINE_FUNCTION bool all(bool x) const { return x; }
  KOKKOS_INLINE_FUNCTION double min_timescale2(double x) const { return x; }
  // The values of every body (w: this thread's).
  KOKKOS_INLINE_FUNCTION void gather(const double (&w)[3 * N], double (&all)[3 * N]) const {
    for (int k = 0; k < 3 * N; ++k) all[k] = w[k];
  }
  template <class Rsqrt>
  KOKKOS_INLINE_FUNCTION void accelerations(const double (&m)[N], const double (&x)[3 * N],
                                            double (&a)[3 * N], const Rsqrt& rsqrt,
                                            int removed) const {
    pair_accelerations<N>(m, x, a, rsqrt, PairSkip::none, removed);
  }
  KOKKOS_INLINE_FUNCTION int monitor_reason(const SystemMonitor& monitor, const double (&m)[N],
                                            const double (&x)[3 * N], const double (&v)[3 * N],
                                            const double* radius, int removed) const {
    return monitor.reason<N>(m, x, v, radius, removed);
  }
  template <class Merge>
  KOKKOS_INLINE_FUNCTION bool merge(const Merge& merge, int sys, double (&m)[N], double (&x)[3 * N],
                                    double (&v)[3 * N], int& removed) const {
    return merge_local<N>(merge, sys, m, x, v, removed);
  }
};

// Integrates system `sys` for at most p.steps steps (accepted and rejected) in one launch, in
// this thread's part `layout` of the system (every thread of the system calls it; its control
// flow is the same in all of them). Merging (p.monitor.config.merging()): the merge state of the
// system is in `merge`. Variational (MEGNO runs, the whole system in one thread, no merging): the
// deviation of megno.delta is integrated with the bodies as n further bodies of the same
// predictor-corrector, and the MEGNO sums accumulate Gauss-Radau quadratures of 2 t rate over
// each step, as REBOUND's IAS15 does.
template <int N, bool Variational = false, class Layout, class Ens, class IterView, class Rsqrt,
          class Merge, class Carried, class Megno = MegnoState<typename Ens::memory_space>>
KOKKOS_INLINE_FUNCTION void ias15_system(const Layout& layout, const Ens& ens,
                                         const IterView& iterations, int sys, const IAS15Params& p,
                                         const Rsqrt& rsqrt, const Merge& merge,
                                         const Carried& carried, const Megno& megno = {}) {
  static_assert(!Variational || Layout::bodies == N,
                "ias15_system: variational equations need the whole system in one thread");
  constexpr int n3r = 3 * Layout::bodies;          // coordinates of the bodies in this thread
  constexpr int n3 = Variational ? 2 * n3r : n3r;  // with the deviation
  if (ens.state(sys) != state_active) return;
  SystemClock clock{ens.time(sys), ens.time_lo(sys), p.destination, p.pause};
  long long it = iterations(sys);
  if (!clock.running() || it >= p.max_iterations) return;
  const IAS15Constants& K = p.k;
  double m[N];
  CompensatedSum<double> x[n3], v[n3];
  for (int b = 0; b < N; ++b) m[b] = ens.m(sys, b);
  for (int i = 0; i < Layout::bodies; ++i) {
    const int body = layout.body(i);
    for (int c = 0; c < 3; ++c) {
      x[3 * i + c].hi = body < N ? ens.x(sys, body, c) : 0.0;
      v[3 * i + c].hi = body < N ? ens.v(sys, body, c) : 0.0;
    }
  }
  [[maybe_unused]] double ysum[megno_sums];  // the MEGNO sums
  if constexpr (Variational) {
    for (int q = 0; q < n3r; ++q) {
      x[n3r + q].hi = megno.delta(sys, q);
      v[n3r + q].hi = megno.delta(sys, n3r + q);
    }
    for (int k = 0; k < int(megno_sums); ++k) ysum[k] = megno.sums(sys, k);
  }
  // Accelerations of every coordinate (with the variational ones of the deviation).
  const auto accelerations = [&](const double(&xx)[n3], double(&aa)[n3], int removed_bodies) {
    if constexpr (Variational) {
      double xr[n3r], ar[n3r];
      for (int q = 0; q < n3r; ++q) xr[q] = xx[q];
      layout.accelerations(m, xr, ar, rsqrt, removed_bodies);
      for (int q = 0; q < n3r; ++q) aa[q] = ar[q];
      variational_accelerations<N>(m, xr, xx + n3r, aa + n3r, rsqrt);
    } else {
      layout.accelerations(m, xx, aa, rsqrt, removed_bodies);
    }
  };
  // The stop conditions on the bodies (not the deviation).
  const auto monitor_reason = [&](const double(&xx)[n3], const double(&vv)[n3], const double* radii,
                                  int removed_bodies) {
    if constexpr (Variational) {
      double xr[n3r], vr[n3r];
      for (int q = 0; q < n3r; ++q) {
        xr[q] = xx[q];
        vr[q] = vv[q];
      }
      return layout.monitor_reason(p.monitor, m, xr, vr, radii, removed_bodies);
    } else {
      return layout.monitor_reason(p.monitor, m, xx, vv, radii, removed_bodies);
    }
  };
  double dt = ens.step(sys) > 0 ? ens.step(sys) : p.dt;
  double b[7][n3], g[7][n3], e[7][n3], a0[n3], xs[n3], as[n3];
  for (int j = 0; j < 7; ++j)
    for (int q = 0; q < n3; ++q) b[j][q] = g[j][q] = e[j][q] = 0;
  bool predicted = false;  // e holds the prediction of the current b
  // Coordinate q of this thread in the carried values (the deviation after the 3N bodies).
  constexpr int carried_coordinates = Variational ? 6 * N : 3 * N;
  const auto carried_index = [&](int q, int k) {
    const int r = q % n3r;
    return k * carried_coordinates + (q >= n3r ? 3 * N : 0) + 3 * layout.body(r / 3) + r % 3;
  };
  // The key covers the bodies and, in MEGNO runs, the deviation of each coordinate (folded into
  // the coordinate's own word).
  const auto start_state = [&](int b, int c) {
    const double own = c < 3 ? ens.x(sys, b, c) : c < 6 ? ens.v(sys, b, c - 3) : ens.m(sys, b);
    if constexpr (Variational)
      if (c < 6) return fold_deviation(own, megno.delta(sys, 3 * b + c % 3 + (c < 3 ? 0 : 3 * N)));
    return own;
  };
  if (carried.valid(sys, clock.t, clock.lo, N, start_state)) {
    for (int q = 0; q < n3; ++q) {
      if (layout.body((q % n3r) / 3) >= N) continue;
      for (int j = 0; j < 7; ++j) {
        b[j][q] = carried.at(sys, carried_index(q, j));
        e[j][q] = carried.at(sys, carried_index(q, 7 + j));
      }
      x[q] = CompensatedSum<double>{carried.at(sys, carried_index(q, 14)),
                                    carried.at(sys, carried_index(q, 15))};
      v[q] = CompensatedSum<double>{carried.at(sys, carried_index(q, 16)),
                                    carried.at(sys, carried_index(q, 17))};
      for (int j = 0; j < 7; ++j) {
        double gj = 0;
        for (int k = j; k < 7; ++k) gj += K.d[j][k] * b[k][q];
        g[j][q] = gj;
      }
    }
    predicted = carried.at(sys, carried_coordinates * ias15_carried_per_coordinate) != 0;
  }
  for (int q = 0; q < n3; ++q) xs[q] = x[q].value();
  double vs[n3];
  for (int q = 0; q < n3; ++q) vs[q] = v[q].value();
  const bool merging = p.monitor.config.merging();
  int removed = merging ? merge.removed(sys) : 0;
  const double* radius = merging ? &merge.radii(sys, 0) : p.monitor.config.radius;
  // After bodies merged: the state restarts from xs, vs (REBOUND resets IAS15 too), no prediction.
  const auto restart = [&]() {
    for (int q = 0; q < n3; ++q) {
      x[q] = CompensatedSum<double>{xs[q], 0.0};
      v[q] = CompensatedSum<double>{vs[q], 0.0};
      for (int j = 0; j < 7; ++j) b[j][q] = g[j][q] = e[j][q] = 0;
    }
    predicted = false;
  };
  // Conditions that hold before the first step (bodies that already overlap) stop the system too
  // (or merge its bodies).
  if constexpr (!Variational)  // check_options refuses merging in MEGNO runs
    if (merging && layout.merge(merge, sys, m, xs, vs, removed)) restart();
  accelerations(xs, a0, removed);
  int stop = p.monitor.on ? monitor_reason(xs, vs, radius, removed) : int(reason_none);
  if (stop != reason_none) {
    if (layout.leader()) {
      ens.state(sys) = state_inactive;
      ens.reason(sys) = stop;
    }
    return;
  }
  int reason = reason_none;
  for (int step = 0;
       step < p.steps && clock.running() && it < p.max_iterations && stop == reason_none; ++step) {
    // A step this small no longer moves the time (a collision, or a singular orbit).
    if (!(dt > 1e-15 * (math::fabs(clock.t) + 1.0))) {
      reason = reason_step_underflow;
      break;
    }
    const double h = landing_step(dt, clock.left());
    if (!(h > 0) || !math::isfinite(h)) {
      reason = reason_bad_step;
      break;
    }
    ++it;
    // Round-off lost from the b in this step's corrections (Kahan; the corrections of later
    // iterations are far smaller than the b, so their low bits would be dropped one by one).
    double b_lo[7][n3];
    for (int j = 0; j < 7; ++j)
      for (int q = 0; q < n3; ++q) b_lo[j][q] = 0;
    // Predictor-corrector iterations.
    double pc_last = 2, max_a = 0;
    // MEGNO: sum_n w_n (t_n - t_initial) rate(t_n) over the nodes (of the last iteration).
    [[maybe_unused]] double megno_step = 0, megno_start = 0;
    if constexpr (Variational) {
      double dx[n3r], dv[n3r];
      for (int k = 0; k < n3r; ++k) {
        dx[k] = x[n3r + k].value();
        dv[k] = v[n3r + k].value();
      }
      megno_start = K.w[0] * (clock.t - ysum[megno_initial_t]) * megno_rate(dx, dv, &a0[n3r], n3r);
    }
    for (int iter = 0; iter < 12; ++iter) {
      double max_db6 = 0;
      megno_step = megno_start;
      const double* c = K.predict;
      for (int n = 1; n < 8; ++n) {
        const double s = K.h[n];
        for (int q = 0; q < n3; ++q) {
          const double poly =
              b[0][q] * c[0] +
              s * (b[1][q] * c[1] +
                   s * (b[2][q] * c[2] +
                        s * (b[3][q] * c[3] +
                             s * (b[4][q] * c[4] + s * (b[5][q] * c[5] + s * b[6][q] * c[6])))));
          xs[q] = x[q].hi + (x[q].lo + s * h * (v[q].value() + s * h * (0.5 * a0[q] + s * poly)));
        }
        accelerations(xs, as, removed);
        if constexpr (Variational) {
          // The deviation's velocities at the node, from the same polynomial.
          double dv[n3r];
          for (int k = 0; k < n3r; ++k) {
            const int q = n3r + k;
            const double poly =
                b[0][q] / 2 +
                s * (b[1][q] / 3 +
                     s * (b[2][q] / 4 +
                          s * (b[3][q] / 5 +
                               s * (b[4][q] / 6 + s * (b[5][q] / 7 + s * b[6][q] / 8)))));
            dv[k] = v[q].hi + (v[q].lo + s * h * (a0[q] + s * poly));
          }
          megno_step += K.w[n] * (clock.t + s * h - ysum[megno_initial_t]) *
                        megno_rate(&xs[n3r], dv, &as[n3r], n3r);
        }
        for (int q = 0; q < n3; ++q) {
          double gn = (as[q] - a0[q]) / K.dh[n][0];
          for (int j = 1; j < n; ++j) gn = (gn - g[j - 1][q]) / K.dh[n][j];
          const double dg = gn - g[n - 1][q];
          g[n - 1][q] = gn;
          for (int j = 0; j < n; ++j) kahan_add(b[j][q], b_lo[j][q], K.c[j][n - 1] * dg);
          if (n == 7) max_db6 = math::fmax(max_db6, math::fabs(dg));
        }
      }
      max_a = 0;
      for (int q = 0; q < n3; ++q) max_a = math::fmax(max_a, math::fabs(as[q]));
      max_a = layout.max(max_a);
      max_db6 = layout.max(max_db6);
      const double pc = max_a > 0 ? max_db6 / max_a : 0.0;
      if (!(pc >= 1e-16) || (iter > 1 && pc >= pc_last)) break;  // converged (or NaN: caught below)
      pc_last = pc;
    }
    const double timescale =
        math::sqrt(layout.min_timescale2(prs_timescale2<Layout::bodies>(a0, b)));
    if (!(timescale >= 0)) {  // NaN in the polynomial
      reason = reason_nonfinite;
      break;
    }
    // Proposed step (no limit when no body is accelerated).
    const double proposal = timescale > 0 ? timescale * h * p.step_factor : 4 * h;
    if (proposal < 0.25 * h) {
      // Rejected: the same polynomial on the shorter step is a(t0 + s dt') with s scaled by q.
      const double qr = proposal / h;
      double qk = 1;
      for (int j = 0; j < 7; ++j) {
        qk *= qr;
        for (int q = 0; q < n3; ++q) b[j][q] *= qk;
      }
      predicted = false;
      for (int j = 0; j < 7; ++j)
        for (int q = 0; q < n3; ++q) {
          double gj = 0;
          for (int k = j; k < 7; ++k) gj += K.d[j][k] * b[k][q];
          g[j][q] = gj;
        }
      dt = proposal;
      continue;
    }
    // Accepted: advance with compensated sums, one term at a time from the smallest, so only the
    // rounding of each term (not of their sum) enters the state (h * h not formed once: its
    // rounding would be the same bias every step at a fixed step).
    for (int q = 0; q < n3; ++q) {
      for (int j = 6; j >= 0; --j) x[q].add(b[j][q] / ((j + 2) * (j + 3)) * h * h);
      x[q].add(0.5 * a0[q] * h * h);
      x[q].add(v[q].hi * h);
      x[q].add(v[q].lo * h);
      for (int j = 6; j >= 0; --j) v[q].add(b[j][q] / (j + 2) * h);
      v[q].add(a0[q] * h);
    }
    clock.advance(h);
    if constexpr (Variational)
      megno_update(ysum, clock.t - ysum[megno_initial_t], h * megno_step, h);
    // A landing step shorter than dt keeps the carried step (its growth cap would shrink it).
    const double next = h < dt ? math::fmin(dt, proposal) : math::fmin(proposal, 4 * h);
    // Predict the next step's b: a(1 + q s) re-expanded in s, plus the last prediction's error.
    const double qr = next / h;
    for (int q = 0; q < n3; ++q) {
      double qk = 1, pred[7];
      for (int j = 0; j < 7; ++j) {
        qk *= qr;
        double sum = 0;
        for (int k = j; k < 7; ++k) sum += K.shift[j][k] * b[k][q];
        pred[j] = qr > 20 ? 0.0 : qk * sum;  // no prediction across a very large step increase
      }
      for (int j = 0; j < 7; ++j) {
        b[j][q] = pred[j] + (predicted ? b[j][q] - e[j][q] : 0.0);
        e[j][q] = pred[j];
      }
      for (int j = 0; j < 7; ++j) {
        double gj = 0;
        for (int k = j; k < 7; ++k) gj += K.d[j][k] * b[k][q];
        g[j][q] = gj;
      }
    }
    predicted = qr <= 20;
    dt = next;
    for (int q = 0; q < n3; ++q) xs[q] = x[q].value();
    accelerations(xs, a0, removed);
    bool finite = true;
    for (int q = 0; q < n3; ++q)
      finite = finite && math::isfinite(xs[q]) && math::isfinite(v[q].hi);
    if (!layout.all(finite)) {
      reason = reason_nonfinite;
      break;
    }
    if (p.monitor.on) {
      for (int q = 0; q < n3; ++q) vs[q] = v[q].value();
      if constexpr (!Variational)
        if (merging && layout.merge(merge, sys, m, xs, vs, removed)) {
          restart();
          accelerations(xs, a0, removed);
        }
      stop = monitor_reason(xs, vs, radius, removed);
    }
  }
  for (int i = 0; i < Layout::bodies; ++i) {
    const int body = layout.body(i);
    if (body >= N) continue;
    for (int c = 0; c < 3; ++c) {
      ens.x(sys, body, c) = x[3 * i + c].value();
      ens.v(sys, body, c) = v[3 * i + c].value();
    }
    if (merging) ens.m(sys, body) = m[body];
  }
  if constexpr (Variational) {
    for (int q = 0; q < n3r; ++q) {
      megno.delta(sys, q) = x[n3r + q].value();
      megno.delta(sys, n3r + q) = v[n3r + q].value();
    }
    for (int k = 0; k < int(megno_sums); ++k) megno.sums(sys, k) = ysum[k];
  }
  if (carried.on()) {
    for (int q = 0; q < n3; ++q) {
      if (layout.body((q % n3r) / 3) >= N) continue;
      for (int j = 0; j < 7; ++j) {
        carried.at(sys, carried_index(q, j)) = b[j][q];
        carried.at(sys, carried_index(q, 7 + j)) = e[j][q];
      }
      carried.at(sys, carried_index(q, 14)) = x[q].hi;
      carried.at(sys, carried_index(q, 15)) = x[q].lo;
      carried.at(sys, carried_index(q, 16)) = v[q].hi;
      carried.at(sys, carried_index(q, 17)) = v[q].lo;
    }
    double own_x[n3r], own_v[n3r], all_x[3 * N], all_v[3 * N];
    for (int q = 0; q < n3r; ++q) {
      own_x[q] = x[q].value();
      own_v[q] = v[q].value();
    }
    layout.gather(own_x, all_x);
    layout.gather(own_v, all_v);
    const auto end_state = [&](int b, int c) {
      const double own = c < 3 ? all_x[3 * b + c] : c < 6 ? all_v[3 * b + c - 3] : m[b];
      if constexpr (Variational)
        if (c < 6)
          return fold_deviation(
              own, c < 3 ? x[n3r + 3 * b + c].value() : v[n3r + 3 * b + c - 3].value());
      return own;
    };
    if (layout.leader()) {
      carried.at(sys, carried_coordinates * ias15_carried_per_coordinate) = predicted ? 1.0 : 0.0;
      carried.seal(sys, clock.t, clock.lo, N, end_state);
    }
  }
  if (!layout.leader()) return;
  if (merging) merge.removed(sys) = removed;
  ens.time(sys) = clock.t;
  ens.time_lo(sys) = clock.lo;
  ens.step(sys) = dt;
  iterations(sys) = it;
  if (reason != reason_none) {
    ens.state(sys) = state_disabled;
    ens.reason(sys) = reason;
  } else if (stop != reason_none) {
    ens.state(sys) = state_inactive;
    ens.reason(sys) = stop;
  }
}

template <int N, class MemorySpace, class Rsqrt = PortableRsqrt>
struct IAS15SystemKernel {
  Ensemble<MemorySpace> ens;
  Kokkos::View<long long*, MemorySpace> iterations;
  IAS15Params params;
  MergeState<MemorySpace> merge;  // used when params.monitor.config.merging()
  CarriedState<MemorySpace> carried;
  KOKKOS_INLINE_FUNCTION void operator()(const int sys) const {
    ias15_system<N>(SystemPerThread<N>(), ens, iterations, sys, params, Rsqrt(), merge, carried);
  }
};

// MEGNO runs: the bodies with their variational equations (no merging).
template <int N, class MemorySpace, class Rsqrt = PortableRsqrt>
struct IAS15MegnoKernel {
  Ensemble<MemorySpace> ens;
  Kokkos::View<long long*, MemorySpace> iterations;
  IAS15Params params;
  MegnoState<MemorySpace> megno;
  CarriedState<MemorySpace> carried;
  KOKKOS_INLINE_FUNCTION void operator()(const int sys) const {
    ias15_system<N, true>(SystemPerThread<N>(), ens, iterations, sys, params, Rsqrt(),
                          MergeState<MemorySpace>(), carried, megno);
  }
};

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
