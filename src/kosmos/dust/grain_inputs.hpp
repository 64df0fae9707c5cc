// The inputs of prepare_grains as Views on a device, filled from the host-side grain data of
// grains.hpp (wavelengths and radii in micron): one upload for every program that starts from
// tables and size distributions.
#pragma once

#include <kosmos/core/error.hpp>
#include <kosmos/dust/grains.hpp>

#include <Kokkos_Core.hpp>

#include <vector>

namespace kosmos {
namespace dust {

template <class MemorySpace>
struct GrainInputs {
  Kokkos::View<double*, MemorySpace> wavelength, width;  // (L), m
  Kokkos::View<double*, MemorySpace> radius, number;     // (S), m and grains per kg of dust
  Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> sigma;  // (S, L), m^2
};

// sigma_of(s): species s's absorption cross sections in m^2 on the wavelength grid (a
// std::vector<double> of L values, e.g. from absorption_cross_section).
template <class MemorySpace, class SigmaOf>
GrainInputs<MemorySpace> upload_grain_inputs(const std::vector<double>& wavelength_micron,
                                             const std::vector<double>& width_micron,
                                             const SizeDistribution& sizes,
                                             const SigmaOf& sigma_of) {
  const char* where = "kosmos::dust::upload_grain_inputs";
  const std::size_t nl = wavelength_micron.size(), ns = sizes.radius_micron.size();
  kosmos::Impl::require(width_micron.size() == nl, where, width_micron.size(), " bin widths for ",
                        nl, " wavelengths");
  kosmos::Impl::require(sizes.number_per_mass.size() == ns, where, sizes.number_per_mass.size(),
                        " numbers per mass for ", ns, " radii");
  GrainInputs<MemorySpace> in{
      Kokkos::View<double*, MemorySpace>("wavelength", nl),
      Kokkos::View<double*, MemorySpace>("width", nl),
      Kokkos::View<double*, MemorySpace>("radius", ns),
      Kokkos::View<double*, MemorySpace>("number", ns),
      Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace>("sigma", ns, nl)};
  auto wavelength = Kokkos::create_mirror_view(in.wavelength);
  auto width = Kokkos::create_mirror_view(in.width);
  auto radius = Kokkos::create_mirror_view(in.radius);
  auto number = Kokkos::create_mirror_view(in.number);
  auto sigma = Kokkos::create_mirror_view(in.sigma);
  for (std::size_t l = 0; l < nl; ++l) {
    wavelength(l) = wavelength_micron[l] * 1e-6;
    width(l) = width_micron[l] * 1e-6;
  }
  for (std::size_t s = 0; s < ns; ++s) {
    radius(s) = sizes.radius_micron[s] * 1e-6;
    number(s) = sizes.number_per_mass[s];
    const std::vector<double> row = sigma_of(int(s));
    kosmos::Impl::require(row.size() == nl, where, "species ", s, " has ", row.size(),
                          " cross sections for ", nl, " wavelengths");
    for (std::size_t l = 0; l < nl; ++l) sigma(s, l) = row[l];
  }
  Kokkos::deep_copy(in.wavelength, wavelength);
  Kokkos::deep_copy(in.width, width);
  Kokkos::deep_copy(in.radius, radius);
  Kokkos::deep_copy(in.number, number);
  Kokkos::deep_copy(in.sigma, sigma);
  return in;
}

}  // namespace dust
}  // namespace kosmos
