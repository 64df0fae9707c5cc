// Stability of RV posteriors: planets ordered by period whatever their labels, the stellar mass
// read from the posterior (as `kosmos rv` writes it), inclination draws, and the joined table.
#include "nbody_test_utils.hpp"

#include <kosmos/core/hdf5.hpp>
#include <kosmos/kepler/search.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace {
using namespace kosmos::nbody;
using Space = Kokkos::DefaultExecutionSpace;

// HD 164922 as `kosmos rv --stellar-mass` writes it: b the strongest signal (P = 1201 d, outer),
// c the inner one (75.7 d), four samples around the fit with a drawn stellar mass each. The
// derived columns (msini_jup, a_au) come from kosmos::kepler::minimum_mass, so the stellar mass
// read back is checked against the kepler module's own numbers. `inner_first` swaps the labels.
RVPosterior hd164922_posterior(bool inner_first, std::vector<double>& star_masses) {
  struct Planet {
    double P, K, e, omega_deg, M0_deg;
  };
  const Planet outer{1201.1, 7.3, 0.08, 60, 30}, inner{75.74, 2.2, 0.22, 130, 200};
  star_masses = {0.874, 0.86, 0.89, 0.877};
  RVPosterior post;
  post.planets = 2;
  for (const char* letter : {"b", "c"})
    for (const char* q : {"P_", "K_", "e_", "omega_deg_", "M0_deg_", "msini_jup_", "a_au_"})
      post.columns.push_back(std::string(q) + letter);
  post.columns.push_back("lnL");
  for (int s = 0; s < 4; ++s) {
    std::vector<double> row;
    const double scale = 1 + 0.01 * s;
    Planet first = inner_first ? inner : outer, second = inner_first ? outer : inner;
    for (Planet* p : {&first, &second}) {
      p->K *= scale;
      p->e *= scale;
      p->P *= 1 + 1e-4 * s;
      kosmos::kepler::Orbit o;
      o.P = p->P;
      o.K = p->K;
      o.e = p->e;
      const auto mass = kosmos::kepler::minimum_mass(o, star_masses[std::size_t(s)]);
      for (double v : {p->P, p->K, p->e, p->omega_deg, p->M0_deg, mass.msini_jupiter, mass.a_au})
        row.push_back(v);
    }
    row.push_back(-100.0 - s);
    post.samples.push_back(row);
  }
  return post;
}

struct PosteriorRun {
  PosteriorSystems systems;
  HostEnsemble final_state;
  std::vector<double> rel_energy_error, max_e;
};

// WHFast, dt 0.05, 100 years (the settings).
PosteriorRun integrate_posterior(const RVPosterior& post, const StabilitySetup& setup = {}) {
  PosteriorRun run;
  run.systems = systems_from_rv_posterior(post, setup);
  auto dev = clone<Space::memory_space>(run.systems.ensemble);
  const int n = dev.n_systems();
  Kokkos::View<double*, Space::memory_space> e0("e0", n), e1("e1", n), max_e("max_e", n);
  energy(Space(), dev, e0);
  update_max_eccentricity(Space(), dev, max_e, true);
  IntegrateOptions opt;
  opt.integrator.method = Method::whfast;
  opt.integrator.dt = 0.05;
  opt.monitor.close_encounter_hill = 3;
  integrate(Space(), dev, 628.3, opt);
  update_max_eccentricity(Space(), dev, max_e, true);
  energy(Space(), dev, e1);
  run.final_state = clone<Kokkos::HostSpace>(dev);
  auto h0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e0);
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e1);
  auto he = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), max_e);
  for (int s = 0; s < n; ++s) {
    run.rel_energy_error.push_back(std::fabs((h1(s) - h0(s)) / h0(s)));
    run.max_e.push_back(he(s));
  }
  return run;
}

