// Complex numbers of N-doubles for the path tracker's per-path kernels (device code), and the
// leading-double magnitudes the step control works with.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/multi_double.hpp>

namespace kosmos {
namespace series {
namespace Impl {

template <int N>
struct ComplexMD {
  MultiDouble<N> re, im;
  KOKKOS_INLINE_FUNCTION ComplexMD() : re(), im() {}
  KOKKOS_INLINE_FUNCTION ComplexMD(const MultiDouble<N>& r, const MultiDouble<N>& i)
      : re(r), im(i) {}
  KOKKOS_INLINE_FUNCTION ComplexMD(double r) : re(r), im(0.0) {}  // NOLINT: implicit like double
};

template <int N>
KOKKOS_INLINE_FUNCTION ComplexMD<N> operator+(const ComplexMD<N>& a, const ComplexMD<N>& b) {
  return {a.re + b.re, a.im + b.im};
}
template <int N>
KOKKOS_INLINE_FUNCTION ComplexMD<N> operator-(const ComplexMD<N>& a, const ComplexMD<N>& b) {
  return {a.re - b.re, a.im - b.im};
}
template <int N>
KOKKOS_INLINE_FUNCTION ComplexMD<N> operator-(const ComplexMD<N>& a) {
  return {-a.re, -a.im};
}
template <int N>
KOKKOS_INLINE_FUNCTION ComplexMD<N> operator*(const ComplexMD<N>& a, const ComplexMD<N>& b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <int N>
KOKKOS_INLINE_FUNCTION ComplexMD<N> operator*(const ComplexMD<N>& a, const MultiDouble<N>& b) {
  return {a.re * b, a.im * b};
}
template <int N>
KOKKOS_INLINE_FUNCTION ComplexMD<N> operator/(const ComplexMD<N>& a, const ComplexMD<N>& b) {
  const MultiDouble<N> d = b.re * b.re + b.im * b.im;
  return {(a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d};
}

// |a| from the leading limbs (the step control needs a few digits only).
template <int N>
KOKKOS_INLINE_FUNCTION double magnitude(const ComplexMD<N>& a) {
  const double r = to_double(a.re), i = to_double(a.im);
  return math::sqrt(r * r + i * i);
}
// max(|re|, |im|) of the leading limbs: the cheap norm of pivot searches.
template <int N>
KOKKOS_INLINE_FUNCTION double max_part(const ComplexMD<N>& a) {
  return math::fmax(math::fabs(a.re.limb[0]), math::fabs(a.im.limb[0]));
}
template <int N>
KOKKOS_INLINE_FUNCTION bool is_finite(const ComplexMD<N>& a) {
  return math::isfinite(a.re.limb[0]) && math::isfinite(a.im.limb[0]);
}
}  // namespace Impl
}  // namespace series
}  // namespace kosmos
