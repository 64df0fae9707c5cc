// Kepler's equation M = E - e sin E, batched over Views (Ford 2009, Sec. 4.3).
//
// Two solvers, both in float and double:
//  - Solver::Danby: Ford's iteration, Danby's (1988) quartically convergent Newton variant from
//    E0 = M + 0.85 e sign(sin M), stopping when |f(E)| < tolerance (the correction computed from
//    that last evaluation is still applied: it needs no extra sin/cos), at most max_iterations
//    (10 by default) evaluations of sin/cos: never an infinite loop. The step is Danby's
//    delta3 = -f / (f' + delta2 f''/2 + delta2^2 f'''/6) with delta2 = -f / (f' + delta1 f''/2),
//    delta1 = -f / f' (the paper's Eq. 10 as printed garbles the delta indices).
//  - Solver::Markley (default): Markley (1995, Celest. Mech. 63, 101), loop-free: a Pade-cubic
//    starter and one fifth-order correction, one sincos per solution. On host spaces, double
//    and contiguous Views, it runs vectorized (impl/solver_simd.hpp) at the same accuracy.
//
// Conventions: M is range-reduced to [0, 2pi) to about one ulp of 2 pi for every finite M
// (Cody-Waite with a two-constant 2 pi for |M| < 2^50 double / 2^20 float, the exact Payne-Hanek
// reduction beyond), so many orbits from the epoch keep the accuracy of the given M; E, and the
// true anomaly nu, are returned in [0, 2pi) for that reduced M. Valid input: 0 <= e < 1, finite M.
//
// Accuracy (tested in unit_tests/kepler against a long-double / __float128 reference over
// e in [0, 0.999], M over +-1000 orbits; r = |E - e sin E - M| evaluated in extended precision):
//   double: r <= 3e-15 (~3 ulp of 2pi),    |E - E_ref|, |sin E - ref|, |cos E - ref| <= 3e-15 / (1
//   - e) float : r <= 1.5e-6 (~3 ulp of 2pi),   |E - E_ref|, |sin E - ref|, |cos E - ref| <= 1.5e-6
//   / (1 - e)
// for both solvers (measured maxima: double 1.6e-15, float 8.3e-7).
// (the 1/(1 - e) factor is the conditioning of Kepler's equation near periastron).
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/impl/solver_simd.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kosmos {
namespace kepler {

enum class Solver : int { Danby = 0, Markley = 1 };

inline const char* solver_name(Solver s) {
  return s == Solver::Danby ? "danby" : "markley";
}

// Per-element status written by the batched solvers.
enum Status : std::uint8_t {
  converged = 0,       // |f(E)| < tolerance (Danby) or loop-free solution (Markley)
  not_converged = 1,   // Danby hit max_iterations; E is its last iterate
  invalid_element = 2  // e outside [0, 1) or non-finite M / e; outputs are NaN
};

struct SolverOptions {
  Solver solver = Solver::Markley;
  int max_iterations = 10;  // Danby only; >= 1
  // Danby stopping threshold on |f(E)|; <= 0 picks the default (1e-6 float as in the paper,
  // 1e-12 double).
  double tolerance = 0;
};

template <class T>
KOKKOS_INLINE_FUNCTION constexpr T default_tolerance() {
  return std::is_same<T, float>::value ? T(1e-6) : T(1e-12);
}

namespace Impl {
// 2 pi = hi + lo to twice the working precision (Cody-Waite split).
template <class T>
struct TwoPiSplit;
template <>
struct TwoPiSplit<double> {
  KOKKOS_INLINE_FUNCTION static constexpr double hi() { return 6.283185307179586232; }
  KOKKOS_INLINE_FUNCTION static constexpr double lo() { return 2.4492935982947064e-16; }
};
template <>
struct TwoPiSplit<float> {
  KOKKOS_INLINE_FUNCTION static constexpr float hi() { return 6.28318548202514648f; }
  KOKKOS_INLINE_FUNCTION static constexpr float lo() { return -1.7484555314695172e-7f; }
};

// Device fast paths for float on CUDA (host, OpenMP and double keep the generic math):
//  - sincos_: one sincosf (full accuracy, one shared range reduction) instead of sinf + cosf;
//  - div_fast: approximate quotient (2 ulp) for the solvers' correction steps and Markley's
//    starter, whose rounding is far below the final error (a step's relative error times the
//    step itself);
//  - sqrt_fast: x * rsqrt(x), and pow23: x^(2/3) via ex2/lg2 (relative error ~1e-6), only in
//    Markley's starter, whose own error (up to ~1e-3 rad) the fifth-order correction removes.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void sincos_(T x, T& s, T& c) {
  s = math::sin(x);
  c = math::cos(x);
}
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T div_fast(T a, T b) {
  return a / b;
}
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T sqrt_fast(T x) {
  return math::sqrt(x);
}
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T pow23(T x) {
  const T w1 = math::cbrt(x);
  return w1 * w1;
}
#if defined(__CUDA_ARCH__)
// The approximate instructions in their flush-to-zero forms (one MUFU op, plus one FMUL for the
// quotient, without the denormal scaling of the default forms): the solver's quotients and
// starter never see denormals, except a vanishing residual, which then gives a zero step.
template <>
KOKKOS_FORCEINLINE_FUNCTION void sincos_<float>(float x, float& s, float& c) {
  sincosf(x, &s, &c);
}
template <>
KOKKOS_FORCEINLINE_FUNCTION float div_fast<float>(float a, float b) {
  float q;
  asm("div.approx.ftz.f32 %0, %1, %2;" : "=f"(q) : "f"(a), "f"(b));
  return q;
}
template <>
KOKKOS_FORCEINLINE_FUNCTION float sqrt_fast<float>(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return x > 0.0f ? x * y : 0.0f;
}
template <>
KOKKOS_FORCEINLINE_FUNCTION float pow23<float>(float x) {
  float l, y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(l) : "f"(x));
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(l * (2.0f / 3.0f)));
  return x > 0.0f ? y : 0.0f;
}
#endif