// The case: with the outer planet labelled b, the labels' order put it inside the Jacobi
// hierarchy first (|dE/E| 2.4e-5 and spurious energy_error failures); ordered by period, both
// labellings build the same systems, conserve energy and reproduce the posterior's periods and
// the stellar mass drawn per sample. The stellar mass read from b's derived columns differs
// between the labellings in the last bits (b is another planet), so the two runs agree to
// round-off; with the stellar mass given, bit for bit.
TEST(NbodyStability, PlanetsEnterByPeriodWhateverTheirLabels) {
  std::vector<double> star_masses;
  const auto outer_first = hd164922_posterior(false, star_masses);
  const auto inner_first = hd164922_posterior(true, star_masses);
  const auto read = posterior_stellar_masses(outer_first);
  ASSERT_EQ(read.size(), star_masses.size());
  for (std::size_t s = 0; s < read.size(); ++s)
    EXPECT_NEAR(read[s] / star_masses[s], 1.0, 1e-12) << s;
  StabilitySetup given;
  given.star_mass = 0.874;
  for (const bool from_posterior : {true, false}) {
    const StabilitySetup setup = from_posterior ? StabilitySetup() : given;
    const PosteriorRun a = integrate_posterior(outer_first, setup),
                       b = integrate_posterior(inner_first, setup);
    const int n = a.final_state.n_systems();
    ASSERT_EQ(n, 4);
    const double tolerance = from_posterior ? 1e-9 : 0.0;
    for (int s = 0; s < n; ++s) {
      const std::size_t k = std::size_t(s);
      EXPECT_EQ(planet_order_name(a.systems.order[k]), "cb");
      EXPECT_EQ(planet_order_name(b.systems.order[k]), "bc");
      EXPECT_NEAR(a.systems.star_mass[k] / (from_posterior ? star_masses[k] : 0.874), 1.0, 1e-12);
      // Body 1 is the 75.7 d planet: its Jacobi period from a and mu.
      const auto el = system_elements(a.systems.ensemble, s, ElementFrame::jacobi);
      const double mu = a.systems.ensemble.m(s, 0) + a.systems.ensemble.m(s, 1);
      const double period_days =
          2 * M_PI * std::sqrt(el[0].a * el[0].a * el[0].a / mu) * days_per_time_unit;
      EXPECT_NEAR(period_days, outer_first.samples[k][7], 1e-9);
      EXPECT_EQ(a.final_state.state(s), state_active) << s;
      EXPECT_LT(a.rel_energy_error[k], 1e-7) << s;
      EXPECT_NEAR(a.rel_energy_error[k], b.rel_energy_error[k], 1e-12) << s;
      EXPECT_NEAR(a.max_e[k], b.max_e[k], tolerance) << s;
      EXPECT_GE(a.max_e[k], outer_first.samples[k][9] * (1 - 1e-9)) << s;
      for (int body = 0; body < 3; ++body)
        for (int c = 0; c < 3; ++c) {
          EXPECT_NEAR(a.final_state.x(s, body, c), b.final_state.x(s, body, c), tolerance);
          EXPECT_NEAR(a.final_state.v(s, body, c), b.final_state.v(s, body, c), tolerance);
        }
    }
  }
  // Without a stellar mass in the file, one must be given.
  RVPosterior bare = outer_first;
  bare.columns = {"P_b", "K_b", "e_b", "omega_deg_b", "M0_deg_b"};
  bare.planets = 1;
  for (auto& row : bare.samples) row.resize(5);
  EXPECT_TRUE(posterior_stellar_masses(bare).empty());
  EXPECT_THROW(systems_from_rv_posterior(bare, StabilitySetup()), kosmos::invalid_input);
  EXPECT_EQ(systems_from_rv_posterior(bare, given).star_mass[0], 0.874);
}

