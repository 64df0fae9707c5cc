// Kernels of Newton's method on power series (kosmos/series/newton.hpp): multi-double scalars
// (real or complex), LU with partial pivoting of the leading Jacobian block and its inverse, and
// the forward substitution over the series degrees of the block lower-triangular Toeplitz system.
//
// Storage (LayoutLeft, last extent = limbs L, the real part in limbs 0..N-1, the imaginary part
// of complex numbers in limbs N..2N-1, as everywhere in the series module):
//   residual H(k, i, l)      coefficient k of polynomial i; overwritten by the substitution
//   jacobian J(k, i, j, l)   coefficient k of dH_i / dx_j
//   lu(i, j, l), pivots(c)   LAPACK-style: row c was swapped with row pivots(c) >= c
//   inverse(i, j, l)         J(0)^{-1}, from lu and pivots
//   update dx(k, j, l)       the Newton update; x(k, j, l) += dx(k, j, l)
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/multi_double.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace kosmos {
namespace series {
namespace Impl {

// Marks a magnitude that is not finite (NaN compares false and would vanish from a max).
KOKKOS_INLINE_FUNCTION constexpr double infinite_magnitude() {
  return HUGE_VAL;
}
constexpr int kNotFinite = -2;

template <int N>
struct ComplexMultiDouble {
  MultiDouble<N> re, im;
};
template <int N>
KOKKOS_INLINE_FUNCTION ComplexMultiDouble<N> operator+(const ComplexMultiDouble<N>& a,
                                                       const ComplexMultiDouble<N>& b) {
  return {a.re + b.re, a.im + b.im};
}
template <int N>
KOKKOS_INLINE_FUNCTION ComplexMultiDouble<N> operator-(const ComplexMultiDouble<N>& a,
                                                       const ComplexMultiDouble<N>& b) {
  return {a.re - b.re, a.im - b.im};
}
template <int N>
KOKKOS_INLINE_FUNCTION ComplexMultiDouble<N> operator-(const ComplexMultiDouble<N>& a) {
  return {-a.re, -a.im};
}
template <int N>
KOKKOS_INLINE_FUNCTION ComplexMultiDouble<N> operator*(const ComplexMultiDouble<N>& a,
                                                       const ComplexMultiDouble<N>& b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <int N>
KOKKOS_INLINE_FUNCTION ComplexMultiDouble<N> operator/(const ComplexMultiDouble<N>& a,
                                                       const ComplexMultiDouble<N>& b) {
  const MultiDouble<N> norm = b.re * b.re + b.im * b.im;
  return {(a.re * b.re + a.im * b.im) / norm, (a.im * b.re - a.re * b.im) / norm};
}

template <int N, bool Complex>
using NewtonScalar = std::conditional_t<Complex, ComplexMultiDouble<N>, MultiDouble<N>>;

// Magnitude in double (|re| + |im| for complex): enough to choose pivots and report sizes.
template <int N>
KOKKOS_INLINE_FUNCTION double magnitude(const MultiDouble<N>& a) {
  return kosmos::math::fabs(a.limb[0]);
}
template <int N>
KOKKOS_INLINE_FUNCTION double magnitude(const ComplexMultiDouble<N>& a) {
  return kosmos::math::fabs(a.re.limb[0]) + kosmos::math::fabs(a.im.limb[0]);
}

// x := v(indices..., limbs); v(indices..., limbs) := x.
template <int N, class V, class... I>
KOKKOS_FORCEINLINE_FUNCTION void load_limbs(MultiDouble<N>& x, const V& v, int limb0,
                                            I... indices) {
  for (int l = 0; l < N; ++l) x.limb[l] = v(indices..., limb0 + l);
}
template <int N, class V, class... I>
KOKKOS_FORCEINLINE_FUNCTION void store_limbs(const MultiDouble<N>& x, const V& v, int limb0,
                                             I... indices) {
  for (int l = 0; l < N; ++l) v(indices..., limb0 + l) = x.limb[l];
}
template <int N, class V, class... I>
KOKKOS_FORCEINLINE_FUNCTION void load(MultiDouble<N>& x, const V& v, I... indices) {
  load_limbs(x, v, 0, indices...);
}
template <int N, class V, class... I>
KOKKOS_FORCEINLINE_FUNCTION void load(ComplexMultiDouble<N>& x, const V& v, I... indices) {
  load_limbs(x.re, v, 0, indices...);
  load_limbs(x.im, v, N, indices...);
}
template <int N, class V, class... I>
KOKKOS_FORCEINLINE_FUNCTION void store(const MultiDouble<N>& x, const V& v, I... indices) {
  store_limbs(x, v, 0, indices...);
}
template <int N, class V, class... I>
KOKKOS_FORCEINLINE_FUNCTION void store(const ComplexMultiDouble<N>& x, const V& v, I... indices) {
  store_limbs(x.re, v, 0, indices...);
  store_limbs(x.im, v, N, indices...);
}

template <class ExecSpace>
struct NewtonViews {
  using Series = Kokkos::View<double***, Kokkos::LayoutLeft, ExecSpace>;
  using Jacobian = Kokkos::View<double****, Kokkos::LayoutLeft, ExecSpace>;
  using Matrix = Kokkos::View<double***, Kokkos::LayoutLeft, ExecSpace>;
  using Pivots = Kokkos::View<int*, ExecSpace>;
};

// One team: lu := J(0) factored as P J(0) = L U (unit L below the diagonal, U on and above it).
// info(0) := -1; or the first column whose best pivot is at most n u_N max |J(0)|: the leading
// block is singular to the working precision, and the factorization stops there; or kNotFinite
// when J(0) holds a NaN or infinity.
template <int N, bool Complex, class ExecSpace>
struct FactorLeadingBlock {
  using Scalar = NewtonScalar<N, Complex>;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  typename NewtonViews<ExecSpace>::Jacobian jacobian;
  typename NewtonViews<ExecSpace>::Matrix lu;
  typename NewtonViews<ExecSpace>::Pivots pivots, info;
  int n = 0;
  double unit_roundoff = 0;  // u_N, set on the host

  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const auto J = jacobian;
    const auto A = lu;
    const int m = n;
    double scale = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(member, m * m),
        [&](const int ij, double& biggest) {
          Scalar a;
          load(a, J, 0, ij % m, ij / m);
          store(a, A, ij % m, ij / m);
          const double mag = magnitude(a);
          biggest =
              kosmos::math::isfinite(mag) ? (mag > biggest ? mag : biggest) : infinite_magnitude();
        },
        Kokkos::Max<double>(scale));
    const bool finite = scale < infinite_magnitude();
    Kokkos::single(Kokkos::PerTeam(member), [&]() { info(0) = finite ? -1 : kNotFinite; });
    member.team_barrier();
    if (!finite) return;
    const double tolerance = m * unit_roundoff * scale;
    for (int c = 0; c < m; ++c) {
      using Best = typename Kokkos::MaxLoc<double, int>::value_type;
      Best best;
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(member, c, m),
          [&](const int i, Best& b) {
            Scalar a;
            load(a, A, i, c);
            const double mag = magnitude(a);
            if (mag > b.val) {
              b.val = mag;
              b.loc = i;
            }
          },
          Kokkos::MaxLoc<double, int>(best));
      if (!(best.val > tolerance)) {
        Kokkos::single(Kokkos::PerTeam(member), [&]() { info(0) = c; });
        return;
      }
      const int p = best.loc;
      Kokkos::single(Kokkos::PerTeam(member), [&]() { pivots(c) = p; });
      if (p != c)
        Kokkos::parallel_for(Kokkos::TeamThreadRange(member, m), [&](const int j) {
          Scalar top, other;
          load(top, A, c, j);
          load(other, A, p, j);
          store(other, A, c, j);
          store(top, A, p, j);
        });
      member.team_barrier();
      Scalar pivot;
      load(pivot, A, c, c);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(member, c + 1, m), [&](const int i) {
        Scalar a;
        load(a, A, i, c);
        store(a / pivot, A, i, c);
      });
      member.team_barrier();
      const int rest = m - c - 1;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(member, rest * rest), [&](const int ij) {
        const int i = c + 1 + ij % rest, j = c + 1 + ij / rest;
        Scalar a, l, u;
        load(a, A, i, j);
        load(l, A, i, c);
        load(u, A, c, j);
        store(a - l * u, A, i, j);
      });
      member.team_barrier();
    }
  }
};

