// Markley's solver (solver.hpp) for contiguous double arrays on the host, written so that the
// compiler vectorizes it (`#pragma omp simd`; GCC: -fopenmp or -fopenmp-simd, check with
// -fopt-info-vec): branch-free, no library call in the loop (sin / cos by Cephes' minimax
// polynomials on [-pi/4, pi/4] after a three-part Cody-Waite reduction by pi/2; the cube root of
// Markley's starter by division-free Newton steps). Elements that need the scalar path
// (|M| >= 2^25, non-finite M, e outside [0, 1)) are flagged and solved by solve_one afterwards;
// the accuracy is at least solver.hpp's (the solver tests run this path on every host space).
#pragma once

#include <cstdint>
#include <cstring>

namespace kosmos {
namespace kepler {
namespace Impl {
// Elements per chunk of the host kernel: the scratch of one chunk stays in L1.
constexpr int kSimdChunk = 256;

#if defined(_OPENMP)
#define KOSMOS_PRAGMA_SIMD _Pragma("omp simd")
#else
#define KOSMOS_PRAGMA_SIMD
#endif

// For the compiler's target.
namespace simd_default {
#include <kosmos/kepler/impl/markley_simd_body.hpp>
}  // namespace simd_default

// With GCC on x86-64 (nvcc's host code too) the same code is compiled for the x86-64 levels v2
// (SSE4.2: the 64-bit compares of the selects, without which the loop does not vectorize), v3
// (AVX2, FMA) and v4 (AVX-512) as well, and markley_chunk runs the best that the CPU supports:
// a library built for the baseline still solves at the CPU's vector width.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define KOSMOS_KEPLER_X86_64_LEVELS  // (the tests check every level the CPU runs)
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v2")
namespace simd_x86_64_v2 {
#include <kosmos/kepler/impl/markley_simd_body.hpp>
}  // namespace simd_x86_64_v2
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")
namespace simd_x86_64_v3 {
#include <kosmos/kepler/impl/markley_simd_body.hpp>
}  // namespace simd_x86_64_v3
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4")
namespace simd_x86_64_v4 {
#include <kosmos/kepler/impl/markley_simd_body.hpp>
}  // namespace simd_x86_64_v4
#pragma GCC pop_options
#endif

// The markley_chunk of the widest level that the CPU supports.
inline void markley_chunk(const double* M, const double* ecc, int n, double* E, double* sinE,
                          double* cosE, std::uint8_t* scalar) {
#if defined(KOSMOS_KEPLER_X86_64_LEVELS)
  static const int level = __builtin_cpu_supports("x86-64-v4")   ? 4
                           : __builtin_cpu_supports("x86-64-v3") ? 3
                           : __builtin_cpu_supports("x86-64-v2") ? 2
                                                                 : 0;
  switch (level) {
    case 4:
      return simd_x86_64_v4::markley_chunk(M, ecc, n, E, sinE, cosE, scalar);
    case 3:
      return simd_x86_64_v3::markley_chunk(M, ecc, n, E, sinE, cosE, scalar);
    case 2:
      return simd_x86_64_v2::markley_chunk(M, ecc, n, E, sinE, cosE, scalar);
    default:
      break;
  }
#endif
  simd_default::markley_chunk(M, ecc, n, E, sinE, cosE, scalar);
}
#undef KOSMOS_PRAGMA_SIMD
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
