// Hand-tuned CUDA kernels for kosmos::series (included by kosmos/series/evaluate.hpp only when
// KOSMOS_ENABLE_CUDA_SPECIALIZATIONS is defined). One launch per layer of jobs, as in the paper:
//
//  * convolution: one block per (job, output tile), one thread per output coefficient, the
//    partial sum Z_k kept in registers (not shared memory), operands staged in dynamic shared
//    memory with the paper's zero insertion. The inner loop runs to a warp-uniform bound (the
//    largest coefficient index of the warp) instead of to d: the zeros inserted before y_0 make
//    the extra terms vanish for the lower lanes, so there is still no divergence, but the
//    multiplications by known zeros above a warp's diagonal are skipped (about half of the
//    (d + 1)^2 work). Tiles of at most MaxThreads<N> coefficients (more shared memory via the
//    opt-in attribute) handle any degree.
//  * addition: one block per job, consecutive threads add consecutive coefficients.
#pragma once

#include <kosmos/core/multi_double.hpp>
#include <kosmos/series/polynomial.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kosmos {
namespace series {
namespace Impl {

// Threads per block (= coefficients per tile): fewer for more limbs, so the multi-double
// registers fit without spilling. ptxas (sm_90, CUDA 13) reports for the real kernels: N = 1:
// 30 registers, N = 2: 44, N = 4: 70, N = 10: 153, no spills; so N <= 5 runs 256 threads (d <= 255
// in one tile) and N = 8, 10 run 128 threads (3 blocks per SM at 153 registers).
template <int N>
constexpr int cuda_max_threads() {
  return N == 1 ? 512 : (N <= 5 ? 256 : 128);
}

template <int N>
__device__ __forceinline__ MultiDouble<N> cuda_load_shared(const double* base, int stride, int t) {
  MultiDouble<N> r;
#pragma unroll
  for (int l = 0; l < N; ++l) r.limb[l] = base[l * stride + t];
  return r;
}

template <int N, bool Complex>
__global__ void __launch_bounds__(cuda_max_threads<N>())
    cuda_convolution_kernel(const double* __restrict__ in1, const double* __restrict__ in2,
                            double* __restrict__ out, std::int64_t ld, const Job* __restrict__ jobs,
                            int d, int tile, int tiles) {
  constexpr int L = Complex ? 2 * N : N;
  extern __shared__ double shared[];
  const int T = tile;
  double* X = shared;          // L arrays of T
  double* Y = shared + L * T;  // L arrays of 2T (zero-inserted window)
  const Job job = jobs[blockIdx.x / tiles];
  const int k0 = int(blockIdx.x % tiles) * T;
  const std::int64_t n1 = d + 1;
  const std::int64_t xo = job.x * n1, yo = job.y * n1, oo = job.out * n1;
  const int kk = threadIdx.x;
  const int k = k0 + kk;
  const int warp_first = k0 + (kk & ~31);
  int warp_last = k0 + (kk | 31);
  if (warp_last > k0 + T - 1) warp_last = k0 + T - 1;
  if (warp_last > d) warp_last = d;
  MultiDouble<N> re, im;
  const int last = (k0 + T - 1 < d) ? k0 + T - 1 : d;
  for (int i0 = 0; i0 <= last; i0 += T) {
    __syncthreads();
    for (int t = threadIdx.x; t < T; t += blockDim.x) {
      const int i = i0 + t;
#pragma unroll
      for (int l = 0; l < L; ++l) X[l * T + t] = i <= d ? in1[xo + i + l * ld] : 0.0;
    }
    for (int t = threadIdx.x; t < 2 * T; t += blockDim.x) {
      const int yi = k0 - i0 - (T - 1) + t;
      const bool inside = yi >= 0 && yi <= d;
#pragma unroll
      for (int l = 0; l < L; ++l) Y[l * 2 * T + t] = inside ? in2[yo + yi + l * ld] : 0.0;
    }
    __syncthreads();
    int tmax = warp_last - i0;
    if (tmax > T - 1) tmax = T - 1;
    if (warp_first > d) tmax = -1;
    for (int t = 0; t <= tmax; ++t) {
      const int w = kk - t + T - 1;
      if constexpr (!Complex) {
        re = re + cuda_load_shared<N>(X, T, t) * cuda_load_shared<N>(Y, 2 * T, w);
      } else {
        const auto xr = cuda_load_shared<N>(X, T, t), xi = cuda_load_shared<N>(X + N * T, T, t);
        const auto yr = cuda_load_shared<N>(Y, 2 * T, w), yim = cuda_load_shared<N>(Y + N * 2 * T, 2 * T, w);
        re = re + (xr * yr - xi * yim);
        im = im + (xr * yim + xi * yr);
      }
    }
  }
  if (k <= d && kk < T) {
#pragma unroll
    for (int l = 0; l < N; ++l) out[oo + k + l * ld] = re.limb[l];
    if constexpr (Complex) {
#pragma unroll
      for (int l = 0; l < N; ++l) out[oo + k + (N + l) * ld] = im.limb[l];
    }
  }
}

template <int N, bool Complex>
__global__ void cuda_addition_kernel(const double* in1, const double* in2,
                                     double* out, std::int64_t ld, const Job* __restrict__ jobs, int d) {
  constexpr int L = Complex ? 2 * N : N;
  const Job job = jobs[blockIdx.x];
  const std::int64_t n1 = d + 1;
  for (int k = threadIdx.x; k <= d; k += blockDim.x) {
#pragma unroll
    for (int part = 0; part < L; part += N) {
      MultiDouble<N> a, b;
#pragma unroll
      for (int l = 0; l < N; ++l) {
        a.limb[l] = in1[job.x * n1 + k + (part + l) * ld];
        b.limb[l] = in2[job.y * n1 + k + (part + l) * ld];
      }
      const MultiDouble<N> c = a + b;
#pragma unroll
      for (int l = 0; l < N; ++l) out[job.out * n1 + k + (part + l) * ld] = c.limb[l];
    }
  }
}

inline void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("kosmos::series (CUDA) ") + what + ": " + cudaGetErrorString(status));
}