// inverse := (lu)^{-1} P, i.e. J(0)^{-1}, one column per work item: column col is U^{-1} L^{-1}
// applied to P e_col. With the inverse, each degree of the substitution is one matrix-vector
// product (n products per thread, one team barrier) instead of two triangular solves (2n + 3
// team barriers on a single team: the latency that made the solve dominate on a GPU). Its forward
// error is of the same order, cond(J(0)) u_N, as that of the triangular solves.
template <int N, bool Complex, class ExecSpace>
struct InvertLeadingBlock {
  using Scalar = NewtonScalar<N, Complex>;
  typename NewtonViews<ExecSpace>::Matrix lu, inverse;
  typename NewtonViews<ExecSpace>::Pivots pivots;
  int n = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int col) const {
    const int m = n;
    int one_at = col;  // P e_col = e_{one_at}: the row swaps of the factorization, in order
    for (int c = 0; c < m; ++c) {
      const int p = pivots(c);
      one_at = one_at == c ? p : (one_at == p ? c : one_at);
    }
    for (int i = 0; i < m; ++i) {  // y := L^{-1} e_{one_at} (L unit lower triangular)
      Scalar y;                    // zero
      if (i == one_at) y = one();
      for (int k = one_at; k < i; ++k) {
        Scalar l, yk;
        load(l, lu, i, k);
        load(yk, inverse, k, col);
        y = y - l * yk;
      }
      store(y, inverse, i, col);
    }
    for (int i = m - 1; i >= 0; --i) {  // U^{-1} y
      Scalar sum, u;
      load(sum, inverse, i, col);
      for (int k = i + 1; k < m; ++k) {
        Scalar a, xk;
        load(a, lu, i, k);
        load(xk, inverse, k, col);
        sum = sum - a * xk;
      }
      load(u, lu, i, i);
      store(sum / u, inverse, i, col);
    }
  }

 private:
  KOKKOS_INLINE_FUNCTION static Scalar one() {
    Scalar a;
    if constexpr (Complex)
      a.re = MultiDouble<N>(1.0);
    else
      a = MultiDouble<N>(1.0);
    return a;
  }
};

