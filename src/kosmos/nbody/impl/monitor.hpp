// Stop conditions evaluated after every step (Swarm-NG's monitors), on the scratch state of one
// system: collisions (body radii), close encounters (in mutual Hill radii), ejections, crossing
// orbits; and the energy-sanity check evaluated after every kernel launch (EnergyGuard), which
// any driver can run.
#pragma once

#include <kosmos/nbody/analysis.hpp>
#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/impl/team_context.hpp>

#include <vector>

namespace kosmos {
namespace nbody {

// What the monitor checks; 0 / false switches a condition off.
struct MonitorConfig {
  // Disable a system (reason_energy_error) once |E - E0| > energy_error_limit |E0|, E0 its
  // energy at the start (IntegrateOptions::reference_energy); checked after every kernel launch.
  double energy_error_limit = 1e-2;
  // Collision radius of body b (the same in every system): bodies i and j collide when
  // |x_i - x_j| < radius[i] + radius[j]; the system stops (reason_collision). All 0: off.
  double radius[max_bodies] = {};
  double close_encounter_hill = 0;  // stop when two planets come within this many mutual Hill radii
  double ejection_distance = 0;     // stop when a planet is farther than this from body 0 and unbound
  bool crossing_orbits = false;     // stop when two osculating heliocentric orbits cross (or e >= 1)
  double log_interval = 0;          // log every system each time t passes a multiple of this
  bool log_events = true;           // log the state of a system when a stop condition fires
  int log_slots_per_launch = 16;    // per-system log buffer per kernel launch (>= 2)

  bool collisions() const {
    for (double r : radius)
      if (r > 0) return true;
    return false;
  }
  // Whether any per-step stop condition is on (the register Hermite has none).
  bool any_stop_condition() const {
    return collisions() || close_encounter_hill > 0 || ejection_distance > 0 || crossing_orbits;
  }
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
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      const double contact = cfg.radius[i] + cfg.radius[j];
      if (!(contact > 0)) continue;
      double d2 = 0;
      for (int c = 0; c < 3; ++c) {
        const double d = ctx.at(s, L.x + 3 * j + c) - ctx.at(s, L.x + 3 * i + c);
        d2 += d * d;
      }
      if (d2 < contact * contact) return reason_collision;
    }
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

// The energy-sanity check: after each launch, every active system whose energy drifted by more
// than limit |E0| is disabled with reason_energy_error (near-coincident bodies, collisions that
// a fixed step cannot resolve: finite but meaningless results). Systems with E0 = 0 or a
// non-finite E0 are not checked.
template <class ExecSpace, class Force>
class EnergyGuard {
 public:
  using memory_space = typename ExecSpace::memory_space;
  using EnergyView = Kokkos::View<double*, memory_space>;

  EnergyGuard(const ExecSpace& space, const Ensemble<memory_space>& ens, double limit,
              const std::vector<double>& reference, const Force& force)
      : space_(space), ens_(ens), limit_(limit), force_(force) {
    kosmos::Impl::require(limit >= 0, "kosmos::nbody::integrate", "energy_error_limit = ", limit, " < 0");
    if (!active()) return;
    const int n_sys = ens.n_systems();
    reference_ = EnergyView("kosmos::nbody::reference_energy", n_sys);
    current_ = EnergyView("kosmos::nbody::energy", n_sys);
    if (reference.empty()) {
      energy(space, ens, reference_, force);
    } else {
      kosmos::Impl::require(reference.size() == std::size_t(n_sys), "kosmos::nbody::integrate",
                            "reference_energy has ", reference.size(), " values for ", n_sys, " systems");
      const auto host = Kokkos::create_mirror_view(reference_);
      for (int s = 0; s < n_sys; ++s) host(s) = reference[std::size_t(s)];
      Kokkos::deep_copy(space, reference_, host);
    }
  }

  bool active() const { return limit_ > 0; }

  void check() const {
    if (!active()) return;
    energy(space_, ens_, current_, force_);
    const auto ens = ens_;
    const auto e0 = reference_;
    const auto e1 = current_;
    const double limit = limit_;
    Kokkos::parallel_for(
        "kosmos::nbody::energy_check", Kokkos::RangePolicy<ExecSpace>(space_, 0, ens.n_systems()),
        KOKKOS_LAMBDA(const int s) {
          if (ens.state(s) != state_active || !(e0(s) != 0) || !math::isfinite(e0(s))) return;
          if (!(math::fabs(e1(s) - e0(s)) <= limit * math::fabs(e0(s)))) {
            ens.state(s) = state_disabled;
            ens.reason(s) = reason_energy_error;
          }
        });
  }

 private:
  ExecSpace space_;
  Ensemble<memory_space> ens_;
  double limit_;
  Force force_;
  EnergyView reference_, current_;
};

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