template <int N, bool Complex>
struct CudaSeriesKernels {
  static constexpr int L = Complex ? 2 * N : N;

  // Output tile: all d + 1 coefficients in one block when they fit, else equal tiles rounded up
  // to whole warps.
  static int tile(int d) {
    const int max_threads = cuda_max_threads<N>();
    if (d + 1 <= max_threads) return d + 1;
    const int tiles = (d + 1 + max_threads - 1) / max_threads;
    const int t = (d + 1 + tiles - 1) / tiles;
    return (t + 31) / 32 * 32;
  }

  // data arrays: LayoutLeft, limb l of row r at base[r + l * ld]; jobs in device memory.
  static void convolution_layer(cudaStream_t stream, const double* in1, const double* in2, double* out,
                                std::int64_t ld, const Job* jobs, std::int64_t count, int d) {
    const int T = tile(d);
    const int tiles = (d + 1 + T - 1) / T;
    const std::size_t bytes = std::size_t(3) * T * L * sizeof(double);
    if (bytes > 48 * 1024) {
      cuda_check(cudaFuncSetAttribute(cuda_convolution_kernel<N, Complex>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
                 "shared memory opt-in");
    }
    const std::int64_t blocks = count * tiles;
    if (blocks >= (std::int64_t(1) << 31))
      throw std::runtime_error("kosmos::series (CUDA): too many convolution jobs in one layer");
    cuda_convolution_kernel<N, Complex><<<unsigned(blocks), unsigned(T), bytes, stream>>>(in1, in2, out, ld, jobs,
                                                                                        d, T, tiles);
    cuda_check(cudaGetLastError(), "convolution launch");
  }

  static void addition_layer(cudaStream_t stream, const double* in1, const double* in2, double* out,
                             std::int64_t ld, const Job* jobs, std::int64_t count, int d) {
    const int threads = d + 1 < 256 ? ((d + 1 + 31) / 32) * 32 : 256;
    cuda_addition_kernel<N, Complex><<<unsigned(count), unsigned(threads), 0, stream>>>(in1, in2, out, ld, jobs, d);
    cuda_check(cudaGetLastError(), "addition launch");
  }
};
}  // namespace Impl
}  // namespace series
}  // namespace kosmos
