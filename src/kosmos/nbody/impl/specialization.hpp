// Which execution spaces have hand-tuned kernels (cuda_specializations/kosmos/nbody/): only
// Kokkos::Cuda, only in CUDA builds. The generic Kokkos paths always stay callable.
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
#include <kosmos/nbody/forces_cuda.hpp>
#include <kosmos/nbody/hermite_cuda.hpp>
#include <kosmos/nbody/system_cuda.hpp>
#endif

namespace kosmos {
namespace nbody {
namespace Impl {

template <class ExecSpace>
struct HasCudaSpecialization : std::false_type {};
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
template <>
struct HasCudaSpecialization<Kokkos::Cuda> : std::true_type {};
#endif

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
