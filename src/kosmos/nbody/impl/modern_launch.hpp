// Launches of the system-per-thread WHFast-class and IAS15-class kernels: a Kokkos RangePolicy
// kernel on any space; on Kokkos::Cuda (with the CUDA specializations) the hand-tuned kernels of
// cuda_specializations/ (hardware rsqrt, launch bounds, the space's stream).
#pragma once

#include <kosmos/nbody/impl/ias15_system.hpp>
#include <kosmos/nbody/impl/specialization.hpp>
#include <kosmos/nbody/impl/whfast_system.hpp>

#include <type_traits>

namespace kosmos {
namespace nbody {
namespace Impl {

// Bodies per system the system-per-thread kernels are compiled for.
constexpr int system_kernel_min_bodies = 2, system_kernel_max_bodies = 8;

// f(std::integral_constant<int, n>{}) for n in [2, 8]; false (f not called) otherwise.
template <class F>
bool with_body_count(int n, F&& f) {
  switch (n) {
    case 2:
      f(std::integral_constant<int, 2>{});
      return true;
    case 3:
      f(std::integral_constant<int, 3>{});
      return true;
    case 4:
      f(std::integral_constant<int, 4>{});
      return true;
    case 5:
      f(std::integral_constant<int, 5>{});
      return true;
    case 6:
      f(std::integral_constant<int, 6>{});
      return true;
    case 7:
      f(std::integral_constant<int, 7>{});
      return true;
    case 8:
      f(std::integral_constant<int, 8>{});
      return true;
    default:
      return false;
  }
}

// The generic Kokkos WHFast kernel, on any space (on Kokkos::Cuda: the reference for the
// specialization).
template <int N, class ExecSpace>
void launch_whfast_system_generic(
    const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
    const Kokkos::View<long long*, typename ExecSpace::memory_space>& iterations,
    const WHFastParams& params) {
  WHFastSystemKernel<N, typename ExecSpace::memory_space> kernel{ens, iterations, params};
  Kokkos::parallel_for("kosmos::nbody::integrate_whfast",
                       Kokkos::RangePolicy<ExecSpace>(space, 0, ens.n_systems()), kernel);
}

template <int N, class ExecSpace>
void launch_whfast_system(
    const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
    const Kokkos::View<long long*, typename ExecSpace::memory_space>& iterations,
    const WHFastParams& params) {
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
  if constexpr (HasCudaSpecialization<ExecSpace>::value) {
    cuda_whfast_launch<N>(space, ens, iterations, params);
    return;
  }
#endif
  launch_whfast_system_generic<N>(space, ens, iterations, params);
}

template <int N, class ExecSpace>
void launch_ias15_system(
    const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
    const Kokkos::View<long long*, typename ExecSpace::memory_space>& iterations,
    const IAS15Params& params, const MergeState<typename ExecSpace::memory_space>& merge = {}) {
  IAS15SystemKernel<N, typename ExecSpace::memory_space> kernel{ens, iterations, params, merge};
  Kokkos::parallel_for("kosmos::nbody::integrate_ias15",
                       Kokkos::RangePolicy<ExecSpace>(space, 0, ens.n_systems()), kernel);
}

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
