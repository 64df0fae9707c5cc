// Launches of the system-per-thread WHFast-class and IAS15-class kernels: a Kokkos RangePolicy
// kernel on any space; on Kokkos::Cuda (with the CUDA specializations) the hand-tuned launch of
// cuda_specializations/kosmos/nbody/system_cuda.hpp (hardware rsqrt, launch bounds, the space's
// stream) of the same device function, or for IAS15 a lane per body (ias15_cuda.hpp).
#pragma once

#include <kosmos/nbody/integrators/ias15.hpp>
#include <kosmos/nbody/integrators/mercurius.hpp>
#include <kosmos/nbody/impl/specialization.hpp>
#include <kosmos/nbody/integrators/whfast.hpp>

#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
#include <kosmos/nbody/ias15_cuda.hpp>
#endif

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

// The generic Kokkos kernel of a system-per-thread integrator, on any space (on Kokkos::Cuda: the
// reference for the specialization). extra: the kernel's members after params (IAS15's merge state).
template <template <int, class, class> class SystemKernel, int N, class ExecSpace, class Params,
          class... Extra>
void launch_system_generic(const char* label, const ExecSpace& space,
                           const Ensemble<typename ExecSpace::memory_space>& ens,
                           const Kokkos::View<long long*, typename ExecSpace::memory_space>& iterations,
                           const Params& params, const Extra&... extra) {
  SystemKernel<N, typename ExecSpace::memory_space, PortableRsqrt> kernel{ens, iterations, params,
                                                                          extra...};
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace>(space, 0, ens.n_systems()), kernel);
}

// The hand-tuned launch on Kokkos::Cuda (with the CUDA specializations), the generic one elsewhere.
template <template <int, class, class> class SystemKernel, int N, class ExecSpace, class Params,
          class... Extra>
void launch_system(const char* label, const ExecSpace& space,
                   const Ensemble<typename ExecSpace::memory_space>& ens,
                   const Kokkos::View<long long*, typename ExecSpace::memory_space>& iterations,
                   const Params& params, const Extra&... extra) {
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
  if constexpr (HasCudaSpecialization<ExecSpace>::value) {
    cuda_system_launch(label, space, ens.n_systems(),
                       SystemKernel<N, Kokkos::CudaSpace, CudaRsqrt>{ens, iterations, params, extra...});
    return;
  }
#endif
  launch_system_generic<SystemKernel, N>(label, space, ens, iterations, params, extra...);
}

// carried: the state carried between launches (impl/carried.hpp; empty: none).
template <int N, class ExecSpace, class Iterations>
void launch_whfast_system_generic(
    const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
    const Iterations& iterations, const WHFastParams& params,
    const CarriedState<typename ExecSpace::memory_space>& carried = {}) {
  launch_system_generic<WHFastSystemKernel, N>("kosmos::nbody::integrate_whfast", space, ens,
                                               iterations, params, carried);
}
template <int N, class ExecSpace, class Iterations>
void launch_whfast_system(const ExecSpace& space,
                          const Ensemble<typename ExecSpace::memory_space>& ens,
                          const Iterations& iterations, const WHFastParams& params,
                          const CarriedState<typename ExecSpace::memory_space>& carried = {}) {
  launch_system<WHFastSystemKernel, N>("kosmos::nbody::integrate_whfast", space, ens, iterations,
                                       params, carried);
}
template <int N, class ExecSpace, class Iterations>
void launch_mercurius_system_generic(
    const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
    const Iterations& iterations, const MercuriusParams& params,
    const CarriedState<typename ExecSpace::memory_space>& carried = {}) {
  launch_system_generic<MercuriusSystemKernel, N>("kosmos::nbody::integrate_mercurius", space, ens,
                                                  iterations, params, carried);
}
template <int N, class ExecSpace, class Iterations>
void launch_mercurius_system(const ExecSpace& space,
                             const Ensemble<typename ExecSpace::memory_space>& ens,
                             const Iterations& iterations, const MercuriusParams& params,
                             const CarriedState<typename ExecSpace::memory_space>& carried = {}) {
  launch_system<MercuriusSystemKernel, N>("kosmos::nbody::integrate_mercurius", space, ens,
                                          iterations, params, carried);
}
// merge: the merge state when params.monitor.config.merging() (else unused).
template <int N, class ExecSpace, class Iterations>
void launch_ias15_system_generic(
    const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
    const Iterations& iterations, const IAS15Params& params,
    const MergeState<typename ExecSpace::memory_space>& merge = {},
    const CarriedState<typename ExecSpace::memory_space>& carried = {}) {
  launch_system_generic<IAS15SystemKernel, N>("kosmos::nbody::integrate_ias15", space, ens,
                                              iterations, params, merge, carried);
}
// MEGNO runs (the bodies and their variational equations) on every space through the generic
// kernel: the CUDA specializations do not integrate variational equations.
template <int N, class ExecSpace, class Iterations>
void launch_ias15_megno(const ExecSpace& space,
                        const Ensemble<typename ExecSpace::memory_space>& ens,
                        const Iterations& iterations, const IAS15Params& params,
                        const MegnoState<typename ExecSpace::memory_space>& megno,
                        const CarriedState<typename ExecSpace::memory_space>& carried = {}) {
  launch_system_generic<IAS15MegnoKernel, N>("kosmos::nbody::integrate_ias15_megno", space, ens,
                                             iterations, params, megno, carried);
}
// On Kokkos::Cuda (with the CUDA specializations) a lane per body (ias15_cuda.hpp), or, when
// bodies may merge, the hand-tuned system-per-thread launch.
template <int N, class ExecSpace, class Iterations>
void launch_ias15_system(const ExecSpace& space,
                         const Ensemble<typename ExecSpace::memory_space>& ens,
                         const Iterations& iterations, const IAS15Params& params,
                         const MergeState<typename ExecSpace::memory_space>& merge = {},
                         const CarriedState<typename ExecSpace::memory_space>& carried = {}) {
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
  if constexpr (HasCudaSpecialization<ExecSpace>::value) {
    if (!params.monitor.config.merging()) {
      cuda_ias15_lanes_launch<N>(space, ens, iterations, params, carried);
      return;
    }
  }
#endif
  launch_system<IAS15SystemKernel, N>("kosmos::nbody::integrate_ias15", space, ens, iterations,
                                      params, merge, carried);
}

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
