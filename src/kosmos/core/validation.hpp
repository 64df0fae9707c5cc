// Checks of user-supplied Views that run on the Views' own execution space and report the first
// offending element, so an error message can name both the index and the value.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>

#include <cstdint>
#include <string>

namespace kosmos {
namespace Impl {

// Smallest i in [0, n) with bad(i), or -1. Runs one parallel_reduce on `space`.
template <class ExecSpace, class Predicate>
std::int64_t first_index_where(const ExecSpace& space, const std::string& label, std::int64_t n,
                               const Predicate& bad) {
  std::int64_t first = n;  // Kokkos::Min starts from the largest int64 in every thread
  Kokkos::parallel_reduce(
      label, Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& result) {
        if (i < result && bad(i)) result = i;
      },
      Kokkos::Min<std::int64_t>(first));
  return first >= n ? -1 : first;
}

// Host copy of one element of a rank-1 View.
template <class View>
typename View::non_const_value_type element_on_host(const View& v, std::int64_t i) {
  typename View::non_const_value_type value{};
  Kokkos::deep_copy(Kokkos::View<typename View::non_const_value_type, Kokkos::HostSpace>(&value),
                    Kokkos::subview(v, i));
  return value;
}

// Throws unless v.extent(dim) == expected, naming the View and both numbers.
template <class View>
void require_extent(const char* where, const char* name, const View& v, int dim,
                    std::size_t expected) {
  require(v.extent(dim) == expected, where, name, ".extent(", dim, ") is ", v.extent(dim),
          ", expected ", expected);
}

// Throws unless every element of the rank-1 View v is finite; names the first bad one.
template <class ExecSpace, class View>
void require_all_finite(const ExecSpace& space, const char* where, const char* name, const View& v) {
  static_assert(View::rank == 1, "kosmos::Impl::require_all_finite: rank-1 Views only");
  const auto i = first_index_where(space, "kosmos::core::check_finite", std::int64_t(v.extent(0)),
                                   KOKKOS_LAMBDA(std::int64_t k) { return !math::isfinite(v(k)); });
  if (i >= 0) throw invalid_input(concat(where, ": ", name, "(", i, ") = ", element_on_host(v, i),
                                         " is not finite"));
}
}  // namespace Impl
}  // namespace kosmos
