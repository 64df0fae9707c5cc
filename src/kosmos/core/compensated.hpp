// Error-free transformations and compensated accumulators, usable on host and device.
// These are the building blocks of the float-pair chi^2 sums (kepler) and of multi-double
// arithmetic (series).
#pragma once

#include <kosmos/core/compat.hpp>

namespace kosmos {

// s + e == a + b exactly (Knuth's TwoSum, no ordering requirement).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void two_sum(T a, T b, T& s, T& e) {
  s = a + b;
  const T bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

// s + e == a + b exactly, given |a| >= |b| (Dekker's FastTwoSum).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void fast_two_sum(T a, T b, T& s, T& e) {
  s = a + b;
  e = b - (s - a);
}

// p + e == a * b exactly, using a fused multiply-add.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void two_prod(T a, T b, T& p, T& e) {
  p = a * b;
  e = math::fma(a, b, -p);
}

// Double-word accumulator: the running sum is kept as an unevaluated pair hi + lo, renormalized
// after every addition, so a long sum of T values keeps about twice T's precision (tiny terms
// are not lost even after millions of additions, unlike a plain Kahan correction term).
template <class T>
struct CompensatedSum {
  T hi = T(0);
  T lo = T(0);

  KOKKOS_FORCEINLINE_FUNCTION void add(T x) {
    T s, e;
    two_sum(hi, x, s, e);
    fast_two_sum(s, e + lo, hi, lo);
  }
  KOKKOS_FORCEINLINE_FUNCTION void add(const CompensatedSum& other) {
    T s, e;
    two_sum(hi, other.hi, s, e);
    fast_two_sum(s, e + (lo + other.lo), hi, lo);
  }
  KOKKOS_FORCEINLINE_FUNCTION T value() const { return hi + lo; }
};
}  // namespace kosmos
