// Hand-tuned CUDA WHFast-class kernel: one thread per system (N unrolled at compile time), the
// hardware reciprocal square root for the interaction kicks, 64-thread blocks with launch bounds
// (the per-thread state is large: fewer, fuller registers), launched on the space's stream.
// Used by integrate() on Kokkos::Cuda for Method::whfast; the generic Kokkos kernel
// (launch_whfast_system_generic) stays callable for comparison.
#pragma once

#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/hermite_cuda.hpp>
#include <kosmos/nbody/impl/whfast_system.hpp>

#include <Kokkos_Core.hpp>

#include <stdexcept>
#include <string>

namespace kosmos {
namespace nbody {
namespace Impl {

constexpr int cuda_whfast_block = 64;

template <int N>
__global__ void __launch_bounds__(cuda_whfast_block)
    cuda_whfast_kernel(Ensemble<Kokkos::CudaSpace> ens,
                       Kokkos::View<long long*, Kokkos::CudaSpace> iterations,
                       WHFastParams params) {
  const int sys = blockIdx.x * blockDim.x + threadIdx.x;
  if (sys >= ens.n_systems()) return;
  whfast_system<N>(ens, iterations, sys, params, CudaRsqrt());
}

template <int N>
void cuda_whfast_launch(const Kokkos::Cuda& space, const Ensemble<Kokkos::CudaSpace>& ens,
                        const Kokkos::View<long long*, Kokkos::CudaSpace>& iterations,
                        const WHFastParams& params) {
  const int blocks = (ens.n_systems() + cuda_whfast_block - 1) / cuda_whfast_block;
  if (blocks == 0) return;
  cuda_whfast_kernel<N>
      <<<blocks, cuda_whfast_block, 0, space.cuda_stream()>>>(ens, iterations, params);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("kosmos::nbody::integrate (CUDA WHFast): ") +
                             cudaGetErrorString(err));
}

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
