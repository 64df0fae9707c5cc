// Gaussian-process likelihood in O(N J^2) for celerite kernels (Foreman-Mackey, Agol, Ambikasaran
// & Angus 2017, AJ 154, 220; the semiseparable Cholesky factorization in the form of celerite2,
// Foreman-Mackey 2018, RNAAS 2, 31):
//   k(tau) = sum_j exp(-c_j tau) (a_j cos(d_j tau) + b_j sin(d_j tau)),   tau = |t_n - t_m|,
// plus a diagonal variance per observation. Terms: the stochastically driven damped harmonic
// oscillator (SHO; celerite2's SHOTerm) and celerite2's RotationTerm (two SHO terms at the
// rotation period and half of it: a quasi-periodic stellar-rotation kernel). Device-callable
// single-system functions plus a batched entry point (a thread per system).
#pragma once

#include <kosmos/core/compat.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace kosmos {
namespace kepler {

// Up to kMaxCeleriteTerms terms, each two columns of the semiseparable representation
// (a real term has b = d = 0).
constexpr int kMaxCeleriteTerms = 2;
struct CeleriteTerms {
  int J = 0;
  double a[kMaxCeleriteTerms] = {}, b[kMaxCeleriteTerms] = {}, c[kMaxCeleriteTerms] = {},
         d[kMaxCeleriteTerms] = {};
  // k(tau) at tau >= 0 (for checks and dense references).
  KOKKOS_INLINE_FUNCTION double kernel(double tau) const {
    double k = 0;
    for (int j = 0; j < J; ++j)
      k += math::exp(-c[j] * tau) * (a[j] * math::cos(d[j] * tau) + b[j] * math::sin(d[j] * tau));
    return k;
  }
};

// Adds an SHO term with power S0, undamped angular frequency w0 and quality factor Q (celerite
// eq. 20); Q < 1/2 gives two real terms (an error unless two slots are free: returns false). As
// in celerite2, |4 Q^2 - 1| is held at >= 1e-5 so that Q = 1/2 stays finite.
KOKKOS_INLINE_FUNCTION bool add_sho_term(CeleriteTerms& k, double S0, double w0, double Q) {
  constexpr double eps = 1e-5;
  if (Q < 0.5) {
    if (k.J + 2 > kMaxCeleriteTerms) return false;
    const double f = math::sqrt(math::fmax(1 - 4 * Q * Q, eps));
    for (int branch = 0; branch < 2; ++branch) {
      const double sign = branch == 0 ? 1.0 : -1.0;
      k.a[k.J] = 0.5 * S0 * w0 * Q * (1 + sign / f);
      k.b[k.J] = 0;
      k.c[k.J] = 0.5 * w0 / Q * (1 - sign * f);
      k.d[k.J] = 0;
      ++k.J;
    }
    return true;
  }
  if (k.J + 1 > kMaxCeleriteTerms) return false;
  const double f = math::sqrt(math::fmax(4 * Q * Q - 1, eps));
  k.a[k.J] = S0 * w0 * Q;
  k.b[k.J] = S0 * w0 * Q / f;
  k.c[k.J] = 0.5 * w0 / Q;
  k.d[k.J] = 0.5 * w0 / Q * f;
  ++k.J;
  return true;
}

// celerite2's SHOTerm(sigma, rho, tau): standard deviation sigma, undamped period rho, damping
// time tau (w0 = 2 pi / rho, Q = pi tau / rho, S0 = sigma^2 / (w0 Q)).
KOKKOS_INLINE_FUNCTION CeleriteTerms sho_kernel(double sigma, double rho, double tau) {
  CeleriteTerms k;
  const double w0 = math::two_pi<double>() / rho, Q = 0.5 * math::two_pi<double>() * tau / rho;
  add_sho_term(k, sigma * sigma / (w0 * Q), w0, Q);
  return k;
}

// celerite2's RotationTerm(sigma, period, Q0, dQ, f): an SHO at the rotation period with
// Q1 = 1/2 + Q0 + dQ and one at half of it with Q2 = 1/2 + Q0, amplitudes in the ratio 1 : f,
// k(0) = sigma^2.
KOKKOS_INLINE_FUNCTION CeleriteTerms rotation_kernel(double sigma, double period, double Q0,
                                                     double dQ, double f) {
  CeleriteTerms k;
  const double amp = sigma * sigma / (1 + f), Q1 = 0.5 + Q0 + dQ, Q2 = 0.5 + Q0;
  const double w1 = 2 * math::two_pi<double>() * Q1 / (period * math::sqrt(4 * Q1 * Q1 - 1));
  const double w2 = 4 * math::two_pi<double>() * Q2 / (period * math::sqrt(4 * Q2 * Q2 - 1));
  add_sho_term(k, amp / (w1 * Q1), w1, Q1);
  add_sho_term(k, f * amp / (w2 * Q2), w2, Q2);
  return k;
}

namespace Impl {
constexpr int kCeleriteColumns = 2 * kMaxCeleriteTerms;

// The running state of the factorization K + diag(var) = L diag(D) L^T, L = I + tril(U W^T),
// and of the forward solve L z = r, one observation at a time (times ascending).
struct CeleriteRecursion {
  double S[kCeleriteColumns][kCeleriteColumns] = {};
  double f[kCeleriteColumns] = {};
  double W[kCeleriteColumns] = {}, U[kCeleriteColumns] = {};
  double D = 0, z = 0, t = 0;
  bool first = true;

