// WHFast with first-order variational equations and MEGNO (Rein & Tamayo 2016, as REBOUND's WHFast
// computes them): a deviation (dQ, dV) of every body, in Jacobi coordinates, is advanced by the
// derivative of each operator of the Wisdom-Holman splitting, so the tangent map is that of the
// symplectic map itself (not of the exact flow):
//  - Kepler drift: the derivative of the universal-variable solution with respect to the initial
//    state (kepler_drift_variational: dX from the implicit Kepler equation, then df, dg, dfd, dgd);
//  - interaction kick: the variational accelerations of the kick's forces (every pair but 0-1),
//    moved to Jacobi accelerations with the same masses, plus the derivative of the Kepler part
//    taken out, M_i (dQ / |Q|^3 - 3 Q (Q . dQ) / |Q|^5) for i >= 2;
//  - centre-of-mass drift: dQ_0 += h dV_0;
//  - symplectic correctors: their stages are the same Kepler drifts and kicks, so the deviation is
//    corrected with the bodies (applied when a run of full steps starts, inverted when it stops).
// The loop is whfast_system's (integrators/whfast.hpp) with this system: the same landing rule,
// carried state (the deviation included) and checkpoint segments as plain WHFast; it synchronizes
// after every step and adds the MEGNO rate of the synchronized state.
#pragma once

#include <kosmos/nbody/impl/megno.hpp>
#include <kosmos/nbody/impl/modern_launch.hpp>
#include <kosmos/nbody/integrators/whfast.hpp>

