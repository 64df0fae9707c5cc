// Multiple-double arithmetic: a number is an unevaluated sum of N doubles (N = 1, 2, 3, 4, 5, 8,
// 10, ... up to 16), usable in Kokkos device code.
//
// Algorithms (CAMPARY / QD style, built on the error-free transformations of compensated.hpp):
//  * accumulation: every partial term is deposited at its "level" k (magnitude about 2^(-53k)
//    relative to the leading term) into an (N+1)-term accumulator by a cascade of two_sum; the
//    cascade is exact down to the last accumulator term, so only errors below level N are lost;
//  * renormalization (Joldes, Muller, Popescu 2017): a bottom-up VecSum pass followed by the
//    VecSumErrBranch pass, which returns N non-overlapping terms with zero elimination; written
//    without dynamic register indexing so it stays in registers on GPUs;
//  * multiplication: two_prod (FMA) of all limb pairs a_i b_j with i + j < N, their errors, plus
//    the plain products with i + j = N;
//  * division: long division with N + 1 quotient digits; square root: Newton iteration;
//  * N = 2 uses the classic double-word algorithms instead (AccurateDWPlusDW, DWTimesDW3 with
//    FMA; Joldes, Muller, Popescu, ACM TOMS 2017), whose proven bounds are 3 u^2 and 4 u^2.
//
// Error bounds (tested against MPFR in unit_tests/series/test_multi_double.cpp on random inputs
// whose exponents span 2^-40..2^40 with random signs):
//    |fl(a * b) - a b| <= mul_error_bound<N>() * |a b|
//    |fl(a + b) - (a + b)| <= add_error_bound<N>() * (|a| + |b|)
// with mul_error_bound<N>() = 2 (N + 1) 2^(-53N) and add_error_bound<N>() = 4 2^(-53N) (for N = 1
// both are the IEEE unit roundoff 2^-53); 2^(-53N) is 2^-N times the 2^(-52N) of the naive
// "N times the double mantissa" estimate. Observed worst cases on 3000 samples per N: below
// 2^(-53N) for N >= 3, 1.4 and 2.7 times 2^-106 for the N = 2 add and mul. Division and square root: 8 (N + 1) 2^(-53N). Addition is accurate (not "sloppy"): cancellation in
// the leading limbs does not lose the lower ones, as the cascade keeps every term exactly.
//
// Storage in Views is structure-of-arrays (one array of doubles per limb), see kosmos::series.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/compensated.hpp>

#include <string>

namespace kosmos {

template <int N>
struct MultiDouble {
  static_assert(N >= 1 && N <= 16, "kosmos::MultiDouble: N must be between 1 and 16");
  double limb[N];

