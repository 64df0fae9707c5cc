// Radiation fields for tests, benchmarks and `kosmos dust --generate`: the Mathis, Mezger & Panagia
// (1983) interstellar radiation field and a synthetic set of scaled, attenuated copies of it.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/dust/planck.hpp>

#include <cstdint>
#include <type_traits>

namespace kosmos {
namespace dust {

// MMP83 mean intensity J_lambda (W m^-2 m^-1 sr^-1) at lambda in micron: 0 below the Lyman limit
// (0.0912), 3069 lambda^3.4172 on [0.0912, 0.110), 1.627 on [0.110, 0.134), 0.0566 lambda^-1.6678
// on [0.134, 0.250), and above the diluted blackbodies 1e-14 B(7500 K) + 1e-13 B(4000 K) +
// 4e-13 B(3000 K).
KOKKOS_INLINE_FUNCTION double mmp83_mean_intensity(double lambda_micron) {
  const double l = lambda_micron;
  if (l < 0.0912) return 0.0;
  if (l < 0.110) return 3069.0 * math::pow(l, 3.4172);
  if (l < 0.134) return 1.627;
  if (l < 0.250) return 0.0566 * math::pow(l, -1.6678);
  const double m = l * 1e-6;
  return 1e-14 * planck_lambda(m, 7500.0) + 1e-13 * planck_lambda(m, 4000.0) + 4e-13 * planck_lambda(m, 3000.0);
}

namespace Impl {
// splitmix64: a counter-based generator, the same stream on every backend.
KOKKOS_INLINE_FUNCTION double uniform01(std::uint64_t seed, std::uint64_t counter) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (counter + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * (1.0 / 9007199254740992.0);
}
}  // namespace Impl

// Parameters of synthetic cell c: field strength U = 10^(-1 + 5 u1) (0.1 to 1e4 times MMP83),
// attenuation by a screen of V-band optical depth tau_V = 4 u2 with tau ~ lambda^-1, and dust mass
// 10^(26 + 4 u3) kg (1e-4 to 0.5 solar masses: float SEDs stay far from overflow).
struct SyntheticCell {
  double strength, tau_v, dust_mass_kg;
};
KOKKOS_INLINE_FUNCTION SyntheticCell synthetic_cell(std::uint64_t seed, std::int64_t c) {
  const std::uint64_t base = 3 * std::uint64_t(c);
  return {math::pow(10.0, -1.0 + 5.0 * Impl::uniform01(seed, base)), 4.0 * Impl::uniform01(seed, base + 1),
          math::pow(10.0, 26.0 + 4.0 * Impl::uniform01(seed, base + 2))};
}
KOKKOS_INLINE_FUNCTION double synthetic_intensity(const SyntheticCell& cell, double lambda_micron) {
  return cell.strength * mmp83_mean_intensity(lambda_micron) * math::exp(-cell.tau_v * 0.55 / lambda_micron);
}

// Fills intensity (C, L) and dust_mass (C) with the synthetic cells first_cell ... first_cell + C - 1
// on the grid wavelength (L, in m).
template <class ExecSpace, class Wave, class Intensity, class Mass>
void synthetic_cells(const ExecSpace& space, const Wave& wavelength, const Intensity& intensity,
                     const Mass& dust_mass, std::uint64_t seed, std::int64_t first_cell = 0) {
  using value = typename Intensity::non_const_value_type;
  using mass_value = typename Mass::non_const_value_type;
  const std::int64_t nc = std::int64_t(intensity.extent(0)), nl = std::int64_t(intensity.extent(1));
  // Consecutive threads fill consecutive elements: cells (LayoutLeft) or wavelengths (LayoutRight).
  constexpr bool wavelength_fastest = std::is_same<typename Intensity::array_layout, Kokkos::LayoutRight>::value;
  Kokkos::parallel_for(
      "kosmos::dust::synthetic_cells",
      kosmos::Impl::non_blocking_policy(
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, nc * nl)),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t c = wavelength_fastest ? i / nl : i % nc, l = wavelength_fastest ? i % nl : i / nc;
        const auto cell = synthetic_cell(seed, first_cell + c);
        intensity(c, l) = value(synthetic_intensity(cell, double(wavelength(l)) * 1e6));
        if (l == 0) dust_mass(c) = mass_value(cell.dust_mass_kg);
      });
}
}  // namespace dust
}  // namespace kosmos
