// Orbital elements: against the Kepler solution in long double, hand-computed orientations,
// the vis-viva and angular-momentum identities, and Jacobi / heliocentric systems.
#include "nbody_test_utils.hpp"

#include <kosmos/core/hdf5.hpp>
#include <kosmos/kepler/search.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <cstdio>
#include <fstream>
#include <random>

namespace {
using namespace kosmos::nbody;

TEST(NbodyElements, MatchTheKeplerSolution) {
  const double mu = 1.3;
  for (double t : {0.0, 0.7, 2.5, 11.0}) {
    OrbitalElements el;
    el.e = 0.5;
    el.M = std::sqrt(mu) * t;  // a = 1: n = sqrt(mu)
    double r[3], v[3];
    elements_to_state(mu, el, r, v);
    nbody_test::Real rr[3], vv[3];
    nbody_test::kepler_orbit(mu, 0.5, t, rr, vv);
    for (int c = 0; c < 3; ++c) {
      EXPECT_NEAR(r[c], double(rr[c]), 1e-13) << t;
      EXPECT_NEAR(v[c], double(vv[c]), 1e-13) << t;
    }
  }
}

TEST(NbodyElements, OrientationAnglesFollowTheConvention) {
  // Circular, i = 90 deg, node on +y (Omega = 90 deg), at the ascending node: r = +y, v = +z.
  OrbitalElements el;
  el.a = 2;
  el.inc = M_PI / 2;
  el.Omega = M_PI / 2;
  double r[3], v[3];
  elements_to_state(2.0, el, r, v);
  const double expect_r[3] = {0, 2, 0}, expect_v[3] = {0, 0, 1};
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(r[c], expect_r[c], 1e-15);
    EXPECT_NEAR(v[c], expect_v[c], 1e-15);
  }
  // omega = 90 deg in the x-y plane: pericentre on +y; M = 0 puts the body there.
  el = OrbitalElements();
  el.e = 0.25;
  el.omega = M_PI / 2;
  elements_to_state(1.0, el, r, v);
  EXPECT_NEAR(r[0], 0, 1e-15);
  EXPECT_NEAR(r[1], 0.75, 1e-15);
  EXPECT_NEAR(v[0], -std::sqrt(1.25 / 0.75), 1e-14);  // vis-viva at pericentre, prograde
}

TEST(NbodyElements, RoundTripAndConservedQuantities) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (int k = 0; k < 200; ++k) {
    OrbitalElements el;
    el.a = 0.1 + 10 * u(rng);
    el.e = 0.95 * u(rng);
    el.inc = 0.01 + 3.1 * u(rng);
    el.Omega = 6.28 * u(rng);
    el.omega = 6.28 * u(rng);
    el.M = 6.28 * u(rng);
    const double mu = 0.5 + u(rng);
    double r[3], v[3];
    elements_to_state(mu, el, r, v);
    // Independent identities: vis-viva and |r x v| = sqrt(mu a (1 - e^2)), h_z = |h| cos i.
    const double rn = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    const double v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    EXPECT_NEAR(v2, mu * (2 / rn - 1 / el.a), 1e-12 * v2);
    const double hz = r[0] * v[1] - r[1] * v[0];
    EXPECT_NEAR(hz, std::sqrt(mu * el.a * (1 - el.e * el.e)) * std::cos(el.inc), 1e-12);
    const auto back = state_to_elements(mu, r, v);
    EXPECT_NEAR(back.a, el.a, 1e-11 * el.a);
    EXPECT_NEAR(back.e, el.e, 1e-11);
    EXPECT_NEAR(back.inc, el.inc, 1e-11);
    EXPECT_NEAR(std::remainder(back.Omega - el.Omega, 2 * M_PI), 0, 1e-10);
    EXPECT_NEAR(std::remainder(back.omega - el.omega, 2 * M_PI), 0, 1e-8);
    EXPECT_NEAR(std::remainder(back.M - el.M, 2 * M_PI), 0, 1e-8);
  }
}