  KOKKOS_INLINE_FUNCTION MultiDouble() {
    KOSMOS_DEVICE_UNROLL
    for (int i = 0; i < N; ++i) limb[i] = 0.0;
  }
  KOKKOS_INLINE_FUNCTION MultiDouble(double x) {  // NOLINT: implicit from double, like QD
    limb[0] = x;
    KOSMOS_DEVICE_UNROLL
    for (int i = 1; i < N; ++i) limb[i] = 0.0;
  }
  KOKKOS_INLINE_FUNCTION double operator[](int i) const { return limb[i]; }
  KOKKOS_INLINE_FUNCTION double& operator[](int i) { return limb[i]; }
  static constexpr int size = N;
};

namespace Impl {
// p + e == a * b exactly. On the device the product goes through __dmul_rn so that nvcc never
// contracts it with a following addition into an FMA (which would break two_sum's exactness).
KOKKOS_FORCEINLINE_FUNCTION void md_two_prod(double a, double b, double& p, double& e) {
#if defined(__CUDA_ARCH__)
  p = __dmul_rn(a, b);
#else
  p = a * b;
#endif
  e = math::fma(a, b, -p);
}

// r[j] = value, written as a select over all slots so that j may be a run-time value without
// forcing the array out of registers on a GPU.
template <int N>
KOKKOS_FORCEINLINE_FUNCTION void select_store(double (&r)[N], int j, double value) {
  KOSMOS_DEVICE_UNROLL
  for (int t = 0; t < N; ++t) r[t] = (t == j) ? value : r[t];
}

// Exactly adds t into acc[k..M-1] (two_sum cascade); only the final plain addition into acc[M-1]
// rounds.
template <int M>
KOKKOS_FORCEINLINE_FUNCTION void deposit(double (&acc)[M], int k, double t) {
  KOSMOS_DEVICE_UNROLL
  for (int pos = 0; pos < M - 1; ++pos) {
    if (pos >= k) two_sum(acc[pos], t, acc[pos], t);
  }
  acc[M - 1] += t;
}

// Renormalizes the M-term sum x (terms roughly ordered by decreasing magnitude, possibly
// overlapping) into N non-overlapping limbs: VecSum, then VecSumErrBranch.
template <int N, int M>
KOKKOS_FORCEINLINE_FUNCTION MultiDouble<N> renormalize(double (&x)[M]) {
  MultiDouble<N> r;
  if constexpr (M == 1) {
    r.limb[0] = x[0];
    return r;
  } else {
    double s = x[M - 1];
    KOSMOS_DEVICE_UNROLL
    for (int i = M - 2; i >= 0; --i) two_sum(x[i], s, s, x[i + 1]);
    x[0] = s;
    int j = 0;
    bool done = false;
    double eps = x[0];
    KOSMOS_DEVICE_UNROLL
    for (int i = 0; i < M - 1; ++i) {
      double hi, lo;
      two_sum(eps, x[i + 1], hi, lo);
      if (!done) select_store<N>(r.limb, j, hi);
      if (lo != 0.0) {
        if (j >= N - 1) done = true;
        else ++j;
        eps = lo;
      } else {
        eps = hi;
      }
    }
    if (!done && j < N && eps != 0.0) select_store<N>(r.limb, j, eps);
    return r;
  }
}
}  // namespace Impl

template <int N>
KOKKOS_INLINE_FUNCTION MultiDouble<N> operator-(const MultiDouble<N>& a) {
  MultiDouble<N> r;
  KOSMOS_DEVICE_UNROLL
  for (int i = 0; i < N; ++i) r.limb[i] = -a.limb[i];
  return r;
}

template <int N>
KOKKOS_INLINE_FUNCTION MultiDouble<N> operator+(const MultiDouble<N>& a, const MultiDouble<N>& b) {
  if constexpr (N == 1) {
    return MultiDouble<1>(a.limb[0] + b.limb[0]);
  } else if constexpr (N == 2) {
    // AccurateDWPlusDW (Joldes, Muller, Popescu 2017, Algorithm 6): relative error <= 3 u^2
    double sh, sl, th, tl, vh, vl;
    two_sum(a.limb[0], b.limb[0], sh, sl);
    two_sum(a.limb[1], b.limb[1], th, tl);
    fast_two_sum(sh, sl + th, vh, vl);
    MultiDouble<2> r;
    fast_two_sum(vh, tl + vl, r.limb[0], r.limb[1]);
    return r;
  } else {
    double acc[N + 1];
    KOSMOS_DEVICE_UNROLL
    for (int i = 0; i <= N; ++i) acc[i] = 0.0;
    KOSMOS_DEVICE_UNROLL
    for (int k = 0; k < N; ++k) {
      double s, e;
      two_sum(a.limb[k], b.limb[k], s, e);
      Impl::deposit<N + 1>(acc, k, s);
      Impl::deposit<N + 1>(acc, k + 1, e);
    }
    return Impl::renormalize<N>(acc);
  }
}

template <int N>
KOKKOS_INLINE_FUNCTION MultiDouble<N> operator-(const MultiDouble<N>& a, const MultiDouble<N>& b) {
  return a + (-b);
}

template <int N>
KOKKOS_INLINE_FUNCTION MultiDouble<N> operator*(const MultiDouble<N>& a, const MultiDouble<N>& b) {
  if constexpr (N == 1) {
    return MultiDouble<1>(a.limb[0] * b.limb[0]);
  } else if constexpr (N == 2) {
    // DWTimesDW3 with FMA (Joldes, Muller, Popescu 2017, Algorithm 12): relative error <= 4 u^2
    double ch, cl1;
    Impl::md_two_prod(a.limb[0], b.limb[0], ch, cl1);
    const double tl0 = a.limb[1] * b.limb[1];
    const double tl1 = math::fma(a.limb[0], b.limb[1], tl0);
    const double cl2 = math::fma(a.limb[1], b.limb[0], tl1);
    MultiDouble<2> r;
    fast_two_sum(ch, cl1 + cl2, r.limb[0], r.limb[1]);
    return r;
  } else {
    double acc[N + 1];
    KOSMOS_DEVICE_UNROLL
    for (int i = 0; i <= N; ++i) acc[i] = 0.0;
    double err_prev[N], err_next[N];
    KOSMOS_DEVICE_UNROLL
    for (int k = 0; k < N; ++k) {
      // level k: products a_i b_{k-i} and the rounding errors of the level k-1 products
      KOSMOS_DEVICE_UNROLL
      for (int i = 0; i <= k; ++i) {
        double p;
        Impl::md_two_prod(a.limb[i], b.limb[k - i], p, err_next[i]);
        Impl::deposit<N + 1>(acc, k, p);
      }
      KOSMOS_DEVICE_UNROLL
      for (int i = 0; i < k; ++i) Impl::deposit<N + 1>(acc, k, err_prev[i]);
      KOSMOS_DEVICE_UNROLL
      for (int i = 0; i <= k; ++i) err_prev[i] = err_next[i];
    }
    // level N: errors of the level N-1 products and the plain products a_i b_{N-i}
    double tail = 0.0;
    KOSMOS_DEVICE_UNROLL
    for (int i = 0; i < N; ++i) tail += err_prev[i];
    KOSMOS_DEVICE_UNROLL
    for (int i = 1; i < N; ++i) tail = math::fma(a.limb[i], b.limb[N - i], tail);
    acc[N] += tail;
    return Impl::renormalize<N>(acc);
  }
}

template <int N>
KOKKOS_INLINE_FUNCTION MultiDouble<N> operator*(const MultiDouble<N>& a, double b) {
  return a * MultiDouble<N>(b);
}

// Long division: N + 1 quotient digits, each from the leading limb of the running remainder.
template <int N>
KOKKOS_INLINE_FUNCTION MultiDouble<N> operator/(const MultiDouble<N>& a, const MultiDouble<N>& b) {
  if constexpr (N == 1) {
    return MultiDouble<1>(a.limb[0] / b.limb[0]);
  } else {
    double q[N + 1];
    MultiDouble<N> r = a;
    KOSMOS_DEVICE_UNROLL
    for (int i = 0; i <= N; ++i) {
      q[i] = r.limb[0] / b.limb[0];
      if (i < N) r = r - b * q[i];
    }
    return Impl::renormalize<N>(q);
  }
}

template <int N>
KOKKOS_INLINE_FUNCTION MultiDouble<N>& operator+=(MultiDouble<N>& a, const MultiDouble<N>& b) {
  a = a + b;
  return a;
}
template <int N>
KOKKOS_INLINE_FUNCTION MultiDouble<N>& operator-=(MultiDouble<N>& a, const MultiDouble<N>& b) {
  a = a - b;
  return a;
}
template <int N>
KOKKOS_INLINE_FUNCTION MultiDouble<N>& operator*=(MultiDouble<N>& a, const MultiDouble<N>& b) {
  a = a * b;
  return a;
}
template <int N>
KOKKOS_INLINE_FUNCTION MultiDouble<N>& operator/=(MultiDouble<N>& a, const MultiDouble<N>& b) {
  a = a / b;
  return a;
}

// Square root by Newton's iteration y <- y + (a - y^2) / (2 y), doubling the correct digits.
template <int N>
KOKKOS_INLINE_FUNCTION MultiDouble<N> sqrt(const MultiDouble<N>& a) {
  if (!(a.limb[0] > 0.0)) return MultiDouble<N>(math::sqrt(a.limb[0]));  // 0, negative -> nan
  MultiDouble<N> y(math::sqrt(a.limb[0]));
  for (int bits = 52; bits < 53 * N + 53; bits *= 2) y = y + (a - y * y) / (y * 2.0);
  return y;
}

// Sum of the limbs, rounded to double.
template <int N>
KOKKOS_INLINE_FUNCTION double to_double(const MultiDouble<N>& a) {
  double s = a.limb[N - 1];
  KOSMOS_DEVICE_UNROLL
  for (int i = N - 2; i >= 0; --i) s += a.limb[i];
  return s;
}

template <int N>
KOKKOS_INLINE_FUNCTION MultiDouble<N> abs(const MultiDouble<N>& a) {
  return a.limb[0] < 0.0 ? -a : a;
}

// Comparisons through the sign of the renormalized difference.
template <int N>
KOKKOS_INLINE_FUNCTION int compare(const MultiDouble<N>& a, const MultiDouble<N>& b) {
  const MultiDouble<N> d = a - b;
  return d.limb[0] > 0.0 ? 1 : (d.limb[0] < 0.0 ? -1 : 0);
}
template <int N>
KOKKOS_INLINE_FUNCTION bool operator<(const MultiDouble<N>& a, const MultiDouble<N>& b) {
  return compare(a, b) < 0;
}
template <int N>
KOKKOS_INLINE_FUNCTION bool operator>(const MultiDouble<N>& a, const MultiDouble<N>& b) {
  return compare(a, b) > 0;
}
template <int N>
KOKKOS_INLINE_FUNCTION bool operator<=(const MultiDouble<N>& a, const MultiDouble<N>& b) {
  return compare(a, b) <= 0;
}
template <int N>
KOKKOS_INLINE_FUNCTION bool operator>=(const MultiDouble<N>& a, const MultiDouble<N>& b) {
  return compare(a, b) >= 0;
}
template <int N>
KOKKOS_INLINE_FUNCTION bool operator==(const MultiDouble<N>& a, const MultiDouble<N>& b) {
  return compare(a, b) == 0;
}
template <int N>
KOKKOS_INLINE_FUNCTION bool operator!=(const MultiDouble<N>& a, const MultiDouble<N>& b) {
  return compare(a, b) != 0;
}

// Documented bounds (see the header comment); N = 1 is plain IEEE double.
template <int N>
constexpr double unit_roundoff() {
  double u = 1.0;
  for (int i = 0; i < N; ++i) u *= 0x1p-53;
  return u;
}
template <int N>
constexpr double mul_error_bound() {
  return N == 1 ? 0x1p-53 : 2.0 * (N + 1) * unit_roundoff<N>();
}
template <int N>
constexpr double add_error_bound() {
  return N == 1 ? 0x1p-53 : 4.0 * unit_roundoff<N>();
}
template <int N>
constexpr double div_error_bound() {
  return N == 1 ? 0x1p-53 : 8.0 * (N + 1) * unit_roundoff<N>();
}

// ---- host-only decimal conversion (exact, core/decimal.cpp) ----

enum class DecimalStatus { ok, malformed, overflow };

namespace Impl {
// limbs[0..n) := the greedy round-to-nearest expansion of the decimal `text` (each limb the
// double nearest to what the previous ones leave, ties to even, subnormals included): the
// N-double nearest to the exact decimal value. malformed: not [+-]digits[.digits][e[+-]digits]
// (no nan, inf or hex); overflow: the value rounds beyond DBL_MAX. limbs are zero unless ok.
DecimalStatus parse_decimal(const std::string& text, double* limbs, int n);
// parse_decimal's status without the conversion (cheap unless the value is near DBL_MAX).
DecimalStatus check_decimal(const std::string& text);
// Scientific notation "d.ddd...e+X" of the exact sum of the limbs, correctly rounded (ties to
// even) to `digits` significant digits; digits <= 0: enough digits (the first count from an
// estimate up) that parse_decimal reads back to the same value, trailing zeros dropped.
// "0", "nan", "inf", "-inf" as such.
std::string format_decimal(const double* limbs, int n, int digits);
// out[0..n_out) := the greedy round-to-nearest expansion of the exact sum of the finite limbs
// in[0..n_in): more limbs are exact, fewer are the nearest n_out-double.
void round_limbs(const double* in, int n_in, double* out, int n_out);
}  // namespace Impl

// Scientific notation, correctly rounded to `digits` significant digits (0: enough to read back
// the same N-double with from_string).
template <int N>
std::string to_string(const MultiDouble<N>& a, int digits = 0) {
  return Impl::format_decimal(a.limb, N, digits);
}

// Reads a decimal number ("-1.25", "3e-7", "0.1", "4.9e-324") correctly rounded to N limbs.
template <int N>
DecimalStatus parse_decimal(const std::string& text, MultiDouble<N>& value) {
  return Impl::parse_decimal(text, value.limb, N);
}
// True when `text` is a decimal number whose value does not overflow (see parse_decimal).
template <int N>
bool from_string(const std::string& text, MultiDouble<N>& value) {
  return parse_decimal(text, value) == DecimalStatus::ok;
}
}  // namespace kosmos
