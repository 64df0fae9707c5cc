// Hand-tuned CUDA force-pair kernel for ensembles: a block owns SB systems; positions, velocities
// and masses are staged in shared memory with coalesced loads (consecutive threads take
// consecutive systems of a chunk), one thread per (body pair, system) evaluates the pair with the
// hardware rsqrt and accumulates both bodies' acceleration and jerk with shared-memory atomics,
// then the sums are written back coalesced. Included by forces.hpp only in CUDA builds.
#pragma once

#include <kosmos/core/cuda_check.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/gravity.hpp>

#include <Kokkos_Core.hpp>

namespace kosmos {
namespace nbody {
namespace Impl {

template <class Ens, class BodyView>
__global__ void cuda_acc_jerk_kernel(Ens ens, BodyView acc, BodyView jerk, int SB) {
  extern __shared__ double smem[];
  const int n = ens.n_bodies(), n3 = 3 * n, pairs = n * (n - 1) / 2;
  const int n_sys = ens.n_systems();
  const int first = blockIdx.x * SB;
  double* xs = smem;               // [3n][SB]
  double* vs = xs + n3 * SB;       // [3n][SB]
  double* ms = vs + n3 * SB;       // [n][SB]
  double* as = ms + n * SB;        // [3n][SB]
  double* js = as + n3 * SB;       // [3n][SB]
  for (int idx = threadIdx.x; idx < n3 * SB; idx += blockDim.x) {
    const int s = idx % SB, k = idx / SB, sys = first + s;
    const bool ok = sys < n_sys;
    xs[idx] = ok ? ens.x(sys, k / 3, k % 3) : 0.0;
    vs[idx] = ok ? ens.v(sys, k / 3, k % 3) : 0.0;
    as[idx] = 0.0;
    js[idx] = 0.0;
    if (k < n) ms[idx] = ok ? ens.m(sys, k) : 0.0;
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < pairs * SB; idx += blockDim.x) {
    const int s = idx % SB, p = idx / SB;
    if (first + s >= n_sys) continue;
    int i, j;
    pair_bodies(p, n, i, j);
    double d[3], w[3];
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      d[c] = xs[(3 * j + c) * SB + s] - xs[(3 * i + c) * SB + s];
      w[c] = vs[(3 * j + c) * SB + s] - vs[(3 * i + c) * SB + s];
    }
    const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    const double rinv = ::rsqrt(r2);
    const double rinv2 = rinv * rinv, rinv3 = rinv2 * rinv;
    const double rv = 3.0 * (d[0] * w[0] + d[1] * w[1] + d[2] * w[2]) * rinv2;
    const double mi = ms[i * SB + s], mj = ms[j * SB + s];
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      const double k = d[c] * rinv3, kj = (w[c] - rv * d[c]) * rinv3;
      atomicAdd(&as[(3 * i + c) * SB + s], mj * k);
      atomicAdd(&as[(3 * j + c) * SB + s], -mi * k);
      atomicAdd(&js[(3 * i + c) * SB + s], mj * kj);
      atomicAdd(&js[(3 * j + c) * SB + s], -mi * kj);
    }
  }
  __syncthreads();
  constexpr int C = Ens::chunk_size;
  for (int idx = threadIdx.x; idx < n3 * SB; idx += blockDim.x) {
    const int s = idx % SB, k = idx / SB, sys = first + s;
    if (sys >= n_sys) continue;
    acc(sys / C, k, sys % C) = as[idx];
    jerk(sys / C, k, sys % C) = js[idx];
  }
}

inline void cuda_acc_jerk(const Kokkos::Cuda& space, const Ensemble<Kokkos::CudaSpace>& ens,
                          const Ensemble<Kokkos::CudaSpace>::BodyView& acc,
                          const Ensemble<Kokkos::CudaSpace>::BodyView& jerk) {
  const int n = ens.n_bodies(), n_sys = ens.n_systems();
  if (n_sys == 0) return;
  const std::size_t per_system = std::size_t(13 * n) * sizeof(double);
  int SB = 32;
  while (SB > 1 && per_system * SB > 40 * 1024) SB /= 2;
  const int pairs = n * (n - 1) / 2;
  int threads = ((pairs * SB + 31) / 32) * 32;
  if (threads > 256) threads = 256;
  const int blocks = (n_sys + SB - 1) / SB;
  cuda_acc_jerk_kernel<<<blocks, threads, per_system * SB, space.cuda_stream()>>>(ens, acc, jerk, SB);
  kosmos::Impl::cuda_check_launch("kosmos::nbody::compute_acc_jerk (CUDA)");
}

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