// sin/cos of (E + d) from sin/cos of E, for |d| small (a solver's last correction).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void rotate_small(T d, T& s, T& c) {
  const T d2 = d * d;
  const T cd = T(1) - d2 * (T(0.5) - d2 * T(1.0 / 24));
  const T sd = d * (T(1) - d2 * (T(1.0 / 6) - d2 * T(1.0 / 120)));
  const T s_new = s * cd + c * sd;
  const T c_new = c * cd - s * sd;
  s = s_new;
  c = c_new;
}
}  // namespace Impl

namespace Impl {
// Bits of 1/(2 pi) for the Payne-Hanek reduction: word w (1..20) holds bits 64 (w - 1) + 1 ..
// 64 w after the binary point (1280 bits: enough for the largest double, 2^1024, plus a
// 192-bit window); word 0 is zero (the bits before the point). Computed with mpmath at 1600 bits.
KOKKOS_INLINE_FUNCTION std::uint64_t inv_two_pi_word(int w) {
  switch (w) {
    case 1:
      return 0x28be60db9391054aull;
    case 2:
      return 0x7f09d5f47d4d3770ull;
    case 3:
      return 0x36d8a5664f10e410ull;
    case 4:
      return 0x7f9458eaf7aef158ull;
    case 5:
      return 0x6dc91b8e909374b8ull;
    case 6:
      return 0x01924bba82746487ull;
    case 7:
      return 0x3f877ac72c4a69cfull;
    case 8:
      return 0xba208d7d4baed121ull;
    case 9:
      return 0x3a671c09ad17df90ull;
    case 10:
      return 0x4e64758e60d4ce7dull;
    case 11:
      return 0x272117e2ef7e4a0eull;
    case 12:
      return 0xc7fe25fff7816603ull;
    case 13:
      return 0xfbcbc462d6829b47ull;
    case 14:
      return 0xdb4d9fb3c9f2c26dull;
    case 15:
      return 0xd3d18fd9a797fa8bull;
    case 16:
      return 0x5d49eeb1faf97c5eull;
    case 17:
      return 0xcf41ce7de294a4baull;
    case 18:
      return 0x9afed7ec47e35742ull;
    case 19:
      return 0x1580cc11bf1edaeaull;
    case 20:
      return 0xfc33ef0826bd0d87ull;
    default:
      return 0;
  }
}

// 64 bits of 1/(2 pi) starting after bit position `offset` - 64 (offset >= 0, word-0 based).
KOKKOS_INLINE_FUNCTION std::uint64_t inv_two_pi_bits(int offset) {
  const int w = offset / 64, shift = offset % 64;
  const std::uint64_t hi = inv_two_pi_word(w), lo = inv_two_pi_word(w + 1);
  return shift == 0 ? hi : (hi << shift) | (lo >> (64 - shift));
}

// Full 64 x 64 -> 128-bit product.
KOKKOS_INLINE_FUNCTION void mul_64x64(std::uint64_t a, std::uint64_t b, std::uint64_t& hi,
                                      std::uint64_t& lo) {
#if defined(__CUDA_ARCH__)
  lo = a * b;
  hi = __umul64hi(a, b);
#else
  const std::uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  const std::uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const std::uint64_t middle = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  lo = (middle << 32) | (p00 & 0xffffffffu);
  hi = p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32);
#endif
}

