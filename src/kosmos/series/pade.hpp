// Pade approximants [L/1] of a power series, per component, for the path tracker's predictor:
//   x(s) = c_0 + c_1 s + ... + c_L s^L + ... ~ c_0 + ... + c_(L-1) s^(L-1) + c_L s^L / (1 - q s),
//   q = c_(L+1) / c_L,
// which matches the series through s^(L+1). Its pole 1 / q estimates the nearest singularity of
// x(s) (Fabry's ratio theorem), the step bound of Telen, Van Barel and Verschelde (2020); its error
// at s is about |c_(L+2) - c_(L+1) q| |s|^(L+2) (the next Taylor term minus the approximant's).
// Where c_L vanishes against the others the pole is spurious (a Froissart doublet); the component
// is then approximated by its Taylor polynomial of degree L + 1 and gives no pole.
#pragma once

#include <kosmos/series/impl/complex_md.hpp>

namespace kosmos {
namespace series {
namespace Impl {

// Series coefficients c(k), k = 0 .. L + 2, of one component (accessor c(k) -> ComplexMD<N>).
template <int L>
struct PadeL1 {
  static_assert(L >= 1, "PadeL1: L must be at least 1");
  static constexpr int degree = L;
  static constexpr int coefficients = L + 3;  // c_0 .. c_(L+2): the approximant and its error

  // |c_L| below `spurious` * scale (the largest |c_L| of all components): no usable pole.
  template <int N, class C>
  KOKKOS_INLINE_FUNCTION static bool has_pole(const C& c, double scale, double spurious) {
    const double cl = magnitude<N>(c(L));
    return cl > spurious * scale && magnitude<N>(c(L + 1)) > 0.0;
  }
  // Pole radius |c_L / c_(L+1)| (has_pole must hold).
  template <int N, class C>
  KOKKOS_INLINE_FUNCTION static double pole_radius(const C& c) {
    return magnitude<N>(c(L)) / magnitude<N>(c(L + 1));
  }
  // Coefficient of the error term |s|^(L+2).
  template <int N, class C>
  KOKKOS_INLINE_FUNCTION static double error_coefficient(const C& c, bool pole) {
    if (!pole) return magnitude<N>(c(L + 2));
    return magnitude<N>(c(L + 2) - c(L + 1) * (c(L + 1) / c(L)));
  }
  // The approximant at s (Taylor of degree L + 1 without a pole).
  template <int N, class C>
  KOKKOS_INLINE_FUNCTION static ComplexMD<N> evaluate(const C& c, const MultiDouble<N>& s,
                                                      bool pole) {
    ComplexMD<N> sum = c(L - 1);
    for (int k = L - 2; k >= 0; --k) sum = sum * s + c(k);
    MultiDouble<N> sl(1.0);
    for (int k = 0; k < L; ++k) sl = sl * s;
    if (pole) {
      const ComplexMD<N> q = c(L + 1) / c(L);
      const ComplexMD<N> denominator = ComplexMD<N>(1.0) - q * s;
      return sum + c(L) * sl / denominator;
    }
    return sum + (c(L) + c(L + 1) * s) * sl;
  }
};
}  // namespace Impl
}  // namespace series
}  // namespace kosmos
