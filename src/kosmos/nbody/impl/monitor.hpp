// Stop conditions evaluated after every step (Swarm-NG's monitors), on the scratch state of one
// system: collisions (body radii), close encounters (in mutual Hill radii), ejections, crossing
// orbits; and the energy-sanity check evaluated after every kernel launch (EnergyGuard), which
// any driver can run.
#pragma once

#include <kosmos/core/compensated.hpp>
#include <kosmos/nbody/analysis.hpp>
#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/impl/team_context.hpp>

#include <string>
#include <vector>

namespace kosmos {
namespace nbody {

// What a collision does: stop the system (reason_collision), or merge the two bodies into one.
enum class CollisionResponse { stop, merge };

// "stop" or "merge"; invalid_input naming the value otherwise.
CollisionResponse collision_response_from_name(const std::string& name);
const char* collision_response_name(CollisionResponse response);

// What the monitor checks; 0 / false switches a condition off.
struct MonitorConfig {
  // Disable a system (reason_energy_error) once |E - E0| > energy_error_limit |E0|, E0 its
  // energy at the start (IntegrateOptions::reference_energy); checked after every kernel launch.
  double energy_error_limit = 1e-2;
  // Collision radius of body b (the same in every system): bodies i and j collide when
  // |x_i - x_j| < radius[i] + radius[j]. All 0: off.
  double radius[max_bodies] = {};
  // stop: the system stops (reason_collision). merge: the bodies merge (merge_collisions), the
  // system goes on.
  CollisionResponse on_collision = CollisionResponse::stop;
  double close_encounter_hill = 0;  // stop when two planets come within this many mutual Hill radii
  double ejection_distance = 0;     // stop when a planet is farther than this from body 0 and unbound
  bool crossing_orbits = false;     // stop when two osculating heliocentric orbits cross (or e >= 1)
  double log_interval = 0;          // log every system each time t passes a multiple of this
  bool log_events = true;           // log the state of a system when a stop condition fires
  int log_slots_per_launch = 16;    // per-system log buffer per kernel launch (>= 2)

