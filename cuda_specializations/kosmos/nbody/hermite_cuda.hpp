// Hand-tuned CUDA Hermite for few-body ensembles, launched on the space's stream with the
// hardware reciprocal square root for the pair forces. Up to 5 bodies one thread integrates a
// system with its whole state in registers (hermite_system, N unrolled at compile time). From 6
// bodies on that state (19n doubles) no longer fits a thread's 255 registers and nvcc moved it to
// local memory, so a group of 8 lanes integrates a system, one lane per body (hermite_lanes):
// a lane holds its body's x, v, a, j and corrector sums, and the other bodies' positions and
// velocities come through warp shuffles. Used automatically by integrate() on Kokkos::Cuda for
// Hermite runs without monitors or logs.
#pragma once

#include <kosmos/core/cuda_check.hpp>
#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/integrators/hermite.hpp>

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
constexpr int cuda_hermite_lanes_from = 6;  // bodies; below, a thread per system
constexpr int cuda_hermite_group = 8;       // lanes per system (a body each; divides 32)

template <int N>
__global__ void __launch_bounds__(cuda_hermite_block)
    cuda_hermite_kernel(Ensemble<Kokkos::CudaSpace> ens,
                        Kokkos::View<long long*, Kokkos::CudaSpace> iterations,
                        HermiteSystemParams params, CarriedState<Kokkos::CudaSpace> carried) {
  const int sys = blockIdx.x * blockDim.x + threadIdx.x;
  if (sys >= ens.n_systems()) return;
  LocalCorrectorSums<N> sums;
  hermite_system<N>(ens, iterations, sys, params, CudaRsqrt(), sums, carried);
}

// The acceleration and jerk of this lane's body (lane < N; other lanes join the shuffles) from
// the other bodies in increasing order, each term as hermite_system's pair loop forms it.
template <int N>
__device__ __forceinline__ void lane_acc_jerk(const double (&m)[N], double m_own, int lane,
                                              unsigned mask, const double (&x)[3],
                                              const double (&v)[3], double (&a)[3],
                                              double (&j)[3]) {
  for (int c = 0; c < 3; ++c) a[c] = j[c] = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    double d[3], w[3];
    for (int c = 0; c < 3; ++c) {
      d[c] = __shfl_sync(mask, x[c], k, cuda_hermite_group) - x[c];
      w[c] = __shfl_sync(mask, v[c], k, cuda_hermite_group) - v[c];
    }
    if (lane >= N || k == lane || (m[k] == 0 && m_own == 0)) continue;
    double acc[3], jerk[3];
    inverse_square_acc_jerk(d, w, squared_norm(d), acc, jerk, CudaRsqrt());
    for (int c = 0; c < 3; ++c) {
      a[c] += m[k] * acc[c];
      j[c] += m[k] * jerk[c];
    }
  }
}

// Sum over the group, the same in every lane (each butterfly stage adds the same two values).
__device__ __forceinline__ double group_sum(double x, unsigned mask) {
  for (int offset = cuda_hermite_group / 2; offset > 0; offset /= 2)
    x += __shfl_xor_sync(mask, x, offset, cuda_hermite_group);
  return x;
}