// |x| mod 2 pi in [0, 2pi] for finite |x| >= 2^50 (Payne-Hanek): with x = m 2^q (m the 53-bit
// integer significand, q >= -2), frac(x / 2pi) = frac(m W / 2^192) up to m 2^-192, where W holds
// the bits q + 1 .. q + 192 of 1/(2 pi) (the bits before them multiply m 2^q to integers).
// The 128 leading fraction bits give |x| mod 2pi to well within one ulp of 2 pi.
KOKKOS_INLINE_FUNCTION double reduce_huge(double x) {
  std::uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  const int q = int((bits >> 52) & 0x7ff) - 1075;
  const std::uint64_t m = (bits & ((std::uint64_t(1) << 52) - 1)) | (std::uint64_t(1) << 52);
  const int offset = q + 64;  // word 0 is the zero word
  const std::uint64_t w0 = inv_two_pi_bits(offset), w1 = inv_two_pi_bits(offset + 64),
                      w2 = inv_two_pi_bits(offset + 128);
  std::uint64_t h0, l0, h1, l1, h2, l2;
  mul_64x64(m, w0, h0, l0);  // h0: integer part, dropped
  mul_64x64(m, w1, h1, l1);
  mul_64x64(m, w2, h2, l2);
  const std::uint64_t f1 = h2 + l1;                        // fraction bits 65..128
  const std::uint64_t f0 = h1 + l0 + (f1 < h2 ? 1u : 0u);  // fraction bits 1..64 (mod 2^64)
  // fraction = f0 / 2^64 + f1 / 2^128 as a double pair, times 2 pi as a double pair.
  const double frac_hi = double(f0 & ~std::uint64_t(0x7ff)) * 5.42101086242752217e-20;  // 2^-64
  const double frac_lo =
      (double(f0 & 0x7ff) + double(f1) * 5.42101086242752217e-20) * 5.42101086242752217e-20;
  return math::fma(
      frac_hi, TwoPiSplit<double>::hi(),
      math::fma(frac_hi, TwoPiSplit<double>::lo(), frac_lo * TwoPiSplit<double>::hi()));
}

// Cody-Waite: M - 2 pi k with 2 pi carried to twice T's precision; k times the leading part is
// exact in the fma, so the result is good to about one ulp of 2 pi while k fits in T's
// significand with room for the quotient's rounding (|M| < 2^50 double, 2^20 float).
template <class T>
KOKKOS_INLINE_FUNCTION T reduce_cody_waite(T M) {
  using Split = TwoPiSplit<T>;
  const T k = math::floor(M * T(0.15915494309189533577));
  T r = math::fma(-k, Split::hi(), M);
  r = math::fma(-k, Split::lo(), r);
  if (r < T(0)) r += Split::hi();
  if (r >= Split::hi()) r -= Split::hi();
  return r;
}
}  // namespace Impl