  // Adds observation (t, r, var) whose GP amplitude is scaled by `scale` (the covariance of two
  // observations is scale_n scale_m k(tau): semiseparable with U and V scaled); D and z become
  // its pivot and its entry of z. Returns false when the pivot is not positive (K + diag(var)
  // not positive definite in double).
  KOKKOS_INLINE_FUNCTION bool step(const CeleriteTerms& k, double t_new, double r, double var,
                                   double scale = 1) {
    const int P = 2 * k.J;
    double phi[kCeleriteColumns], V[kCeleriteColumns];
    double A = var;
    for (int j = 0; j < k.J; ++j) {
      const double cs = math::cos(k.d[j] * t_new), sn = math::sin(k.d[j] * t_new);
      U[2 * j] = scale * (k.a[j] * cs + k.b[j] * sn);
      U[2 * j + 1] = scale * (k.a[j] * sn - k.b[j] * cs);
      V[2 * j] = scale * cs;
      V[2 * j + 1] = scale * sn;
      A += scale * scale * k.a[j];
      phi[2 * j] = phi[2 * j + 1] = first ? 0.0 : math::exp(-k.c[j] * (t_new - t));
    }
    if (!first)
      for (int p = 0; p < P; ++p) {
        f[p] = phi[p] * (f[p] + W[p] * z);
        for (int q = 0; q < P; ++q) S[p][q] = phi[p] * phi[q] * (S[p][q] + D * W[p] * W[q]);
      }
    double SU[kCeleriteColumns];
    double uSu = 0, uf = 0;
    for (int p = 0; p < P; ++p) {
      SU[p] = 0;
      for (int q = 0; q < P; ++q) SU[p] += S[p][q] * U[q];
      uSu += U[p] * SU[p];
      uf += U[p] * f[p];
    }
    D = A - uSu;
    if (!(D > 0)) return false;
    for (int p = 0; p < P; ++p) W[p] = (V[p] - SU[p]) / D;
    z = r - uf;
    t = t_new;
    first = false;
    return true;
  }
};
}  // namespace Impl

// ln N(r | 0, K + diag(var)) of n observations given by point(i, t, r, var, scale) in ascending t
// (K_nm = scale_n scale_m k(|t_n - t_m|)), and chi2 = r^T (K + diag(var))^-1 r; -inf (chi2 inf)
// when the matrix is not positive definite.
template <class Point>
KOKKOS_INLINE_FUNCTION double celerite_log_likelihood(const CeleriteTerms& k, int n,
                                                      const Point& point, double& chi2) {
  Impl::CeleriteRecursion rec;
  double logdet = 0;
  chi2 = 0;
  for (int i = 0; i < n; ++i) {
    double t, r, var, scale = 1;
    point(i, t, r, var, scale);
    if (!rec.step(k, t, r, var, scale)) {
      chi2 = HUGE_VAL;
      return -HUGE_VAL;
    }
    chi2 += rec.z * rec.z / rec.D;
    logdet += math::log(rec.D);
  }
  return -0.5 * (chi2 + logdet + n * math::log(math::two_pi<double>()));
}

namespace Impl {
template <class ExecSpace, class TimeView, class MatrixView, class ScaleView, class TermsView,
          class OutView>
void gp_log_likelihood_batch(const ExecSpace& space, const TimeView& t, const MatrixView& r,
                             const MatrixView& var, const ScaleView& scale, bool scaled,
                             const TermsView& terms, const OutView& loglike) {
  static_assert(Kokkos::is_view<TimeView>::value && Kokkos::is_view<MatrixView>::value &&
                    Kokkos::is_view<TermsView>::value && Kokkos::is_view<OutView>::value,
                "kosmos::kepler::gp_log_likelihood: t, r, var, terms and loglike must be Views");
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, typename MatrixView::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecSpace, typename OutView::memory_space>::accessible,
      "kosmos::kepler::gp_log_likelihood: the Views must be accessible from the execution space");
  static_assert(std::is_same<typename TermsView::non_const_value_type, CeleriteTerms>::value,
                "kosmos::kepler::gp_log_likelihood: terms must hold CeleriteTerms");
  const int n = int(t.extent(0));
  Kokkos::parallel_for(
      "kosmos::kepler::gp_log_likelihood",
      Kokkos::RangePolicy<ExecSpace>(space, 0, loglike.extent(0)), KOKKOS_LAMBDA(const int s) {
        double chi2;
        loglike(s) = celerite_log_likelihood(
            terms(s), n,
            [&](int i, double& ti, double& ri, double& vi, double& si) {
              ti = t(i);
              ri = r(s, i);
              vi = var(s, i);
              si = scaled ? scale(s, i) : 1.0;
            },
            chi2);
      });
}
}  // namespace Impl

