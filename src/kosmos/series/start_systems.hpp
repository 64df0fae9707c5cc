// Start systems of the path tracker (track.hpp). A start system G(x) = 0 with known solutions
// enters the homotopy H(x, t) = gamma (1 - t) G(x) + t F(x); a start system is a device-copyable
// struct with
//   KOKKOS_INLINE_FUNCTION ComplexMD<N> value(i, x, ...)   (through the functions below)
// and a host-side description (number of paths, the polynomial degrees). Only the total-degree
// system is registered now; a new start system is one more file like this one.
//
// Total degree: G_i(x) = x_i^(d_i) - 1 with d_i the degree of F_i; its prod d_i solutions are the
// tuples of roots of unity x_i = exp(2 pi i k_i / d_i). Path p is decoded in mixed radix
// (k_1 fastest). By Bezout's theorem every isolated solution of F is the end of one of these paths
// for all but finitely many gamma on the unit circle (the gamma trick).
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/series/impl/complex_md.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <vector>

namespace kosmos {
namespace series {

// Number of total-degree paths, prod degrees; kosmos::invalid_input above `limit`.
std::int64_t total_degree_paths(const std::vector<int>& degrees, std::int64_t limit);

namespace Impl {
// z^e for a small non-negative integer exponent, by repeated squaring. The first factor is taken
// as it is: 1 * z is z exactly, so skipping that multiplication changes no result (z^1 is free).
template <int N>
KOKKOS_INLINE_FUNCTION ComplexMD<N> power(ComplexMD<N> z, int e) {
  ComplexMD<N> r(1.0);
  bool one = true;
  while (e > 0) {
    if (e & 1) {
      r = one ? z : r * z;
      one = false;
    }
    e >>= 1;
    if (e > 0) z = z * z;
  }
  return r;
}

// exp(2 pi i k / d) to N doubles: cos/sin in double, then Newton on z^d = 1 in N-double (each
// step doubles the correct digits; 2 + log2 N steps from 1e-16).
template <int N>
KOKKOS_INLINE_FUNCTION ComplexMD<N> root_of_unity(std::int64_t k, int d) {
  const double angle = 6.283185307179586476925286766559 * double(k) / double(d);
  ComplexMD<N> z(MultiDouble<N>(math::cos(angle)), MultiDouble<N>(math::sin(angle)));
  for (int bits = 53; bits < 53 * N + 53; bits *= 2) {
    const ComplexMD<N> zd1 = power(z, d - 1);
    z = z - (zd1 * z - ComplexMD<N>(1.0)) / (zd1 * MultiDouble<N>(double(d)));
  }
  return z;
}

// Writes the start solution of path `path` into x(j), j = 0..n-1, for degrees(j).
template <int N, class Degrees, class Store>
KOKKOS_INLINE_FUNCTION void total_degree_start(std::int64_t path, const Degrees& degrees, int n,
                                               Store&& store) {
  for (int j = 0; j < n; ++j) {
    const int d = degrees(j);
    store(j, root_of_unity<N>(path % d, d));
    path /= d;
  }
}
}  // namespace Impl
}  // namespace series
}  // namespace kosmos
