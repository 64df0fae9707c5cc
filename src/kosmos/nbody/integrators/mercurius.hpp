// MERCURIUS-class hybrid integrator (Chambers 1999; Rein, Hernandez, Tamayo et al. 2019) in the
// system-per-thread work model: a Wisdom-Holman map in democratic heliocentric coordinates whose
// planet-planet forces are split by a smooth changeover function L(r / r_crit) into a far part,
// kicked as in WHFast, and a close part that is integrated with the Kepler motion only while
// bodies come close. So the orbits cost a Wisdom-Holman step far from encounters and are
// integrated to the sub-integrator's tolerance through them (planet-planet scattering, close
// pericentre passages).
//
// Step h: far kick h/2, jump h/2, centre-of-mass drift h, Kepler drift h about body 0, jump h/2,
// far kick h/2 (REBOUND's MERCURIUS in safe mode). After the Kepler drift a cubic Hermite
// interpolation of every pair's squared distance over the step (star-planet pairs included)
// predicts its closest approach; when any comes within 1.1 r_crit, the whole drift of that system
// is redone from the start of the step by a Bulirsch-Stoer integration (Stoermer's rule,
// polynomial extrapolation in h^2, adaptive sub-steps) of the Kepler motion plus the close forces
// (1 - L) G m_j / r^2. The sub-integration takes every planet, not only the encountering ones: a
// pair whose (1 - L) vanishes adds nothing, and one that came close unpredicted is still right.
//
// Changeover radius of a planet (REBOUND's rule, from its heliocentric orbit at the start of a
// run): max(0.4 v_circ dt, 0.4 |v| dt, hill_factor a (m / 3 m_0)^(1/3), 2 radius); of a pair the
// larger of the two; of the star 2 radius. L is Chambers' polynomial 10y^3 - 15y^4 + 6y^5 in
// y = (r - 0.1 r_crit) / (0.9 r_crit) (0 below, 1 above). Collisions (MonitorConfig::radius) are
// also looked for within every sub-step of an encounter (the closest approach of each pair on the
// sub-step's cubic Hermite interpolation): a contact there stops the system at the end of that
// step.
#pragma once

#include <kosmos/nbody/integrators/whfast.hpp>

namespace kosmos {
namespace nbody {
namespace Impl {

struct MercuriusParams {
  double destination = 0, dt = 1e-2;
  double pause = 0;          // systems stop after the first step that reaches it (no landing step)
  double hill_factor = 3;    // changeover radius in Hill radii (REBOUND's r_crit_hill)
  double tolerance = 1e-12;  // Bulirsch-Stoer: relative error of a sub-step of an encounter
  int steps = 1;
  long long max_iterations = 0;
  SystemMonitor monitor;
};

// Values carried between launches (CarriedState): the heliocentric state Q, V and the changeover
// radii, so that a launch continues exactly where the last one stopped with the radii of the start.
constexpr int mercurius_carried_width(int n) {
  return 7 * n;
}

// Chambers' changeover polynomial: 0 inside 0.1 r_crit, 1 outside r_crit, C2 in between.
KOKKOS_INLINE_FUNCTION double changeover(double r, double r_crit) {
  const double y = (r - 0.1 * r_crit) / (0.9 * r_crit);
  if (!(y > 0)) return 0;
  if (y >= 1) return 1;
  return y * y * y * (10 + y * (-15 + 6 * y));
}

// The closest squared distance over a step of a pair from its relative positions d and
// velocities w at the step's start (0) and end (1): the minimum of the cubic Hermite
// interpolation of |d|^2, whose slopes are 2 h d.w.
KOKKOS_INLINE_FUNCTION double closest_squared_distance(const double* d0, const double* w0,
                                                       const double* d1, const double* w1,
                                                       double h) {
  const double f0 = d0[0] * d0[0] + d0[1] * d0[1] + d0[2] * d0[2];
  const double f1 = d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2];
  const double s0 = 2 * h * (d0[0] * w0[0] + d0[1] * w0[1] + d0[2] * w0[2]);
  const double s1 = 2 * h * (d1[0] * w1[0] + d1[1] * w1[1] + d1[2] * w1[2]);
  const double c2 = 3 * (f1 - f0) - 2 * s0 - s1, c3 = 2 * (f0 - f1) + s0 + s1;
  double least = math::fmin(f0, f1);
  // f'(s) = 3 c3 s^2 + 2 c2 s + s0 = 0
  const double qa = 3 * c3, qb = 2 * c2, disc = qb * qb - 4 * qa * s0;
  if (disc >= 0 && qa != 0) {
    const double root = math::sqrt(disc);
    const double roots[2] = {(-qb + root) / (2 * qa), (-qb - root) / (2 * qa)};
    for (double s : roots)
      if (s > 0 && s < 1)
        least = math::fmin(least, math::fmax(0.0, f0 + s * (s0 + s * (c2 + s * c3))));
  } else if (qa == 0 && qb != 0) {
    const double s = -s0 / qb;
    if (s > 0 && s < 1) least = math::fmin(least, math::fmax(0.0, f0 + s * (s0 + s * c2)));
  }
  return least;
}

// A system in democratic heliocentric coordinates (WHSystem's) with the changeover radii.
template <int N, class Rsqrt>
struct HybridSystem : WHSystem<N, Rsqrt> {
  using Base = WHSystem<N, Rsqrt>;
  using Base::m;
  using Base::Q;
  using Base::V;
  static constexpr int P = 3 * (N - 1);  // planet coordinates
  static constexpr int bs_rows = 8;      // Stoermer sub-step counts 2, 4, ..., 16
  double r_crit[N];
  double tolerance = 1e-12;
  bool contact = false;            // a collision radius touched within an encounter
  const double* radius = nullptr;  // collision radii (MonitorConfig::radius: zeros when off)

