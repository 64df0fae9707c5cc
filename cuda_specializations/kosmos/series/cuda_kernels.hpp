// Hand-tuned CUDA kernels for kosmos::series (included by kosmos/series/evaluate.hpp only when
// KOSMOS_ENABLE_CUDA_SPECIALIZATIONS is defined). One launch per layer of jobs, as in the paper:
//
//  * convolution, N >= 3 (cuda_convolution_folded_kernel): one thread per (job, pair p) computes
//    z_p and then z_{d-p}, d + 2 products for every thread, so the triangle of the convolution is
//    spread evenly (no warp runs past its diagonal, no multiplication by an inserted zero, no
//    idle lanes but in a layer's last warp); the (job, pair) units of a layer are packed densely
//    into blocks and the operands read through the read-only cache. The partial sum stays in
//    registers; each product is operator*'s, bit for bit, and is added to the running sum by
//    depositing its limbs into the sum's accumulator (one renormalization, half the two_sums of
//    operator+). Measured on an H200 (p1, degree 152, N = 10): 114 ms -> about 50 ms per
//    evaluation, from fewer products (15136 -> 11858 per job), the cheaper addition and no
//    shared-memory staging or barriers.
//  * convolution, N <= 2 (cuda_convolution_kernel): one block per (job, output tile), one thread
//    per output coefficient, the partial sum Z_k kept in registers (not shared memory), operands
//    staged in dynamic shared memory with the paper's zero insertion. The inner loop runs to a
//    warp-uniform bound (the largest coefficient index of the warp) instead of to d: the zeros
//    inserted before y_0 make the extra terms vanish for the lower lanes, so there is still no
//    divergence, but the multiplications by known zeros above a warp's diagonal are skipped
//    (about half of the (d + 1)^2 work). Tiles of at most MaxThreads<N> coefficients (more shared
//    memory via the opt-in attribute) handle any degree.
//  * addition: one block per job, consecutive threads add consecutive coefficients.
#pragma once

