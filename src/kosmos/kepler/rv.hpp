// Keplerian radial-velocity model (Ford 2009, Eq. 2-5) and its parameter conventions.
//
// Conventions (those of RadVel / Fulton et al. 2016, so published orbits compare directly):
//  - omega is the argument of periastron of the *star's* orbit; the velocity of the star due to
//    one planet is  v(t) = K [cos(nu + omega) + e cos(omega)]  with K the semi-amplitude.
//  - Mean anomaly M(t) = 2 pi (t - epoch) / P + M0 (Ford's Eq. 4; M0 = mean anomaly at the
//    epoch). Times of periastron Tp and of (inferior) conjunction Tc convert to M0 with the
//    functions below.
//  - Ford's Eq. 3 written in the eccentric anomaly:
//      v = K' [ -cos(omega_F) sin E + sqrt(1 - e^2) sin(omega_F) cos E ] / (1 - e cos E).
//    It equals the form above when omega_F = pi/2 - omega and K' = K sqrt(1 - e^2). (The paper's
//    text writes K' = K / sqrt(1 - e^2); differentiating the orbit gives K sqrt(1 - e^2), which is
//    what reproduces v = K [cos(nu + omega) + e cos omega]; unit tests check this identity.)
//    Amplitude::k_prime selects this parameterization (K' and omega_F) in the batched kernels.
//  - Per-instrument velocity offset gamma_i and jitter s_i: model v_k = sum_j v_j(t_k) + gamma_i,
//    variance sigma_k^2 + s_i^2 (Eq. 5 with the jitter), log-likelihood
//      ln L = -1/2 sum_k [ r_k^2 / (sigma_k^2 + s_i^2) + ln(2 pi (sigma_k^2 + s_i^2)) ].
#pragma once

#include <kosmos/kepler/solver.hpp>

#include <cmath>

namespace kosmos {
namespace kepler {

enum class Amplitude : int {
  semi_amplitude = 0,  // (K, omega): v = K [cos(nu + omega) + e cos omega]
  k_prime = 1          // Ford's (K', omega_F) of Eq. 3
};

// Precision policies of the chi^2 kernels: the type of the orbital phase t/P - floor(t/P)
// (and of times and periods) and the type of everything else.
struct Single {
  using phase_type = float;
  using real_type = float;
  static const char* name() { return "single"; }
};
struct Double {
  using phase_type = double;
  using real_type = double;
  static const char* name() { return "double"; }
};
struct Mixed {
  using phase_type = double;  // Ford 2009 Sec. 5.0.1: the phase needs double
  using real_type = float;
  static const char* name() { return "mixed"; }
};

// One planet's orbit (host side, double): period P [days], semi-amplitude K [m/s] (or K'),
// eccentricity e, omega [rad], mean anomaly at the epoch M0 [rad].
struct Orbit {
  double P = 0, K = 0, e = 0, omega = 0, M0 = 0;
};

// Coefficients with v = (A cos E + B sin E) / (1 - e cos E).
template <class T>
KOKKOS_INLINE_FUNCTION void rv_coefficients(Amplitude amplitude, T K, T e, T omega, T& A, T& B) {
  const T one_m_e2 = (T(1) - e) * (T(1) + e);  // (1-e)(1+e): no cancellation at small e
  const T root = math::sqrt(one_m_e2);
  const T so = math::sin(omega), co = math::cos(omega);
  if (amplitude == Amplitude::k_prime) {
    A = K * root * so;
    B = -K * co;
  } else {
    A = K * one_m_e2 * co;
    B = -K * root * so;
  }
}

// Velocity from the coefficients and sin E, cos E.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T rv_from_anomaly(T A, T B, T e, T sinE, T cosE) {
  return (A * cosE + B * sinE) / (T(1) - e * cosE);
}

// Velocity of the star due to one planet at time t (same units as the epoch), double precision.
KOKKOS_INLINE_FUNCTION double radial_velocity(const Orbit& o, double t, double epoch,
                                              Amplitude amplitude = Amplitude::semi_amplitude) {
  const double phase = (t - epoch) / o.P;
  const double M = math::two_pi<double>() * (phase - math::floor(phase)) + o.M0;
  double E, s, c;
  solve_one<double>(M, o.e, Solver::Markley, default_tolerance<double>(), 10, E, s, c);
  double A, B;
  rv_coefficients(amplitude, o.K, o.e, o.omega, A, B);
  return rv_from_anomaly(A, B, o.e, s, c);
}

// Convention conversions (host and device).
// (K, omega) -> Ford's (K', omega_F), and back.
KOKKOS_INLINE_FUNCTION double k_prime_from_semi_amplitude(double K, double e) {
  return K * math::sqrt((1 - e) * (1 + e));
}
KOKKOS_INLINE_FUNCTION double semi_amplitude_from_k_prime(double Kp, double e) {
  return Kp / math::sqrt((1 - e) * (1 + e));
}
KOKKOS_INLINE_FUNCTION double ford_omega_from_omega(double omega) {
  const double w = math::pi<double>() / 2 - omega;
  return w - math::two_pi<double>() * math::floor(w / math::two_pi<double>());
}
KOKKOS_INLINE_FUNCTION double omega_from_ford_omega(double omega_f) {
  return ford_omega_from_omega(omega_f);
}

// M0 at `epoch` from the time of periastron.
KOKKOS_INLINE_FUNCTION double mean_anomaly_from_periastron(double P, double tp, double epoch) {
  return reduce_mean_anomaly(math::two_pi<double>() * ((epoch - tp) / P));
}
// Time of periastron (the one nearest after-or-at epoch - P) from M0.
KOKKOS_INLINE_FUNCTION double periastron_from_mean_anomaly(double P, double M0, double epoch) {
  return epoch - P * reduce_mean_anomaly(M0) / math::two_pi<double>();
}
// Mean anomaly at the time of inferior conjunction (transit), true anomaly pi/2 - omega.
KOKKOS_INLINE_FUNCTION double mean_anomaly_at_conjunction(double e, double omega) {
  const double f = math::pi<double>() / 2 - omega;
  const double E = 2 * math::atan(math::sqrt((1 - e) / (1 + e)) * math::tan(f / 2));
  return E - e * math::sin(E);
}
// M0 at `epoch` from the time of conjunction Tc.
KOKKOS_INLINE_FUNCTION double mean_anomaly_from_conjunction(double P, double e, double omega,
                                                            double tc, double epoch) {
  return reduce_mean_anomaly(math::two_pi<double>() * ((epoch - tc) / P) +
                             mean_anomaly_at_conjunction(e, omega));
}
// Time of conjunction nearest to `epoch` (within half a period) from M0.
KOKKOS_INLINE_FUNCTION double conjunction_from_mean_anomaly(double P, double e, double omega,
                                                            double M0, double epoch) {
  double dM = mean_anomaly_at_conjunction(e, omega) - M0;  // M(tc) - M(epoch)
  dM -= math::two_pi<double>() * math::floor(dM / math::two_pi<double>() + 0.5);
  return epoch + P * dM / math::two_pi<double>();
}
}  // namespace kepler
}  // namespace kosmos
