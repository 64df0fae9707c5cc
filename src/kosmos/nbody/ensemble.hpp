// An ensemble of few-body systems in Swarm-NG's chunked ("coalesced struct array") layout:
// systems are grouped in chunks of `chunk_size`; within a chunk, the same member (say the
// y-velocity of body 2) of all systems is contiguous, so threads that work on consecutive systems
// read consecutive addresses. Units: G = 1 (AU, solar masses, year = 2 pi).
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace kosmos {
namespace nbody {

// Per-system state. Only active systems are integrated.
enum SystemState : int { state_active = 0, state_inactive = 1, state_disabled = 2 };

// Why a system stopped (inactive: a monitor condition; disabled: bad input or numerical failure).
enum StopReason : int {
  reason_none = 0,
  reason_close_encounter = 1,
  reason_ejection = 2,
  reason_crossing_orbits = 3,
  reason_user = 4,
  reason_collision = 5,
  reason_nonpositive_mass = 10,
  reason_nonfinite = 11,
  reason_coincident_bodies = 12,
  reason_kepler_failure = 13,
  reason_step_underflow = 14,
  reason_bad_step = 15,
  reason_energy_error = 16,        // |E - E0| > energy_error_limit |E0| (MonitorConfig)
  reason_central_not_first = 17,   // MVS: body 0 is not the most massive body
};

inline const char* reason_name(int reason) {
  switch (reason) {
    case reason_none: return "none";
    case reason_close_encounter: return "close_encounter";
    case reason_ejection: return "ejection";
    case reason_crossing_orbits: return "crossing_orbits";
    case reason_user: return "user";
    case reason_collision: return "collision";
    case reason_nonpositive_mass: return "nonpositive_mass";
    case reason_nonfinite: return "nonfinite";
    case reason_coincident_bodies: return "coincident_bodies";
    case reason_kepler_failure: return "kepler_failure";
    case reason_step_underflow: return "step_underflow";
    case reason_bad_step: return "bad_step";
    case reason_energy_error: return "energy_error";
    case reason_central_not_first: return "central_not_first";
    default: return "unknown";
  }
}
inline const char* state_name(int state) {
  return state == state_active ? "active" : state == state_inactive ? "inactive" : "disabled";
}

namespace Impl {
// destination - (t + t_lo): exact enough to decide whether a compensated time has arrived (the
// first difference is exact near the destination).
KOKKOS_INLINE_FUNCTION double time_left(double destination, double t, double t_lo) {
  return (destination - t) - t_lo;
}
}  // namespace Impl

// Bodies per system: at least 2, at most max_bodies (scratch and pair tables are sized by it).
constexpr int max_bodies = 32;

template <class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class Ensemble {
 public:
  static constexpr int chunk_size = 16;  // systems per chunk (a power of two, as in Swarm-NG)
  using memory_space = MemorySpace;
  using execution_space = typename MemorySpace::execution_space;
  using BodyView = Kokkos::View<double***, Kokkos::LayoutRight, MemorySpace>;  // (chunk, member, lane)
  using SysView = Kokkos::View<double*, MemorySpace>;
  using IntView = Kokkos::View<int*, MemorySpace>;
  using AttrView = Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace>;

  Ensemble() = default;
  Ensemble(int n_systems, int n_bodies, int n_attributes = 0) {
    kosmos::Impl::require(n_bodies >= 2 && n_bodies <= max_bodies, "kosmos::nbody::Ensemble",
                  "n_bodies = ", n_bodies, " is outside [2, ", max_bodies, "]");
    kosmos::Impl::require(n_systems >= 0, "kosmos::nbody::Ensemble", "n_systems = ", n_systems, " < 0");
    kosmos::Impl::require(n_attributes >= 0, "kosmos::nbody::Ensemble", "n_attributes = ", n_attributes, " < 0");
    n_sys_ = n_systems;
    n_bod_ = n_bodies;
    const int chunks = (n_systems + chunk_size - 1) / chunk_size;
    pos = BodyView("kosmos::nbody::pos", chunks, 3 * n_bodies, chunk_size);
    vel = BodyView("kosmos::nbody::vel", chunks, 3 * n_bodies, chunk_size);
    mass = BodyView("kosmos::nbody::mass", chunks, n_bodies, chunk_size);
    time = SysView("kosmos::nbody::time", n_systems);
    time_lo = SysView("kosmos::nbody::time_lo", n_systems);
    step = SysView("kosmos::nbody::step", n_systems);
    state = IntView("kosmos::nbody::state", n_systems);
    reason = IntView("kosmos::nbody::reason", n_systems);
    attributes = AttrView("kosmos::nbody::attributes", n_systems, n_attributes);
  }

  KOKKOS_INLINE_FUNCTION int n_systems() const { return n_sys_; }
  KOKKOS_INLINE_FUNCTION int n_bodies() const { return n_bod_; }
  int n_attributes() const { return int(attributes.extent(1)); }

  // Body b of system s, component c (0..2).
  KOKKOS_INLINE_FUNCTION double& x(int s, int b, int c) const {
    return pos(s / chunk_size, 3 * b + c, s % chunk_size);
  }
  KOKKOS_INLINE_FUNCTION double& v(int s, int b, int c) const {
    return vel(s / chunk_size, 3 * b + c, s % chunk_size);
  }
  KOKKOS_INLINE_FUNCTION double& m(int s, int b) const { return mass(s / chunk_size, b, s % chunk_size); }

  BodyView pos, vel, mass;
  SysView time;   // current time of each system
  // Compensation of `time` (time is the double-double time + time_lo between launches, so steps
  // far below an ulp of t still add up). Not written to files: a system that reached a
  // destination has time_lo = 0.
  SysView time_lo;
  SysView step;   // step size carried between calls by adaptive integrators (0: none yet)
  IntView state;  // SystemState
  IntView reason; // StopReason
  AttrView attributes;  // user attributes per system, carried through integration and I/O

 private:
  int n_sys_ = 0, n_bod_ = 0;
};

using HostEnsemble = Ensemble<Kokkos::HostSpace>;

// An ensemble of the same shape in another memory space (contents not copied).
template <class DstMemory, class SrcMemory>
Ensemble<DstMemory> allocate_like(const Ensemble<SrcMemory>& src) {
  return Ensemble<DstMemory>(src.n_systems(), src.n_bodies(), src.n_attributes());
}

// Copies every member; shapes must match.
// Copies bodies, times, steps and states, not the attributes (which may differ in number).
template <class DstMemory, class SrcMemory>
void copy_bodies_and_states(const Ensemble<DstMemory>& dst, const Ensemble<SrcMemory>& src) {
  kosmos::Impl::require(dst.n_systems() == src.n_systems() && dst.n_bodies() == src.n_bodies(),
                        "kosmos::nbody::copy_bodies_and_states", "shape mismatch: ", dst.n_systems(), "x",
                        dst.n_bodies(), " vs ", src.n_systems(), "x", src.n_bodies());
  Kokkos::deep_copy(dst.pos, src.pos);
  Kokkos::deep_copy(dst.vel, src.vel);
  Kokkos::deep_copy(dst.mass, src.mass);
  Kokkos::deep_copy(dst.time, src.time);
  Kokkos::deep_copy(dst.time_lo, src.time_lo);
  Kokkos::deep_copy(dst.step, src.step);
  Kokkos::deep_copy(dst.state, src.state);
  Kokkos::deep_copy(dst.reason, src.reason);
}

template <class DstMemory, class SrcMemory>
void deep_copy(const Ensemble<DstMemory>& dst, const Ensemble<SrcMemory>& src) {
  kosmos::Impl::require(dst.n_systems() == src.n_systems() && dst.n_bodies() == src.n_bodies() &&
                    dst.n_attributes() == src.n_attributes(),
                "kosmos::nbody::deep_copy", "shape mismatch: ", dst.n_systems(), "x", dst.n_bodies(),
                " vs ", src.n_systems(), "x", src.n_bodies());
  copy_bodies_and_states(dst, src);
  Kokkos::deep_copy(dst.attributes, src.attributes);
}

// A full copy of `src` in DstMemory.
template <class DstMemory, class SrcMemory>
Ensemble<DstMemory> clone(const Ensemble<SrcMemory>& src) {
  auto dst = allocate_like<DstMemory>(src);
  deep_copy(dst, src);
  return dst;
}

// System s of `src` into system d of `dst` (host ensembles with the same body count): bodies,
// times, step, state, reason and the attributes both have.
inline void copy_system(const HostEnsemble& src, int s, const HostEnsemble& dst, int d) {
  kosmos::Impl::require(src.n_bodies() == dst.n_bodies() && s >= 0 && s < src.n_systems() &&
                            d >= 0 && d < dst.n_systems(),
                        "kosmos::nbody::copy_system", "system ", s, " of ", src.n_systems(), " (",
                        src.n_bodies(), " bodies) into system ", d, " of ", dst.n_systems(), " (",
                        dst.n_bodies(), " bodies)");
  for (int b = 0; b < src.n_bodies(); ++b) {
    dst.m(d, b) = src.m(s, b);
    for (int c = 0; c < 3; ++c) {
      dst.x(d, b, c) = src.x(s, b, c);
      dst.v(d, b, c) = src.v(s, b, c);
    }
  }
  dst.time(d) = src.time(s);
  dst.time_lo(d) = src.time_lo(s);
  dst.step(d) = src.step(s);
  dst.state(d) = src.state(s);
  dst.reason(d) = src.reason(s);
  for (int k = 0; k < std::min(src.n_attributes(), dst.n_attributes()); ++k)
    dst.attributes(d, k) = src.attributes(s, k);
}

// A system as doubles (bodies m, x, v; time, time_lo, step, state, reason; attributes), e.g. to
// gather the systems of several ranks: system_values(e) of them per system.
inline std::size_t system_values(const HostEnsemble& e) {
  return std::size_t(7 * e.n_bodies() + 5 + e.n_attributes());
}
inline void append_system_values(const HostEnsemble& e, int s, std::vector<double>& out) {
  for (int b = 0; b < e.n_bodies(); ++b) {
    out.push_back(e.m(s, b));
    for (int c = 0; c < 3; ++c) out.push_back(e.x(s, b, c));
    for (int c = 0; c < 3; ++c) out.push_back(e.v(s, b, c));
  }
  for (double v : {e.time(s), e.time_lo(s), e.step(s), double(e.state(s)), double(e.reason(s))})
    out.push_back(v);
  for (int k = 0; k < e.n_attributes(); ++k) out.push_back(e.attributes(s, k));
}
// The values of append_system_values into system s of `e`; returns the end of what it read.
inline const double* set_system_values(const double* in, const HostEnsemble& e, int s) {
  for (int b = 0; b < e.n_bodies(); ++b) {
    e.m(s, b) = *in++;
    for (int c = 0; c < 3; ++c) e.x(s, b, c) = *in++;
    for (int c = 0; c < 3; ++c) e.v(s, b, c) = *in++;
  }
  e.time(s) = *in++;
  e.time_lo(s) = *in++;
  e.step(s) = *in++;
  e.state(s) = int(*in++);
  e.reason(s) = int(*in++);
  for (int k = 0; k < e.n_attributes(); ++k) e.attributes(s, k) = *in++;
  return in;
}

// Systems [first, first + count) of a host ensemble as an ensemble of their own (a copy), e.g.
// one rank's share of a distributed ensemble.
inline HostEnsemble systems_of(const HostEnsemble& src, int first, int count) {
  kosmos::Impl::require(first >= 0 && count >= 0 && first <= src.n_systems() - count,
                        "kosmos::nbody::systems_of", "systems [", first, ", ", first + count,
                        ") are not within the ensemble's ", src.n_systems());
  HostEnsemble dst(count, src.n_bodies(), src.n_attributes());
  for (int s = 0; s < count; ++s) copy_system(src, first + s, dst, s);
  return dst;
}

// Section 5.1 of Dindar et al. (2013): a star of mass m0 = 1 at rest at the origin and n_bodies-1
// planets of mass planet_mass on circular orbits of radius a_i = (1 + alpha)^(i-1), speed
// sqrt((m0 + m_i) / a_i), all starting on the +x axis (phase 0) unless seed != 0, in which case
// each planet gets a pseudo-random orbital phase (reproducible from the seed and system index).
HostEnsemble generate_planetary_ensemble(int n_systems, int n_bodies, double planet_mass = 1e-3,
                                         double alpha = 0.4, unsigned long long seed = 0);

}  // namespace nbody
}  // namespace kosmos
