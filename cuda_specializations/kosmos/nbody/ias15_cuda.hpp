// Hand-tuned CUDA IAS15-class kernel: a group of lanes per system, one lane per body (groups of 2,
// 4 or 8 lanes of a warp). A thread holding a whole system keeps ~650 doubles of predictor-
// corrector state in local memory (N = 6); a lane holds one body's ~110, mostly in registers. The
// integrator is the generic ias15_system() with the BodyPerLane layout: the same arithmetic per
// coordinate, each body's acceleration summed over the other bodies in the generic order (their
// positions through warp shuffles), and the step decisions (convergence, PRS23 time scale,
// finiteness, monitors) combined over the group, so that the lanes of a system take the same
// branches. Merging needs the whole system in one thread: launch_ias15_system routes it to the
// system-per-thread launch.
#pragma once

#include <kosmos/nbody/hermite_cuda.hpp>
#include <kosmos/nbody/integrators/ias15.hpp>
#include <kosmos/nbody/system_cuda.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>

namespace kosmos {
namespace nbody {
namespace Impl {

template <int N>
struct BodyPerLane {
  static constexpr int group = N <= 2 ? 2 : N <= 4 ? 4 : 8;  // lanes per system: divides 32
  static constexpr int bodies = 1;
  static_assert(N <= 8, "kosmos::nbody::BodyPerLane: at most 8 bodies (a lane each)");

  int lane;       // the body of this lane; lanes N..group-1 hold none but join every shuffle
  unsigned mask;  // the group's lanes in the warp

  __device__ int body(int) const { return lane; }
  __device__ bool leader() const { return lane == 0; }
  __device__ double max(double x) const {
    for (int offset = group / 2; offset > 0; offset /= 2)
      x = fmax(x, __shfl_xor_sync(mask, x, offset, group));
    return x;
  }
  __device__ bool all(bool x) const { return __all_sync(mask, x); }
  // Every body's values (w: this lane's body) in every lane of the group.
  __device__ void gather(const double (&w)[3], double (&all)[3 * N]) const {
    for (int j = 0; j < N; ++j)
      for (int c = 0; c < 3; ++c) all[3 * j + c] = __shfl_sync(mask, w[c], j, group);
  }
  // prs_timescale2 over the group: NaN if any lane's is, else the smallest positive (0: none).
  __device__ double min_timescale2(double x) const {
    const bool nan = !(x >= 0);
    double smallest = x > 0 ? x : INFINITY;
    for (int offset = group / 2; offset > 0; offset /= 2)
      smallest = fmin(smallest, __shfl_xor_sync(mask, smallest, offset, group));
    if (__any_sync(mask, nan)) return NAN;
    return smallest == INFINITY ? 0.0 : smallest;
  }
  // The acceleration of this lane's body, summed over the others in increasing order as
  // pair_accelerations() sums it (d = x_j - x_i here is there -(x_i - x_j): the same terms).
  template <class Rsqrt>
  __device__ void accelerations(const double (&m)[N], const double (&x)[3], double (&a)[3],
                                const Rsqrt& rsqrt, int removed) const {
    for (int c = 0; c < 3; ++c) a[c] = 0;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      double d[3];
      for (int c = 0; c < 3; ++c) d[c] = __shfl_sync(mask, x[c], j, group) - x[c];
      if (lane >= N || j == lane || (m[j] == 0 && m[lane] == 0) || is_removed(removed, j) ||
          is_removed(removed, lane))
        continue;
      const double rinv = rsqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      const double rinv3 = rinv * rinv * rinv;
      for (int c = 0; c < 3; ++c) a[c] += m[j] * d[c] * rinv3;
    }
  }
  // The monitors see the whole system: every lane gathers it and evaluates them alike.
  __device__ int monitor_reason(const SystemMonitor& monitor, const double (&m)[N],
                                const double (&x)[3], const double (&v)[3], const double* radius,
                                int removed) const {
    double xs[3 * N], vs[3 * N];
    for (int j = 0; j < N; ++j)
      for (int c = 0; c < 3; ++c) {
        xs[3 * j + c] = __shfl_sync(mask, x[c], j, group);
        vs[3 * j + c] = __shfl_sync(mask, v[c], j, group);
      }
    return monitor.reason<N>(m, xs, vs, radius, removed);
  }
  template <class Merge>
  __device__ bool merge(const Merge&, int, double (&)[N], double (&)[3], double (&)[3],
                        int&) const {
    return false;  // not reached: merging systems run one per thread
  }
};

constexpr int cuda_ias15_lanes_block = 128;

template <int N>
__global__ void __launch_bounds__(cuda_ias15_lanes_block)
    cuda_ias15_lanes_kernel(Ensemble<Kokkos::CudaSpace> ens,
                            Kokkos::View<long long*, Kokkos::CudaSpace> iterations,
                            IAS15Params params, CarriedState<Kokkos::CudaSpace> carried,
                            int n_systems) {
  using Layout = BodyPerLane<N>;
  const int thread = blockIdx.x * blockDim.x + threadIdx.x, sys = thread / Layout::group;
  if (sys >= n_systems) return;  // the whole group: blocks hold whole groups
  const int lane = threadIdx.x % Layout::group;
  const unsigned mask = ((1u << Layout::group) - 1u) << (threadIdx.x % 32 - lane);
  ias15_system<N>(Layout{lane, mask}, ens, iterations, sys, params, CudaRsqrt(),
                  MergeState<Kokkos::CudaSpace>(), carried);
}

template <int N>
void cuda_ias15_lanes_launch(const Kokkos::Cuda& space, const Ensemble<Kokkos::CudaSpace>& ens,
                             const Kokkos::View<long long*, Kokkos::CudaSpace>& iterations,
                             const IAS15Params& params,
                             const CarriedState<Kokkos::CudaSpace>& carried) {
  const long long threads = (long long)ens.n_systems() * BodyPerLane<N>::group;
  const int blocks = int((threads + cuda_ias15_lanes_block - 1) / cuda_ias15_lanes_block);
  if (blocks == 0) return;
  cuda_ias15_lanes_kernel<N><<<blocks, cuda_ias15_lanes_block, 0, space.cuda_stream()>>>(
      ens, iterations, params, carried, ens.n_systems());
  check_system_launch("IAS15, a lane per body");
}

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