  KOKKOS_INLINE_FUNCTION double pair_radius(int i, int j) const {
    return math::fmax(r_crit[i], r_crit[j]);
  }
  // REBOUND's rule for each planet, from its heliocentric orbit now (V: barycentric velocities;
  // the star's is -sum m_i V_i / m_0).
  KOKKOS_INLINE_FUNCTION void set_changeover_radii(double dt, double hill_factor) {
    double p[3] = {0, 0, 0};
    for (int i = 1; i < N; ++i)
      for (int c = 0; c < 3; ++c) p[c] += m[i] * V[3 * i + c];
    r_crit[0] = 2 * radius[0];
    for (int i = 1; i < N; ++i) {
      double r2 = 0, v2 = 0;
      for (int c = 0; c < 3; ++c) {
        const double u = V[3 * i + c] + p[c] / m[0];
        r2 += Q[3 * i + c] * Q[3 * i + c];
        v2 += u * u;
      }
      const double r = math::sqrt(r2), mu = m[0] + m[i];
      const double a = mu * r / (2 * mu - r * v2);
      double rc = 0.4 * math::sqrt(mu / math::fabs(a)) * dt;
      rc = math::fmax(rc, 0.4 * math::sqrt(v2) * dt);
      rc = math::fmax(rc, hill_factor * a * math::cbrt(m[i] / (3 * m[0])));
      r_crit[i] = math::fmax(rc, 2 * radius[i]);
    }
  }
  // The planets' far-force kick: V_i += h sum_j L(r_ij) m_j (Q_j - Q_i) / r_ij^3.
  KOKKOS_INLINE_FUNCTION void far_kick(double h) {
    for (int i = 1; i < N; ++i)
      for (int j = i + 1; j < N; ++j) {
        if (m[i] == 0 && m[j] == 0) continue;
        const double d[3] = {Q[3 * j] - Q[3 * i], Q[3 * j + 1] - Q[3 * i + 1],
                             Q[3 * j + 2] - Q[3 * i + 2]};
        const double rinv = this->rsqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        const double f = h * changeover(1 / rinv, pair_radius(i, j)) * rinv * rinv * rinv;
        for (int c = 0; c < 3; ++c) {
          V[3 * i + c] += f * m[j] * d[c];
          V[3 * j + c] -= f * m[i] * d[c];
        }
      }
  }
  // Accelerations of the encounter drift (heliocentric planets x, star at the origin): the Kepler
  // force and the close part (1 - L) of the planet-planet forces.
  KOKKOS_INLINE_FUNCTION void close_accelerations(const double (&x)[P], double (&a)[P]) const {
    for (int i = 0; i < N - 1; ++i) {
      const double rinv = this->rsqrt(x[3 * i] * x[3 * i] + x[3 * i + 1] * x[3 * i + 1] +
                                      x[3 * i + 2] * x[3 * i + 2]);
      const double f = -m[0] * rinv * rinv * rinv;
      for (int c = 0; c < 3; ++c) a[3 * i + c] = f * x[3 * i + c];
    }
    for (int i = 0; i < N - 1; ++i)
      for (int j = i + 1; j < N - 1; ++j) {
        if (m[i + 1] == 0 && m[j + 1] == 0) continue;
        const double d[3] = {x[3 * j] - x[3 * i], x[3 * j + 1] - x[3 * i + 1],
                             x[3 * j + 2] - x[3 * i + 2]};
        const double rinv = this->rsqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        const double w = 1 - changeover(1 / rinv, pair_radius(i + 1, j + 1));
        if (w == 0) continue;
        const double f = w * rinv * rinv * rinv;
        for (int c = 0; c < 3; ++c) {
          a[3 * i + c] += f * m[j + 1] * d[c];
          a[3 * j + c] -= f * m[i + 1] * d[c];
        }
      }
  }
  // Whether any pair (the star and a planet, or two planets) comes within 1.1 r_crit during the
  // drift from (Q0, V0) to the current (Q, V) over h.
  KOKKOS_INLINE_FUNCTION bool encounter_predicted(const double (&Q0)[3 * N],
                                                  const double (&V0)[3 * N], double h) const {
    for (int i = 0; i < N; ++i)
      for (int j = i + 1; j < N; ++j) {
        double d0[3], w0[3], d1[3], w1[3];
        for (int c = 0; c < 3; ++c) {  // the star (i = 0) sits at the origin, at rest
          d0[c] = Q0[3 * j + c] - (i > 0 ? Q0[3 * i + c] : 0.0);
          w0[c] = V0[3 * j + c] - (i > 0 ? V0[3 * i + c] : 0.0);
          d1[c] = Q[3 * j + c] - (i > 0 ? Q[3 * i + c] : 0.0);
          w1[c] = V[3 * j + c] - (i > 0 ? V[3 * i + c] : 0.0);
        }
        const double limit = 1.1 * pair_radius(i, j);
        if (closest_squared_distance(d0, w0, d1, w1, h) < limit * limit) return true;
      }
    return false;
  }
  // Whether two bodies (or a planet and the star) come within their collision radii during a
  // sub-step H from heliocentric (x0, v0) to (x1, v1) (the closest approach of each pair as in
  // encounter_predicted).
  KOKKOS_INLINE_FUNCTION bool touching(const double (&x0)[P], const double (&v0)[P],
                                       const double (&x1)[P], const double (&v1)[P],
                                       double H) const {
    for (int i = 0; i < N; ++i)
      for (int j = i + 1; j < N; ++j) {
        const double reach = radius[i] + radius[j];
        if (!(reach > 0)) continue;
        const int pj = 3 * (j - 1), pi = 3 * (i - 1);
        double d0[3], w0[3], d1[3], w1[3];
        for (int c = 0; c < 3; ++c) {  // the star (i = 0) sits at the origin, at rest
          d0[c] = x0[pj + c] - (i > 0 ? x0[pi + c] : 0.0);
          w0[c] = v0[pj + c] - (i > 0 ? v0[pi + c] : 0.0);
          d1[c] = x1[pj + c] - (i > 0 ? x1[pi + c] : 0.0);
          w1[c] = v1[pj + c] - (i > 0 ? v1[pi + c] : 0.0);
        }
        if (closest_squared_distance(d0, w0, d1, w1, H) < reach * reach) return true;
      }
    return false;
  }
  // Stoermer's rule with n sub-steps over H from (x0, v0): the end state into out (x, then v).
  KOKKOS_INLINE_FUNCTION void stoermer(const double (&x0)[P], const double (&v0)[P], double H,
                                       int n, double (&out)[2 * P]) const {
    const double s = H / n;
    double x[P], d[P], a[P];
    close_accelerations(x0, a);
    for (int q = 0; q < P; ++q) {
      d[q] = s * (v0[q] + 0.5 * s * a[q]);
      x[q] = x0[q] + d[q];
    }
    for (int k = 1; k < n; ++k) {
      close_accelerations(x, a);
      for (int q = 0; q < P; ++q) {
        d[q] += s * s * a[q];
        x[q] += d[q];
      }
    }
    close_accelerations(x, a);
    for (int q = 0; q < P; ++q) {
      out[q] = x[q];
      out[P + q] = d[q] / s + 0.5 * s * a[q];
    }
  }
  // The drift h of the Kepler motion plus the close forces, by Bulirsch-Stoer sub-steps; false when
  // a sub-step shrinks to nothing (or the state is not finite).
  KOKKOS_FUNCTION __attribute__((noinline)) bool encounter_drift(double h) {
    double x0[P], v0[P], table[bs_rows][2 * P];
    for (int q = 0; q < P; ++q) {
      x0[q] = Q[3 + q];
      v0[q] = V[3 + q];
    }
    double done = 0, H = h;
    while (done < h) {
      const bool last = H >= h - done;
      if (last) H = h - done;
      if (!(H > 1e-14 * h)) return false;
      double xs = 0, vs = 0;  // the scales of the error: the largest |x|, |v| of a planet
      for (int i = 0; i < N - 1; ++i) {
        double r2 = 0, w2 = 0;
        for (int c = 0; c < 3; ++c) {
          r2 += x0[3 * i + c] * x0[3 * i + c];
          w2 += v0[3 * i + c] * v0[3 * i + c];
        }
        xs = math::fmax(xs, r2);
        vs = math::fmax(vs, w2);
      }
      xs = math::sqrt(xs);
      vs = math::sqrt(vs);
      double err = 0;
      int row = 0;
      bool converged = false;
      for (; row < bs_rows && !converged; ++row) {
        const int n = 2 * (row + 1);
        double estimate[2 * P];
        stoermer(x0, v0, H, n, estimate);
        // Neville's scheme in h^2, in place: table[j] becomes this row's j-th extrapolation.
        for (int q = 0; q < 2 * P; ++q) {
          double value = estimate[q];
          for (int j = 1; j <= row; ++j) {
            const double ratio = double(n) / double(n - 2 * j);
            const double next = value + (value - table[j - 1][q]) / (ratio * ratio - 1);
            table[j - 1][q] = value;
            value = next;
          }
          table[row][q] = value;
        }
        if (row < 2) continue;
        err = 0;
        for (int q = 0; q < 2 * P; ++q)
          err = math::fmax(err, math::fabs(table[row][q] - table[row - 1][q]) / (q < P ? xs : vs));
        if (!(err == err)) err = 1e300;  // NaN: a smaller sub-step
        converged = err <= tolerance;
      }
      const double order = 2 * row - 1;  // the row that decided (row was incremented past it)
      if (!converged) {
        H *= math::fmax(0.1, math::fmin(0.5, 0.9 * math::pow(tolerance / err, 1 / order)));
        continue;
      }
      double x1[P], v1[P];
      for (int q = 0; q < P; ++q) {
        x1[q] = table[row - 1][q];
        v1[q] = table[row - 1][P + q];
      }
      if (touching(x0, v0, x1, v1, H)) contact = true;
      for (int q = 0; q < P; ++q) {
        x0[q] = x1[q];
        v0[q] = v1[q];
      }
      done = last ? h : done + H;
      H *= err > 0 ? math::fmin(4.0, math::fmax(0.2, 0.9 * math::pow(tolerance / err, 1 / order)))
                   : 4.0;
    }
    for (int q = 0; q < P; ++q) {
      Q[3 + q] = x0[q];
      V[3 + q] = v0[q];
      if (!math::isfinite(x0[q]) || !math::isfinite(v0[q])) return false;
    }
    return true;
  }
  // One step h: far kick, jump, centre-of-mass and Kepler drifts (redone through an encounter),
  // jump, far kick.
  KOKKOS_INLINE_FUNCTION void step(double h) {
    far_kick(0.5 * h);
    this->jump(0.5 * h);
    this->com_drift(h);
    double Q0[3 * N], V0[3 * N];
    for (int k = 0; k < 3 * N; ++k) {
      Q0[k] = Q[k];
      V0[k] = V[k];
    }
    this->kepler(h);
    if (!this->ok || encounter_predicted(Q0, V0, h)) {
      for (int k = 3; k < 3 * N; ++k) {
        Q[k] = Q0[k];
        V[k] = V0[k];
      }
      this->ok = encounter_drift(h);
    }
    this->jump(0.5 * h);
    far_kick(0.5 * h);
  }
};

// Integrates system `sys` for at most p.steps steps (one launch). Landing rule: every step is dt
// except the last one before p.destination, which is what is left; steps stop without landing at
// p.pause. The stop conditions are checked on the state after every step.
template <int N, class Ens, class IterView, class Rsqrt, class Carried>
KOKKOS_INLINE_FUNCTION void mercurius_system(const Ens& ens, const IterView& iterations, int sys,
                                             const MercuriusParams& p, const Rsqrt& rsqrt,
                                             const Carried& carried) {
  if (ens.state(sys) != state_active) return;
  SystemClock clock{ens.time(sys), ens.time_lo(sys), p.destination, p.pause};
  long long it = iterations(sys);
  if (!clock.running() || it >= p.max_iterations) return;
  HybridSystem<N, Rsqrt> w;
  w.rsqrt = rsqrt;
  w.jacobi = false;
  w.whds = false;
  w.tolerance = p.tolerance;
  w.radius = p.monitor.config.radius;
  double x[3 * N], v[3 * N];
  if (!load_unless_stopped(ens, sys, p.monitor, w.m, x, v)) return;
  const auto state = [&](int b, int c) {
    return c < 3 ? x[3 * b + c] : c < 6 ? v[3 * b + c - 3] : w.m[b];
  };
  int stop = reason_none;
  w.load(x, v);
  if (carried.valid(sys, clock.t, clock.lo, N, state)) {
    for (int k = 0; k < 3 * N; ++k) {
      w.Q[k] = carried.at(sys, k);
      w.V[k] = carried.at(sys, 3 * N + k);
    }
    for (int b = 0; b < N; ++b) w.r_crit[b] = carried.at(sys, 6 * N + b);
  } else {
    w.set_changeover_radii(p.dt, p.hill_factor);
  }
  for (int step = 0;
       step < p.steps && clock.running() && it < p.max_iterations && w.ok && stop == reason_none;
       ++step) {
    const double h = landing_step(p.dt, clock.left());
    w.step(h);
    clock.advance(h);
    ++it;
    if (w.contact) stop = reason_collision;
    if (p.monitor.on && stop == reason_none) {
      w.store(x, v);
      stop = p.monitor.reason<N>(w.m, x, v);
    }
  }
  if (carried.on()) {
    for (int k = 0; k < 3 * N; ++k) {
      carried.at(sys, k) = w.Q[k];
      carried.at(sys, 3 * N + k) = w.V[k];
    }
    for (int b = 0; b < N; ++b) carried.at(sys, 6 * N + b) = w.r_crit[b];
  }
  w.store(x, v);
  bool finite = true;
  for (int k = 0; k < 3 * N; ++k) finite = finite && math::isfinite(x[k]) && math::isfinite(v[k]);
  // w.ok false: an encounter's sub-steps shrank to nothing
  store_whfast_result<N>(ens, iterations, sys, x, v, clock, it, w.ok, finite, stop,
                         reason_step_underflow);
  carried.seal(sys, clock.t, clock.lo, N, state);
}

template <int N, class MemorySpace, class Rsqrt = PortableRsqrt>
struct MercuriusSystemKernel {
  Ensemble<MemorySpace> ens;
  Kokkos::View<long long*, MemorySpace> iterations;
  MercuriusParams params;
  CarriedState<MemorySpace> carried;
  KOKKOS_INLINE_FUNCTION void operator()(const int sys) const {
    mercurius_system<N>(ens, iterations, sys, params, Rsqrt(), carried);
  }
};

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
