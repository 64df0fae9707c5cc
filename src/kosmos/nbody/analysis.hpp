// Per-system diagnostics computed where the ensemble lives (only n_sys numbers come back, the
// "data reduction" of Swarm-NG): validation, total energy, momentum and angular momentum.
#pragma once

#include <kosmos/core/compensated.hpp>
#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/gravity.hpp>

#include <limits>

namespace kosmos {
namespace nbody {

namespace Impl {
// The diagnostics' kernels are named functors, not KOKKOS_LAMBDAs: in CUDA builds nvcc's extended
// lambda wrapper left the host-side call of validate's lambda a jump to address 0 (a crash on
// the H100 in NbodyEnsemble/Cuda.UserForceLawsPlugIn).
template <class MemorySpace>
struct ValidateSystems {
  Ensemble<MemorySpace> ens;
  KOKKOS_INLINE_FUNCTION void operator()(const int s, int& count) const {
    if (ens.state(s) != state_active) return;
    const int n = ens.n_bodies();
    int reason = reason_none;
    double total_mass = 0;
    for (int b = 0; b < n && reason == reason_none; ++b) {
      const double m = ens.m(s, b);
      if (!math::isfinite(m)) reason = reason_nonfinite;
      else if (m < 0) reason = reason_nonpositive_mass;
      else total_mass += m;
      for (int c = 0; c < 3; ++c)
        if (!math::isfinite(ens.x(s, b, c)) || !math::isfinite(ens.v(s, b, c))) reason = reason_nonfinite;
    }
    if (reason == reason_none && !(total_mass > 0)) reason = reason_nonpositive_mass;
    if (!math::isfinite(ens.time(s))) reason = reason_nonfinite;
    for (int i = 0; i < n && reason == reason_none; ++i)
      for (int j = i + 1; j < n; ++j)
        if (ens.x(s, i, 0) == ens.x(s, j, 0) && ens.x(s, i, 1) == ens.x(s, j, 1) &&
            ens.x(s, i, 2) == ens.x(s, j, 2) && (ens.m(s, i) > 0 || ens.m(s, j) > 0))
          reason = reason_coincident_bodies;
    if (reason != reason_none) {
      ens.state(s) = state_disabled;
      ens.reason(s) = reason;
      ++count;
    }
  }
};

template <class MemorySpace>
struct ValidateCentralBody {
  Ensemble<MemorySpace> ens;
  KOKKOS_INLINE_FUNCTION void operator()(const int s, int& count) const {
    if (ens.state(s) != state_active) return;
    for (int b = 1; b < ens.n_bodies(); ++b)
      if (!(ens.m(s, 0) > ens.m(s, b))) {
        ens.state(s) = state_disabled;
        ens.reason(s) = reason_central_not_first;
        ++count;
        return;
      }
  }
};

template <class MemorySpace>
struct LatestActiveTime {
  Ensemble<MemorySpace> ens;
  KOKKOS_INLINE_FUNCTION void operator()(const int s, double& t) const {
    if (ens.state(s) == state_active && ens.time(s) > t) t = ens.time(s);
  }
};

template <class MemorySpace, class Force>
struct SystemEnergy {
  Ensemble<MemorySpace> ens;
  Kokkos::View<double*, MemorySpace> out;
  Force force;
  KOKKOS_INLINE_FUNCTION void operator()(const int s) const {
    const int n = ens.n_bodies();
    CompensatedSum<double> e;
    for (int b = 0; b < n; ++b) {
      const double v2 =
          ens.v(s, b, 0) * ens.v(s, b, 0) + ens.v(s, b, 1) * ens.v(s, b, 1) + ens.v(s, b, 2) * ens.v(s, b, 2);
      e.add(0.5 * ens.m(s, b) * v2);
    }
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) {
        const double d[3] = {ens.x(s, j, 0) - ens.x(s, i, 0), ens.x(s, j, 1) - ens.x(s, i, 1),
                             ens.x(s, j, 2) - ens.x(s, i, 2)};
        e.add(ens.m(s, i) * ens.m(s, j) * force.potential(d));
      }
    out(s) = e.value();
  }
};

template <class MemorySpace>
struct SystemMomenta {
  Ensemble<MemorySpace> ens;
  Kokkos::View<double**, MemorySpace> out;
  KOKKOS_INLINE_FUNCTION void operator()(const int s) const {
    double p[6] = {0, 0, 0, 0, 0, 0};
    for (int b = 0; b < ens.n_bodies(); ++b) {
      const double m = ens.m(s, b);
      const double x = ens.x(s, b, 0), y = ens.x(s, b, 1), z = ens.x(s, b, 2);
      const double vx = ens.v(s, b, 0), vy = ens.v(s, b, 1), vz = ens.v(s, b, 2);
      p[0] += m * vx;
      p[1] += m * vy;
      p[2] += m * vz;
      p[3] += m * (y * vz - z * vy);
      p[4] += m * (z * vx - x * vz);
      p[5] += m * (x * vy - y * vx);
    }
    for (int k = 0; k < 6; ++k) out(s, k) = p[k];
  }
};
template <class MemorySpace>
struct MaxEccentricity {
  Ensemble<MemorySpace> ens;
  Kokkos::View<double*, MemorySpace> max_e;
  bool jacobi;
  KOKKOS_INLINE_FUNCTION void operator()(const int s) const {
    if (ens.state(s) == state_disabled) return;
    double inner_m = ens.m(s, 0), cx[3], cv[3];  // the centre of the bodies inside planet b
    for (int c = 0; c < 3; ++c) {
      cx[c] = ens.x(s, 0, c);
      cv[c] = ens.v(s, 0, c);
    }
    double largest = max_e(s);
    for (int b = 1; b < ens.n_bodies(); ++b) {
      const double m = ens.m(s, b), mu = (jacobi ? inner_m : ens.m(s, 0)) + m;
      double r[3], v[3], r2 = 0, v2 = 0, rv = 0;
      for (int c = 0; c < 3; ++c) {
        r[c] = ens.x(s, b, c) - cx[c];
        v[c] = ens.v(s, b, c) - cv[c];
        r2 += r[c] * r[c];
        v2 += v[c] * v[c];
        rv += r[c] * v[c];
      }
      // e = ((v^2 - mu / r) r - (r . v) v) / mu
      const double k = v2 - mu / math::sqrt(r2);
      double e2 = 0;
      for (int c = 0; c < 3; ++c) {
        const double ec = (k * r[c] - rv * v[c]) / mu;
        e2 += ec * ec;
      }
      const double e = math::sqrt(e2);
      if (e > largest || (math::isnan(e) && !math::isnan(largest))) largest = e;
      if (jacobi) {
        for (int c = 0; c < 3; ++c) {
          cx[c] = (inner_m * cx[c] + m * ens.x(s, b, c)) / (inner_m + m);
          cv[c] = (inner_m * cv[c] + m * ens.v(s, b, c)) / (inner_m + m);
        }
        inner_m += m;
      }
    }
    max_e(s) = largest;
  }
};

}  // namespace Impl

// Disables (state_disabled, with the reason) every active system that has a negative or
// non-finite mass, no massive body, a non-finite coordinate or time, or two bodies at the same
// position (unless both are massless). Massless bodies are test particles: they feel the others
// and exert no force. Returns how many systems it disabled.
template <class ExecSpace>
int validate(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "kosmos::nbody::validate: the first argument must be a Kokkos execution space");
  int disabled = 0;
  Kokkos::parallel_reduce("kosmos::nbody::validate", Kokkos::RangePolicy<ExecSpace>(space, 0, ens.n_systems()),
                          Impl::ValidateSystems<typename ExecSpace::memory_space>{ens}, Kokkos::Sum<int>(disabled));
  return disabled;
}

