// The execution spaces every typed suite runs on: all that this Kokkos build enables.
#pragma once

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <tuple>
#include <type_traits>

namespace kosmos_test {
namespace detail {
template <class... Ts>
struct TypeList {};
template <class List, class T, bool Enabled>
struct Append;
template <class... Ts, class T>
struct Append<TypeList<Ts...>, T, true> {
  using type = TypeList<Ts..., T>;
};
template <class... Ts, class T>
struct Append<TypeList<Ts...>, T, false> {
  using type = TypeList<Ts...>;
};
template <class List>
struct ToGTest;
template <class... Ts>
struct ToGTest<TypeList<Ts...>> {
  using type = ::testing::Types<Ts...>;
};

struct NoSpace {};
#if defined(KOKKOS_ENABLE_SERIAL)
using SerialOrNone = Kokkos::Serial;
#else
using SerialOrNone = NoSpace;
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
using OpenMPOrNone = Kokkos::OpenMP;
#else
using OpenMPOrNone = NoSpace;
#endif
#if defined(KOKKOS_ENABLE_CUDA)
using CudaOrNone = Kokkos::Cuda;
#else
using CudaOrNone = NoSpace;
#endif
template <class T>
constexpr bool enabled = !std::is_same<T, NoSpace>::value;

using Spaces = typename Append<
    typename Append<typename Append<TypeList<>, SerialOrNone, enabled<SerialOrNone>>::type,
                    OpenMPOrNone, enabled<OpenMPOrNone>>::type,
    CudaOrNone, enabled<CudaOrNone>>::type;
}  // namespace detail

using ExecutionSpaces = typename detail::ToGTest<detail::Spaces>::type;

// Readable names in test output: "Serial", "OpenMP", "Cuda".
struct SpaceName {
  template <class Space>
  static std::string GetName(int) {
    return Space::name();
  }
};

// A "hand-tuned CUDA kernel vs generic Kokkos path" comparison is a test only where the CUDA
// specialization is compiled for the space; elsewhere both calls run the generic path and the
// comparison could not fail, so the test is skipped (never reported as passed).
#define KOSMOS_SKIP_WITHOUT_CUDA_SPECIALIZATION(has_specialization, Space)                      \
  if (!(has_specialization))                                                                   \
  GTEST_SKIP() << "no hand-tuned CUDA kernel for " << Space::name()                            \
               << " in this build: comparing it with the generic path would compare the "      \
                  "generic path with itself"

// True when the space runs on the GPU (used to pick problem sizes, never to skip checks).
template <class Space>
constexpr bool is_device_space() {
#if defined(KOKKOS_ENABLE_CUDA)
  return std::is_same<Space, Kokkos::Cuda>::value;
#else
  return false;
#endif
}
}  // namespace kosmos_test