TEST(NbodyElements, HyperbolicStatesGiveNegativeA) {
  nbody_test::Real rr[3], vv[3];
  nbody_test::kepler_orbit(1, 1.5, 0.8, rr, vv);  // |a| = 1, e = 1.5, mean anomaly n t = 0.8
  const double r[3] = {double(rr[0]), double(rr[1]), 0}, v[3] = {double(vv[0]), double(vv[1]), 0};
  const auto el = state_to_elements(1, r, v);
  EXPECT_NEAR(el.a, -1, 1e-12);
  EXPECT_NEAR(el.e, 1.5, 1e-12);
  EXPECT_NEAR(el.M, 0.8, 1e-12);
}

TEST(NbodyElements, JacobiAndHeliocentricSystems) {
  const std::vector<double> masses = {1e-3, 3e-4};
  std::vector<OrbitalElements> planets(2);
  planets[0].a = 1;
  planets[0].e = 0.1;
  planets[1].a = 2.5;
  planets[1].e = 0.2;
  planets[1].inc = 0.1;
  planets[1].M = 2;
  for (ElementFrame frame : {ElementFrame::jacobi, ElementFrame::heliocentric}) {
    HostEnsemble ens(1, 3);
    set_system_from_elements(ens, 0, 1.1, masses, planets, frame);
    // Barycentric: no momentum, centre of mass at the origin.
    for (int c = 0; c < 3; ++c) {
      double p = 0, q = 0;
      for (int b = 0; b < 3; ++b) {
        p += ens.m(0, b) * ens.v(0, b, c);
        q += ens.m(0, b) * ens.x(0, b, c);
      }
      EXPECT_NEAR(p, 0, 1e-17);
      EXPECT_NEAR(q, 0, 1e-17);
    }
    const auto back = system_elements(ens, 0, frame);
    for (int k = 0; k < 2; ++k) {
      EXPECT_NEAR(back[k].a, planets[k].a, 1e-12);
      EXPECT_NEAR(back[k].e, planets[k].e, 1e-12);
      EXPECT_NEAR(back[k].inc, planets[k].inc, 1e-12);
    }
    // The outer planet's Jacobi orbit is about the star + inner planet's centre of mass with
    // mu = m0 + m1 + m2: check directly.
    if (frame == ElementFrame::jacobi) {
      double r[3], v[3];
      const double m01 = 1.1 + 1e-3;
      for (int c = 0; c < 3; ++c) {
        r[c] = ens.x(0, 2, c) - (1.1 * ens.x(0, 0, c) + 1e-3 * ens.x(0, 1, c)) / m01;
        v[c] = ens.v(0, 2, c) - (1.1 * ens.v(0, 0, c) + 1e-3 * ens.v(0, 1, c)) / m01;
      }
      const double rn = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
      const double v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
      EXPECT_NEAR(v2, (m01 + 3e-4) * (2 / rn - 1 / 2.5), 1e-12);
    } else {
      // Heliocentric elements of the same system in the other frame differ at the mass ratio.
      const auto jac = system_elements(ens, 0, ElementFrame::jacobi);
      EXPECT_GT(std::fabs(jac[1].a - planets[1].a), 1e-5);
    }
  }
}

TEST(NbodyElements, BadElementsAreRefusedByName) {
  HostEnsemble ens(1, 2);
  OrbitalElements el;
  el.e = 1.2;
  try {
    set_system_from_elements(ens, 0, 1.0, {1e-3}, {el}, ElementFrame::jacobi);
    FAIL() << "no error";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("e = 1.2"), std::string::npos) << e.what();
  }
  el.e = 0;
  el.a = -1;
  EXPECT_THROW(set_system_from_elements(ens, 0, 1.0, {1e-3}, {el}, ElementFrame::jacobi),
               kosmos::invalid_input);
  el.a = 1;
  EXPECT_THROW(set_system_from_elements(ens, 0, 1.0, {-1e-3}, {el}, ElementFrame::jacobi),
               kosmos::invalid_input);
  EXPECT_THROW(set_system_from_elements(ens, 0, 1.0, {1e-3, 1e-3}, {el, el}, ElementFrame::jacobi),
               kosmos::invalid_input);
  EXPECT_THROW(element_frame_from_name("barycentric"), kosmos::invalid_input);
}

