// Integrator accuracy against independent references: the analytic Kepler solution, energy and
// momentum conservation (Section 5.2.2, Table 1), agreement between integrators and with the
// plain C++ reference Hermite (Section 5.2.1).
#include "nbody_test_utils.hpp"

#include <test_spaces.hpp>

#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

namespace {
using namespace kosmos::nbody;
using nbody_test::Real;

template <class Space>
class NbodyIntegrators : public ::testing::Test {};
TYPED_TEST_SUITE(NbodyIntegrators, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

TEST(KeplerDrift, MatchesKeplersEquationForEllipticAndHyperbolicOrbits) {
  // Drift along e = 0, 0.5, 0.9 ellipses and an e = 1.5 hyperbola in uneven steps (including
  // steps longer than a period), compared with Kepler's equation solved in long double.
  for (const double e : {0.0, 0.5, 0.9, 0.99, 1.5}) {
    const double mu = 1.001;
    Real r0[3], v0[3];
    nbody_test::kepler_orbit(mu, e, 0, r0, v0);
    double r[3], v[3];
    for (int c = 0; c < 3; ++c) {
      r[c] = double(r0[c]);
      v[c] = double(v0[c]);
    }
    double t = 0;
    const double steps[] = {0.37, 1e-3, 7.5, 2.1, 1e-9, 13.3, 0.5};
    for (const double h : steps) {
      const double hh = e > 1 ? h * 0.3 : h;
      ASSERT_TRUE(kepler_drift(mu, hh, r, v)) << "e = " << e << " dt = " << hh;
      t += hh;
      Real re[3], ve[3];
      nbody_test::kepler_orbit(mu, e, t, re, ve);
      const Real rn = std::sqrt(re[0] * re[0] + re[1] * re[1]), vn = std::sqrt(ve[0] * ve[0] + ve[1] * ve[1]);
      for (int c = 0; c < 3; ++c) {
        EXPECT_NEAR(r[c], double(re[c]), 1e-12 * double(rn) * (1 + t)) << "e = " << e << " t = " << t;
        EXPECT_NEAR(v[c], double(ve[c]), 1e-12 * double(vn) * (1 + t)) << "e = " << e << " t = " << t;
      }
    }
    // Backwards drift returns to the start.
    ASSERT_TRUE(kepler_drift(mu, -t, r, v));
    for (int c = 0; c < 2; ++c) EXPECT_NEAR(r[c], double(r0[c]), 1e-11) << "e = " << e;
  }
  double r[3] = {0, 0, 0}, v[3] = {1, 0, 0};
  EXPECT_FALSE(kepler_drift(1.0, 0.1, r, v));  // r = 0: refused, not NaN
}

TEST(Stumpff, MatchesClosedForms) {
  for (const double x : {-50.0, -1.0, -1e-3, 0.0, 1e-6, 0.3, 5.0, 80.0}) {
    double c0, c1, c2, c3;
    stumpff(x, c0, c1, c2, c3);
    const Real z = x;
    Real e0, e1, e2, e3;
    if (x > 0) {
      const Real s = std::sqrt(z);
      e0 = std::cos(s), e1 = std::sin(s) / s, e2 = (1 - std::cos(s)) / z, e3 = (s - std::sin(s)) / (z * s);
    } else if (x < 0) {
      const Real s = std::sqrt(-z);
      e0 = std::cosh(s), e1 = std::sinh(s) / s, e2 = (std::cosh(s) - 1) / -z, e3 = (std::sinh(s) - s) / (-z * s);
    } else {
      e0 = 1, e1 = 1, e2 = 0.5L, e3 = 1.0L / 6;
    }
    const double tol = 1e-13 * (1 + std::fabs(x) * 1e-1) * (x < -10 ? 1e3 : 1);
    EXPECT_NEAR(c0, double(e0), tol * std::fabs(double(e0)) + 1e-15) << x;
    EXPECT_NEAR(c1, double(e1), tol * std::fabs(double(e1)) + 1e-15) << x;
    if (std::fabs(x) < 1 || x < 0) {  // closed forms cancel badly for small x: only compare where exact
      EXPECT_NEAR(c2, double(e2), 1e-6 * std::fabs(double(e2))) << x;
      EXPECT_NEAR(c3, double(e3), 1e-6 * std::fabs(double(e3))) << x;
    } else {
      EXPECT_NEAR(c2, double(e2), tol * std::fabs(double(e2)) + 1e-15) << x;
      EXPECT_NEAR(c3, double(e3), tol * std::fabs(double(e3)) + 1e-15) << x;
    }
  }
}

struct TwoBodyCase {
  Method method;
  double dt, tau, tol;
  double bound[3];  // allowed |dr| / a after one orbit for e = 0, 0.5, 0.9
};

template <class Space>
void check_two_body(const TwoBodyCase& tc) {
  const double m1 = 1e-3;
  const double es[3] = {0.0, 0.5, 0.9};
  for (int k = 0; k < 3; ++k) {
    const double e = es[k];
    const auto host = nbody_test::two_body_ensemble(2, m1, e);
    const Real mu = 1 + Real(m1);
    const double T = double(2 * 3.141592653589793238462643383279502884L / std::sqrt(mu)) * 1.25;
    IntegrationReport rep;
    const auto out = nbody_test::run_on<Space>(host, T, nbody_test::options_for(tc.method, tc.dt, tc.tau, tc.tol),
                                               &rep);
    EXPECT_EQ(rep.reached_destination, 2) << method_name(tc.method) << " e = " << e;
    Real r[3], v[3];
    nbody_test::kepler_orbit(mu, e, T, r, v);
    for (int s = 0; s < 2; ++s) {
      EXPECT_EQ(out.time(s), T);
      double err = 0;
      for (int c = 0; c < 3; ++c) {
        const double rel = out.x(s, 1, c) - out.x(s, 0, c);
        err = std::fmax(err, std::fabs(rel - double(r[c])));
      }
      EXPECT_LT(err, tc.bound[k]) << method_name(tc.method) << " e = " << e << " system " << s;
      if (s == 0)
        std::printf("[two-body] %-16s e=%.1f |dr|=%.3e (bound %.1e)\n", method_name(tc.method), e, err, tc.bound[k]);
    }
  }
}

TYPED_TEST(NbodyIntegrators, TwoBodyOrbitsMatchTheKeplerSolution) {
  const TwoBodyCase cases[] = {
      // Step sizes small enough that truncation error is far below the bounds of a wrong orbit
      // (|dr| ~ 1); bounds follow each method's order (Hermite, RKCK 4th/5th; MVS, Verlet 2nd).
      {Method::hermite, 5e-4, 0, 0, {2e-10, 2e-10, 1e-6}},
      {Method::hermite_adaptive, 1e-3, 4e-3, 0, {1e-9, 1e-9, 1e-8}},
      {Method::rkck, 1e-3, 0, 0, {2e-10, 2e-10, 2e-8}},
      {Method::rkck_adaptive, 1e-3, 0, 1e-13, {1e-10, 1e-10, 1e-9}},
      {Method::mvs, 2e-3, 0, 0, {2e-9, 2e-7, 1e-4}},
      {Method::verlet, 2e-4, 0, 0, {4e-7, 4e-6, 2e-3}},
  };
  for (const auto& tc : cases) check_two_body<TypeParam>(tc);
}

// Section 5.2.2 / Table 1: the paper's step parameters on the Section 5.1 three-body system (star
// and two Jupiter-mass planets at a = 1, 1.4) over T = 200 time units (~30 inner orbits).
// Table 1 lists |dE/E| of 3e-11 to 2e-10 over 0.45-1.8 million time units. Over 200 time units:
//  - fixed-step Hermite (dt = 1e-3) stays near rounding (< 1e-13),
//  - adaptive Hermite (tau = 1.7e-2, i.e. dt ~ 1e-2) and adaptive RKCK stay within Table 1's
//    levels (< 5e-11),
//  - MVS (dt = 1e-2) has the bounded error of a symplectic map, of order eps (n dt)^2 with
//    eps = 1e-3 the planet/star mass ratio: ~3e-8 here, flat in time and falling as dt^2. (Table 1's
//    5e-11 for MVS is below what a second-order map can reach at this step; we test the theory.)
template <class Space>
void energy_errors(Method method, double dt, double tau, double tol, double T, int pieces, std::vector<double>& err) {
  auto host = generate_planetary_ensemble(1, 3, 1e-3, 0.4, 0);
  const Real e0 = nbody_test::energy_ld(host, 0);
  auto dev = clone<typename Space::memory_space>(host);
  const auto opt = nbody_test::options_for(method, dt, tau, tol);
  err.clear();
  for (int k = 1; k <= pieces; ++k) {
    integrate(Space(), dev, T * k / pieces, opt);
    const auto out = clone<Kokkos::HostSpace>(dev);
    EXPECT_EQ(out.state(0), state_active);
    err.push_back(double(std::fabs((nbody_test::energy_ld(out, 0) - e0) / e0)));
  }
}

TYPED_TEST(NbodyIntegrators, EnergyConservationAtThePapersParameters) {
  std::vector<double> err;
  const double T = 200;
  struct Case {
    Method method;
    double dt, tau, tol, bound;
  } cases[] = {{Method::hermite, 1e-3, 0, 0, 1e-13},
               {Method::hermite_adaptive, 1e-3, 1.7e-2, 0, 5e-11},
               {Method::rkck_adaptive, 1e-3, 0, 1e-14, 5e-11},
               {Method::mvs, 1e-2, 0, 0, 1e-7}};
  for (const auto& c : cases) {
    energy_errors<TypeParam>(c.method, c.dt, c.tau, c.tol, T, 4, err);
    double worst = 0;
    for (double e : err) worst = std::fmax(worst, e);
    std::printf("[energy] %-16s |dE/E| at T/4..T: %.2e %.2e %.2e %.2e\n", method_name(c.method), err[0], err[1],
                err[2], err[3]);
    EXPECT_LT(worst, c.bound) << method_name(c.method);
    if (c.method == Method::mvs) {
      // Bounded, not growing: the error over the second half is no larger than a small multiple
      // of that over the first half (a secular drift would keep growing).
      EXPECT_LT(std::fmax(err[2], err[3]), 2 * std::fmax(err[0], err[1]));
      // Second order: halving dt divides the (bounded) error by about 4.
      std::vector<double> half;
      energy_errors<TypeParam>(c.method, c.dt / 2, 0, 0, T / 4, 1, half);
      const double ratio = err[0] / half[0];
      std::printf("[energy] mvs error ratio dt/(dt/2) = %.2f\n", ratio);
      EXPECT_GT(ratio, 2.5);
      EXPECT_LT(ratio, 6.0);
    }
  }
}

// Section 5.2.1: with small steps all integrators agree on the final positions and velocities
// to 1e-10 after 10 pi time units (5 inner orbits) on the Section 5.1 systems. The reference is
// adaptive Runge-Kutta at a tight tolerance. (The compensated time accumulation matters here:
// with a plain t += dt, 3e5 steps of 1e-4 drift the time, and so every orbit, by ~1e-11.)
template <class Space>
void check_agreement(int n_bodies) {
  const double T = 10 * M_PI;
  auto host = generate_planetary_ensemble(1, n_bodies, 1e-3, 0.4, 0);
  const auto ref = nbody_test::run_on<Space>(host, T, nbody_test::options_for(Method::rkck_adaptive, 1e-3, 0, 1e-15));
  struct Case {
    Method method;
    double dt, tau, tol, bound;
  } cases[] = {{Method::hermite, 1e-3, 0, 0, 1e-10},
               {Method::hermite_adaptive, 1e-3, 2e-3, 0, 1e-10},
               {Method::rkck, 2e-3, 0, 0, 1e-10},
               {Method::mvs, 2e-4, 0, 0, 1e-10},
               {Method::verlet, 1e-4, 0, 0, 1e-10}};
  for (const auto& c : cases) {
    // The second-order methods take ~5e5 steps: once (n = 3) is enough for the CPU suites.
    if ((c.method == Method::verlet || c.method == Method::mvs) && n_bodies > 3) continue;
    auto out = nbody_test::run_on<Space>(host, T, nbody_test::options_for(c.method, c.dt, c.tau, c.tol));
    const bool second_order = c.method == Method::mvs || c.method == Method::verlet;
    if (second_order) {
      // MVS and Verlet are second order and time-symmetric (errors even in dt): the small-step
      // limit is reached by Richardson extrapolation (4 x(dt/2) - x(dt)) / 3, error O(dt^4).
      const auto fine = nbody_test::run_on<Space>(host, T, nbody_test::options_for(c.method, c.dt / 2));
      for (int s = 0; s < 1; ++s) {
        double dx, dv;
        nbody_test::max_difference(fine, ref, s, dx, dv);
        EXPECT_LT(dx, c.method == Method::mvs ? 1e-9 : 1e-7) << "unextrapolated " << method_name(c.method);
        for (int b = 0; b < n_bodies; ++b)
          for (int k = 0; k < 3; ++k) {
            out.x(s, b, k) = (4 * fine.x(s, b, k) - out.x(s, b, k)) / 3;
            out.v(s, b, k) = (4 * fine.v(s, b, k) - out.v(s, b, k)) / 3;
          }
      }
    }
    for (int s = 0; s < 1; ++s) {
      double dx, dv;
      nbody_test::max_difference(out, ref, s, dx, dv);
      EXPECT_EQ(out.time(s), T);
      EXPECT_LT(dx, c.bound) << method_name(c.method) << " n = " << n_bodies;
      EXPECT_LT(dv, c.bound) << method_name(c.method) << " n = " << n_bodies;
      if (s == 0)
        std::printf("[agree] n=%d %-16s max|dx|=%.2e max|dv|=%.2e%s\n", n_bodies, method_name(c.method), dx, dv,
                    second_order ? " (extrapolated)" : "");
    }
  }
}

TYPED_TEST(NbodyIntegrators, AllIntegratorsAgreeOverTenPi) {
  check_agreement<TypeParam>(3);
  check_agreement<TypeParam>(4);
}

// The Kokkos Hermite on this space (GPU or CPU) against the plain C++ reference Hermite
// (Section 5.2.1's CPU/GPU comparison), on systems of 3, 6 and 16 bodies with random phases.
template <class Space>
void check_against_reference(int n_bodies, double T) {
  auto host = generate_planetary_ensemble(3, n_bodies, 1e-3, 0.4, 42);
  IntegrateOptions opt = nbody_test::options_for(Method::hermite, 1e-3);
  opt.integrator.steps_per_launch = 1 << 30;  // one launch: the reference re-evaluates every step
  const auto out = nbody_test::run_on<Space>(host, T, opt);
  for (int s = 0; s < 3; ++s) {
    ReferenceSystem<long double> sys;
    for (int b = 0; b < n_bodies; ++b) {
      sys.m.push_back(host.m(s, b));
      for (int c = 0; c < 3; ++c) {
        sys.x.push_back(host.x(s, b, c));
        sys.v.push_back(host.v(s, b, c));
      }
    }
    reference_hermite<long double>(sys, T, 1e-3L);
    double dx = 0, dv = 0;
    for (int b = 0; b < n_bodies; ++b)
      for (int c = 0; c < 3; ++c) {
        dx = std::fmax(dx, std::fabs(out.x(s, b, c) - double(sys.x[3 * b + c])));
        dv = std::fmax(dv, std::fabs(out.v(s, b, c) - double(sys.v[3 * b + c])));
      }
    EXPECT_LT(dx, 1e-10) << "n = " << n_bodies << " system " << s;
    EXPECT_LT(dv, 1e-10) << "n = " << n_bodies << " system " << s;
    if (s == 0) std::printf("[reference] n=%d max|dx|=%.2e max|dv|=%.2e\n", n_bodies, dx, dv);
  }
}

TYPED_TEST(NbodyIntegrators, HermiteMatchesThePlainCppReference) {
  check_against_reference<TypeParam>(3, 5 * M_PI);
  check_against_reference<TypeParam>(6, 2.0);
  check_against_reference<TypeParam>(16, 0.5);
}

// Total momentum is conserved by every integrator (pair forces cancel exactly; MVS conserves it
// by construction), to rounding.
template <class Space>
void check_momentum(Method method, double dt, double tau, double tol) {
  auto host = generate_planetary_ensemble(3, 5, 1e-3, 0.4, 7);
  Kokkos::View<double**, Kokkos::HostSpace> p0("p0", 3, 6), p1("p1", 3, 6);
  momenta(Kokkos::DefaultHostExecutionSpace(), host, p0);
  const auto out = nbody_test::run_on<Space>(host, 5.0, nbody_test::options_for(method, dt, tau, tol));
  momenta(Kokkos::DefaultHostExecutionSpace(), out, p1);
  for (int s = 0; s < 3; ++s)
    for (int k = 0; k < 6; ++k) {
      // Momenta of the bodies are ~1e-3: a missing reaction force would change the total by
      // that much; rounding over 2e4 steps stays below 1e-14.
      EXPECT_NEAR(p1(s, k), p0(s, k), k < 3 ? 1e-14 : 1e-11) << method_name(method) << " component " << k;
    }
}

TYPED_TEST(NbodyIntegrators, MomentumIsConserved) {
  check_momentum<TypeParam>(Method::hermite, 1e-3, 0, 0);
  check_momentum<TypeParam>(Method::rkck_adaptive, 1e-3, 0, 1e-12);
  check_momentum<TypeParam>(Method::mvs, 1e-2, 0, 0);
  check_momentum<TypeParam>(Method::verlet, 1e-3, 0, 0);
}

// The two work models of Hermite (team / body-pair in scratch, and system-per-thread in
// registers, which on Kokkos::Cuda is the hand-tuned CUDA kernel) agree to rounding, take the
// same steps and land on the same times.
template <class Space>
void check_work_models(Method method, int n_bodies) {
  const auto host = generate_planetary_ensemble(19, n_bodies, 1e-3, 0.4, 8);
  auto team = nbody_test::options_for(method, 1e-3, method == Method::hermite_adaptive ? 1.7e-2 : 0);
  team.integrator.work_model = IntegratorConfig::WorkModel::team;
  team.integrator.steps_per_launch = 700;
  auto regs = team;
  regs.integrator.work_model = IntegratorConfig::WorkModel::system_per_thread;
  IntegrationReport r1, r2;
  const double T = 2 * M_PI;
  const auto a = nbody_test::run_on<Space>(host, T, team, &r1);
  const auto b = nbody_test::run_on<Space>(host, T, regs, &r2);
  EXPECT_EQ(r1.steps, r2.steps) << method_name(method) << " n = " << n_bodies;
  EXPECT_EQ(r1.reached_destination, 19);
  EXPECT_EQ(r2.reached_destination, 19);
  for (int s = 0; s < 19; ++s) {
    double dx, dv;
    nbody_test::max_difference(a, b, s, dx, dv);
    EXPECT_LT(dx, 1e-12) << method_name(method) << " n = " << n_bodies << " system " << s;
    EXPECT_LT(dv, 1e-12) << method_name(method) << " n = " << n_bodies << " system " << s;
    EXPECT_EQ(a.time(s), T);
    EXPECT_EQ(b.time(s), T);
  }
}

TYPED_TEST(NbodyIntegrators, HermiteWorkModelsAgree) {
  check_work_models<TypeParam>(Method::hermite, 3);
  check_work_models<TypeParam>(Method::hermite, 8);
  check_work_models<TypeParam>(Method::hermite_adaptive, 5);
  // Monitors are not available in the register model: a clear error, not a silent fallback.
  auto opt = nbody_test::options_for(Method::hermite, 1e-3);
  opt.integrator.work_model = IntegratorConfig::WorkModel::system_per_thread;
  opt.monitor.close_encounter_hill = 1;
  auto dev = clone<typename TypeParam::memory_space>(generate_planetary_ensemble(2, 3));
  EXPECT_THROW(integrate(TypeParam(), dev, 1.0, opt), kosmos::invalid_input);
}

// The tested space (Cuda on the GPU machine) against the host space (OpenMP, or Serial) for every
// integrator: the same ensemble gives the same result to rounding (GPU/CPU agreement).
template <class Space>
void check_space_agreement() {
  using Host = Kokkos::DefaultHostExecutionSpace;
  const auto host = generate_planetary_ensemble(21, 4, 1e-3, 0.4, 12);
  struct Case {
    Method method;
    double dt, tau, tol;
  } cases[] = {{Method::hermite, 1e-3, 0, 0},       {Method::hermite_adaptive, 1e-3, 1.7e-2, 0},
               {Method::rkck, 1e-3, 0, 0},          {Method::rkck_adaptive, 1e-3, 0, 1e-12},
               {Method::mvs, 1e-2, 0, 0},           {Method::verlet, 1e-3, 0, 0}};
  for (const auto& c : cases) {
    const auto opt = nbody_test::options_for(c.method, c.dt, c.tau, c.tol);
    const auto a = nbody_test::run_on<Space>(host, M_PI / 2, opt);
    const auto b = nbody_test::run_on<Host>(host, M_PI / 2, opt);
    for (int s = 0; s < 21; ++s) {
      double dx, dv;
      nbody_test::max_difference(a, b, s, dx, dv);
      // Adaptive RKCK may accept or reject a borderline step differently under other rounding
      // (GPU rsqrt, FMA contraction): its results then differ at the tolerance level.
      const double bound = c.method == Method::rkck_adaptive ? 1e-10 : 1e-12;
      EXPECT_LT(dx, bound) << method_name(c.method) << " system " << s;
      EXPECT_LT(dv, bound) << method_name(c.method) << " system " << s;
      EXPECT_EQ(a.time(s), b.time(s));
      EXPECT_EQ(a.state(s), b.state(s));
    }
  }
}

TYPED_TEST(NbodyIntegrators, ResultsAgreeWithTheHostSpace) { check_space_agreement<TypeParam>(); }

// The team kernel with several systems per team (the GPU configuration, interleaved scratch,
// partial last team) gives bit-for-bit the one-system-per-team result, for every integrator and
// with monitors and logs on.
template <class Space>
void check_systems_per_team() {
  auto host = generate_planetary_ensemble(13, 4, 1e-3, 0.4, 21);
  host.v(6, 3, 0) *= 0.3;  // one eccentric system for the crossing-orbit monitor
  const Method methods[] = {Method::hermite, Method::hermite_adaptive, Method::rkck_adaptive, Method::mvs,
                            Method::verlet};
  for (const Method method : methods) {
    auto opt = nbody_test::options_for(method, method == Method::mvs ? 1e-2 : 1e-3,
                                       method == Method::hermite_adaptive ? 1.7e-2 : 0,
                                       method == Method::rkck_adaptive ? 1e-12 : 0);
    opt.integrator.work_model = IntegratorConfig::WorkModel::team;
    opt.integrator.steps_per_launch = 300;
    opt.monitor.crossing_orbits = true;
    opt.monitor.log_interval = 0.5;
    std::vector<std::pair<int, double>> logs1, logs4;
    opt.on_log = [&](const LogRecord& r) { logs1.emplace_back(r.system, r.time); };
    opt.integrator.systems_per_team = 1;
    const auto one = nbody_test::run_on<Space>(host, 2.0, opt);
    for (const int S : {4, 5}) {
      logs4.clear();
      opt.on_log = [&](const LogRecord& r) { logs4.emplace_back(r.system, r.time); };
      opt.integrator.systems_per_team = S;
      const auto many = nbody_test::run_on<Space>(host, 2.0, opt);
      for (int s = 0; s < 13; ++s) {
        double dx, dv;
        nbody_test::max_difference(one, many, s, dx, dv);
        EXPECT_EQ(dx, 0.0) << method_name(method) << " S = " << S << " system " << s;
        EXPECT_EQ(dv, 0.0) << method_name(method) << " S = " << S << " system " << s;
        EXPECT_EQ(one.time(s), many.time(s));
        EXPECT_EQ(one.state(s), many.state(s));
        EXPECT_EQ(one.reason(s), many.reason(s));
      }
      EXPECT_EQ(logs1, logs4) << method_name(method) << " S = " << S;
    }
    EXPECT_EQ(one.reason(6), reason_crossing_orbits) << method_name(method);
  }
}

TYPED_TEST(NbodyIntegrators, SeveralSystemsPerTeamGiveTheSameResult) { check_systems_per_team<TypeParam>(); }

}  // namespace

namespace {
// Bit-for-bit equality of two ensembles (positions, velocities, masses, times, steps, states).
void expect_identical(const HostEnsemble& a, const HostEnsemble& b, const std::string& what) {
  ASSERT_EQ(a.n_systems(), b.n_systems());
  for (int s = 0; s < a.n_systems(); ++s) {
    EXPECT_EQ(a.time(s), b.time(s)) << what << " system " << s;
    EXPECT_EQ(a.step(s), b.step(s)) << what << " system " << s;
    EXPECT_EQ(a.state(s), b.state(s)) << what << " system " << s;
    for (int i = 0; i < a.n_bodies(); ++i) {
      EXPECT_EQ(a.m(s, i), b.m(s, i)) << what << " system " << s;
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(a.x(s, i, c), b.x(s, i, c)) << what << " system " << s << " body " << i;
        EXPECT_EQ(a.v(s, i, c), b.v(s, i, c)) << what << " system " << s << " body " << i;
      }
    }
  }
}

// Bit-for-bit equality of the MEGNO results of two runs (<Y>, Lyapunov estimate, deviation and
// sums); nothing to compare in runs without MEGNO.
void expect_same_megno(const IntegrationReport& a, const IntegrationReport& b,
                       const std::string& what) {
  EXPECT_EQ(a.megno, b.megno) << what;
  EXPECT_EQ(a.lyapunov, b.lyapunov) << what;
  EXPECT_EQ(a.megno_state, b.megno_state) << what;
}

// One run of every integrator three ways against one call with long launches: launches of 3
// steps; segments ending every 0.3 (not on the dt grid); and a run stopped by its iteration
// budget, written to a checkpoint, read back and continued. All must agree bit for bit (MEGNO
// runs: <Y>, the Lyapunov estimate and the deviation too).
template <class Space>
void check_exact_restarts(const IntegrateOptions& options, const std::string& what) {
  using Mem = typename Space::memory_space;
  const auto start = generate_planetary_ensemble(5, 3, 1e-3, 0.4, 7);
  const double destination = 2.005;
  IntegrationReport one_call;
  const auto reference = nbody_test::run_on<Space>(start, destination, options, &one_call);
  ASSERT_EQ(one_call.reached_destination, 5) << what;

  auto short_launches = options;
  short_launches.integrator.steps_per_launch = 3;
  IntegrationReport short_report;
  expect_identical(reference,
                   nbody_test::run_on<Space>(start, destination, short_launches, &short_report),
                   what + ", 3 steps per launch");
  expect_same_megno(one_call, short_report, what + ", 3 steps per launch");

  SegmentOptions segments;
  segments.interval = 0.3;
  RunState state;
  auto dev = clone<Mem>(start);
  const auto segmented = integrate_segments(Space(), dev, destination, options, state, segments);
  expect_identical(reference, clone<Kokkos::HostSpace>(dev), what + ", segments of 0.3");
  expect_same_megno(one_call, segmented, what + ", segments of 0.3");

  const std::string path = ::testing::TempDir() + "kosmos_exact_restart.ckpt";
  auto budget = options;
  budget.integrator.max_iterations = one_call.iterations[0] / 2;
  segments.checkpoint = path;
  segments.settings = {{"destination", "2.005"}};
  RunState interrupted;
  dev = clone<Mem>(start);
  const auto stopped = integrate_segments(Space(), dev, destination, budget, interrupted, segments);
  EXPECT_GT(stopped.unfinished, 0) << what;
  const Checkpoint checkpoint = read_checkpoint(path, {"destination"});
  EXPECT_EQ(checkpoint.settings.at("destination"), "2.005");
  auto resumed = clone<Mem>(checkpoint.ensemble);
  RunState carried = checkpoint.state;
  std::remove(path.c_str());
  segments.checkpoint.clear();
  const auto rep = integrate_segments(Space(), resumed, destination, options, carried, segments);
  EXPECT_EQ(rep.reached_destination, 5) << what;
  EXPECT_EQ(rep.iterations, one_call.iterations) << what;
  expect_identical(reference, clone<Kokkos::HostSpace>(resumed),
                   what + ", resumed from a checkpoint");
  expect_same_megno(one_call, rep, what + ", resumed from a checkpoint");
  if (options.megno) {
    ASSERT_EQ(rep.megno.size(), 5u) << what;
    EXPECT_GT(rep.megno[0], 0.0) << what;  // MEGNO ran (0 before the first step)
  }
}
}  // namespace