// Inclination draws: each planet's mass is its m sin i over the sin of its own inclination to
// the sky, the built orbits have the recorded inclinations and nodes, and the mutual inclination
// of two planets tilted by Rayleigh(sigma) each is Rayleigh(sigma sqrt 2) for small sigma: mean
// sigma sqrt(pi).
TEST(NbodyStability, InclinationDraws) {
  std::vector<double> star_masses;
  RVPosterior post = hd164922_posterior(false, star_masses);
  while (post.samples.size() < 400) post.samples.push_back(post.samples[post.samples.size() % 4]);
  StabilitySetup setup;
  setup.isotropic_inclination = true;
  setup.mutual_inclination = 2 * M_PI / 180;
  setup.seed = 7;
  const auto sys = systems_from_rv_posterior(post, setup);
  setup.isotropic_inclination = false;
  setup.mutual_inclination = 0;
  const auto minimum = systems_from_rv_posterior(post, setup);  // edge-on, coplanar
  double mutual_sum = 0;
  for (int s = 0; s < sys.ensemble.n_systems(); ++s) {
    const auto el = system_elements(sys.ensemble, s, ElementFrame::jacobi);
    double normal[2][3];
    for (int k = 0; k < 2; ++k) {
      const double inc = sys.inclination[std::size_t(s)][std::size_t(k)];
      const double node = sys.node[std::size_t(s)][std::size_t(k)];
      EXPECT_NEAR(el[std::size_t(k)].inc, inc, 1e-9);
      // K fixes m sin i / (M* + m)^(2/3): against the edge-on (minimum) mass m0,
      // m sin i / m0 = ((M* + m) / (M* + m0))^(2/3).
      const double m = sys.ensemble.m(s, k + 1), m0 = minimum.ensemble.m(s, k + 1),
                   star = sys.star_mass[std::size_t(s)];
      EXPECT_NEAR(m * std::sin(inc) / m0, std::pow((star + m) / (star + m0), 2.0 / 3.0), 1e-12);
      normal[k][0] = std::sin(inc) * std::sin(node);
      normal[k][1] = -std::sin(inc) * std::cos(node);
      normal[k][2] = std::cos(inc);
    }
    const double dot =
        normal[0][0] * normal[1][0] + normal[0][1] * normal[1][1] + normal[0][2] * normal[1][2];
    mutual_sum += std::acos(std::fmin(1.0, dot));
  }
  EXPECT_NEAR(mutual_sum / sys.ensemble.n_systems(), 2 * M_PI / 180 * std::sqrt(M_PI),
              0.1 * 2 * M_PI / 180 * std::sqrt(M_PI));
  // The same seed, the same systems.
  setup.isotropic_inclination = true;
  setup.mutual_inclination = 2 * M_PI / 180;
  EXPECT_EQ(systems_from_rv_posterior(post, setup).inclination, sys.inclination);
}

// The joined table: one line per sample with its order, stellar mass, the posterior's columns
// and its outcome; the same in HDF5.
TEST(NbodyStability, JoinedTable) {
  std::vector<double> star_masses;
  const auto post = hd164922_posterior(false, star_masses);
  const PosteriorRun run = integrate_posterior(post);
  StabilityOutcomes outcomes;
  outcomes.max_eccentricity = run.max_e;
  const std::string text = ::testing::TempDir() + "kosmos_nbody_stability_table.txt";
  write_stability_table(text, post, run.systems, run.final_state, outcomes);
  std::ifstream in(text);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line[0], '#');
  std::getline(in, line);
  EXPECT_EQ(line.rfind("sample order star_mass inc_1 inc_2 P_b K_b", 0), 0u) << line;
  EXPECT_NE(line.find(" lnL state reason time max_eccentricity megno lyapunov_time"),
            std::string::npos)
      << line;
  int rows = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    int sample;
    std::string order, state;
    double mass, inc1, inc2, P_b;
    fields >> sample >> order >> mass >> inc1 >> inc2 >> P_b;
    EXPECT_EQ(sample, rows);
    EXPECT_EQ(order, "cb");
    EXPECT_EQ(mass, run.systems.star_mass[std::size_t(rows)]);
    EXPECT_EQ(inc1, 90.0);
    EXPECT_EQ(P_b, post.samples[std::size_t(rows)][0]);
    EXPECT_NE(line.find(" active none 628.29999999999995 "), std::string::npos) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 4);
  std::remove(text.c_str());
  if (!kosmos::io::hdf5_enabled()) return;
  const std::string h5 = ::testing::TempDir() + "kosmos_nbody_stability_table.h5";
  write_stability_table(h5, post, run.systems, run.final_state, outcomes);
  const kosmos::io::H5Reader reader(h5);
  EXPECT_EQ(reader.read_strings("order"), std::vector<std::string>(4, "cb"));
  EXPECT_EQ(reader.read_strings("columns"), post.columns);
  std::vector<std::size_t> dims;
  const auto flat = reader.read<double>("posterior", &dims);
  ASSERT_EQ(dims, (std::vector<std::size_t>{4, post.columns.size()}));
  EXPECT_EQ(flat[post.columns.size()], post.samples[1][0]);
  EXPECT_EQ(reader.read<double>("max_eccentricity"), run.max_e);
  std::remove(h5.c_str());
}