// Disables (reason_central_not_first) every active system whose body 0 is not strictly more
// massive than each other body: the integrators that split off a central body's Kepler motion
// (MVS) take body 0 as that body, and another order silently loses accuracy. Returns how many
// systems it disabled.
template <class ExecSpace>
int validate_central_body(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "kosmos::nbody::validate_central_body: the first argument must be a Kokkos execution space");
  int disabled = 0;
  Kokkos::parallel_reduce("kosmos::nbody::validate_central_body",
                          Kokkos::RangePolicy<ExecSpace>(space, 0, ens.n_systems()),
                          Impl::ValidateCentralBody<typename ExecSpace::memory_space>{ens},
                          Kokkos::Sum<int>(disabled));
  return disabled;
}

namespace Impl {
// Throws invalid_input when an active system is already past `destination` (integration runs
// forward only; a destination before the start would otherwise do nothing, silently).
template <class ExecSpace>
void require_not_before(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
                        double destination) {
  double latest = std::numeric_limits<double>::lowest();
  Kokkos::parallel_reduce("kosmos::nbody::latest_time", Kokkos::RangePolicy<ExecSpace>(space, 0, ens.n_systems()),
                          LatestActiveTime<typename ExecSpace::memory_space>{ens}, Kokkos::Max<double>(latest));
  kosmos::Impl::require(!(latest > destination), "kosmos::nbody::integrate", "destination ", destination,
                        " is before the time ", latest,
                        " of an active system (integration runs forward only)");
}
}  // namespace Impl