// M reduced to [0, 2pi), to about one ulp of 2 pi for every finite M: Cody-Waite for moderate
// |M|, the exact (Payne-Hanek) reduction beyond (float through double). NaN for non-finite M.
template <class T>
KOKKOS_INLINE_FUNCTION T reduce_mean_anomaly(T M) {
  if (!math::isfinite(M)) return M - M;
  const T cody_waite_limit =
      std::is_same<T, float>::value ? T(1048576.0) : T(1125899906842624.0);  // 2^20, 2^50
  T r;
  if (math::fabs(M) < cody_waite_limit) {
    r = Impl::reduce_cody_waite(M);
  } else if (math::fabs(double(M)) < 1125899906842624.0) {
    r = T(Impl::reduce_cody_waite(double(M)));
  } else {
    const double a = Impl::reduce_huge(math::fabs(double(M)));
    r = T(M < T(0) && a > 0 ? (Impl::TwoPiSplit<double>::hi() - a) + Impl::TwoPiSplit<double>::lo()
                            : a);
  }
  if (r >= Impl::TwoPiSplit<T>::hi()) r = T(0);  // within half an ulp of 2 pi
  if (r < T(0)) r = T(0);
  return r;
}

// True anomaly in [0, 2pi) from e, sin E, cos E.
template <class T>
KOKKOS_INLINE_FUNCTION T true_anomaly(T e, T sinE, T cosE) {
  const T nu = math::atan2(math::sqrt((T(1) - e) * (T(1) + e)) * sinE, cosE - e);
  return nu < T(0) ? nu + math::two_pi<T>() : nu;
}

// Danby/Ford iteration for M in [0, 2pi). Returns the number of sin/cos evaluations used, or
// -1 if |f| >= tol after max_iterations (E, s, c then hold the last iterate).
template <class T>
KOKKOS_INLINE_FUNCTION int danby_solve(T M, T e, T tol, int max_iterations, T& E, T& s, T& c) {
  E = M + (M < math::pi<T>() ? T(0.85) : T(-0.85)) * e;
  s = T(0);
  c = T(1);
  for (int it = 1; it <= max_iterations; ++it) {
    Impl::sincos_(E, s, c);
    const T esin = e * s, ecos = e * c;
    const T f = E - esin - M;
    const T f1 = T(1) - ecos;  // f'
    const T f2 = esin;         // f''
    const T f3 = ecos;         // f'''
    const T d1 = Impl::div_fast(-f, f1);
    const T d2 = Impl::div_fast(-f, f1 + T(0.5) * d1 * f2);
    const T d3 = Impl::div_fast(-f, f1 + T(0.5) * d2 * f2 + d2 * d2 * f3 * T(1.0 / 6));
    E += d3;
    if (math::fabs(f) < tol) {
      Impl::rotate_small(d3, s, c);
      return it;
    }
  }
  Impl::sincos_(E, s, c);  // consistent with the last iterate (failure path only)
  return -1;
}

