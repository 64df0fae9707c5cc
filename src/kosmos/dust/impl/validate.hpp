// Input checks of the dust kernels: each names the array, the element and the bad value.
#pragma once

#include <kosmos/core/validation.hpp>

#include <cstdint>
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
