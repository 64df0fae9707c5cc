// Input checks of the dust kernels: each names the array, the element and the bad value.
#pragma once

#include <kosmos/core/validation.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace kosmos {
namespace dust {
namespace Impl {

// Throws unless every element of the rank-1 View v is finite and > 0 (or >= 0 when allow_zero).
// first_index is added to the index in the message (v may be a chunk of a longer array).
template <class ExecSpace, class View>
void require_positive(const ExecSpace& space, const char* where, const char* name, const View& v,
                      bool allow_zero = false, std::int64_t first_index = 0) {
  const std::int64_t n = std::int64_t(v.extent(0));
  const auto i = kosmos::Impl::first_index_where(
      space, "kosmos::dust::validate", n, KOKKOS_LAMBDA(std::int64_t k) {
        const double value = double(v(k));
        return !math::isfinite(value) || value < 0.0 || (!allow_zero && value == 0.0);
      });
  if (i >= 0)
    throw invalid_input(kosmos::Impl::concat(where, ": ", name, "(", first_index + i, ") = ",
                                             kosmos::Impl::element_on_host(v, i), " must be finite and ",
                                             allow_zero ? ">= 0" : "> 0"));
}

// Same for a rank-2 View; the message gives both indices (the first offset by first_row).
template <class ExecSpace, class View>
void require_positive_2d(const ExecSpace& space, const char* where, const char* name, const View& v,
                         bool allow_zero = false, std::int64_t first_row = 0) {
  const std::int64_t n0 = std::int64_t(v.extent(0)), n1 = std::int64_t(v.extent(1));
  // k runs through memory order: the first index fastest (LayoutLeft) or the second (LayoutRight).
  constexpr bool right = std::is_same<typename View::array_layout, Kokkos::LayoutRight>::value;
  const auto i = kosmos::Impl::first_index_where(
      space, "kosmos::dust::validate", n0 * n1, KOKKOS_LAMBDA(std::int64_t k) {
        const double value = double(right ? v(k / n1, k % n1) : v(k % n0, k / n0));
        return !math::isfinite(value) || value < 0.0 || (!allow_zero && value == 0.0);
      });
  if (i >= 0) {
    const std::int64_t a = right ? i / n1 : i % n0, b = right ? i % n1 : i / n0;
    typename View::non_const_value_type value{};
    Kokkos::deep_copy(Kokkos::View<typename View::non_const_value_type, Kokkos::HostSpace>(&value),
                      Kokkos::subview(v, a, b));
    throw invalid_input(kosmos::Impl::concat(where, ": ", name, "(", first_row + a, ", ", b, ") = ", value,
                                             " must be finite and ", allow_zero ? ">= 0" : "> 0"));
  }
}

// The checks of validate_cells as one reduction that need not block the host: the smallest k
// with an invalid cell input goes to `first_invalid` (a Kokkos::Min<std::int64_t> reducer: on a
// host scalar the call blocks, on a View in the space's memory it is only queued), the largest
// int64 when all are valid. k < C L: intensity (C, L) in memory order, not finite or < 0;
// k >= C L: dust_mass(k - C L) not finite or <= 0. invalid_cell_message decodes k.
template <class ExecSpace, class Intensity, class Mass, class Reducer>
void find_invalid_cell(const ExecSpace& space, const Intensity& intensity, const Mass& dust_mass,
                       const Reducer& first_invalid) {
  const std::int64_t n0 = std::int64_t(intensity.extent(0)), n1 = std::int64_t(intensity.extent(1));
  const std::int64_t n_intensity = n0 * n1;
  constexpr bool right = std::is_same<typename Intensity::array_layout, Kokkos::LayoutRight>::value;
  using policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_reduce(
      "kosmos::dust::validate_cells",
      kosmos::Impl::non_blocking_policy(
          policy(space, 0, n_intensity + std::int64_t(dust_mass.extent(0)))),
      KOKKOS_LAMBDA(const std::int64_t k, std::int64_t& first) {
        if (k >= first) return;
        if (k < n_intensity) {
          const double value =
              double(right ? intensity(k / n1, k % n1) : intensity(k % n0, k / n0));
          if (!math::isfinite(value) || value < 0.0) first = k;
        } else {
          const double value = double(dust_mass(k - n_intensity));
          if (!math::isfinite(value) || value <= 0.0) first = k;
        }
      },
      first_invalid);
}

// The message for find_invalid_cell's k (< C L + C), naming the cell (offset by first_cell), the
// wavelength and the value (copied from the Views).
template <class Intensity, class Mass>
std::string invalid_cell_message(const char* where, const Intensity& intensity,
                                 const Mass& dust_mass, std::int64_t k, std::int64_t first_cell) {
  const std::int64_t n0 = std::int64_t(intensity.extent(0)), n1 = std::int64_t(intensity.extent(1));
  if (k >= n0 * n1)
    return kosmos::Impl::concat(where, ": dust_mass(", first_cell + k - n0 * n1,
                                ") = ", kosmos::Impl::element_on_host(dust_mass, k - n0 * n1),
                                " must be finite and > 0");
  constexpr bool right = std::is_same<typename Intensity::array_layout, Kokkos::LayoutRight>::value;
  const std::int64_t c = right ? k / n1 : k % n0, l = right ? k % n1 : k / n0;
  return kosmos::Impl::concat(
      where, ": intensity(", first_cell + c, ", ", l,
      ") = ", kosmos::Impl::element_on_host(Kokkos::subview(intensity, c, Kokkos::ALL), l),
      " must be finite and >= 0");
}

// Throws unless v is strictly increasing.
template <class ExecSpace, class View>
void require_increasing(const ExecSpace& space, const char* where, const char* name, const View& v) {
  const std::int64_t n = std::int64_t(v.extent(0));
  const auto i = kosmos::Impl::first_index_where(
      space, "kosmos::dust::validate", n - 1 > 0 ? n - 1 : 0,
      KOKKOS_LAMBDA(std::int64_t k) { return !(v(k + 1) > v(k)); });
  if (i >= 0)
    throw invalid_input(kosmos::Impl::concat(
        where, ": ", name, " must be strictly increasing, but ", name, "(", i + 1, ") = ",
        kosmos::Impl::element_on_host(v, i + 1), " <= ", name, "(", i, ") = ",
        kosmos::Impl::element_on_host(v, i)));
}
}  // namespace Impl
}  // namespace dust
}  // namespace kosmos