// Markley (1995) for M in [0, 2pi): cubic starter (Eq. 20) and one fifth-order correction
// (Eq. 29). Loop-free; one sin/cos.
template <class T>
KOKKOS_INLINE_FUNCTION void markley_solve(T M, T e, T& E, T& s, T& c) {
  const T pi = math::pi<T>();
  const bool flip = M > pi;
  const T m = flip ? math::two_pi<T>() - M : M;  // m in [0, pi]
  const T pi2 = pi * pi;
  const T alpha =
      (T(3) * pi2 + T(1.6) * pi * (pi - m) / (T(1) + e)) * T(0.25842434945507176);  // 1/(pi^2-6)
  const T one_m_e = T(1) - e;
  const T d = T(3) * one_m_e + alpha * e;
  const T q = T(2) * alpha * d * one_m_e - m * m;
  const T r = T(3) * alpha * d * (d - T(1) + e) * m + m * m * m;
  const T w0 = math::fabs(r) + Impl::sqrt_fast(q * q * q + r * r);
  const T w = Impl::pow23(w0);  // w0^(2/3)
  const T denom = w * w + w * q + q * q;
  // E1 = (2 r w / denom + m) / d as one quotient
  const bool pos = denom > T(0);
  const T E1 = Impl::div_fast(pos ? T(2) * r * w + m * denom : m, pos ? denom * d : d);
  Impl::sincos_(E1, s, c);
  const T f0 = E1 - e * s - m;
  const T f1 = T(1) - e * c;
  const T f2 = e * s;
  const T f3 = T(1) - f1;
  const T f4 = -f2;
  const T d3 =
      Impl::div_fast(-f0 * f1, f1 * f1 - T(0.5) * f0 * f2);  // = -f0 / (f1 - f0 f2 / (2 f1))
  const T d4 = Impl::div_fast(-f0, f1 + T(0.5) * d3 * f2 + d3 * d3 * f3 * T(1.0 / 6));
  const T d5 = Impl::div_fast(
      -f0, f1 + T(0.5) * d4 * f2 + d4 * d4 * f3 * T(1.0 / 6) + d4 * d4 * d4 * f4 * T(1.0 / 24));
  E = E1 + d5;
  Impl::rotate_small(d5, s, c);
  if (flip) {
    E = math::two_pi<T>() - E;
    s = -s;
  }
}

// One element: reduces M, checks e, solves. Returns a Status.
template <class T>
KOKKOS_INLINE_FUNCTION std::uint8_t solve_one(T M, T e, Solver solver, T tol, int max_iterations,
                                              T& E, T& s, T& c) {
  if (!(e >= T(0) && e < T(1)) || !math::isfinite(M)) {
    const T nan = T(0) / T(0);
    E = s = c = nan;
    return invalid_element;
  }
  const T m = reduce_mean_anomaly(M);
  std::uint8_t status = converged;
  if (solver == Solver::Danby) {
    if (danby_solve(m, e, tol, max_iterations, E, s, c) < 0) status = not_converged;
  } else {
    markley_solve(m, e, E, s, c);
  }
  if (E < T(0)) E += math::two_pi<T>();
  if (E >= math::two_pi<T>()) E -= math::two_pi<T>();
  return status;
}

namespace Impl {
template <class View>
constexpr bool is_rank1_view() {
  return Kokkos::is_view<View>::value && View::rank == 1;
}

template <class ExecSpace, class MView, class EccView, class OutView, class StatusView>
struct SolveFunctor {
  using T = typename OutView::non_const_value_type;
  MView M;
  EccView e;
  OutView E, sinE, cosE, nu;
  StatusView status;
  Solver solver;
  T tol;
  int max_iterations;
  bool want_sin, want_cos, want_nu;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    T Ei, s, c;
    const T ei = T(e(i));
    status(i) = solve_one<T>(T(M(i)), ei, solver, tol, max_iterations, Ei, s, c);
    E(i) = Ei;
    if (want_sin) sinE(i) = s;
    if (want_cos) cosE(i) = c;
    if (want_nu) nu(i) = true_anomaly(ei, s, c);
  }
};

// The host path of Markley in double for contiguous Views: chunks of kSimdChunk elements, each
// through the vectorized markley_chunk, then solve_one for the elements it flags.
template <class ExecSpace, class MView, class EccView, class OutView, class StatusView>
struct SimdSolveFunctor {
  MView M;
  EccView e;
  OutView E, sinE, cosE, nu;
  StatusView status;
  std::int64_t n;
  bool want_sin, want_cos, want_nu;

