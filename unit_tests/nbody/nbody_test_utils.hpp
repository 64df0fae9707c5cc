// Independent references for the nbody tests: the analytic two-body solution from Kepler's
// equation in long double, and helpers that run an integrator on a given execution space.
#pragma once

#include <gtest/gtest.h>
#include <kosmos/nbody/nbody.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace nbody_test {

using Real = long double;

// Relative orbit (body 1 minus body 0) with semi-major axis |a| = 1, eccentricity e (e != 1),
// starting at pericenter on the +x axis, moving towards +y, gravitational parameter mu; the state
// at time t from Kepler's equation (elliptic) or its hyperbolic form, solved by Newton in long double.
inline void kepler_orbit(Real mu, Real e, Real t, Real r[3], Real v[3]) {
  r[2] = v[2] = 0;
  if (e < 1) {
    const Real a = 1, n = std::sqrt(mu / (a * a * a));
    const Real period = 2 * 3.141592653589793238462643383279502884L / n;
    const Real M = std::fmod(n * t, n * period);
    Real E = e < 0.8L ? M : 3.141592653589793238462643383279502884L;
    for (int i = 0; i < 100; ++i) {
      const Real dE = (E - e * std::sin(E) - M) / (1 - e * std::cos(E));
      E -= dE;
      if (std::fabs(dE) < 1e-19L) break;
    }
    const Real b = a * std::sqrt(1 - e * e), Edot = n / (1 - e * std::cos(E));
    r[0] = a * (std::cos(E) - e);
    r[1] = b * std::sin(E);
    v[0] = -a * std::sin(E) * Edot;
    v[1] = b * std::cos(E) * Edot;
  } else {
    const Real a = 1, n = std::sqrt(mu / (a * a * a));
    const Real M = n * t;
    Real H = std::asinh(M / e);
    for (int i = 0; i < 200; ++i) {
      const Real dH = (e * std::sinh(H) - H - M) / (e * std::cosh(H) - 1);
      H -= dH;
      if (std::fabs(dH) < 1e-19L * (1 + std::fabs(H))) break;
    }
    const Real b = a * std::sqrt(e * e - 1), Hdot = n / (e * std::cosh(H) - 1);
    r[0] = a * (e - std::cosh(H));
    r[1] = b * std::sinh(H);
    v[0] = -a * std::sinh(H) * Hdot;
    v[1] = b * std::cosh(H) * Hdot;
  }
}

// A host ensemble of n_sys copies of a two-body system (m0 = 1, m1) on the orbit above, in the
// barycentric frame.
inline kosmos::nbody::HostEnsemble two_body_ensemble(int n_sys, double m1, double e) {
  kosmos::nbody::HostEnsemble ens(n_sys, 2);
  const Real m0 = 1, M = m0 + m1;
  Real r[3], v[3];
  kepler_orbit(M, e, 0, r, v);
  for (int s = 0; s < n_sys; ++s) {
    ens.m(s, 0) = double(m0);
    ens.m(s, 1) = m1;
    for (int c = 0; c < 3; ++c) {
      ens.x(s, 0, c) = double(-m1 / M * r[c]);
      ens.v(s, 0, c) = double(-m1 / M * v[c]);
      ens.x(s, 1, c) = double(m0 / M * r[c]);
      ens.v(s, 1, c) = double(m0 / M * v[c]);
    }
  }
  return ens;
}

// Runs integrate() on Space with a copy of `host` and returns the result on the host.
template <class Space>
kosmos::nbody::HostEnsemble run_on(const kosmos::nbody::HostEnsemble& host, double destination,
                                   const kosmos::nbody::IntegrateOptions& options,
                                   kosmos::nbody::IntegrationReport* report = nullptr) {
  auto dev = kosmos::nbody::clone<typename Space::memory_space>(host);
  const auto rep = kosmos::nbody::integrate(Space(), dev, destination, options);
  if (report) *report = rep;
  return kosmos::nbody::clone<Kokkos::HostSpace>(dev);
}

inline kosmos::nbody::IntegrateOptions options_for(kosmos::nbody::Method method, double dt, double tau = 0,
                                                   double tolerance = 0) {
  kosmos::nbody::IntegrateOptions o;
  o.integrator.method = method;
  o.integrator.dt = dt;
  // Few launches: on a loaded CPU every launch can wait for a descheduled OpenMP thread.
  o.integrator.steps_per_launch = 1 << 20;
  if (tau > 0) o.integrator.tau = tau;
  if (tolerance > 0) o.integrator.tolerance = tolerance;
  return o;
}

// Relative energy drift |E(t) - E(0)| / |E(0)| of every system, computed in long double on the host.
inline Real energy_ld(const kosmos::nbody::HostEnsemble& ens, int s) {
  const int n = ens.n_bodies();
  Real e = 0;
  for (int b = 0; b < n; ++b) {
    Real v2 = 0;
    for (int c = 0; c < 3; ++c) v2 += Real(ens.v(s, b, c)) * Real(ens.v(s, b, c));
    e += Real(ens.m(s, b)) * v2 / 2;
  }
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      Real r2 = 0;
      for (int c = 0; c < 3; ++c) {
        const Real d = Real(ens.x(s, j, c)) - Real(ens.x(s, i, c));
        r2 += d * d;
      }
      e -= Real(ens.m(s, i)) * Real(ens.m(s, j)) / std::sqrt(r2);
    }
  return e;
}

// Largest |x_a - x_b| and |v_a - v_b| over every body and component of system s.
inline void max_difference(const kosmos::nbody::HostEnsemble& a, const kosmos::nbody::HostEnsemble& b, int s,
                           double& dx, double& dv) {
  dx = dv = 0;
  for (int i = 0; i < a.n_bodies(); ++i)
    for (int c = 0; c < 3; ++c) {
      dx = std::fmax(dx, std::fabs(a.x(s, i, c) - b.x(s, i, c)));
      dv = std::fmax(dv, std::fabs(a.v(s, i, c) - b.v(s, i, c)));
    }
}

#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
// Integrates 1000 perturbed outer solar systems to `destination` on the GPU twice, with
// launch_specialized and with launch_generic (each called as f(space, ensemble, iterations)
// until every system is there), and expects the same states: the hand-tuned CUDA launch against
// the generic Kokkos kernel of the same integrator.
template <class LaunchSpecialized, class LaunchGeneric>
void expect_specialization_matches_generic(double destination,
                                           const LaunchSpecialized& launch_specialized,
                                           const LaunchGeneric& launch_generic) {
  using namespace kosmos::nbody;
  using Mem = Kokkos::CudaSpace;
  const auto init = outer_solar_system(1000, 1e-3, 3);
  auto a = clone<Mem>(init), b = clone<Mem>(init);
  Kokkos::View<long long*, Mem> it_a("it_a", 1000), it_b("it_b", 1000);
  launch_specialized(Kokkos::Cuda(), a, it_a);
  launch_generic(Kokkos::Cuda(), b, it_b);
  const auto ha = clone<Kokkos::HostSpace>(a), hb = clone<Kokkos::HostSpace>(b);
  for (int s = 0; s < 1000; ++s) {
    double dx, dv;
    max_difference(ha, hb, s, dx, dv);
    EXPECT_LT(dx, 1e-9) << "system " << s;
    EXPECT_LT(dv, 1e-9) << "system " << s;
    EXPECT_EQ(ha.time(s), destination) << "system " << s;
    EXPECT_EQ(hb.time(s), destination) << "system " << s;
  }
}
#endif

}  // namespace nbody_test