// energy(s) = sum m v^2 / 2 + sum_{i<j} m_i m_j phi(x_j - x_i), with compensated sums.
template <class ExecSpace, class Force = Newtonian>
void energy(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
            const Kokkos::View<double*, typename ExecSpace::memory_space>& out, const Force& force = Force()) {
  kosmos::Impl::require(out.extent(0) == std::size_t(ens.n_systems()), "kosmos::nbody::energy", "out.extent(0) = ",
                out.extent(0), ", expected ", ens.n_systems());
  Kokkos::parallel_for("kosmos::nbody::energy", Kokkos::RangePolicy<ExecSpace>(space, 0, ens.n_systems()),
                       Impl::SystemEnergy<typename ExecSpace::memory_space, Force>{ens, out, force});
}

// Total momentum (out(s, 0..2)) and angular momentum about the origin (out(s, 3..5)).
template <class ExecSpace>
void momenta(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
             const Kokkos::View<double**, typename ExecSpace::memory_space>& out) {
  kosmos::Impl::require(out.extent(0) == std::size_t(ens.n_systems()) && out.extent(1) == 6, "kosmos::nbody::momenta",
                "out is ", out.extent(0), "x", out.extent(1), ", expected ", ens.n_systems(), "x6");
  Kokkos::parallel_for("kosmos::nbody::momenta", Kokkos::RangePolicy<ExecSpace>(space, 0, ens.n_systems()),
                       Impl::SystemMomenta<typename ExecSpace::memory_space>{ens, out});
}

// max_e(s) = the larger of max_e(s) and the osculating eccentricity of every planet (bodies 1..n-1)
// of system s: about the centre of mass of the bodies before it (jacobi, mu = their mass + m_b)
// or about body 0 (mu = m_0 + m_b). Call it between integrate() segments to follow the largest
// eccentricity at those times; disabled systems are left alone, NaN is kept.
template <class ExecSpace>
void update_max_eccentricity(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
                             const Kokkos::View<double*, typename ExecSpace::memory_space>& max_e, bool jacobi) {
  kosmos::Impl::require(max_e.extent(0) == std::size_t(ens.n_systems()), "kosmos::nbody::update_max_eccentricity",
                        "max_e.extent(0) = ", max_e.extent(0), ", expected ", ens.n_systems());
  Kokkos::parallel_for("kosmos::nbody::max_eccentricity", Kokkos::RangePolicy<ExecSpace>(space, 0, ens.n_systems()),
                       Impl::MaxEccentricity<typename ExecSpace::memory_space>{ens, max_e, jacobi});
}

// Overloads on the ensemble's own execution space.
template <class MemorySpace>
int validate(const Ensemble<MemorySpace>& ens) {
  return validate(typename MemorySpace::execution_space(), ens);
}
template <class MemorySpace>
void energy(const Ensemble<MemorySpace>& ens, const Kokkos::View<double*, MemorySpace>& out) {
  energy(typename MemorySpace::execution_space(), ens, out);
}
template <class MemorySpace>
void momenta(const Ensemble<MemorySpace>& ens, const Kokkos::View<double**, MemorySpace>& out) {
  momenta(typename MemorySpace::execution_space(), ens, out);
}

}  // namespace nbody
}  // namespace kosmos
