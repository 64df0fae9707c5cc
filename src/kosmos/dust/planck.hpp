// Planck function pieces shared by every stage of the dust calculation (Jonsson & Primack 2010),
// written so that float never overflows or loses the Rayleigh-Jeans limit across 3-3000 K and
// 0.09-1000 micron, and so that the exponential can be swapped for a fast intrinsic.
#pragma once

#include <kosmos/core/compat.hpp>

#include <type_traits>

namespace kosmos {
namespace dust {

// CODATA 2018 exact SI constants.
namespace constants {
constexpr double planck_h = 6.62607015e-34;     // J s
constexpr double speed_of_light = 299792458.0;  // m / s
constexpr double boltzmann_k = 1.380649e-23;    // J / K
// 2 h c^2 (W m^2 sr^-1) and h c / k (m K): B_lambda = c1 / lambda^5 / (exp(c2 / (lambda T)) - 1).
constexpr double c1 = 2.0 * planck_h * speed_of_light * speed_of_light;
constexpr double c2 = planck_h * speed_of_light / boltzmann_k;
}  // namespace constants

// exp(u) and 1/x through the math library and IEEE division (the portable default). The CUDA
// specializations pass a functor with the same two members built on __expf and __fdividef.
struct LibraryExp {
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION T operator()(T u) const {
    return math::exp(u);
  }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION T reciprocal(T x) const {
    return T(1) / x;
  }
};

namespace Impl {
// Above this u = hc/(k lambda T) the occupation 1/(e^u - 1) is below ~1e-35 (float) or ~1e-304
// (double) and is returned as 0 instead of overflowing exp().
template <class T>
KOKKOS_FORCEINLINE_FUNCTION constexpr T occupation_cutoff() {
  return std::is_same<T, float>::value ? T(80) : T(700);
}
// Below this u, e^u - 1 comes from its Taylor series (exp(u) - 1 would cancel).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION constexpr T occupation_series_limit() {
  return std::is_same<T, float>::value ? T(0.1) : T(1e-3);
}
}  // namespace Impl

// planck_occupation for occupation_series_limit<T>() <= u <= occupation_cutoff<T>() (a caller that
// knows u is in that range skips both tests).
template <class T, class Exp = LibraryExp>
KOKKOS_FORCEINLINE_FUNCTION T planck_occupation_between_limits(T u, const Exp& exp_op = Exp()) {
  return exp_op.reciprocal(exp_op(u) - T(1));
}

// planck_occupation for 0 <= u <= occupation_cutoff<T>() (a caller that has already left out the
// larger u skips the test).
template <class T, class Exp = LibraryExp>
KOKKOS_FORCEINLINE_FUNCTION T planck_occupation_below_cutoff(T u, const Exp& exp_op = Exp()) {
  if (u >= Impl::occupation_series_limit<T>()) return planck_occupation_between_limits(u, exp_op);
  // u (1 + u/2 + u^2/6 + u^3/24 + u^4/120 + u^5/720): relative error < u^6/5040.
  return exp_op.reciprocal(
      u * (T(1) + u * (T(0.5) + u * (T(1.0 / 6) +
                                     u * (T(1.0 / 24) + u * (T(1.0 / 120) + u * T(1.0 / 720)))))));
}

// Photon occupation 1 / (e^u - 1) for u >= 0, without overflow or cancellation; 0 for huge u.
template <class T, class Exp = LibraryExp>
KOKKOS_FORCEINLINE_FUNCTION T planck_occupation(T u, const Exp& exp_op = Exp()) {
  if (u > Impl::occupation_cutoff<T>()) return T(0);
  return planck_occupation_below_cutoff(u, exp_op);
}

// 1 - e^-u for u >= 0 without cancellation: the series below the occupation's series limit, 1 where
// e^-u is below T's resolution.
template <class T, class Exp = LibraryExp>
KOKKOS_FORCEINLINE_FUNCTION T one_minus_exp_negative(T u, const Exp& exp_op = Exp()) {
  if (u < Impl::occupation_series_limit<T>())
    return u * (T(1) -
                u * (T(0.5) -
                     u * (T(1.0 / 6) - u * (T(1.0 / 24) - u * (T(1.0 / 120) - u * T(1.0 / 720))))));
  if (u > (std::is_same<T, float>::value ? T(17) : T(37))) return T(1);
  return T(1) - exp_op(-u);
}

// B_lambda(lambda, T) in W m^-2 m^-1 sr^-1 (lambda in m, T in K), evaluated in double with the
// same guards; host and device.
KOKKOS_INLINE_FUNCTION double planck_lambda(double lambda, double temperature) {
  const double l2 = lambda * lambda;
  return constants::c1 / (l2 * l2 * lambda) *
         planck_occupation(constants::c2 / (lambda * temperature));
}

// The initial guess of Jonsson & Primack (2010) Eqs. 11-12, SI units (L_h in W sr^-1 with I the
// mean intensity, grain radius a in m), log = log10:
//   log T = k + b1 x + b2 x^2,  x = log L_h + a1 log a + a2 log^2 a.
struct GuessCoefficients {
  double k = 1.86;
  double beta1 = 0.189;
  double beta2 = 3.41e-3;
  double alpha1 = -1.39;
  double alpha2 = 0.126;
};
}  // namespace dust
}  // namespace kosmos
