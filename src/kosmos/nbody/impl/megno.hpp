// MEGNO (Cincotta & Simo 2000) from the first-order variational equations, as REBOUND computes
// it (Rein & Tamayo 2016): a deviation delta = (dx, dv) of every body integrated alongside the
// system, Y(t) = (2 / t) int_0^t t' (delta . delta_dot / |delta|^2) dt', its running time average
// <Y> (the MEGNO: 2 for quasi-periodic orbits, growing as lambda t / 2 for chaotic ones), and the
// least-squares slope of <Y> against t (REBOUND's reb_simulation_lyapunov).
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/nbody/impl/system_common.hpp>

namespace kosmos {
namespace nbody {
namespace Impl {

// The running sums of one system (REBOUND's megno_Ys, megno_Yss, megno_n, megno_mean_t,
// megno_mean_Y, megno_cov_Yt, megno_var_t, megno_initial_t).
enum MegnoSum : int {
  megno_Ys,
  megno_Yss,
  megno_count,
  megno_mean_t,
  megno_mean_Y,
  megno_cov_Yt,
  megno_var_t,
  megno_initial_t,
  megno_sums
};

// Per system: the deviation (dx of the n bodies, then dv: 6n values) and the sums.
template <class MemorySpace>
struct MegnoState {
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> delta;  // (n_sys, 6n)
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> sums;   // (n_sys, megno_sums)
};

// The variational accelerations of Newtonian gravity: for every interacting pair (as
// pair_accelerations: no pair of test particles) with d = x_j - x_i and dd = dx_j - dx_i,
// da_i += m_j (dd / r^3 - 3 d (d . dd) / r^5) and da_j -= m_i (the same); `skip` leaves pairs
// out as in pair_accelerations (WHFast's Jacobi kick: the 0-1 pair).
template <int N, class Rsqrt>
KOKKOS_INLINE_FUNCTION void variational_accelerations(const double (&m)[N], const double* x,
                                                      const double* dx, double* da,
                                                      const Rsqrt& rsqrt,
                                                      PairSkip skip = PairSkip::none) {
  for (int k = 0; k < 3 * N; ++k) da[k] = 0;
  for (int p = 0; p < N; ++p)
    for (int q = p + 1; q < N; ++q) {
      if (m[p] == 0 && m[q] == 0) continue;
      if (skip == PairSkip::central_body && p == 0) continue;
      if (skip == PairSkip::first_pair && p == 0 && q == 1) continue;
      double d[3], dd[3], d_dd = 0, r2 = 0;
      for (int c = 0; c < 3; ++c) {
        d[c] = x[3 * q + c] - x[3 * p + c];
        dd[c] = dx[3 * q + c] - dx[3 * p + c];
        d_dd += d[c] * dd[c];
        r2 += d[c] * d[c];
      }
      const double rinv = rsqrt(r2), rinv3 = rinv * rinv * rinv, rinv5 = rinv3 * rinv * rinv;
      for (int c = 0; c < 3; ++c) {
        const double f = dd[c] * rinv3 - 3 * d[c] * d_dd * rinv5;
        da[3 * p + c] += m[q] * f;
        da[3 * q + c] -= m[p] * f;
      }
    }
}

// delta . delta_dot / |delta|^2 of a deviation (dx, dv) with variational accelerations da, each
// of `count` coordinates.
KOKKOS_INLINE_FUNCTION double megno_rate(const double* dx, const double* dv, const double* da,
                                         int count) {
  double dot = 0, norm2 = 0;
  for (int k = 0; k < count; ++k) {
    dot += dx[k] * dv[k] + dv[k] * da[k];
    norm2 += dx[k] * dx[k] + dv[k] * dv[k];
  }
  return dot / norm2;
}

// After a step of length dt that ended at time t since the start (t - megno_initial_t) and
// added dY = int 2 t' rate dt' over the step: REBOUND's reb_tools_megno_update.
KOKKOS_INLINE_FUNCTION void megno_update(double (&s)[megno_sums], double t, double dY, double dt) {
  s[megno_Ys] += dY;
  const double Y = s[megno_Ys] / t;
  s[megno_Yss] += Y * dt;
  s[megno_count] += 1;
  const double n = s[megno_count];
  s[megno_mean_t] += (t - s[megno_mean_t]) / n;
  const double megno = s[megno_Yss] / t;
  s[megno_mean_Y] += (megno - s[megno_mean_Y]) / n;
  s[megno_cov_Yt] += (n - 1) / n * (t - s[megno_mean_t]) * (megno - s[megno_mean_Y]);
  s[megno_var_t] += (n - 1) / n * (t - s[megno_mean_t]) * (t - s[megno_mean_t]);
}

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
