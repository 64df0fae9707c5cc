// Hand-tuned CUDA Hermite for few-body ensembles: one thread per system with its state in
// registers (N unrolled at compile time), the hardware reciprocal square root for the pair
// forces, launch bounds sized for register residency, launched on the space's stream. Used
// automatically by integrate() on Kokkos::Cuda for Hermite runs without monitors or logs.
#pragma once

#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/impl/hermite_system.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

namespace kosmos {
namespace nbody {
namespace Impl {

// Hardware reciprocal square root in device code (the host branch only exists so that the
// host-device function template it is passed to compiles for the host too).
struct CudaRsqrt {
  __host__ __device__ __forceinline__ double operator()(double x) const {
#if defined(__CUDA_ARCH__)
    return ::rsqrt(x);
#else
    return 1.0 / std::sqrt(x);
#endif
  }
};

constexpr int cuda_hermite_block = 128;

template <int N>
__global__ void __launch_bounds__(cuda_hermite_block)
    cuda_hermite_kernel(Ensemble<Kokkos::CudaSpace> ens, Kokkos::View<long long*, Kokkos::CudaSpace> iterations,
                        HermiteSystemParams params) {
  const int sys = blockIdx.x * blockDim.x + threadIdx.x;
  if (sys >= ens.n_systems()) return;
  hermite_system<N>(ens, iterations, sys, params, CudaRsqrt());
}

template <int N>
void cuda_hermite_launch(const Kokkos::Cuda& space, const Ensemble<Kokkos::CudaSpace>& ens,
                         const Kokkos::View<long long*, Kokkos::CudaSpace>& iterations,
                         const HermiteSystemParams& params) {
  const int blocks = (ens.n_systems() + cuda_hermite_block - 1) / cuda_hermite_block;
  if (blocks == 0) return;
  cuda_hermite_kernel<N><<<blocks, cuda_hermite_block, 0, space.cuda_stream()>>>(ens, iterations, params);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("kosmos::nbody::integrate (CUDA Hermite): ") + cudaGetErrorString(err));
}

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
