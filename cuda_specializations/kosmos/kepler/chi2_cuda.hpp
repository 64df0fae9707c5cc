// Hand-tuned CUDA kernel for the fused mixed-precision chi^2 / log-likelihood (Ford 2009 Sec. 4-5):
// one thread per system, per-planet constants in registers, observation tiles in shared memory
// (cooperative loads), the phase t/P - floor(t/P) in double, everything else in float with fast
// intrinsics: __sincosf (with Taylor polynomials near E = 0, where the absolute error of
// __sincosf would dominate at high eccentricity), rsqrtf for sqrt(1 - e^2), __fdividef, __logf.
// Sums over planets and observations are compensated float pairs. Kepler solver: Markley (1995),
// loop-free. Used by kosmos::kepler::Chi2Evaluator<Mixed, Kokkos::Cuda> for the fused layout with
// Solver::Markley and n_pl <= cuda_max_planets; everything else runs the generic Kokkos kernels.
#pragma once

#if defined(KOKKOS_ENABLE_CUDA)

#include <kosmos/core/cuda_check.hpp>
#include <kosmos/core/compensated.hpp>
#include <kosmos/kepler/rv.hpp>


namespace kosmos {
namespace kepler {
namespace Impl {

constexpr int cuda_max_planets = 8;
// 64 threads: 1920 blocks for the Table 2 benchmark (122880 systems) spread over the SMs in one
// wave with less imbalance (14.5 blocks per SM on an H200, at most 15) than 128-thread blocks
// (7.3 per SM, at most 8).
constexpr int cuda_block_size = 64;
constexpr int cuda_tile = 256;

// sin and cos of x in [0, pi]: __sincosf (absolute error ~4e-7), or Taylor polynomials for
// x < 0.7 (truncation < 1e-8: 0.7^11 / 11! = 5e-10, 0.7^10 / 10! = 8e-9), where 1 - e cos E is
// small at high e and amplifies the error of E.
__device__ __forceinline__ void fast_sincos_0_pi(float x, float& s, float& c) {
  __sincosf(x, &s, &c);
  if (x < 0.7f) {
    const float x2 = x * x;
    s = x * (1.0f + x2 * (-1.0f / 6 + x2 * (1.0f / 120 + x2 * (-1.0f / 5040 + x2 * (1.0f / 362880)))));
    c = 1.0f + x2 * (-0.5f + x2 * (1.0f / 24 + x2 * (-1.0f / 720 + x2 * (1.0f / 40320))));
  }
}

// Markley (1995) for M in [0, 2pi): sin E and cos E.
__device__ __forceinline__ void markley_fast(float M, float e, float& s, float& c) {
  const float pi = 3.14159265358979f;
  const bool flip = M > pi;
  const float m = flip ? 6.28318530717959f - M : M;
  const float pi2 = pi * pi;
  const float alpha = (3.0f * pi2 + 1.6f * pi * __fdividef(pi - m, 1.0f + e)) * (1.0f / (pi2 - 6.0f));
  const float one_m_e = 1.0f - e;
  const float d = 3.0f * one_m_e + alpha * e;
  const float q = 2.0f * alpha * d * one_m_e - m * m;
  const float r = 3.0f * alpha * d * (d - 1.0f + e) * m + m * m * m;
  // starter: x * rsqrt(x) for the square root, w0^(2/3) via exp2/log2 (relative error ~1e-6, far
  // below the starter's own error, which the fifth-order step removes), one quotient
  const float disc = q * q * q + r * r;
  const float w0 = fabsf(r) + (disc > 0.0f ? disc * rsqrtf(disc) : 0.0f);
  const float w = w0 > 0.0f ? exp2f(__log2f(w0) * (2.0f / 3.0f)) : 0.0f;
  const float denom = w * w + w * q + q * q;
  const float E1 = denom > 0.0f ? __fdividef(2.0f * r * w + m * denom, denom * d) : __fdividef(m, d);
  fast_sincos_0_pi(E1, s, c);
  const float f0 = E1 - e * s - m;
  const float f1 = 1.0f - e * c;
  const float f2 = e * s;
  const float f3 = 1.0f - f1;
  const float d3 = __fdividef(-f0 * f1, f1 * f1 - 0.5f * f0 * f2);
  const float d4 = __fdividef(-f0, f1 + 0.5f * d3 * f2 + d3 * d3 * f3 * (1.0f / 6));
  const float d5 = __fdividef(-f0, f1 + 0.5f * d4 * f2 + d4 * d4 * f3 * (1.0f / 6) - d4 * d4 * d4 * f2 * (1.0f / 24));
  kosmos::kepler::Impl::rotate_small(d5, s, c);
  if (flip) s = -s;
}

template <int MaxPl>
__global__ void __launch_bounds__(cuda_block_size)
    fused_chi2_mixed_kernel(const double* __restrict__ t, const float* __restrict__ v,
                            const float* __restrict__ var, const int* __restrict__ inst, int n_obs,
                            const double* __restrict__ P, const float* __restrict__ K,
                            const float* __restrict__ ecc, const float* __restrict__ omega,
                            const float* __restrict__ M0, int pl_stride, const float* __restrict__ offset,
                            const float* __restrict__ jitter, int inst_stride, double* __restrict__ chi2,
                            double* __restrict__ loglike, int n_sys, int n_pl, bool k_prime) {
  __shared__ double st[cuda_tile];
  __shared__ float sv[cuda_tile], svar[cuda_tile];
  __shared__ int sinst[cuda_tile];
  const int sys = blockIdx.x * blockDim.x + threadIdx.x;
  const bool active = sys < n_sys;
  double inv_P[MaxPl];
  float m0[MaxPl], e[MaxPl], A[MaxPl], B[MaxPl];
#pragma unroll
  for (int j = 0; j < MaxPl; ++j) {
    inv_P[j] = 0;
    m0[j] = e[j] = A[j] = B[j] = 0;
    if (active && j < n_pl) {
      const int i = sys * pl_stride + j;
      inv_P[j] = 1.0 / P[i];
      m0[j] = kosmos::kepler::reduce_mean_anomaly(M0[i]);
      const float ej = ecc[i], Kj = K[i];
      e[j] = ej;
      float so, co;
      sincosf(omega[i], &so, &co);
      const float one_m_e2 = (1.0f - ej) * (1.0f + ej);
      const float root = one_m_e2 * rsqrtf(one_m_e2);  // sqrt(1 - e^2), e < 1
      if (k_prime) {
        A[j] = Kj * root * so;
        B[j] = -Kj * co;
      } else {
        A[j] = Kj * one_m_e2 * co;
        B[j] = -Kj * root * so;
      }
    }
  }
  kosmos::CompensatedSum<float> chi, logs;
  for (int start = 0; start < n_obs; start += cuda_tile) {
    const int nt = min(cuda_tile, n_obs - start);
    __syncthreads();
    for (int k = threadIdx.x; k < nt; k += blockDim.x) {
      st[k] = t[start + k];
      sv[k] = v[start + k];
      svar[k] = var[start + k];
      sinst[k] = inst[start + k];
    }
    __syncthreads();
    if (!active) continue;
    for (int k = 0; k < nt; ++k) {
      const double tk = st[k];
      kosmos::CompensatedSum<float> model;
#pragma unroll
      for (int j = 0; j < MaxPl; ++j) {
        if (j < n_pl) {
          double ph = tk * inv_P[j];
          ph -= floor(ph);
          float M = __fmaf_rn(float(ph), 6.28318530717959f, m0[j]);
          if (M >= 6.28318530717959f) M -= 6.28318530717959f;
          float s, c;
          markley_fast(M, e[j], s, c);
          model.add(__fdividef(A[j] * c + B[j] * s, 1.0f - e[j] * c));
        }
      }
      const int i = sinst[k];
      const float jit = jitter[sys * inst_stride + i];
      const float total_var = svar[k] + jit * jit;
      const float r = (sv[k] - offset[sys * inst_stride + i]) - model.value();
      chi.add(__fdividef(r * r, total_var));
      if (loglike) logs.add(__logf(total_var));
    }
  }
  if (active) {
    const double c2 = double(chi.hi) + double(chi.lo);
    chi2[sys] = c2;
    if (loglike) loglike[sys] = -0.5 * (c2 + double(logs.hi) + double(logs.lo) + n_obs * 1.8378770664093454836);
  }
}

// Launches the kernel on space.cuda_stream(). obs: DeviceObservations<Mixed, Kokkos::Cuda>;
// models: Models<Mixed, Kokkos::Cuda>.
template <class Obs, class ModelsT, class OutView>
void fused_chi2_mixed_cuda(const Kokkos::Cuda& space, const Obs& obs, const ModelsT& models, const OutView& chi2,
                           const OutView& loglike, bool want_loglike, Amplitude amplitude) {
  const int n_sys = models.n_systems(), n_pl = models.n_planets();
  const int n_obs = int(obs.t.extent(0));
  const int blocks = (n_sys + cuda_block_size - 1) / cuda_block_size;
  const int pl_stride = int(models.P.stride(0));
  const int inst_stride = int(models.offset.stride(0));
  double* ll = want_loglike ? loglike.data() : nullptr;
  const bool kp = amplitude == Amplitude::k_prime;
  if (n_pl <= 4)
    fused_chi2_mixed_kernel<4><<<blocks, cuda_block_size, 0, space.cuda_stream()>>>(
        obs.t.data(), obs.v.data(), obs.var.data(), obs.inst.data(), n_obs, models.P.data(), models.K.data(),
        models.e.data(), models.omega.data(), models.M0.data(), pl_stride, models.offset.data(), models.jitter.data(),
        inst_stride, chi2.data(), ll, n_sys, n_pl, kp);
  else
    fused_chi2_mixed_kernel<cuda_max_planets><<<blocks, cuda_block_size, 0, space.cuda_stream()>>>(
        obs.t.data(), obs.v.data(), obs.var.data(), obs.inst.data(), n_obs, models.P.data(), models.K.data(),
        models.e.data(), models.omega.data(), models.M0.data(), pl_stride, models.offset.data(), models.jitter.data(),
        inst_stride, chi2.data(), ll, n_sys, n_pl, kp);
  kosmos::Impl::cuda_check_launch("kosmos::kepler::chi2 (CUDA specialization): kernel launch failed");
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos

#endif
