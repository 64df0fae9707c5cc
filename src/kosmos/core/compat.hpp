// Every difference between the Kokkos versions Kosmos supports (3.4 through 5.x) lives here:
// the math namespace, device printf, profiling regions, launch hints and version queries.
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if KOKKOS_VERSION >= 30700
#define KOSMOS_IMPL_KOKKOS_MATH_NS Kokkos
#else
#define KOSMOS_IMPL_KOKKOS_MATH_NS Kokkos::Experimental
#endif

// A loop unrolled in device code, where its arrays then stay in registers; nothing on the host.
#if defined(__CUDA_ARCH__)
#define KOSMOS_DEVICE_UNROLL _Pragma("unroll")
#else
#define KOSMOS_DEVICE_UNROLL
#endif

// Device-safe printf: Kokkos::printf arrived in 4.2; before it, CUDA accepts plain printf.
#if KOKKOS_VERSION >= 40200
#define KOSMOS_DEVICE_PRINTF(...) Kokkos::printf(__VA_ARGS__)
#else
#define KOSMOS_DEVICE_PRINTF(...) ::printf(__VA_ARGS__)
#endif

namespace kosmos {
namespace math {
using KOSMOS_IMPL_KOKKOS_MATH_NS::atan;
using KOSMOS_IMPL_KOKKOS_MATH_NS::atan2;
using KOSMOS_IMPL_KOKKOS_MATH_NS::cbrt;
using KOSMOS_IMPL_KOKKOS_MATH_NS::ceil;
using KOSMOS_IMPL_KOKKOS_MATH_NS::cos;
using KOSMOS_IMPL_KOKKOS_MATH_NS::cosh;
using KOSMOS_IMPL_KOKKOS_MATH_NS::exp;
using KOSMOS_IMPL_KOKKOS_MATH_NS::expm1;
using KOSMOS_IMPL_KOKKOS_MATH_NS::fabs;
using KOSMOS_IMPL_KOKKOS_MATH_NS::floor;
using KOSMOS_IMPL_KOKKOS_MATH_NS::fmax;
using KOSMOS_IMPL_KOKKOS_MATH_NS::fmin;
using KOSMOS_IMPL_KOKKOS_MATH_NS::fmod;
using KOSMOS_IMPL_KOKKOS_MATH_NS::isfinite;
using KOSMOS_IMPL_KOKKOS_MATH_NS::isinf;
using KOSMOS_IMPL_KOKKOS_MATH_NS::isnan;
using KOSMOS_IMPL_KOKKOS_MATH_NS::log;
using KOSMOS_IMPL_KOKKOS_MATH_NS::log10;
using KOSMOS_IMPL_KOKKOS_MATH_NS::log1p;
using KOSMOS_IMPL_KOKKOS_MATH_NS::pow;
using KOSMOS_IMPL_KOKKOS_MATH_NS::sin;
using KOSMOS_IMPL_KOKKOS_MATH_NS::sinh;
using KOSMOS_IMPL_KOKKOS_MATH_NS::sqrt;
using KOSMOS_IMPL_KOKKOS_MATH_NS::tan;
using KOSMOS_IMPL_KOKKOS_MATH_NS::trunc;

// Kokkos 3.4 has no fma; the global one is host and device callable under nvcc.
KOKKOS_FORCEINLINE_FUNCTION double fma(double a, double b, double c) { return ::fma(a, b, c); }
KOKKOS_FORCEINLINE_FUNCTION float fma(float a, float b, float c) { return ::fmaf(a, b, c); }

template <class T>
KOKKOS_FORCEINLINE_FUNCTION void sincos(T x, T* s, T* c) {
  *s = sin(x);
  *c = cos(x);
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION T rsqrt(T x) {
  return T(1) / sqrt(x);
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION constexpr T pi() {
  return T(3.141592653589793238462643383279502884L);
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION constexpr T two_pi() {
  return T(6.283185307179586476925286766559005768L);
}
}  // namespace math

// The host mirror type of a View. Kokkos 5 removes View::HostMirror and 3.4's host_mirror_type is
// another type; what create_mirror_view returns is the same in every version.
template <class View>
using host_mirror_t = decltype(Kokkos::create_mirror_view(std::declval<const View&>()));

namespace Impl {
// Whether ExecSpace runs on the host (its memory is the host's): launch shapes and layouts that
// differ between CPU threads and GPUs.
template <class ExecSpace>
constexpr bool is_host_space() {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                    typename ExecSpace::memory_space>::accessible;
}

// RAII profiling region; Kokkos::Profiling::ScopedRegion only exists from 4.1 on.
class ScopedRegion {
 public:
  explicit ScopedRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ScopedRegion() { Kokkos::Profiling::popRegion(); }
  ScopedRegion(const ScopedRegion&) = delete;
  ScopedRegion& operator=(const ScopedRegion&) = delete;
};

// `policy` for a kernel that the host should be able to queue ahead of the device: a sequence of
// small kernels (the samplers' generations) or kernels on several execution-space instances that
// should run concurrently (e.g. the dust pipeline's streams). Kokkos 3.4 and 4.x launch a CUDA
// functor of 512 bytes or more through one constant-memory buffer shared by all streams, and block
// the host before each such launch until the previous one (on any stream) has finished: the host
// then waits out every kernel, and instances serialize with the host. HintLightWeight passes
// functors below 4 kB as kernel arguments instead. No effect on host backends.
template <class Policy>
auto non_blocking_policy(const Policy& policy) {
  return Kokkos::Experimental::require(policy,
                                       Kokkos::Experimental::WorkItemProperty::HintLightWeight);
}

// N sums in one reduction (Kokkos::Sum<Sums<N>>): one team reduction instead of N. Kokkos before
// 4.0 joins reduction values through volatile references (compound assignment to which C++20
// deprecates).
template <int N>
struct Sums {
  double value[N] = {};
  KOKKOS_INLINE_FUNCTION Sums& operator+=(const Sums& other) {
    for (int i = 0; i < N; ++i) value[i] += other.value[i];
    return *this;
  }
#if KOKKOS_VERSION < 40000
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile Sums& other) volatile {
    for (int i = 0; i < N; ++i) value[i] += other.value[i];
  }
#endif
};

// A Kokkos command-line argument in the spelling of the Kokkos built against: the host thread
// count is --kokkos-threads up to 3.6 and --kokkos-num-threads from 3.7 on (4.x ignores the old
// one silently). Users and scripts may write either.
inline std::string kokkos_argument_spelling(const std::string& argument) {
#if KOKKOS_VERSION >= 30700
  const std::string old_spelling = "--kokkos-threads", new_spelling = "--kokkos-num-threads";
#else
  const std::string old_spelling = "--kokkos-num-threads", new_spelling = "--kokkos-threads";
#endif
  const auto n = old_spelling.size();
  if (argument.compare(0, n, old_spelling) == 0 && (argument.size() == n || argument[n] == '=')) {
    return new_spelling + argument.substr(n);
  }
  return argument;
}
}  // namespace Impl

// Host memory that device copies read and write at full speed, asynchronously: pinned on CUDA,
// plain host memory on host-only builds.
#if defined(KOKKOS_ENABLE_CUDA)
using pinned_host_space = Kokkos::CudaHostPinnedSpace;
#else
using pinned_host_space = Kokkos::HostSpace;
#endif

// `count` independent instances of a device `space` (their own CUDA streams) for overlapping
// copies and kernels. Kokkos 4 and later: Kokkos::Experimental::partition_space. Kokkos 3.x on
// CUDA: Cuda instances on non-blocking streams created here and destroyed with this object (after
// a fence). Host spaces (whose calls block anyway; partitioning would split their threads):
// `count` handles to `space` itself.
template <class ExecSpace>
class SpaceInstances {
 public:
  SpaceInstances(const ExecSpace& space, int count) {
    if constexpr (Impl::is_host_space<ExecSpace>()) {
      instances_.assign(std::size_t(count), space);
      return;
    }
#if KOKKOS_VERSION >= 40000
    instances_ = Kokkos::Experimental::partition_space(space, std::vector<int>(std::size_t(count), 1));
#else
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
      for (int i = 0; i < count; ++i) {
        cudaStream_t stream;
        if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
          throw std::runtime_error("kosmos::SpaceInstances: cudaStreamCreateWithFlags failed");
        streams_.push_back(stream);
        instances_.push_back(Kokkos::Cuda(stream));
      }
      return;
    }
#endif
    instances_.assign(std::size_t(count), space);
#endif
  }
  ~SpaceInstances() {
    for (const auto& instance : instances_) instance.fence();
    instances_.clear();
#if KOKKOS_VERSION < 40000 && defined(KOKKOS_ENABLE_CUDA)
    for (auto stream : streams_) cudaStreamDestroy(stream);
#endif
  }
  SpaceInstances(const SpaceInstances&) = delete;
  SpaceInstances& operator=(const SpaceInstances&) = delete;

  int size() const { return int(instances_.size()); }
  const ExecSpace& operator[](int i) const { return instances_[std::size_t(i)]; }

 private:
  std::vector<ExecSpace> instances_;
#if KOKKOS_VERSION < 40000 && defined(KOKKOS_ENABLE_CUDA)
  std::vector<cudaStream_t> streams_;
#endif
};

// Kokkos version as "major.minor.patch".
inline std::string kokkos_version_string() {
  constexpr int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}
}  // namespace kosmos

namespace Kokkos {
template <int N>
struct reduction_identity<kosmos::Impl::Sums<N>> {
  KOKKOS_FORCEINLINE_FUNCTION static kosmos::Impl::Sums<N> sum() { return {}; }
};
}  // namespace Kokkos
