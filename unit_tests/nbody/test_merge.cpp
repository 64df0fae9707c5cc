// Merging on collision (issue #11 item 5, MonitorConfig::on_collision = merge). References:
// conservation of mass and momentum, the analytic centre-of-mass motion of an isolated pair, the
// long-double energy of nbody_test::energy_ld and the pair's internal energy from the initial
// state.
#include "nbody_test_utils.hpp"

#include <test_spaces.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace {
using namespace kosmos::nbody;
using nbody_test::Real;

template <class Space>
class NbodyMerge : public ::testing::Test {};
TYPED_TEST_SUITE(NbodyMerge, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

struct MergeCase {
  Method method;
  double dt;
  double energy_tolerance;  // |E + offset - E0| / |E0| after the three-body run (the integrator's
                            // order)
};
// Every integrator that merges.
const MergeCase merging_integrators[] = {
    {Method::hermite, 1e-3, 1e-9}, {Method::hermite_adaptive, 1e-3, 1e-9},
    {Method::rkck, 1e-3, 1e-9},    {Method::rkck_adaptive, 1e-3, 1e-9},
    {Method::verlet, 1e-4, 1e-6},  {Method::ias15, 1e-3, 1e-12}};

IntegrateOptions merge_options(const MergeCase& c, double radius) {
  auto o = nbody_test::options_for(c.method, c.dt, c.method == Method::hermite_adaptive ? 2e-3 : 0,
                                   1e-12);
  for (int b = 0; b < 3; ++b) o.monitor.radius[b] = radius;
  o.monitor.on_collision = CollisionResponse::merge;
  return o;
}

// Two bodies (m = 2 and 1, no star) approaching head-on along x, plus a far body of mass 0 (a test
// particle: it must not feel the removed body either). The pair merges into body 0: mass 3,
// momentum and the centre of mass moving uniformly; body 1 removed (mass 0, velocity 0).
template <class Space>
void check_head_on_merge() {
  HostEnsemble host(1, 3);
  const double m[3] = {2, 1, 0};
  const double x[3] = {-0.5, 0.5, 50}, vx[3] = {0.3, -0.6, 0}, vy[3] = {0.1, 0.05, 0.2};
  for (int b = 0; b < 3; ++b) {
    host.m(0, b) = m[b];
    host.x(0, b, 0) = x[b];
    host.v(0, b, 0) = vx[b];
    host.v(0, b, 1) = vy[b];
  }
  const double radius = 0.2, t_end = 3;
  // Analytic: centre of mass and momentum of the pair; its internal energy (relative orbit, kept
  // by the integrator up to the merge) is what the merge takes out.
  const Real M = 3, P[2] = {2 * 0.3L - 0.6L, 2 * 0.1L + 0.05L};
  const Real X0[2] = {(2 * -0.5L + 0.5L) / M, 0};
  const Real mu = Real(2) / 3, rel_v2 = 0.9L * 0.9L + 0.05L * 0.05L;
  const Real internal_energy = mu * rel_v2 / 2 - 2 / Real(1);
  for (const MergeCase& c : merging_integrators) {
    const std::string name = method_name(c.method);
    IntegrationReport rep;
    const auto out = nbody_test::run_on<Space>(host, t_end, merge_options(c, radius), &rep);
    ASSERT_EQ(out.state(0), state_active) << name << ": " << reason_name(out.reason(0));
    EXPECT_EQ(out.time(0), t_end) << name;
    EXPECT_EQ(out.m(0, 0), 3.0) << name;
    EXPECT_EQ(out.m(0, 1), 0.0) << name;
    EXPECT_EQ(out.m(0, 2), 0.0) << name;
    for (int k = 0; k < 2; ++k) {
      EXPECT_NEAR(out.m(0, 0) * out.v(0, 0, k), double(P[k]), 1e-13) << name << " momentum " << k;
      EXPECT_NEAR(out.x(0, 0, k), double(X0[k] + P[k] / M * t_end), 1e-12)
          << name << " centre of mass " << k;
      EXPECT_EQ(out.v(0, 1, k), 0.0) << name;
    }
    // The test particle felt only the merged body: a tiny tug, nothing near an infinite force.
    EXPECT_TRUE(std::isfinite(out.x(0, 2, 0)) && std::fabs(out.x(0, 2, 1) - 0.2 * t_end) < 1e-2)
        << name;
    ASSERT_EQ(rep.removed.size(), 1u) << name;
    EXPECT_EQ(rep.removed[0], 1 << 1) << name;
    ASSERT_EQ(rep.radii.size(), 3u) << name;
    EXPECT_NEAR(rep.radii[0], std::cbrt(2 * radius * radius * radius), 1e-15) << name;
    EXPECT_EQ(rep.radii[1], 0.0) << name;
    ASSERT_EQ(rep.energy_offset.size(), 1u) << name;
    EXPECT_NEAR(rep.energy_offset[0], double(internal_energy),
                c.energy_tolerance * std::fabs(double(internal_energy)))
        << name;
  }
}
TYPED_TEST(NbodyMerge, HeadOnPairMergesIntoTheCentreOfMass) {
  check_head_on_merge<TypeParam>();
}

// A star and two planets (m = 1e-3 and 2e-3) on paths that meet at t ~ 0.1.
HostEnsemble star_and_two_planets() {
  HostEnsemble host(1, 3);
  host.m(0, 0) = 1;
  host.m(0, 1) = 1e-3;
  host.m(0, 2) = 2e-3;
  host.x(0, 1, 0) = 1;
  host.v(0, 1, 1) = 1;
  host.x(0, 2, 0) = 1.2;
  host.v(0, 2, 0) = -1;
  host.v(0, 2, 1) = 1;
  return host;
}

// A star and two planets (m = 1e-3 and 2e-3, radii 0.05) that meet at t ~ 0.1; the merged planet
// goes on on an eccentric orbit. The energy the merge took out (energy_offset) accounts for the
// jump, so the energy check (limit 1e-5) keeps the system active and E + offset stays at E0 to the
// integrator's accuracy, while E alone is off by far more.
template <class Space>
void check_three_body_merge() {
  const HostEnsemble host = star_and_two_planets();
  const Real e0 = nbody_test::energy_ld(host, 0);
  for (const MergeCase& c : merging_integrators) {
    const std::string name = method_name(c.method);
    auto opt = merge_options(c, 0.05);
    opt.monitor.energy_error_limit = 1e-5;
    IntegrationReport rep;
    const auto out = nbody_test::run_on<Space>(host, 2.0, opt, &rep);
    ASSERT_EQ(out.state(0), state_active) << name << ": " << reason_name(out.reason(0));
    EXPECT_EQ(rep.removed[0], 1 << 1) << name;  // the lighter planet merged into the heavier
    EXPECT_EQ(out.m(0, 2), 3e-3) << name;
    const Real e1 = nbody_test::energy_ld(out, 0);
    EXPECT_GT(std::fabs((e1 - e0) / e0), 1e-2) << name << ": the merge took energy out";
    EXPECT_LT(std::fabs((e1 + rep.energy_offset[0] - e0) / e0), c.energy_tolerance) << name;
    // Split into two calls, carrying the merge state, the run ends in the same place.
    auto dev = clone<typename Space::memory_space>(host);
    const auto first = integrate(Space(), dev, 1.0, opt);
    opt.energy_offset = first.energy_offset;
    opt.removed = first.removed;
    opt.radii = first.radii;
    const auto second = integrate(Space(), dev, 2.0, opt);
    const auto split = clone<Kokkos::HostSpace>(dev);
    EXPECT_EQ(split.state(0), state_active) << name;
    EXPECT_EQ(second.removed[0], 1 << 1) << name;
    EXPECT_NEAR(second.energy_offset[0], rep.energy_offset[0], 1e-12) << name;
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(split.x(0, 2, k), out.x(0, 2, k), 1e-6) << name;
  }
}
TYPED_TEST(NbodyMerge, ThreeBodyMergeKeepsEnergyWithTheOffset) {
  check_three_body_merge<TypeParam>();
}

// The default response still stops the system at the collision, nothing merged.
template <class Space>
void check_stop_still_stops() {
  const HostEnsemble host = star_and_two_planets();
  auto opt = merge_options(merging_integrators[0], 5e-3);
  opt.monitor.on_collision = CollisionResponse::stop;
  IntegrationReport rep;
  const auto out = nbody_test::run_on<Space>(host, 2.0, opt, &rep);
  EXPECT_EQ(out.state(0), state_inactive);
  EXPECT_EQ(out.reason(0), reason_collision);
  EXPECT_LT(out.time(0), 0.2);
  EXPECT_EQ(out.m(0, 1), 1e-3);
  EXPECT_TRUE(rep.removed.empty() && rep.energy_offset.empty());
}
TYPED_TEST(NbodyMerge, StopStillStops) {
  check_stop_still_stops<TypeParam>();
}

// Bad values: an unknown response, and merging with an integrator that cannot merge, are clear
// errors naming the value.
template <class Space>
void check_bad_merge_requests() {
  try {
    collision_response_from_name("bounce");
    ADD_FAILURE() << "no error for 'bounce'";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("'bounce'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(collision_response_from_name("merge"), CollisionResponse::merge);
  auto dev = clone<typename Space::memory_space>(generate_planetary_ensemble(1, 3));
  for (Method method : {Method::mvs, Method::whfast}) {
    auto opt = merge_options({method, 1e-3, 0}, 1e-3);
    try {
      integrate(Space(), dev, 0.1, opt);
      ADD_FAILURE() << "no error for merge with " << method_name(method);
    } catch (const kosmos::invalid_input& e) {
      EXPECT_NE(std::string(e.what()).find(method_name(method)), std::string::npos) << e.what();
    }
  }
  auto opt = merge_options(merging_integrators[0], 1e-3);
  opt.removed = {0, 0};  // two values for one system
  EXPECT_THROW(integrate(Space(), dev, 0.1, opt), kosmos::invalid_input);
}
TYPED_TEST(NbodyMerge, BadMergeRequestsAreClearErrors) {
  check_bad_merge_requests<TypeParam>();
}

}  // namespace