// Batched: loglike(s) = ln N(r(s, :) | 0, K_s + diag(var(s, :))) with K_s from terms(s), times t
// ascending (shared by every system); a thread per system.
template <class ExecSpace, class TimeView, class MatrixView, class TermsView, class OutView>
void gp_log_likelihood(const ExecSpace& space, const TimeView& t, const MatrixView& r,
                       const MatrixView& var, const TermsView& terms, const OutView& loglike) {
  Impl::gp_log_likelihood_batch(space, t, r, var, r, false, terms, loglike);
}
template <class TimeView, class MatrixView, class TermsView, class OutView>
void gp_log_likelihood(const TimeView& t, const MatrixView& r, const MatrixView& var,
                       const TermsView& terms, const OutView& loglike) {
  gp_log_likelihood(typename OutView::execution_space(), t, r, var, terms, loglike);
}
// The same with the GP amplitude of observation i of system s scaled by scale(s, i): K_s(i, j) =
// scale(s, i) scale(s, j) k_s(|t_i - t_j|) (per-instrument amplitudes).
template <class ExecSpace, class TimeView, class MatrixView, class TermsView, class OutView>
void gp_log_likelihood(const ExecSpace& space, const TimeView& t, const MatrixView& r,
                       const MatrixView& var, const MatrixView& scale, const TermsView& terms,
                       const OutView& loglike) {
  Impl::gp_log_likelihood_batch(space, t, r, var, scale, true, terms, loglike);
}

// The GP's conditional mean at the observations, K (K + diag(var))^-1 r = r - var (K +
// diag(var))^-1 r (host; times ascending; scale: per-observation amplitudes, empty: 1): the forward
// recursion, then the backward solve L^T alpha = z / D. All zero when the matrix is not positive
// definite.
inline std::vector<double> gp_conditional_mean(const CeleriteTerms& k, const std::vector<double>& t,
                                               const std::vector<double>& r,
                                               const std::vector<double>& var,
                                               const std::vector<double>& scale = {}) {
  const std::size_t n = t.size(), P = std::size_t(2 * k.J);
  std::vector<double> U(n * P), W(n * P), y(n), mean(n, 0.0);
  Impl::CeleriteRecursion rec;
  for (std::size_t i = 0; i < n; ++i) {
    if (!rec.step(k, t[i], r[i], var[i], scale.empty() ? 1.0 : scale[i])) return mean;
    std::copy(rec.U, rec.U + P, U.begin() + std::ptrdiff_t(i * P));
    std::copy(rec.W, rec.W + P, W.begin() + std::ptrdiff_t(i * P));
    y[i] = rec.z / rec.D;
  }
  std::vector<double> G(P, 0.0), alpha(n);
  alpha[n - 1] = y[n - 1];
  for (std::size_t i = n - 1; i-- > 0;) {
    double wg = 0;
    for (std::size_t p = 0; p < P; ++p) {
      const double phi = std::exp(-k.c[p / 2] * (t[i + 1] - t[i]));
      G[p] = phi * (G[p] + U[(i + 1) * P + p] * alpha[i + 1]);
      wg += W[i * P + p] * G[p];
    }
    alpha[i] = y[i] - wg;
  }
  for (std::size_t i = 0; i < n; ++i) mean[i] = r[i] - var[i] * alpha[i];
  return mean;
}

}  // namespace kepler
}  // namespace kosmos