  void operator()(const std::int64_t chunk) const {
    // wanted and of stride 1: the chunk writes them in place
    const bool sin_direct = want_sin && sinE.stride(0) == 1;
    const bool cos_direct = want_cos && cosE.stride(0) == 1;
    const std::int64_t first = chunk * kSimdChunk;
    const int count = int(n - first < kSimdChunk ? n - first : kSimdChunk);
    double s_local[kSimdChunk], c_local[kSimdChunk];
    std::uint8_t scalar[kSimdChunk];
    double* s = sin_direct ? &sinE(first) : s_local;
    double* c = cos_direct ? &cosE(first) : c_local;
    markley_chunk(&M(first), &e(first), count, &E(first), s, c, scalar);
    for (int i = 0; i < count; ++i) status(first + i) = converged;
    for (int i = 0; i < count; ++i)
      if (scalar[i]) {
        const std::int64_t g = first + i;
        status(g) = solve_one<double>(M(g), e(g), Solver::Markley, 0.0, 1, E(g), s[i], c[i]);
      }
    if (want_sin && !sin_direct)
      for (int i = 0; i < count; ++i) sinE(first + i) = s[i];
    if (want_cos && !cos_direct)
      for (int i = 0; i < count; ++i) cosE(first + i) = c[i];
    if (want_nu)
      for (int i = 0; i < count; ++i) nu(first + i) = true_anomaly(e(first + i), s[i], c[i]);
  }
};

// Whether solve() takes the host SIMD path: a host execution space, Markley, double Views,
// contiguous.
template <class ExecSpace, class MView, class EccView, class OutView>
constexpr bool simd_solve_applies() {
  return kosmos::Impl::is_host_space<ExecSpace>() &&
         std::is_same<typename MView::non_const_value_type, double>::value &&
         std::is_same<typename EccView::non_const_value_type, double>::value &&
         std::is_same<typename OutView::non_const_value_type, double>::value;
}
}  // namespace Impl

// Batched solve. M, e: rank-1 Views (float or double) of equal extent n. E: rank-1 output of
// extent n. sinE, cosE, nu: outputs of extent n, or of extent 0 to skip. status: rank-1 View of
// std::uint8_t (kosmos::kepler::Status per element), extent n.
// Throws kosmos::invalid_input for mismatched extents or bad options.
template <class ExecSpace, class MView, class EccView, class OutView, class StatusView,
          class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
