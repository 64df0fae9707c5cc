// Drift of a body along its two-body (Keplerian) orbit for a time dt, in universal variables:
// valid for elliptic, parabolic and hyperbolic orbits alike, with Stumpff functions evaluated by
// argument quartering (no cancellation for small arguments) and a Laguerre-Conway iteration that
// converges from any starting guess. Host and device callable.
#pragma once

#include <kosmos/core/compat.hpp>

namespace kosmos {
namespace nbody {

// Stumpff functions c0..c3 of x (Danby's method: quarter x until |x| < 0.1, evaluate the series,
// then double back up with the identities).
KOKKOS_INLINE_FUNCTION void stumpff(double x, double& c0, double& c1, double& c2, double& c3) {
  int n = 0;
  while (math::fabs(x) >= 0.1 && n < 200) {
    x *= 0.25;
    ++n;
  }
  // Reciprocal constants: multiplications instead of divisions (the series is rounded anyway).
  c2 = (1 - x * (1 - x * (1 - x * (1 - x * (1 - x * (1 - x * (1.0 / 182)) * (1.0 / 132)) * (1.0 / 90)) *
                                    (1.0 / 56)) * (1.0 / 30)) * (1.0 / 12)) * 0.5;
  c3 = (1 - x * (1 - x * (1 - x * (1 - x * (1 - x * (1 - x * (1.0 / 210)) * (1.0 / 156)) * (1.0 / 110)) *
                                    (1.0 / 72)) * (1.0 / 42)) * (1.0 / 20)) * (1.0 / 6);
  c1 = 1 - x * c3;
  c0 = 1 - x * c2;
  for (int k = 0; k < n; ++k) {
    c3 = (c2 + c0 * c3) * 0.25;
    c2 = c1 * c1 * 0.5;
    c1 = c0 * c1;
    c0 = 2 * c0 * c0 - 1;
  }
}

// The universal anomaly s of a drift (r0 s + eta G2(s) + zeta G3(s) = dt, G_k = s^k c_k(beta s^2))
// and beta = 2 mu / r0 - v0^2: what the drift's derivative (whfast_variational.hpp) needs.
struct KeplerDriftSolution {
  double s = 0, beta = 0;
};

// Advances (r, v) about a centre of gravitational parameter mu by dt. Returns false (and leaves
// r, v unchanged) if the iteration does not converge or the input is degenerate. With `solution`,
// also its s and beta (and dt is not reduced modulo the period, so that s is the anomaly of dt
// itself, as the derivative with respect to the initial state needs).
KOKKOS_INLINE_FUNCTION bool kepler_drift(double mu, double dt, double r[3], double v[3],
                                         KeplerDriftSolution* solution = nullptr) {
  const double r0 = math::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
  const double v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
  const double eta = r[0] * v[0] + r[1] * v[1] + r[2] * v[2];
  if (!(r0 > 0) || !(mu > 0) || !math::isfinite(v2)) return dt == 0;
  if (dt == 0) return true;
  const double beta = 2 * mu / r0 - v2;  // mu / a
  const double zeta = mu - beta * r0;
  // For bound orbits, drift by dt modulo the period (keeps s small and the iteration easy).
  double t = dt;
  if (beta > 0 && solution == nullptr) {
    const double period = math::two_pi<double>() * mu / (beta * math::sqrt(beta));
    if (math::fabs(t) > period) t = math::fmod(t, period);
  }
  // Starting guess: the series s = t / r0 - eta t^2 / (2 r0^3) + ... to second order (first
  // order where the correction would dominate), bounded for speed.
  double s = t / r0;
  if (math::fabs(eta * t) < r0 * r0) s *= 1 - 0.5 * eta * t / (r0 * r0);
  if (beta > 0) {
    const double smax = math::two_pi<double>() / math::sqrt(beta);
    if (math::fabs(s) > smax) s = s > 0 ? smax : -smax;
  }
  double c0, c1, c2, c3, rs = r0;
  bool converged = false;
  for (int it = 0; it < 64; ++it) {
    stumpff(beta * s * s, c0, c1, c2, c3);
    const double g1 = s * c1, g2 = s * s * c2, g3 = s * s * s * c3;
    const double f = r0 * g1 + eta * g2 + mu * g3 - t;
    const double fp = r0 * c0 + eta * g1 + mu * g2;  // = r(s) > 0
    const double fpp = eta * c0 + zeta * g1;
    // Laguerre-Conway step of order 5.
    const double nl = 5.0;
    const double disc = math::fabs((nl - 1) * (nl - 1) * fp * fp - nl * (nl - 1) * f * fpp);
    const double denom = fp + (fp >= 0 ? 1.0 : -1.0) * math::sqrt(disc);
    double ds = denom != 0 ? nl * f / denom : f / fp;
    s -= ds;
    rs = fp;
    // Converged when the step or the residual reaches the rounding level of the equation's terms
    // (the iteration then only flips between neighbouring doubles).
    const double scale = math::fabs(r0 * g1) + math::fabs(eta * g2) + math::fabs(mu * g3) + math::fabs(t);
    if (math::fabs(ds) <= 4e-16 * math::fabs(s) || math::fabs(f) <= 4e-16 * scale ||
        (it >= 16 && math::fabs(ds) <= 1e-13 * math::fabs(s))) {
      converged = true;
      break;
    }
  }
  if (!converged || !math::isfinite(s)) return false;
  stumpff(beta * s * s, c0, c1, c2, c3);
  const double g1 = s * c1, g2 = s * s * c2, g3 = s * s * s * c3;
  rs = r0 * c0 + eta * g1 + mu * g2;
  if (!(rs > 0)) return false;
  if (solution != nullptr) *solution = KeplerDriftSolution{s, beta};
  // Lagrange f and g functions, applied as increments (f - 1, g, f', g' - 1: less rounding).
  const double fm1 = -mu * g2 / r0;
  const double gg = t - mu * g3;
  const double fd = -mu * g1 / (r0 * rs);
  const double gdm1 = -mu * g2 / rs;
  for (int c = 0; c < 3; ++c) {
    const double rc = r[c], vc = v[c];
    r[c] = rc + (fm1 * rc + gg * vc);
    v[c] = vc + (fd * rc + gdm1 * vc);
  }
  return true;
}

}  // namespace nbody
}  // namespace kosmos
