// Stop conditions evaluated after every step (Swarm-NG's monitors), on the scratch state of one
// system: close encounters (in mutual Hill radii), ejections, crossing orbits.
#pragma once

#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/impl/team_context.hpp>

namespace kosmos {
namespace nbody {

// What the monitor checks; 0 / false switches a condition off.
struct MonitorConfig {
  double close_encounter_hill = 0;  // stop when two planets come within this many mutual Hill radii
  double ejection_distance = 0;     // stop when a planet is farther than this from body 0 and unbound
  bool crossing_orbits = false;     // stop when two osculating heliocentric orbits cross (or e >= 1)
  double log_interval = 0;          // log every system each time t passes a multiple of this
  bool log_events = true;           // log the state of a system when a stop condition fires
  int log_slots_per_launch = 16;    // per-system log buffer per kernel launch (>= 2)
};

namespace Impl {

// Heliocentric osculating a and e of body b (mu = m0 + m_b); a < 0 for unbound orbits.
template <class Ctx>
KOKKOS_INLINE_FUNCTION void helio_elements(const Ctx& ctx, int s, int b, double& a, double& e, double& r) {
  const Layout L = ctx.L;
  double d[3], w[3];
  for (int c = 0; c < 3; ++c) {
    d[c] = ctx.at(s, L.x + 3 * b + c) - ctx.at(s, L.x + c);
    w[c] = ctx.at(s, L.v + 3 * b + c) - ctx.at(s, L.v + c);
  }
  const double mu = ctx.at(s, L.m) + ctx.at(s, L.m + b);
  r = math::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  const double v2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
  const double energy = 0.5 * v2 - mu / r;
  a = -mu / (2 * energy);
  const double h[3] = {d[1] * w[2] - d[2] * w[1], d[2] * w[0] - d[0] * w[2], d[0] * w[1] - d[1] * w[0]};
  const double h2 = h[0] * h[0] + h[1] * h[1] + h[2] * h[2];
  const double e2 = 1 + 2 * energy * h2 / (mu * mu);
  e = math::sqrt(e2 > 0 ? e2 : 0.0);
}

// StopReason of the first condition that holds for system s, or reason_none.
template <class Ctx>
KOKKOS_INLINE_FUNCTION int check_stop(const Ctx& ctx, int s, const MonitorConfig& cfg) {
  const Layout L = ctx.L;
  const int n = L.n;
  if (cfg.ejection_distance > 0) {
    for (int b = 1; b < n; ++b) {
      double a, e, r;
      helio_elements(ctx, s, b, a, e, r);
      if (r > cfg.ejection_distance && !(a > 0)) return reason_ejection;
    }
  }
  if (cfg.close_encounter_hill > 0) {
    const double m0 = ctx.at(s, L.m);
    for (int i = 1; i < n; ++i)
      for (int j = i + 1; j < n; ++j) {
        double ri2 = 0, rj2 = 0, d2 = 0;
        for (int c = 0; c < 3; ++c) {
          const double xi = ctx.at(s, L.x + 3 * i + c) - ctx.at(s, L.x + c);
          const double xj = ctx.at(s, L.x + 3 * j + c) - ctx.at(s, L.x + c);
          ri2 += xi * xi;
          rj2 += xj * xj;
          d2 += (xj - xi) * (xj - xi);
        }
        const double rhill = math::cbrt((ctx.at(s, L.m + i) + ctx.at(s, L.m + j)) / (3 * m0)) * 0.5 *
                             (math::sqrt(ri2) + math::sqrt(rj2));
        const double lim = cfg.close_encounter_hill * rhill;
        if (d2 < lim * lim) return reason_close_encounter;
      }
  }
  if (cfg.crossing_orbits) {
    for (int i = 1; i < n; ++i) {
      double ai, ei, ri;
      helio_elements(ctx, s, i, ai, ei, ri);
      if (!(ai > 0) || !(ei < 1)) return reason_crossing_orbits;
      for (int j = i + 1; j < n; ++j) {
        double aj, ej, rj;
        helio_elements(ctx, s, j, aj, ej, rj);
        if (!(aj > 0) || !(ej < 1)) return reason_crossing_orbits;
        const bool inner_i = ai <= aj;
        const double q_out = inner_i ? aj * (1 - ej) : ai * (1 - ei);
        const double Q_in = inner_i ? ai * (1 + ei) : aj * (1 + ej);
        if (Q_in > q_out) return reason_crossing_orbits;
      }
    }
  }
  return reason_none;
}

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
