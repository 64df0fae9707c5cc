// Pairwise force laws. A force law is a small copyable struct with, for a pair (i, j) separated by
// d = x_j - x_i with relative velocity w = v_j - v_i:
//   acc(d, k)              k such that a_i += m_j k and a_j -= m_i k
//   acc_jerk(d, w, k, kj)  k as above and kj = dk/dt (for the Hermite integrators)
//   potential(d)           pair potential energy per unit m_i m_j (for energy monitoring)
// Users plug in another law by writing such a struct and passing it to integrate().
#pragma once

#include <kosmos/core/compat.hpp>

namespace kosmos {
namespace nbody {

namespace Impl {
// k = d / r^3 and, with the relative velocity w, kj = dk/dt = (w - 3 (d.w / r^2) d) / r^3, for a
// given r^2 (softened or not).
KOKKOS_INLINE_FUNCTION void inverse_square_acc(const double d[3], double r2, double k[3]) {
  const double rinv = math::rsqrt(r2);
  const double rinv3 = rinv * rinv * rinv;
  for (int c = 0; c < 3; ++c) k[c] = d[c] * rinv3;
}
// (rsqrt: the reciprocal square root to use, e.g. the hardware one in CUDA kernels.)
struct MathRsqrt {
  KOKKOS_INLINE_FUNCTION double operator()(double x) const { return math::rsqrt(x); }
};
template <class Rsqrt = MathRsqrt>
KOKKOS_INLINE_FUNCTION void inverse_square_acc_jerk(const double d[3], const double w[3], double r2,
                                                    double k[3], double kj[3],
                                                    const Rsqrt& rsqrt = Rsqrt()) {
  const double rinv = rsqrt(r2);
  const double rinv2 = rinv * rinv;
  const double rinv3 = rinv2 * rinv;
  const double rv = 3.0 * (d[0] * w[0] + d[1] * w[1] + d[2] * w[2]) * rinv2;
  for (int c = 0; c < 3; ++c) {
    k[c] = d[c] * rinv3;
    kj[c] = (w[c] - rv * d[c]) * rinv3;
  }
}
KOKKOS_INLINE_FUNCTION double squared_norm(const double d[3]) {
  return d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
}
// Index of pair (i, j), i < j, among the n(n-1)/2 pairs of n bodies (row-major upper triangle).
KOKKOS_INLINE_FUNCTION int pair_index(int i, int j, int n) {
  return i * (2 * n - i - 1) / 2 + (j - i - 1);
}
// Inverse of pair_index.
KOKKOS_INLINE_FUNCTION void pair_bodies(int p, int n, int& i, int& j) {
  i = 0;
  while (p >= n - 1 - i) {
    p -= n - 1 - i;
    ++i;
  }
  j = i + 1 + p;
}
}  // namespace Impl

// Newtonian gravity with G = 1.
struct Newtonian {
  KOKKOS_INLINE_FUNCTION void acc(const double d[3], double k[3]) const {
    Impl::inverse_square_acc(d, Impl::squared_norm(d), k);
  }
  KOKKOS_INLINE_FUNCTION void acc_jerk(const double d[3], const double w[3], double k[3],
                                       double kj[3]) const {
    Impl::inverse_square_acc_jerk(d, w, Impl::squared_norm(d), k, kj);
  }
  KOKKOS_INLINE_FUNCTION double potential(const double d[3]) const {
    return -math::rsqrt(Impl::squared_norm(d));
  }
};

// Plummer-softened gravity: 1/r^2 -> r / (r^2 + eps^2)^(3/2). An example of a user force law.
struct PlummerSoftened {
  double eps2 = 0.0;
  KOKKOS_INLINE_FUNCTION void acc(const double d[3], double k[3]) const {
    Impl::inverse_square_acc(d, Impl::squared_norm(d) + eps2, k);
  }
  KOKKOS_INLINE_FUNCTION void acc_jerk(const double d[3], const double w[3], double k[3],
                                       double kj[3]) const {
    Impl::inverse_square_acc_jerk(d, w, Impl::squared_norm(d) + eps2, k, kj);
  }
  KOKKOS_INLINE_FUNCTION double potential(const double d[3]) const {
    return -math::rsqrt(Impl::squared_norm(d) + eps2);
  }
};
}  // namespace nbody
}  // namespace kosmos