namespace kosmos {
namespace nbody {
namespace Impl {

// Stumpff functions c0..c5 of z (c_k(z) = sum_j (-z)^j / (k + 2j)!): z quartered below 0.1, c4
// and c5 from their series, then doubled back up (c5(4z) = (c5 + c4 + c3 c2) / 16, c4(4z) =
// (1 + c1) c3 / 8, the lower ones from c_k = 1/k! - z c_{k+2}); REBOUND's stumpff_cs.
KOKKOS_INLINE_FUNCTION void stumpff_c0_to_c5(double z, double (&c)[6]) {
  int n = 0;
  while (math::fabs(z) > 0.1 && n < 200) {
    z *= 0.25;
    ++n;
  }
  double inv_factorial[16];
  inv_factorial[0] = 1;
  for (int k = 1; k < 16; ++k) inv_factorial[k] = inv_factorial[k - 1] / k;
  double odd = inv_factorial[15], even = inv_factorial[14];
  for (int k = 13; k >= 5; k -= 2) {
    odd = inv_factorial[k] - z * odd;
    even = inv_factorial[k - 1] - z * even;
  }
  c[5] = odd;
  c[4] = even;
  c[3] = inv_factorial[3] - z * c[5];
  c[2] = inv_factorial[2] - z * c[4];
  c[1] = 1 - z * c[3];
  for (; n > 0; --n) {
    z *= 4;
    c[5] = (c[5] + c[4] + c[3] * c[2]) * 0.0625;
    c[4] = (1 + c[1]) * c[3] * 0.125;
    c[3] = inv_factorial[3] - z * c[5];
    c[2] = inv_factorial[2] - z * c[4];
    c[1] = 1 - z * c[3];
  }
  c[0] = 1 - z * c[2];
}

// A Kepler drift of (r, v) by dt about mu and of its deviation (dr, dv) by the drift's derivative
// (Rein & Tamayo 2016, Appendix; REBOUND's reb_integrator_whfast_kepler_solver). False (nothing
// changed) when the drift fails.
KOKKOS_INLINE_FUNCTION bool kepler_drift_variational(double mu, double dt, double* r, double* v,
                                                     double* dr, double* dv) {
  if (dt == 0) return true;
  const double x[3] = {r[0], r[1], r[2]}, w[3] = {v[0], v[1], v[2]};
  const double dx[3] = {dr[0], dr[1], dr[2]}, dw[3] = {dv[0], dv[1], dv[2]};
  KeplerDriftSolution sol;
  if (!kepler_drift(mu, dt, r, v, &sol)) return false;
  const double r0 = math::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]), r0i = 1 / r0;
  const double eta0 = x[0] * w[0] + x[1] * w[1] + x[2] * w[2];
  const double beta = sol.beta, zeta0 = mu - beta * r0, X = sol.s;
  double G[6];  // G_k = X^k c_k(beta X^2)
  stumpff_c0_to_c5(beta * X * X, G);
  double power = 1;
  for (int k = 1; k < 6; ++k) {
    power *= X;
    G[k] *= power;
  }
  const double ri = 1 / (r0 + eta0 * G[1] + zeta0 * G[2]);
  const double f = -mu * G[2] * r0i, g = dt - mu * G[3];
  const double fd = -mu * G[1] * r0i * ri, gd = -mu * G[2] * ri;
  const double dr0 = (dx[0] * x[0] + dx[1] * x[1] + dx[2] * x[2]) * r0i;
  const double dbeta = -2 * mu * dr0 * r0i * r0i - 2 * (dw[0] * w[0] + dw[1] * w[1] + dw[2] * w[2]);
  const double deta0 =
      dx[0] * w[0] + dx[1] * w[1] + dx[2] * w[2] + x[0] * dw[0] + x[1] * dw[1] + x[2] * dw[2];
  const double dzeta0 = -beta * dr0 - r0 * dbeta;
  // dG_k / dbeta = (k G_{k+2} - X G_{k+1}) / 2.
  const double G1beta = 0.5 * (G[3] - X * G[2]), G2beta = 0.5 * (2 * G[4] - X * G[3]),
               G3beta = 0.5 * (3 * G[5] - X * G[4]);
  const double tbeta = eta0 * G2beta + zeta0 * G3beta;
  const double dX = -ri * (X * dr0 + G[2] * deta0 + G[3] * dzeta0 + tbeta * dbeta);
  const double dG1 = G[0] * dX + G1beta * dbeta, dG2 = G[1] * dX + G2beta * dbeta,
               dG3 = G[2] * dX + G3beta * dbeta;
  const double drs = dr0 + G[1] * deta0 + G[2] * dzeta0 + eta0 * dG1 + zeta0 * dG2;
  const double df = mu * G[2] * dr0 * r0i * r0i - mu * dG2 * r0i, dg = -mu * dG3;
  const double dfd = -mu * dG1 * r0i * ri + mu * G[1] * (dr0 * r0i + drs * ri) * r0i * ri;
  const double dgd = -mu * dG2 * ri + mu * G[2] * drs * ri * ri;
  for (int c = 0; c < 3; ++c) {
    dr[c] = dx[c] + (f * dx[c] + g * dw[c] + df * x[c] + dg * w[c]);
    dv[c] = dw[c] + (fd * dx[c] + gd * dw[c] + dfd * x[c] + dgd * w[c]);
  }
  return true;
}

// A WHFast system in Jacobi coordinates with the deviation (dQ, dV) of every body: the operators
// of WHSystem extended by their derivatives (they hide WHSystem's, so wh_step and wh_correct on
// this system move the deviation too).
template <int N, class Rsqrt>
struct WHVariationalSystem : WHSystem<N, Rsqrt> {
  using Base = WHSystem<N, Rsqrt>;
  using Base::M;
  using Base::m;
  using Base::Q;
  using Base::V;
  double dQ[3 * N], dV[3 * N];
  static constexpr bool variational = true;

  KOKKOS_INLINE_FUNCTION void load_deviation(const double (&dx)[3 * N], const double (&dv)[3 * N]) {
    this->to_jacobi(dx, dQ);
    this->to_jacobi(dv, dV);
  }
  KOKKOS_INLINE_FUNCTION void store_deviation(double (&dx)[3 * N], double (&dv)[3 * N]) const {
    this->from_jacobi(dQ, dx);
    this->from_jacobi(dV, dv);
  }

