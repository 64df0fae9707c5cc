// The integrator state that outlives a launch (integrators/README.md lists it per method): kept
// on the device between the launches of one integrate() call, returned in
// IntegrationReport::carried and passed back in IntegrateOptions::carried between calls (and
// checkpoints), so that neither steps_per_launch nor where a run is split changes a trajectory.
//
// Each system's values come with a key: a hash of the integrator's settings (the tag) and of the
// system's time, time compensation, masses, positions and velocities as they were stored. A
// launch continues from the values only while the system still hashes to its key; a system the
// caller changed (or another integrator's state) starts afresh from its positions and velocities.
#pragma once

#include <kosmos/core/compat.hpp>

#include <cstdint>
#include <cstring>

namespace kosmos {
namespace nbody {
namespace Impl {

struct StateHash {
  std::uint64_t h = 0x6a09e667f3bcc909ULL;
  KOKKOS_INLINE_FUNCTION void mix(std::uint64_t w) {
    h ^= w + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
  }
  KOKKOS_INLINE_FUNCTION void mix(double x) {
    std::uint64_t w;
    memcpy(&w, &x, sizeof w);
    mix(w);
  }
};

// One word of a key's state that stands for a value and its deviation (MEGNO runs: the key covers
// the variational state too).
KOKKOS_INLINE_FUNCTION double fold_deviation(double own, double deviation) {
  StateHash mixed;
  mixed.mix(own);
  mixed.mix(deviation);
  double folded;
  memcpy(&folded, &mixed.h, sizeof folded);
  return folded;
}

// Values per system of the carried state and the tag of the settings that produced them.
struct CarriedLayout {
  int width = 0;
  std::uint64_t tag = 0;
};

template <class MemorySpace>
struct CarriedState {
  Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> values;  // (system, k)
  Kokkos::View<std::uint64_t*, MemorySpace> key;                   // 0: nothing carried
  std::uint64_t tag = 0;

  KOKKOS_INLINE_FUNCTION bool on() const { return values.extent(1) > 0; }
  KOKKOS_INLINE_FUNCTION double& at(int sys, int k) const { return values(sys, k); }

  // The key of system sys in the state given by its time and get(b, c): c = 0..2 position, 3..5
  // velocity, 6 mass of body b.
  template <class Get>
  KOKKOS_INLINE_FUNCTION std::uint64_t key_of(double t, double t_lo, int n, const Get& get) const {
    StateHash hash;
    hash.mix(tag);
    hash.mix(t);
    hash.mix(t_lo);
    for (int b = 0; b < n; ++b)
      for (int c = 0; c < 7; ++c) hash.mix(get(b, c));
    return hash.h == 0 ? 1 : hash.h;
  }
  // True when system sys continues from its carried values.
  template <class Get>
  KOKKOS_INLINE_FUNCTION bool valid(int sys, double t, double t_lo, int n, const Get& get) const {
    return on() && key(sys) == key_of(t, t_lo, n, get);
  }
  template <class Get>
  KOKKOS_INLINE_FUNCTION void seal(int sys, double t, double t_lo, int n, const Get& get) const {
    if (on()) key(sys) = key_of(t, t_lo, n, get);
  }
};

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