// Forward RV relation K(m) against the inversion, and Kepler's third law in Gauss's units.
TEST(NbodyStability, MassesAndAxesFromRVParameters) {
  const double G = 6.674e-11, m_sun = 1.32712440018e20 / G;  // kg
  for (double m : {3e-6, 1e-3, 2e-2})
    for (double e : {0.0, 0.6}) {
      const double P = 300.0 * 86400, sin_i = 0.5;
      const double K = std::cbrt(2 * M_PI * G / P) * m * m_sun * sin_i /
                       (std::pow((1.2 + m) * m_sun, 2.0 / 3.0) * std::sqrt(1 - e * e));
      EXPECT_NEAR(planet_mass_from_rv(K, 300.0, e, 1.2, sin_i), m, 1e-12 * m);
    }
  EXPECT_THROW(planet_mass_from_rv(10, -1, 0, 1, 1), kosmos::invalid_input);
  EXPECT_THROW(planet_mass_from_rv(10, 100, 1.5, 1, 1), kosmos::invalid_input);
  // A massless planet of period one Gaussian year (365.2568983 d) around 1 solar mass: a = 1 AU.
  RVPosterior post;
  post.planets = 1;
  post.columns = {"P_b", "K_b", "e_b", "omega_deg_b", "M0_deg_b"};
  post.samples = {{365.2568983, 0.0, 0.0, 0.0, 0.0}};
  StabilitySetup sun;
  sun.star_mass = 1;
  const auto ens = ensemble_from_rv_posterior(post, sun);
  EXPECT_NEAR(system_elements(ens, 0, ElementFrame::jacobi)[0].a, 1.0, 1e-9);
  EXPECT_NEAR(ens.m(0, 1), 0.0, 1e-300);
  // A bad sample is named; an inclination of 180 deg (sin i rounds to 1.2e-16, not 0) is refused.
  post.samples.push_back({365.0, -5.0, 0.0, 0.0, 0.0});
  try {
    ensemble_from_rv_posterior(post, sun);
    ADD_FAILURE() << "K = -5 accepted";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("(posterior sample 2)"), std::string::npos) << e.what();
  }
  StabilitySetup edge_on_backwards = sun;
  edge_on_backwards.inclination = M_PI;
  post.samples.pop_back();
  EXPECT_THROW(ensemble_from_rv_posterior(post, edge_on_backwards), kosmos::invalid_input);
}

// A posterior of two samples written like `kosmos rv` writes it: a widely spaced pair of small
// planets survives; two Jupiter-mass planets at period ratio 1.2 (1.5 mutual Hill radii apart,
// Hill unstable below 2 sqrt(3)) come within one Hill radius in a few orbits.
TEST(NbodyStability, UnstableSamplesAreCounted) {
  const std::string path = ::testing::TempDir() + "kosmos_nbody_posterior.txt";
  {
    std::ofstream out(path);
    out << "# kosmos rv posterior samples (DE-MCMC): data x.txt, epoch 0, 2 samples, 2 planet(s), "
           "trend 0\n"
        << "# angles in degrees\n"
        << "P_b K_b e_b omega_deg_b M0_deg_b Tc_b Tp_b P_c K_c e_c omega_deg_c M0_deg_c Tc_c Tp_c "
           "gamma_x jitter_x lnL\n"
        << "10 5 0.05 30 10 0 0 100 3 0.1 200 90 0 0 0 1 -50\n"
        << "10 200 0.05 30 10 0 0 12 200 0.05 200 180 0 0 0 1 -60\n";
  }
  const auto post = read_rv_posterior(path);
  EXPECT_EQ(post.planets, 2);
  ASSERT_EQ(post.samples.size(), 2u);
  StabilitySetup setup;
  setup.star_mass = 0.9;
  auto host = ensemble_from_rv_posterior(post, setup);
  ASSERT_EQ(host.n_bodies(), 3);
  IntegrateOptions opt;
  opt.integrator.dt = 1e-3;
  opt.monitor.close_encounter_hill = 1;
  opt.monitor.ejection_distance = 10;
  const double T = 30 * 10 / days_per_time_unit;  // 30 inner orbits
  auto dev = clone<Kokkos::DefaultExecutionSpace::memory_space>(host);
  integrate(Kokkos::DefaultExecutionSpace(), dev, T, opt);
  const auto out = clone<Kokkos::HostSpace>(dev);
  const auto sum = summarize_stability(out, T);
  EXPECT_EQ(sum.samples, 2);
  EXPECT_EQ(sum.survived, 1);
  EXPECT_EQ(out.state(0), state_active);
  EXPECT_EQ(out.state(1), state_inactive);
  EXPECT_GT(out.time(1), 0.0);  // not already at the start
  EXPECT_EQ(sum.close_encounters, 1);
  EXPECT_DOUBLE_EQ(sum.fraction(), 0.5);
  // Missing columns and ragged rows are named.
  {
    std::ofstream out(path);
    out << "P_b K_b e_b omega_deg_b\n10 5 0 0\n";
  }
  EXPECT_THROW(read_rv_posterior(path), kosmos::file_error);
  std::remove(path.c_str());
}