  KOKKOS_INLINE_FUNCTION bool collisions() const {
    for (double r : radius)
      if (r > 0) return true;
    return false;
  }
  KOKKOS_INLINE_FUNCTION bool merging() const { return on_collision == CollisionResponse::merge && collisions(); }
  // Whether any per-step stop condition is on (the register Hermite has none).
  KOKKOS_INLINE_FUNCTION bool any_stop_condition() const {
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

// What merging (MonitorConfig::merging) changes per system, on the device: the energy offset, the
// removed bodies, the radii.
template <class MemorySpace>
struct MergeState {
  Kokkos::View<double*, MemorySpace> energy_offset;
  Kokkos::View<int*, MemorySpace> removed;
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> radii;  // (system, body)
};

// The first pair (i < j) of present bodies closer than radius[i] + radius[j]; false if none.
template <class Ctx>
KOKKOS_INLINE_FUNCTION bool find_contact(const Ctx& ctx, int s, const double* radius, int removed,
                                         int& i_out, int& j_out) {
  const Layout L = ctx.L;
  const int n = L.n;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      const double contact = radius[i] + radius[j];
      if (!(contact > 0) || is_removed(removed, i) || is_removed(removed, j)) continue;
      double d2 = 0;
      for (int c = 0; c < 3; ++c) {
        const double d = ctx.at(s, L.x + 3 * j + c) - ctx.at(s, L.x + 3 * i + c);
        d2 += d * d;
      }
      if (d2 < contact * contact) {
        i_out = i;
        j_out = j;
        return true;
      }
    }
  return false;
}

// Newtonian energy of system s (sum m v^2 / 2 - sum m_i m_j / r_ij) over its present bodies.
template <class Ctx>
KOKKOS_INLINE_FUNCTION double present_energy(const Ctx& ctx, int s, int removed) {
  const Layout L = ctx.L;
  CompensatedSum<double> e;
  for (int i = 0; i < L.n; ++i) {
    if (is_removed(removed, i)) continue;
    double v2 = 0;
    for (int c = 0; c < 3; ++c) v2 += ctx.at(s, L.v + 3 * i + c) * ctx.at(s, L.v + 3 * i + c);
    e.add(0.5 * ctx.at(s, L.m + i) * v2);
    for (int j = i + 1; j < L.n; ++j) {
      if (is_removed(removed, j)) continue;
      double d2 = 0;
      for (int c = 0; c < 3; ++c) {
        const double d = ctx.at(s, L.x + 3 * j + c) - ctx.at(s, L.x + 3 * i + c);
        d2 += d * d;
      }
      e.add(-ctx.at(s, L.m + i) * ctx.at(s, L.m + j) * math::rsqrt(d2));
    }
  }
  return e.value();
}

// Merges every touching pair of system s, as REBOUND's merge collision resolution: the survivor
// (the more massive body; the lower index on a tie) gets the total mass, the mass-weighted
// position and velocity (momentum conserved; the plain mean for two massless bodies) and the
// radius of the summed volume; the other body is removed (removed |= its bit). A merged body that
// now touches a third merges again. Returns the energy before minus after (REBOUND's
// energy_offset; 0 when nothing merged).
template <class Ctx>
KOKKOS_INLINE_FUNCTION double merge_collisions(const Ctx& ctx, int s, double* radius,
                                               int& removed) {
  const Layout L = ctx.L;
  int i, j;
  if (!find_contact(ctx, s, radius, removed, i, j)) return 0;
  const double before = present_energy(ctx, s, removed);
  do {
    const double mi = ctx.at(s, L.m + i), mj = ctx.at(s, L.m + j);
    const int keep = mi >= mj ? i : j, gone = keep == i ? j : i;
    const double mass = mi + mj;
    const double wi = mass > 0 ? mi / mass : 0.5, wj = mass > 0 ? mj / mass : 0.5;
    for (int c = 0; c < 3; ++c) {
      const double x = wi * ctx.at(s, L.x + 3 * i + c) + wj * ctx.at(s, L.x + 3 * j + c);
      const double v = wi * ctx.at(s, L.v + 3 * i + c) + wj * ctx.at(s, L.v + 3 * j + c);
      ctx.at(s, L.x + 3 * keep + c) = x;
      ctx.at(s, L.v + 3 * keep + c) = v;
      ctx.at(s, L.v + 3 * gone + c) = 0;
    }
    ctx.at(s, L.m + keep) = mass;
    ctx.at(s, L.m + gone) = 0;
    radius[keep] =
        math::cbrt(radius[i] * radius[i] * radius[i] + radius[j] * radius[j] * radius[j]);
    radius[gone] = 0;
    removed = with_removed(removed, gone);
  } while (find_contact(ctx, s, radius, removed, i, j));
  return before - present_energy(ctx, s, removed);
}

// StopReason of the first condition that holds for system s, or reason_none. Bodies in `removed`
// are left out; radius: the collision radius of each body of this system.
template <class Ctx>
KOKKOS_INLINE_FUNCTION int check_stop(const Ctx& ctx, int s, const MonitorConfig& cfg,
                                      const double* radius, int removed = 0) {
  const Layout L = ctx.L;
  const int n = L.n;
  int ci, cj;
  if (find_contact(ctx, s, radius, removed, ci, cj)) return reason_collision;
  if (cfg.ejection_distance > 0) {
    for (int b = 1; b < n; ++b) {
      if (is_removed(removed, b)) continue;
      double a, e, r;
      helio_elements(ctx, s, b, a, e, r);
      if (r > cfg.ejection_distance && !(a > 0)) return reason_ejection;
    }
  }
  if (cfg.close_encounter_hill > 0) {
    const double m0 = ctx.at(s, L.m);
    for (int i = 1; i < n; ++i)
      for (int j = i + 1; j < n; ++j) {
        if (is_removed(removed, i) || is_removed(removed, j)) continue;
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
      if (is_removed(removed, i)) continue;
      double ai, ei, ri;
      helio_elements(ctx, s, i, ai, ei, ri);
      if (!(ai > 0) || !(ei < 1)) return reason_crossing_orbits;
      for (int j = i + 1; j < n; ++j) {
        if (is_removed(removed, j)) continue;
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

  // offset: per system, the energy that merges took out (added to the energy before comparing
  // it with E0); empty: none.
  EnergyGuard(const ExecSpace& space, const Ensemble<memory_space>& ens, double limit,
              const std::vector<double>& reference, const Force& force,
              const EnergyView& offset = {})
      : space_(space), ens_(ens), limit_(limit), force_(force), offset_(offset) {
    kosmos::Impl::require(limit >= 0, "kosmos::nbody::integrate", "energy_error_limit = ", limit, " < 0");
    if (!active()) return;
    const int n_sys = ens.n_systems();
    reference_ = EnergyView("kosmos::nbody::reference_energy", n_sys);
    current_ = EnergyView("kosmos::nbody::energy", n_sys);
    if (reference.empty()) {
      energy(space, ens, reference_, force);
      if (offset_.extent(0) > 0) add_offset_to_reference();
    } else {
      kosmos::Impl::require(reference.size() == std::size_t(n_sys), "kosmos::nbody::integrate",
                            "reference_energy has ", reference.size(), " values for ", n_sys, " systems");
      const auto host = Kokkos::create_mirror_view(reference_);
      for (int s = 0; s < n_sys; ++s) host(s) = reference[std::size_t(s)];
      Kokkos::deep_copy(space, reference_, host);
    }
  }

  bool active() const { return limit_ > 0; }

  // reference += offset: the energy each system had before its earlier merges. (A public member
  // function: CUDA takes extended lambdas neither in constructors nor in private members.)
  void add_offset_to_reference() const {
    const auto e0 = reference_;
    const auto off = offset_;
    Kokkos::parallel_for(
        "kosmos::nbody::reference_energy_offset",
        Kokkos::RangePolicy<ExecSpace>(space_, 0, ens_.n_systems()),
        KOKKOS_LAMBDA(const int s) { e0(s) += off(s); });
  }

  void check() const {
    if (!active()) return;
    energy(space_, ens_, current_, force_);
    const auto ens = ens_;
    const auto e0 = reference_;
    const auto e1 = current_;
    const auto offset = offset_;
    const bool with_offset = offset.extent(0) > 0;
    const double limit = limit_;
    Kokkos::parallel_for(
        "kosmos::nbody::energy_check", Kokkos::RangePolicy<ExecSpace>(space_, 0, ens.n_systems()),
        KOKKOS_LAMBDA(const int s) {
          if (ens.state(s) != state_active || !(e0(s) != 0) || !math::isfinite(e0(s))) return;
          const double e = with_offset ? e1(s) + offset(s) : e1(s);
          if (!(math::fabs(e - e0(s)) <= limit * math::fabs(e0(s)))) {
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
  EnergyView offset_, reference_, current_;
};

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
