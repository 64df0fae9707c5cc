// Hand-tuned CUDA kernels for stages 3 and 4. Stage 3 (the temperature solve), the paper's kernel 3: one block per
// (species, 128 cells), the species' emission weights and hc/(k lambda) in shared memory, one
// Newton-Raphson solve per thread, and for float the __expf intrinsic (the paper measured ~40 %
// more speed for no loss of SED accuracy). Included by kosmos/dust/equilibrium.hpp only in
// CUDA builds; launched on space.cuda_stream().
#pragma once

#include <kosmos/core/cuda_check.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/dust/impl/solver.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <type_traits>

namespace kosmos {
namespace dust {
namespace Impl {

// __expf (~2 ulp + 2^-21 |u| relative) and __fdividef (~2 ulp; e^u - 1 < 2^126 for u <= 80) for
// float, as their flush-to-zero instructions: the same results wherever neither result nor operand
// is subnormal, without the subnormal fix-ups around each instruction (no call's u is below -80,
// the least of the P(T) emission's shifted terms). The library exp and IEEE division for double.
// Host and device, so that Kokkos functors can hold it (the stochastic emission's); the host side
// is never launched.
struct CudaFastExp {
  KOKKOS_FORCEINLINE_FUNCTION float operator()(float u) const {
#ifdef __CUDA_ARCH__
    float e;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(u * 1.44269504f));  // __expf's log2(e)
    return e;
#else
    return std::exp(u);
#endif
  }
  KOKKOS_FORCEINLINE_FUNCTION double operator()(double u) const { return math::exp(u); }
  KOKKOS_FORCEINLINE_FUNCTION float reciprocal(float x) const {
#ifdef __CUDA_ARCH__
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
#else
    return 1.0f / x;
#endif
  }
  KOKKOS_FORCEINLINE_FUNCTION double reciprocal(double x) const { return 1.0 / x; }
};

template <class T, class Exp, class Weights, class Vec, class Heating, class Temperature, class Status>
__global__ void __launch_bounds__(128) temperature_newton_kernel(Weights weight, Vec x_global, Vec scale, Vec offset,
                                                                 Heating heating, Temperature temperature,
                                                                 Status status, SolverParams<T> p, int nc, int nl,
                                                                 Exp exp_op) {
  extern __shared__ unsigned char kosmos_dust_shared[];
  T* w = reinterpret_cast<T*>(kosmos_dust_shared);
  T* x = w + nl;
  const int s = blockIdx.y;
  for (int l = threadIdx.x; l < nl; l += blockDim.x) {
    w[l] = weight(l, s);
    x[l] = x_global(l);
  }
  __syncthreads();
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= nc) return;
  const T l_scaled = T(heating(c, s)) / scale(s);
  const T guess = initial_guess(p, l_scaled, offset(s));
  const auto r = solve_newton(w, x, nl, l_scaled, guess, p, exp_op);
  temperature(c, s) = r.temperature;
  status(c, s) = r.status;
}

// The kernel's shared memory (weights and hc/(k lambda) of one species) within the 48 KiB default.
template <class T>
constexpr bool cuda_newton_fits(int nl) {
  return 2 * std::size_t(nl) * sizeof(T) <= 48 * 1024;
}

// Requires kosmos/dust/equilibrium.hpp's GrainModel and SolverOptions (it includes this file after them).
template <class T, class Heating, class Temperature, class Status>
void equilibrium_temperatures_cuda(const Kokkos::Cuda& space, const GrainModel<T, Kokkos::Cuda>& g,
                                   const Heating& heating, const Temperature& temperature, const Status& status,
                                   const SolverOptions& options) {
  const int nc = int(heating.extent(0)), ns = g.species(), nl = g.wavelengths();
  if (nc == 0) return;
  constexpr int block = 128;
  const std::size_t shared = 2 * std::size_t(nl) * sizeof(T);
  kosmos::Impl::require(cuda_newton_fits<T>(nl), "kosmos::dust::equilibrium_temperatures (CUDA)", nl,
                        " wavelengths need ", shared, " bytes of shared memory, more than 48 KiB");
  kosmos::Impl::require(ns <= 65535, "kosmos::dust::equilibrium_temperatures (CUDA)", ns,
                        " species exceed the 65535 grid rows");
  const dim3 grid((nc + block - 1) / block, ns);
  const auto p = solver_params<T>(options);
  if (std::is_same<T, float>::value && options.fast_exp) {
    temperature_newton_kernel<T><<<grid, block, shared, space.cuda_stream()>>>(
        g.emission_weight, g.x, g.scale, g.guess_offset, heating, temperature, status, p, nc, nl, CudaFastExp());
  } else {
    temperature_newton_kernel<T><<<grid, block, shared, space.cuda_stream()>>>(
        g.emission_weight, g.x, g.scale, g.guess_offset, heating, temperature, status, p, nc, nl, LibraryExp());
  }
  kosmos::Impl::cuda_check_launch("kosmos::dust::equilibrium_temperatures (CUDA): launch failed");
}
// Stage 4 (the paper's kernel 4): thread (c, l) sums over species; blockIdx.y is the wavelength,
// so a warp reads 32 consecutive temperatures T(c, s) and one broadcast SED weight per species
// when temperature and SED are LayoutLeft (EmissionPipeline's results on a GPU are too).
template <class T, class Exp, class Weights, class Vec, class Temperature, class Mass, class Sed>
__global__ void __launch_bounds__(256) emission_sed_kernel(Weights sed_weight, Vec x, Temperature temperature,
                                                           Mass dust_mass, Sed sed, int nc, int ns, Exp exp_op) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int l = blockIdx.y;
  if (c >= nc) return;
  const T xl = x(l);
  T sum = 0;
  for (int s = 0; s < ns; ++s) {
    const T u = std::is_same<T, float>::value ? T(__fdividef(float(xl), float(temperature(c, s))))
                                              : xl / T(temperature(c, s));
    sum += sed_weight(s, l) * planck_occupation(u, exp_op);
  }
  sed(c, l) = T(dust_mass(c)) * sum;
}

template <class T, class Temperature, class Mass, class Sed>
void emission_sed_cuda(const Kokkos::Cuda& space, const GrainModel<T, Kokkos::Cuda>& g, const Temperature& temperature,
                       const Mass& dust_mass, const Sed& sed, const SolverOptions& options) {
  const int nc = int(temperature.extent(0)), ns = g.species(), nl = g.wavelengths();
  if (nc == 0) return;
  constexpr int block = 256;
  kosmos::Impl::require(nl <= 65535, "kosmos::dust::emission_sed (CUDA)", nl, " wavelengths exceed the 65535 grid rows");
  const dim3 grid((nc + block - 1) / block, nl);
  if (std::is_same<T, float>::value && options.fast_exp) {
    emission_sed_kernel<T><<<grid, block, 0, space.cuda_stream()>>>(g.sed_weight, g.x, temperature, dust_mass, sed,
                                                                    nc, ns, CudaFastExp());
  } else {
    emission_sed_kernel<T><<<grid, block, 0, space.cuda_stream()>>>(g.sed_weight, g.x, temperature, dust_mass, sed,
                                                                    nc, ns, LibraryExp());
  }
  kosmos::Impl::cuda_check_launch("kosmos::dust::emission_sed (CUDA): launch failed");
}
}  // namespace Impl
}  // namespace dust
}  // namespace kosmos