void solve(const ExecSpace& space, const MView& M, const EccView& e, const OutView& E,
           const OutView& sinE, const OutView& cosE, const OutView& nu, const StatusView& status,
           const SolverOptions& options = {}) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "kosmos::kepler::solve: first argument must be an execution space instance");
  static_assert(Impl::is_rank1_view<MView>() && Impl::is_rank1_view<EccView>() &&
                    Impl::is_rank1_view<OutView>() && Impl::is_rank1_view<StatusView>(),
                "kosmos::kepler::solve: M, e, E, sinE, cosE, nu and status must be rank-1 Views");
  using T = typename OutView::non_const_value_type;
  static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                "kosmos::kepler::solve: outputs must be float or double");
  static_assert(std::is_same<typename OutView::value_type, T>::value,
                "kosmos::kepler::solve: outputs must be non-const");
  static_assert(std::is_same<typename StatusView::value_type, std::uint8_t>::value,
                "kosmos::kepler::solve: status must be a View of std::uint8_t");
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, typename MView::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecSpace, typename EccView::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecSpace, typename OutView::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecSpace, typename StatusView::memory_space>::accessible,
      "kosmos::kepler::solve: Views must be accessible from the execution space");
  constexpr const char* where = "kosmos::kepler::solve";
  kosmos::Impl::ScopedRegion region(where);
  const std::size_t n = M.extent(0);
  kosmos::Impl::require_extent(where, "e", e, 0, n);
  kosmos::Impl::require_extent(where, "E", E, 0, n);
  kosmos::Impl::require_extent(where, "status", status, 0, n);
  kosmos::Impl::require(sinE.extent(0) == 0 || sinE.extent(0) == n, where, "sinE.extent(0) is ",
                        sinE.extent(0), ", expected 0 or ", n);
  kosmos::Impl::require(cosE.extent(0) == 0 || cosE.extent(0) == n, where, "cosE.extent(0) is ",
                        cosE.extent(0), ", expected 0 or ", n);
  kosmos::Impl::require(nu.extent(0) == 0 || nu.extent(0) == n, where, "nu.extent(0) is ",
                        nu.extent(0), ", expected 0 or ", n);
  kosmos::Impl::require(options.max_iterations >= 1 && options.max_iterations <= 1000, where,
                        "max_iterations = ", options.max_iterations, " is outside [1, 1000]");
  kosmos::Impl::require(options.tolerance >= 0 && options.tolerance < 1, where,
                        "tolerance = ", options.tolerance, " is outside [0, 1)");
  if constexpr (Impl::simd_solve_applies<ExecSpace, MView, EccView, OutView>()) {
    const bool contiguous = M.span_is_contiguous() && e.span_is_contiguous() &&
                            E.span_is_contiguous() && M.stride(0) == 1 && e.stride(0) == 1 &&
                            E.stride(0) == 1;
    if (options.solver == Solver::Markley && contiguous && n > 0) {
      const std::int64_t chunks = (std::int64_t(n) + Impl::kSimdChunk - 1) / Impl::kSimdChunk;
      Kokkos::parallel_for(
          "kosmos::kepler::solve_simd",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, chunks),
          Impl::SimdSolveFunctor<ExecSpace, MView, EccView, OutView, StatusView>{
              M, e, E, sinE, cosE, nu, status, std::int64_t(n), sinE.extent(0) == n,
              cosE.extent(0) == n, nu.extent(0) == n});
      return;
    }
  }
  Impl::SolveFunctor<ExecSpace, MView, EccView, OutView, StatusView> f{
      M,
      e,
      E,
      sinE,
      cosE,
      nu,
      status,
      options.solver,
      options.tolerance > 0 ? T(options.tolerance) : default_tolerance<T>(),
      options.max_iterations,
      sinE.extent(0) == n,
      cosE.extent(0) == n,
      nu.extent(0) == n};
  Kokkos::parallel_for(
      "kosmos::kepler::solve",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, std::int64_t(n)),
      f);
}

// E only.
template <class ExecSpace, class MView, class EccView, class OutView, class StatusView,
          class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
void solve(const ExecSpace& space, const MView& M, const EccView& e, const OutView& E,
           const StatusView& status, const SolverOptions& options = {}) {
  const OutView none;
  solve(space, M, e, E, none, none, none, status, options);
}

// Overloads on the Views' execution space.
template <class MView, class EccView, class OutView, class StatusView,
          class = std::enable_if_t<Kokkos::is_view<MView>::value>>
void solve(const MView& M, const EccView& e, const OutView& E, const StatusView& status,
           const SolverOptions& options = {}) {
  solve(typename OutView::execution_space(), M, e, E, status, options);
}
template <class MView, class EccView, class OutView, class StatusView,
          class = std::enable_if_t<Kokkos::is_view<MView>::value>>
void solve(const MView& M, const EccView& e, const OutView& E, const OutView& sinE,
           const OutView& cosE, const OutView& nu, const StatusView& status,
           const SolverOptions& options = {}) {
  solve(typename OutView::execution_space(), M, e, E, sinE, cosE, nu, status, options);
}

// Number of elements whose status is not `converged` (one reduction on `space`).
template <class ExecSpace, class StatusView>
std::int64_t count_failures(const ExecSpace& space, const StatusView& status) {
  std::int64_t failures = 0;
  Kokkos::parallel_reduce(
      "kosmos::kepler::count_failures",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
          space, 0, std::int64_t(status.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& sum) {
        sum += status(i) != converged ? 1 : 0;
      },
      Kokkos::Sum<std::int64_t>(failures));
  return failures;
}
}  // namespace kepler
}  // namespace kosmos
