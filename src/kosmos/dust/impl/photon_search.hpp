// The P(T) recursion's photon searches: the first photon at or above an energy, in one lookup.
// An energy's cell is its double's bit pattern shifted right (its exponent and top mantissa bits),
// so cells cover 2^-b of an octave, found without a logarithm and exactly (the bits of positive
// doubles ascend with their values). Where every cell holds at most one photon (b is chosen so),
// the answer is the cell's first photon, or the next one if the cell's photon lies below the
// energy: one load of each, no walk, the same on every thread of a warp.
#pragma once

#include <kosmos/core/error.hpp>
#include <kosmos/dust/planck.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include <Kokkos_Core.hpp>

namespace kosmos {
namespace dust {
namespace Impl {

// Photon energies k_B x_l ascending in k (l = nl - 1 - k), of a GrainModel's x (on the device in
// the kernel, a host mirror when the search table is built: the same doubles).
template <class X>
struct PhotonEnergies {
  X x;
  int nl;
  KOKKOS_INLINE_FUNCTION double operator()(int k) const {
    return constants::boltzmann_k * double(x(nl - 1 - k));
  }
};

template <class DeviceType>
struct PhotonSearch {
  // (cells + 1): the first photon k with eps_k at or above the cell's lowest energy, and eps_k
  // (infinity for k = nl); the last entry stands for every energy above the photons.
  Kokkos::View<int*, DeviceType> start;
  Kokkos::View<double*, DeviceType> start_energy;
  std::int64_t first_cell = 0;  // the bits of eps_0, shifted
  int shift = 52;               // 52 - b
  bool one_per_cell = true;     // false: photons closer than the finest cells (a walk follows)

  // A double's bit pattern: for positive doubles it ascends with the value.
  KOKKOS_INLINE_FUNCTION static std::int64_t bits(double energy) {
    std::int64_t b;
    std::memcpy(&b, &energy, sizeof b);
    return b;
  }
  KOKKOS_INLINE_FUNCTION std::int64_t unclamped_cell(double energy) const {
    return (bits(energy) >> shift) - first_cell;
  }
  KOKKOS_INLINE_FUNCTION int cell(double energy) const {
    const std::int64_t c = unclamped_cell(energy), last = std::int64_t(start.extent(0)) - 1;
    return int(c < 0 ? 0 : (c > last ? last : c));  // below eps_0 (or negative): photon 0
  }
  // The first photon k with eps(k) >= bound (nl if none).
  template <class Energies>
  KOKKOS_INLINE_FUNCTION int first_at_least(double bound, const Energies& eps, int nl) const {
    const int c = cell(bound);
    int k = start(c) + (start_energy(c) < bound ? 1 : 0);
    if (!one_per_cell)
      while (k < nl && eps(k) < bound) ++k;
    return k;
  }
};

// The finest cells the table allows; DL07's grid (1208 wavelengths, 0.0096 apart in ln lambda)
// needs 128 an octave.
constexpr int photon_search_max_cells = 1 << 16;

template <class DeviceType, class ExecSpace, class X>
PhotonSearch<DeviceType> build_photon_search(const ExecSpace& space, const X& x_device) {
  const auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x_device);
  const int nl = int(x.extent(0));
  const PhotonEnergies<decltype(x)> eps{x, nl};
  const char* where = "kosmos::dust::prepare_stochastic";
  kosmos::Impl::require(nl > 0 && eps(0) > 0 && std::isfinite(eps(nl - 1)), where,
                        "the photon energies must be positive and finite (", nl, " wavelengths)");
  using Search = PhotonSearch<DeviceType>;
  const auto bits = [](double e) { return Search::bits(e); };
  Search s;
  // The coarsest cells with at most one photon each, else the finest the size allows.
  for (int b = 0; b <= 52; ++b) {
    const int shift = 52 - b;
    if ((bits(eps(nl - 1)) >> shift) - (bits(eps(0)) >> shift) >= photon_search_max_cells) break;
    s.shift = shift;
    s.one_per_cell = true;
    for (int k = 1; k < nl && s.one_per_cell; ++k)
      s.one_per_cell = (bits(eps(k)) >> shift) != (bits(eps(k - 1)) >> shift);
    if (s.one_per_cell) break;
  }
  s.first_cell = bits(eps(0)) >> s.shift;
  const int cells = int(s.unclamped_cell(eps(nl - 1))) + 1;
  s.start = decltype(s.start)(Kokkos::view_alloc(space, std::string("kosmos::dust::photon_start")),
                              cells + 1);
  s.start_energy = decltype(s.start_energy)(
      Kokkos::view_alloc(space, std::string("kosmos::dust::photon_start_energy")), cells + 1);
  auto start = Kokkos::create_mirror_view(s.start);
  auto energy = Kokkos::create_mirror_view(s.start_energy);
  int k = 0;
  for (int c = 0; c <= cells; ++c) {
    while (k < nl && s.unclamped_cell(eps(k)) < c) ++k;
    start(c) = k;
    energy(c) = k < nl ? eps(k) : std::numeric_limits<double>::infinity();
  }
  Kokkos::deep_copy(space, s.start, start);
  Kokkos::deep_copy(space, s.start_energy, energy);
  return s;
}

}  // namespace Impl
}  // namespace dust
}  // namespace kosmos