TYPED_TEST(NbodyIntegrators, RestartsAreExact) {
  for (Method m : {Method::hermite, Method::hermite_adaptive, Method::rkck, Method::rkck_adaptive,
                   Method::mvs, Method::verlet, Method::whfast, Method::ias15}) {
    auto options = nbody_test::options_for(m, 0.01, 0.02, 1e-10);
    if (m == Method::whfast) options.integrator.corrector = 11;
    check_exact_restarts<TypeParam>(options, method_name(m));
  }
  for (Method m : {Method::hermite, Method::hermite_adaptive}) {
    auto options = nbody_test::options_for(m, 0.01, 0.02);
    options.integrator.work_model = IntegratorConfig::WorkModel::system_per_thread;
    check_exact_restarts<TypeParam>(options, std::string(method_name(m)) + " (register kernel)");
  }
  auto megno = nbody_test::options_for(Method::ias15, 0.01);
  megno.megno = true;
  check_exact_restarts<TypeParam>(megno, "ias15 with MEGNO");
  // WHFast + MEGNO shares WHFast's loop: the same landing step, carried state and segments.
  megno = nbody_test::options_for(Method::whfast, 0.01);
  megno.integrator.corrector = 11;
  megno.megno = true;
  check_exact_restarts<TypeParam>(megno, "whfast with MEGNO");
}

TEST(NbodyCheckpoint, MissingSettingIsNamed) {
  const std::string path = ::testing::TempDir() + "kosmos_missing_setting.ckpt";
  write_checkpoint(
      path, Checkpoint{generate_planetary_ensemble(2, 3), RunState(), {{"integrator", "whfast"}}});
  EXPECT_EQ(read_checkpoint(path, {"integrator"}).settings.at("integrator"), "whfast");
  try {
    read_checkpoint(path, {"integrator", "destination"});
    ADD_FAILURE() << "a checkpoint without destination was read";
  } catch (const kosmos::file_error& e) {
    EXPECT_NE(std::string(e.what()).find("lacks the setting 'destination'"), std::string::npos)
        << e.what();
  }
  std::remove(path.c_str());
}