// `kosmos rv` writes its samples as text or .h5 (kepler::write_samples); stability mode reads
// either, to the same numbers (the text keeps 17 digits: exact).
TEST(NbodyStability, ReadsTheRvPosteriorAsTextAndHdf5) {
  if (!kosmos::io::hdf5_enabled()) GTEST_SKIP() << "built without HDF5";
  kosmos::kepler::SearchResult result;
  result.columns = {"P_b", "K_b", "e_b", "omega_deg_b", "M0_deg_b", "Tc_b", "Tp_b", "gamma_x", "jitter_x", "lnL"};
  result.samples = {{10.123456789012345, 5.5, 0.05, 30, 10, 1.5, 2.5, 0.1, 1, -50.25},
                    {10.2, 5.25, 0.0625, 31, 9.75, 1.25, 2.25, 0.2, 1.5, -51.125},
                    {9.99, 4.75, 1.0 / 3.0, 29, 11, 1.75, 2.75, 0.3, 2, -49.5}};
  result.sample_chain = {0, 1, 0};
  result.planets = 1;
  kosmos::kepler::RVData data;
  data.path = "synthetic.txt";
  const std::string text = ::testing::TempDir() + "kosmos_nbody_posterior_rt.txt",
                    h5 = ::testing::TempDir() + "kosmos_nbody_posterior_rt.h5";
  kosmos::kepler::write_samples(text, result, data);
  kosmos::kepler::write_samples(h5, result, data);
  const auto from_text = read_rv_posterior(text), from_h5 = read_rv_posterior(h5);
  EXPECT_EQ(from_h5.planets, 1);
  EXPECT_EQ(from_h5.columns, result.columns);
  std::vector<std::vector<double>> written;
  for (const auto row : result.samples) written.emplace_back(row.begin(), row.end());
  EXPECT_EQ(from_h5.samples, written);
  EXPECT_EQ(from_text.samples, from_h5.samples);
  // --samples N reads the first N rows only: a damaged row after them is never read.
  const std::vector<std::vector<double>> first_two(written.begin(), written.begin() + 2);
  EXPECT_EQ(read_rv_posterior(h5, 2).samples, first_two);
  EXPECT_EQ(read_rv_posterior(text, 2).samples, first_two);
  { std::ofstream(text, std::ios::app) << "damaged row\n"; }
  EXPECT_EQ(read_rv_posterior(text, 3).samples, written);
  EXPECT_THROW(read_rv_posterior(text), kosmos::file_error);
  // A .h5 file without the samples is named.
  {
    kosmos::io::H5Writer other(h5);
    other.write("x", std::vector<double>{1.0});
    other.commit();
  }
  EXPECT_THROW(read_rv_posterior(h5), kosmos::file_error);
  std::remove(text.c_str());
  std::remove(h5.c_str());
}

}  // namespace
