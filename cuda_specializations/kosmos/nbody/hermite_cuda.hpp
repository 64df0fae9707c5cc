// Hand-tuned CUDA Hermite for few-body ensembles: one thread per system with its state in
// registers (N unrolled at compile time; from 6 bodies on the corrector sums in shared memory), the hardware reciprocal square root for the pair
// forces, launch bounds sized for register residency, launched on the space's stream. Used
// automatically by integrate() on Kokkos::Cuda for Hermite runs without monitors or logs.
#pragma once

#include <kosmos/core/cuda_check.hpp>
#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/impl/hermite_system.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>

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
// From this many bodies on, the 19n doubles of a system's state exceed the 255 registers of a
// thread: the corrector sums (6n doubles) move to shared memory, element k of thread t at
// [k * blockDim.x + t] (no bank conflicts), in blocks of 64 threads (at most 24 kB at n = 8). On an
// H100 this gained 4-7 % at n = 6..8; those n still run ~10x slower per system than n = 5.
constexpr int cuda_hermite_shared_sums_from = 6;
constexpr int cuda_hermite_shared_block = 64;

template <int N>
struct SharedCorrectorSums {
  double* first;  // this thread's element 0
  int stride;     // threads per block
  __host__ __device__ double& v(int k) { return first[k * stride]; }
  __host__ __device__ double& x(int k) { return first[(3 * N + k) * stride]; }
};

template <int N>
__global__ void __launch_bounds__(cuda_hermite_block)
    cuda_hermite_kernel(Ensemble<Kokkos::CudaSpace> ens, Kokkos::View<long long*, Kokkos::CudaSpace> iterations,
                        HermiteSystemParams params) {
  const int sys = blockIdx.x * blockDim.x + threadIdx.x;
  if (sys >= ens.n_systems()) return;
  if constexpr (N >= cuda_hermite_shared_sums_from) {
    extern __shared__ double shared_sums[];
    SharedCorrectorSums<N> sums{shared_sums + threadIdx.x, int(blockDim.x)};
    hermite_system<N>(ens, iterations, sys, params, CudaRsqrt(), sums);
  } else {
    LocalCorrectorSums<N> sums;
    hermite_system<N>(ens, iterations, sys, params, CudaRsqrt(), sums);
  }
}

template <int N>
void cuda_hermite_launch(const Kokkos::Cuda& space, const Ensemble<Kokkos::CudaSpace>& ens,
                         const Kokkos::View<long long*, Kokkos::CudaSpace>& iterations,
                         const HermiteSystemParams& params) {
  constexpr bool shared = N >= cuda_hermite_shared_sums_from;
  constexpr int block = shared ? cuda_hermite_shared_block : cuda_hermite_block;
  constexpr std::size_t shared_bytes = shared ? std::size_t(6 * N) * block * sizeof(double) : 0;
  const int blocks = (ens.n_systems() + block - 1) / block;
  if (blocks == 0) return;
  cuda_hermite_kernel<N><<<blocks, block, shared_bytes, space.cuda_stream()>>>(ens, iterations, params);
  kosmos::Impl::cuda_check_launch("kosmos::nbody::integrate (CUDA Hermite)");
}

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