  KOKKOS_FUNCTION __attribute__((noinline)) void kepler(double h) {
    for (int i = 1; i < N; ++i)
      if (!kepler_drift_variational(M[i], h, &Q[3 * i], &V[3 * i], &dQ[3 * i], &dV[3 * i]))
        this->ok = false;
  }
  KOKKOS_INLINE_FUNCTION void kick(double h) {
    Base::kick(h);
    double x[3 * N], dx[3 * N], da[3 * N];
    this->from_jacobi(Q, x);
    this->from_jacobi(dQ, dx);
    variational_accelerations<N>(m, x, dx, da, this->rsqrt, PairSkip::first_pair);
    double s[3] = {m[0] * da[0], m[0] * da[1], m[0] * da[2]};
    for (int i = 1; i < N; ++i) {
      double back = 0, back_q = 0;  // derivative of M_i Q_i / |Q_i|^3 (i >= 2)
      if (i >= 2) {
        const double* q = &Q[3 * i];
        const double* dq = &dQ[3 * i];
        const double rinv = this->rsqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
        back = M[i] * rinv * rinv * rinv;
        back_q = -3 * back * rinv * rinv * (q[0] * dq[0] + q[1] * dq[1] + q[2] * dq[2]);
      }
      for (int c = 0; c < 3; ++c) {
        dV[3 * i + c] +=
            h * (da[3 * i + c] - s[c] / M[i - 1] + back * dQ[3 * i + c] + back_q * Q[3 * i + c]);
        s[c] += m[i] * da[3 * i + c];
      }
    }
  }
  KOKKOS_INLINE_FUNCTION void com_drift(double h) {
    Base::com_drift(h);
    for (int c = 0; c < 3; ++c) dQ[c] += h * dV[c];
  }
  // delta . delta_dot / |delta|^2 of the inertial deviation (synchronized state), with the
  // variational accelerations of every pair.
  KOKKOS_INLINE_FUNCTION double megno_rate() const {
    double x[3 * N], dx[3 * N], dv[3 * N], da[3 * N];
    this->from_jacobi(Q, x);
    store_deviation(dx, dv);
    variational_accelerations<N>(m, x, dx, da, this->rsqrt);
    return Impl::megno_rate(dx, dv, da, 3 * N);
  }
};

template <int N, class MemorySpace, class Rsqrt = PortableRsqrt>
struct WHFastMegnoKernel {
  Ensemble<MemorySpace> ens;
  Kokkos::View<long long*, MemorySpace> iterations;
  WHFastParams params;
  MegnoState<MemorySpace> megno;
  CarriedState<MemorySpace> carried;
  KOKKOS_INLINE_FUNCTION void operator()(const int sys) const {
    whfast_system<WHVariationalSystem<N, Rsqrt>>(ens, iterations, sys, params, Rsqrt(), carried,
                                                 megno);
  }
};

// WHFast + MEGNO: on Kokkos::Cuda (with the CUDA specializations) through the hand-tuned
// system-per-thread launch (hardware rsqrt, launch bounds) like plain WHFast; the generic Kokkos
// kernel elsewhere, and callable everywhere (launch_whfast_megno_generic).
template <int N, class ExecSpace, class Iterations>
void launch_whfast_megno(const ExecSpace& space,
                         const Ensemble<typename ExecSpace::memory_space>& ens,
                         const Iterations& iterations, const WHFastParams& params,
                         const MegnoState<typename ExecSpace::memory_space>& megno,
                         const CarriedState<typename ExecSpace::memory_space>& carried = {}) {
  launch_system<WHFastMegnoKernel, N>("kosmos::nbody::integrate_whfast_megno", space, ens,
                                      iterations, params, megno, carried);
}
template <int N, class ExecSpace, class Iterations>
void launch_whfast_megno_generic(
    const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
    const Iterations& iterations, const WHFastParams& params,
    const MegnoState<typename ExecSpace::memory_space>& megno,
    const CarriedState<typename ExecSpace::memory_space>& carried = {}) {
  launch_system_generic<WHFastMegnoKernel, N>("kosmos::nbody::integrate_whfast_megno", space, ens,
                                              iterations, params, megno, carried);
}

}  // namespace Impl
}  // namespace nbody
}  // namespace kosmos