#include <kosmos/core/cuda_check.hpp>
#include <kosmos/core/multi_double.hpp>
#include <kosmos/series/polynomial.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kosmos {
namespace series {
namespace Impl {

// Threads per block: fewer for more limbs, so the multi-double registers fit without spilling.
// ptxas (sm_90, CUDA 13): tiled kernel N = 1: 30 registers, N = 2: 44; folded kernel N = 4: 72,
// N = 10: 164, no spills; so N <= 5 runs 256 threads (d <= 255 in one tile for N <= 2) and N = 8,
// 10 run 128 threads (3 blocks per SM at 164 registers; forcing 128 registers for 4 blocks spills
// and measured no better: 48.3 ms on p1 but 108 ms on p2, against 49.6 and 101 ms at 2 blocks).
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

// ---- folded convolution (N >= 3) ----

template <int N>
__device__ __forceinline__ void cuda_load_global(double (&r)[N], const double* __restrict__ base,
                                                 std::int64_t ld) {
#pragma unroll
  for (int l = 0; l < N; ++l) r[l] = __ldg(base + l * ld);
}

// One thread per (job, pair p): it computes z_p = sum_{t <= p} x_t y_{p-t}, then
// z_{d-p} = sum_{t <= d-p} x_t y_{d-p-t}, d + 2 products in all for every thread, so every lane of
// a warp runs the same trip count and no multiplication by an inserted zero is done (the work is
// the exact triangle, (d + 1)(d + 2) / 2 products per job, spread evenly). The (job, pair) units
// of a layer are packed densely into blocks; operands are read through the read-only cache (a
// job's x and y stay L1/L2 resident while its pairs run).
template <int N, bool Complex>
__global__ void __launch_bounds__(cuda_max_threads<N>())
    cuda_convolution_folded_kernel(const double* __restrict__ in1, const double* __restrict__ in2,
                                   double* __restrict__ out, std::int64_t ld, const Job* __restrict__ jobs,
                                   int d, int pairs, std::int64_t units) {
  const std::int64_t u = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (u >= units) return;
  const Job job = jobs[u / pairs];
  const int p = int(u % pairs);
  const std::int64_t n1 = d + 1;
  const double* X = in1 + job.x * n1;
  const double* Y = in2 + job.y * n1;
  double* Z = out + job.out * n1;
  MultiDouble<N> re, im;
  for (int s = 0; s <= d + 1; ++s) {
    const bool first = s <= p;
    const int t = first ? s : s - p - 1;
    const int w = first ? p - s : d + 1 - s;
    MultiDouble<N> xr, yr;
    cuda_load_global<N>(xr.limb, X + t, ld);
    cuda_load_global<N>(yr.limb, Y + w, ld);
    if constexpr (!Complex) {
      // re += x_t y_w: the product exactly as operator* (bit for bit, so that unnormalized inputs
      // round as on the generic path), then its limbs deposited at their levels into the
      // accumulator of the running sum and one renormalization: 55 instead of operator+'s 110
      // two_sums for N = 10. Both operands are renormalized N-limb numbers, so the cascade is
      // exact down to slot N and the sum is as accurate as operator+.
      const MultiDouble<N> prod = xr * yr;
      double acc[N + 1];
#pragma unroll
      for (int l = 0; l < N; ++l) acc[l] = re.limb[l];
      acc[N] = 0.0;
#pragma unroll
      for (int l = 0; l < N; ++l) ::kosmos::Impl::deposit<N + 1>(acc, l, prod.limb[l]);
      re = ::kosmos::Impl::renormalize<N>(acc);
    } else {
      MultiDouble<N> xi, yi;
      cuda_load_global<N>(xi.limb, X + t + N * ld, ld);
      cuda_load_global<N>(yi.limb, Y + w + N * ld, ld);
      re = re + (xr * yr - xi * yi);
      im = im + (xr * yi + xi * yr);
    }
    if (s == p) {
#pragma unroll
      for (int l = 0; l < N; ++l) Z[p + l * ld] = re.limb[l];
      if constexpr (Complex) {
#pragma unroll
        for (int l = 0; l < N; ++l) Z[p + (N + l) * ld] = im.limb[l];
      }
      re = MultiDouble<N>();
      im = MultiDouble<N>();
    }
  }
  // d - p >= p; for p = d / 2 (d even) this rewrites z_p with the same value
#pragma unroll
  for (int l = 0; l < N; ++l) Z[d - p + l * ld] = re.limb[l];
  if constexpr (Complex) {
#pragma unroll
    for (int l = 0; l < N; ++l) Z[d - p + (N + l) * ld] = im.limb[l];
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
    if constexpr (N >= 3) {
      const int pairs = d / 2 + 1;
      const std::int64_t units = count * pairs;
      const int threads = cuda_max_threads<N>();
      const std::int64_t blocks = (units + threads - 1) / threads;
      if (blocks >= (std::int64_t(1) << 31))
        throw std::runtime_error("kosmos::series (CUDA): too many convolution jobs in one layer");
      cuda_convolution_folded_kernel<N, Complex><<<unsigned(blocks), unsigned(threads), 0, stream>>>(
          in1, in2, out, ld, jobs, d, pairs, units);
      kosmos::Impl::cuda_check_launch("kosmos::series (CUDA) convolution launch");
    } else {
      const int T = tile(d);
      const int tiles = (d + 1 + T - 1) / T;
      const std::size_t bytes = std::size_t(3) * T * L * sizeof(double);
      if (bytes > 48 * 1024) {
        kosmos::Impl::cuda_check(cudaFuncSetAttribute(cuda_convolution_kernel<N, Complex>,
                                                      cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
                                 "kosmos::series (CUDA) shared memory opt-in");
      }
      const std::int64_t blocks = count * tiles;
      if (blocks >= (std::int64_t(1) << 31))
        throw std::runtime_error("kosmos::series (CUDA): too many convolution jobs in one layer");
      cuda_convolution_kernel<N, Complex><<<unsigned(blocks), unsigned(T), bytes, stream>>>(in1, in2, out, ld,
                                                                                          jobs, d, T, tiles);
      kosmos::Impl::cuda_check_launch("kosmos::series (CUDA) convolution launch");
    }
  }

  static void addition_layer(cudaStream_t stream, const double* in1, const double* in2, double* out,
                             std::int64_t ld, const Job* jobs, std::int64_t count, int d) {
    const int threads = d + 1 < 256 ? ((d + 1 + 31) / 32) * 32 : 256;
    cuda_addition_kernel<N, Complex><<<unsigned(count), unsigned(threads), 0, stream>>>(in1, in2, out, ld, jobs, d);
    kosmos::Impl::cuda_check_launch("kosmos::series (CUDA) addition launch");
  }
};
}  // namespace Impl
}  // namespace series
}  // namespace kosmos
