// Dense-matrix references of the celerite tests: the SHO and rotation kernels in closed form
// (Foreman-Mackey et al. 2017, eq. 21 and its overdamped counterpart, not the celerite
// coefficients) and the Gaussian likelihood by a dense Cholesky factorization in double.
#pragma once

#include <cmath>
#include <vector>

namespace kosmos_test {
inline constexpr double kPi = 3.14159265358979323846;

// The SHO kernel in closed form: S0 w0 Q exp(-w0 tau / 2Q) [cos(eta w0 tau) + sin(eta w0 tau) /
// (2 eta Q)], eta = sqrt(1 - 1 / 4Q^2) for Q > 1/2; cosh and sinh with eta = sqrt(1 / 4Q^2 - 1)
// for Q < 1/2.
inline double sho_closed_form(double S0, double w0, double Q, double tau) {
  const double envelope = S0 * w0 * Q * std::exp(-w0 * tau / (2 * Q));
  if (Q > 0.5) {
    const double eta = std::sqrt(1 - 1 / (4 * Q * Q));
    return envelope * (std::cos(eta * w0 * tau) + std::sin(eta * w0 * tau) / (2 * eta * Q));
  }
  const double eta = std::sqrt(1 / (4 * Q * Q) - 1);
  return envelope * (std::cosh(eta * w0 * tau) + std::sinh(eta * w0 * tau) / (2 * eta * Q));
}

// celerite2's SHOTerm(sigma, rho, tau) and RotationTerm as closed-form covariances.
inline double sho_sigma_rho_tau(double sigma, double rho, double tau_damp, double tau) {
  const double w0 = 2 * kPi / rho, Q = kPi * tau_damp / rho;
  return sho_closed_form(sigma * sigma / (w0 * Q), w0, Q, tau);
}
inline double rotation_closed_form(double sigma, double period, double Q0, double dQ, double f,
                                   double tau) {
  const double amp = sigma * sigma / (1 + f), Q1 = 0.5 + Q0 + dQ, Q2 = 0.5 + Q0;
  const double w1 = 4 * kPi * Q1 / (period * std::sqrt(4 * Q1 * Q1 - 1));
  const double w2 = 8 * kPi * Q2 / (period * std::sqrt(4 * Q2 * Q2 - 1));
  return sho_closed_form(amp / (w1 * Q1), w1, Q1, tau) +
         sho_closed_form(f * amp / (w2 * Q2), w2, Q2, tau);
}

// ln N(r | 0, C) by a dense Cholesky factorization C = L L^T (double); also C^-1 r.
inline double dense_log_likelihood(std::vector<double> C, const std::vector<double>& r,
                                   std::vector<double>* solution = nullptr) {
  const std::size_t n = r.size();
  for (std::size_t j = 0; j < n; ++j) {
    double d = C[j * n + j];
    for (std::size_t k = 0; k < j; ++k) d -= C[j * n + k] * C[j * n + k];
    C[j * n + j] = std::sqrt(d);
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = C[i * n + j];
      for (std::size_t k = 0; k < j; ++k) s -= C[i * n + k] * C[j * n + k];
      C[i * n + j] = s / C[j * n + j];
    }
  }
  std::vector<double> y(n), x(n);
  double logdet = 0, chi2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double s = r[i];
    for (std::size_t k = 0; k < i; ++k) s -= C[i * n + k] * y[k];
    y[i] = s / C[i * n + i];
    chi2 += y[i] * y[i];
    logdet += 2 * std::log(C[i * n + i]);
  }
  for (std::size_t i = n; i-- > 0;) {
    double s = y[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= C[k * n + i] * x[k];
    x[i] = s / C[i * n + i];
  }
  if (solution) *solution = x;
  return -0.5 * (chi2 + logdet + double(n) * std::log(2 * kPi));
}

}  // namespace kosmos_test