// run_stability (the workflow in segments, on the dt grid) against one integrate() call over the
// same span: the same final states to round-off and the same largest eccentricity at the end
// or above; with IAS15 + MEGNO every sample gets a finite <Y> near 2 (a regular pair) carried
// across the segments.
TEST(NbodyStability, RunStabilityInSegments) {
  std::vector<double> star_masses;
  const auto post = hd164922_posterior(false, star_masses);
  const PosteriorRun whole = integrate_posterior(post);
  IntegrateOptions opt;
  opt.integrator.method = Method::whfast;
  opt.integrator.dt = 0.05;
  opt.monitor.close_encounter_hill = 3;
  const auto run = run_stability(Space(), post, StabilitySetup(), opt, 628.3, 10);
  ASSERT_EQ(run.outcomes.max_eccentricity.size(), 4u);
  EXPECT_TRUE(run.outcomes.megno.empty());
  for (int s = 0; s < 4; ++s) {
    EXPECT_EQ(run.final_state.state(s), state_active);
    EXPECT_GE(run.outcomes.max_eccentricity[std::size_t(s)],
              whole.max_e[std::size_t(s)] * (1 - 1e-12));
    for (int body = 0; body < 3; ++body)
      for (int c = 0; c < 3; ++c)
        EXPECT_NEAR(run.final_state.x(s, body, c), whole.final_state.x(s, body, c), 1e-9);
  }
  opt.integrator.method = Method::ias15;
  opt.megno = true;
  const auto chaos =
      run_stability(Space(), post, StabilitySetup(), opt, 20 * 75.74 / days_per_time_unit, 4);
  ASSERT_EQ(chaos.outcomes.megno.size(), 4u);
  for (int s = 0; s < 4; ++s) {
    EXPECT_NEAR(chaos.outcomes.megno[std::size_t(s)], 2.0, 0.5) << s;
    EXPECT_EQ(chaos.final_state.state(s), state_active);
  }
}

}  // namespace