// One team, the whole forward substitution over the degrees k = 0 .. degree (one launch per
// Newton step; the k are sequential, the rows within a k parallel):
//   dx(k) := -J(0)^{-1} H(k) and x(k) += dx(k), where H(k) already holds
//   H_k + sum_{j=1..k} J_j dx_{k-j}; then H(q, i) += sum_j J(q - k, i, j) dx(k, j) for every later
//   q = k + 1 .. degree (the contribution of the freshly solved dx_k, one thread per (q, i)).
template <int N, bool Complex, class ExecSpace>
struct ForwardSubstitution {
  using Scalar = NewtonScalar<N, Complex>;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  typename NewtonViews<ExecSpace>::Series residual, update, x;
  typename NewtonViews<ExecSpace>::Jacobian jacobian;
  typename NewtonViews<ExecSpace>::Matrix inverse;
  int n = 0, degree = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const int m = n;
    const auto H = residual;
    const auto J = jacobian;
    const auto w = update;
    for (int k = 0; k <= degree; ++k) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(member, m), [&](const int i) {
        Scalar sum, xi;  // zero
        for (int j = 0; j < m; ++j) {
          Scalar a, h;
          load(a, inverse, i, j);
          load(h, H, k, j);
          sum = sum + a * h;
        }
        store(-sum, w, k, i);
        load(xi, x, k, i);
        store(xi - sum, x, k, i);
      });
      member.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(member, (degree - k) * m), [&](const int t) {
        const int q = k + 1 + t / m, i = t % m;
        Scalar acc;
        load(acc, H, q, i);
        for (int j = 0; j < m; ++j) {
          Scalar a, d;
          load(a, J, q - k, i, j);
          load(d, w, k, j);
          acc = acc + a * d;
        }
        store(acc, H, q, i);
      });
      member.team_barrier();
    }
  }
};

// Largest magnitude over coefficients 0..degree of a series View (infinity if any is not finite).
template <int N, bool Complex, class ExecSpace>
struct LargestCoefficient {
  using Scalar = NewtonScalar<N, Complex>;
  typename NewtonViews<ExecSpace>::Series series;
  int count = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t, double& biggest) const {
    Scalar a;
    load(a, series, int(t / count), int(t % count));
    const double mag = magnitude(a);
    const bool finite = kosmos::math::isfinite(mag);
    biggest = finite ? (mag > biggest ? mag : biggest) : infinite_magnitude();
  }
};

// Largest column sum of |J(0)| (of_jacobian) or of |inverse|, one column per work item: the
// 1-norms whose product is cond_1(J(0)) (|re| + |im| as the modulus).
template <int N, bool Complex, class ExecSpace>
struct LargestColumnSum {
  using Scalar = NewtonScalar<N, Complex>;
  typename NewtonViews<ExecSpace>::Jacobian jacobian;
  typename NewtonViews<ExecSpace>::Matrix inverse;
  int n = 0;
  bool of_jacobian = true;
  KOKKOS_INLINE_FUNCTION void operator()(const int j, double& biggest) const {
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      Scalar a;
      if (of_jacobian)
        load(a, jacobian, 0, i, j);
      else
        load(a, inverse, i, j);
      sum += magnitude(a);
    }
    biggest = kosmos::math::isfinite(sum) ? (sum > biggest ? sum : biggest) : infinite_magnitude();
  }
};
}  // namespace Impl
}  // namespace series
}  // namespace kosmos
