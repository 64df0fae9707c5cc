// Integrator accuracy against independent references: the analytic Kepler solution, energy and
// momentum conservation (Section 5.2.2, Table 1), agreement between integrators and with the
// plain C++ reference Hermite (Section 5.2.1).
#include "nbody_test_utils.hpp"

#include <test_spaces.hpp>

#include <cstdio>

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

}  // namespace