namespace {
// Stability map over a and e of the outer of two Jupiter-mass planets (the inner at a = 1, e = 0):
// the grid's systems are the base system with just those two elements changed (checked against
// the elements read back), a = 1.25 is chaotic and a = 1.8 regular (REBOUND's WHFast + MEGNO on
// the same elements, M = 3 rad, dt = 2 pi / 50, 100 inner orbits: <Y> 12.6, 25.3, 19.2 at
// e = 0, 0.05, 0.1 and a = 1.25, Lyapunov times 25 to 57; 2.05, 1.97, 1.99 at a = 1.8), and
// both files hold the grid, x fastest.
TEST(NbodyStabilityMap, GridOverTwoElementsWithMegno) {
  HostEnsemble base(1, 3, 0);
  OrbitalElements inner, outer;
  outer.a = 1.5;
  outer.e = 0.1;
  outer.M = 3.0;
  set_system_from_elements(base, 0, 1.0, {1e-3, 1e-3}, {inner, outer}, ElementFrame::jacobi);
  StabilityMapSetup setup;
  setup.x = parse_map_axis("a:2:1.25:1.8:2");
  setup.y = parse_map_axis("e:2:0:0.1:3");
  const HostEnsemble grid = stability_map_ensemble(base, 0, setup);
  ASSERT_EQ(grid.n_systems(), 6);
  for (int iy = 0; iy < 3; ++iy)
    for (int ix = 0; ix < 2; ++ix) {
      const auto el = system_elements(grid, ix + 2 * iy, ElementFrame::jacobi);
      EXPECT_NEAR(el[1].a, ix == 0 ? 1.25 : 1.8, 1e-12);
      EXPECT_NEAR(el[1].e, 0.05 * iy, 1e-12);
      if (iy > 0) {  // (e = 0: M counts from the node instead)
        EXPECT_NEAR(el[1].M, 3.0, 1e-9);
      }
      EXPECT_NEAR(el[0].a, 1.0, 1e-12);
    }
  IntegrateOptions o;
  o.integrator.method = Method::whfast;
  o.integrator.dt = 2 * M_PI / 50;
  const StabilityMap map = run_stability_map(Space(), base, 0, setup, o, 2 * M_PI * 100);
  for (int iy = 0; iy < 3; ++iy) {
    std::printf("  e2 = %.2f: <Y> %.4g at a2 = 1.25 (Lyapunov time %.3g), %.4g at a2 = 1.8\n",
                0.05 * iy, map.megno[std::size_t(2 * iy)], map.lyapunov_time[std::size_t(2 * iy)],
                map.megno[std::size_t(2 * iy + 1)]);
    EXPECT_GT(map.megno[std::size_t(2 * iy)], 4.0);
    EXPECT_LT(map.lyapunov_time[std::size_t(2 * iy)], 300.0);
    EXPECT_NEAR(map.megno[std::size_t(2 * iy + 1)], 2.0, 0.15);
  }
  const std::string text = "stability_map_test.txt", h5 = "stability_map_test.h5";
  write_stability_map(text, map);
  std::ifstream in(text);
  std::string line;
  int rows = 0;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#' && line[0] != 'i') {
      std::istringstream row(line);
      int ix, iy;
      double x, y, megno;
      row >> ix >> iy >> x >> y >> megno;
      EXPECT_EQ(ix + 2 * iy, rows);
      EXPECT_NEAR(x, ix == 0 ? 1.25 : 1.8, 1e-15);
      EXPECT_EQ(megno, map.megno[std::size_t(rows)]);
      ++rows;
    }
  EXPECT_EQ(rows, 6);
  write_stability_map(h5, map);
  const kosmos::io::H5Reader file(h5);
  std::vector<std::size_t> dims;
  EXPECT_EQ(file.read<double>("megno", &dims), map.megno);
  EXPECT_EQ(dims, (std::vector<std::size_t>{3, 2}));
  std::remove(text.c_str());
  std::remove(h5.c_str());
}

TEST(NbodyStabilityMap, RefusesBadAxes) {
  HostEnsemble base(1, 3, 0);
  set_system_from_elements(base, 0, 1.0, {1e-3, 1e-3}, {OrbitalElements{}, OrbitalElements{1.5}},
                           ElementFrame::jacobi);
  for (const char* bad : {"a:2:1.3:1.8", "b:2:0:1:3", "a:0:1:2:3", "a:2:1:2:0", "a:2:x:2:3"})
    EXPECT_THROW(parse_map_axis(bad), kosmos::invalid_input) << bad;
  StabilityMapSetup setup;
  setup.y = parse_map_axis("e:2:0:0.1:2");
  for (const char* bad : {"a:3:1:2:2", "e:1:0:1:2", "a:1:-1:1:2", "mass:1:-1e-3:0:2"}) {
    setup.x = parse_map_axis(bad);
    EXPECT_THROW(stability_map_ensemble(base, 0, setup), kosmos::invalid_input) << bad;
  }
}
}  // namespace
