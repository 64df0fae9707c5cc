// Hand-tuned CUDA launch of the system-per-thread kernels (WHFast-class, IAS15-class): one thread
// per system (N unrolled at compile time), the hardware reciprocal square root for the pair
// forces, 64-thread blocks with launch bounds (the per-thread state is large: fewer, fuller
// registers), launched on the space's stream. Used by integrate() on Kokkos::Cuda; the generic
// Kokkos kernels (launch_*_system_generic) stay callable for comparison.
#pragma once

#include <kosmos/core/cuda_check.hpp>
#include <kosmos/nbody/hermite_cuda.hpp>

#include <Kokkos_Core.hpp>

#include <string>

namespace kosmos {
namespace nbody {
namespace Impl {

constexpr int cuda_system_block = 64;

// SystemKernel: a functor whose operator()(int sys) integrates system `sys`.
template <class SystemKernel>
__global__ void __launch_bounds__(cuda_system_block)
    cuda_system_kernel(SystemKernel kernel, int n_systems) {
  const int sys = blockIdx.x * blockDim.x + threadIdx.x;
  if (sys < n_systems) kernel(sys);
}

// Throws what a kernel launch of kosmos::nbody::integrate on `what` failed with, if it failed.
inline void check_system_launch(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)  // the message is built only for a failure
    kosmos::Impl::cuda_check(status, (std::string("kosmos::nbody::integrate (CUDA ") + what + ")").c_str());
}

template <class SystemKernel>
void cuda_system_launch(const char* what, const Kokkos::Cuda& space, int n_systems,
                        const SystemKernel& kernel) {
  const int blocks = (n_systems + cuda_system_block - 1) / cuda_system_block;
  if (blocks == 0) return;
  cuda_system_kernel<<<blocks, cuda_system_block, 0, space.cuda_stream()>>>(kernel, n_systems);
  check_system_launch(what);
}

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