// hermite_system for a group of lanes, one per body: the same scheme, step choice, landing rule,
// time compensation and carried state (the formulas and clock of integrators/hermite.hpp). Every
// lane of the group runs the same control flow.
template <int N>
__device__ void hermite_lanes(const Ensemble<Kokkos::CudaSpace>& ens,
                              const Kokkos::View<long long*, Kokkos::CudaSpace>& iterations,
                              int sys, int lane, unsigned mask, const HermiteSystemParams& p,
                              const CarriedState<Kokkos::CudaSpace>& carried) {
  if (ens.state(sys) != state_active) return;
  SystemClock clock{ens.time(sys), ens.time_lo(sys), p.destination, p.pause};
  long long it = iterations(sys);
  if (!clock.running() || it >= p.max_iterations) return;
  const bool own = lane < N;  // lanes N.. hold no body
  double m[N], x[3], v[3], a[3], j[3];
  for (int b = 0; b < N; ++b) m[b] = ens.m(sys, b);
  const double m_own = own ? ens.m(sys, lane) : 0.0;
  for (int c = 0; c < 3; ++c) {
    x[c] = own ? ens.x(sys, lane, c) : 0.0;
    v[c] = own ? ens.v(sys, lane, c) : 0.0;
  }
  const auto stored = [&](int b, int c) {
    return c < 3 ? ens.x(sys, b, c) : c < 6 ? ens.v(sys, b, c - 3) : ens.m(sys, b);
  };
  if (carried.valid(sys, clock.t, clock.lo, N, stored)) {
    for (int c = 0; c < 3; ++c) {
      a[c] = own ? carried.at(sys, 3 * lane + c) : 0.0;
      j[c] = own ? carried.at(sys, 3 * N + 3 * lane + c) : 0.0;
    }
  } else {
    lane_acc_jerk<N>(m, m_own, lane, mask, x, v, a, j);
  }
  int reason = reason_none;
  for (int step = 0; step < p.steps && clock.running() && it < p.max_iterations; ++step) {
    double h = p.dt;
    if (p.tau > 0)
      h = hermite_adaptive_step(p.tau, group_sum(own ? hermite_step_term(a, j) : 0.0, mask), p.dt);
    h = landing_step(h, clock.left());
    if (!(h > 0) || !math::isfinite(h)) {
      reason = reason_bad_step;
      break;
    }
    const HermiteRegisterStep hs(h);
    double v_sum[3], x_sum[3];
    for (int c = 0; c < 3; ++c) hs.predict(x[c], v[c], a[c], j[c], x_sum[c], v_sum[c]);
    for (int iter = 0; iter < 2; ++iter) {
      lane_acc_jerk<N>(m, m_own, lane, mask, x, v, a, j);
      for (int c = 0; c < 3; ++c) hs.correct(x[c], v[c], a[c], j[c], x_sum[c], v_sum[c]);
    }
    clock.advance(h);
    ++it;
    bool finite = true;
    for (int c = 0; c < 3; ++c) finite = finite && math::isfinite(x[c]) && math::isfinite(v[c]);
    if (!__all_sync(mask, finite)) {
      reason = reason_nonfinite;
      break;
    }
  }
  if (own) {
    for (int c = 0; c < 3; ++c) {
      ens.x(sys, lane, c) = x[c];
      ens.v(sys, lane, c) = v[c];
    }
    if (carried.on())
      for (int c = 0; c < 3; ++c) {
        carried.at(sys, 3 * lane + c) = a[c];
        carried.at(sys, 3 * N + 3 * lane + c) = j[c];
      }
  }
  __syncwarp(mask);  // every body stored before lane 0 keys the system by them
  if (lane != 0) return;
  ens.time(sys) = clock.t;
  ens.time_lo(sys) = clock.lo;
  iterations(sys) = it;
  carried.seal(sys, clock.t, clock.lo, N, stored);
  if (reason != reason_none) {
    ens.state(sys) = state_disabled;
    ens.reason(sys) = reason;
  }
}

template <int N>
__global__ void __launch_bounds__(cuda_hermite_block)
    cuda_hermite_lanes_kernel(Ensemble<Kokkos::CudaSpace> ens,
                              Kokkos::View<long long*, Kokkos::CudaSpace> iterations,
                              HermiteSystemParams params, CarriedState<Kokkos::CudaSpace> carried) {
  const int thread = blockIdx.x * blockDim.x + threadIdx.x, sys = thread / cuda_hermite_group;
  if (sys >= ens.n_systems()) return;  // the whole group: blocks hold whole groups
  const int lane = threadIdx.x % cuda_hermite_group;
  const unsigned mask = ((1u << cuda_hermite_group) - 1u) << (threadIdx.x % 32 - lane);
  hermite_lanes<N>(ens, iterations, sys, lane, mask, params, carried);
}

template <int N>
void cuda_hermite_launch(const Kokkos::Cuda& space, const Ensemble<Kokkos::CudaSpace>& ens,
                         const Kokkos::View<long long*, Kokkos::CudaSpace>& iterations,
                         const HermiteSystemParams& params,
                         const CarriedState<Kokkos::CudaSpace>& carried) {
  constexpr bool lanes = N >= cuda_hermite_lanes_from;
  const long long threads = (long long)ens.n_systems() * (lanes ? cuda_hermite_group : 1);
  const int blocks = int((threads + cuda_hermite_block - 1) / cuda_hermite_block);
  if (blocks == 0) return;
  if constexpr (lanes)
    cuda_hermite_lanes_kernel<N>
        <<<blocks, cuda_hermite_block, 0, space.cuda_stream()>>>(ens, iterations, params, carried);
  else
    cuda_hermite_kernel<N>
        <<<blocks, cuda_hermite_block, 0, space.cuda_stream()>>>(ens, iterations, params, carried);
  kosmos::Impl::cuda_check_launch("kosmos::nbody::integrate (CUDA Hermite)");
}

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
