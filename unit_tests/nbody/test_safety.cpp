// No silent failures (issue #11): each bad input that used to finish "active" with garbage, or to
// do nothing, now ends with a per-system status or a clear error. References: the long-double
// energy of nbody_test::energy_ld, the Kepler solution, exact step counts and exact times.
#include "nbody_test_utils.hpp"

#include <test_spaces.hpp>

#include <cmath>
#include <vector>

namespace {
using namespace kosmos::nbody;
using nbody_test::Real;
using WM = IntegratorConfig::WorkModel;

template <class Space>
class NbodySafety : public ::testing::Test {};
TYPED_TEST_SUITE(NbodySafety, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

struct Case {
  Method method;
  WM model;
  double dt;
};
// Every integrator in every work model that can run it.
const Case every_integrator[] = {{Method::hermite, WM::team, 1e-3},
                                 {Method::hermite, WM::system_per_thread, 1e-3},
                                 {Method::hermite_adaptive, WM::team, 1e-3},
                                 {Method::hermite_adaptive, WM::system_per_thread, 1e-3},
                                 {Method::rkck, WM::team, 1e-3},
                                 {Method::rkck_adaptive, WM::team, 1e-3},
                                 {Method::mvs, WM::team, 1e-3},
                                 {Method::verlet, WM::team, 1e-3},
                                 {Method::whfast, WM::team, 1e-3},
                                 {Method::ias15, WM::team, 1e-3}};
// The fixed-step Hermite in both work models and WHFast (checks that count steps exactly).
const Case fixed_step_drivers[] = {{Method::hermite, WM::team, 1e-3},
                                   {Method::hermite, WM::system_per_thread, 1e-3},
                                   {Method::whfast, WM::team, 1e-3}};

IntegrateOptions options_for(const Case& c) {
  auto o = nbody_test::options_for(c.method, c.dt,
                                   c.method == Method::hermite_adaptive ? 1.7e-2 : 0, 1e-12);
  o.integrator.work_model = c.model;
  o.integrator.steps_per_launch = 500;
  return o;
}

std::string name_of(const Case& c) {
  return std::string(method_name(c.method)) +
         (c.model == WM::system_per_thread ? " (registers)" : "");
}

Real relative_energy_error(const HostEnsemble& before, const HostEnsemble& after, int s) {
  const Real e0 = nbody_test::energy_ld(before, s);
  return std::fabs((nbody_test::energy_ld(after, s) - e0) / e0);
}

// Two planets 1e-10 apart (they used to finish "active" with |dE/E| up to 7e22): every integrator
// stops the system with a reason; the healthy system beside it reaches the destination.
template <class Space>
void check_near_coincident_bodies() {
  auto host = generate_planetary_ensemble(2, 3, 1e-3, 0.4, 0);
  for (int c = 0; c < 3; ++c) {
    host.x(1, 2, c) = host.x(1, 1, c);
    host.v(1, 2, c) = host.v(1, 1, c);
  }
  host.x(1, 2, 1) += 1e-10;
  for (const Case& c : every_integrator) {
    IntegrationReport rep;
    const auto out = nbody_test::run_on<Space>(host, 1.0, options_for(c), &rep);
    EXPECT_EQ(out.state(0), state_active) << name_of(c);
    EXPECT_EQ(out.time(0), 1.0) << name_of(c);
    EXPECT_EQ(out.state(1), state_disabled) << name_of(c) << ": " << reason_name(out.reason(1));
    EXPECT_NE(out.reason(1), reason_none) << name_of(c);
    EXPECT_EQ(rep.disabled, 1) << name_of(c);
  }
}
TYPED_TEST(NbodySafety, NearCoincidentBodiesAreDisabled) {
  check_near_coincident_bodies<TypeParam>();
}

// A head-on collision of two planets. Without radii, every integrator either stops the system or
// really conserves energy to the sanity limit (the old failure: "active" with |dE/E| up to 473).
// With radii, every integrator stops it as a collision, before the bodies pass each other.
template <class Space>
void check_head_on_collision() {
  auto host = generate_planetary_ensemble(2, 3, 1e-3, 0.4, 0);
  host.x(1, 2, 0) = 1.0;  // planet 2 at (1, 0.2) moving down onto planet 1 at (1, 0) moving up
  host.x(1, 2, 1) = 0.2;
  host.v(1, 2, 0) = 0;
  host.v(1, 2, 1) = -1.0;
  for (const Case& c : every_integrator) {
    IntegrateOptions opt = options_for(c);
    const auto free = nbody_test::run_on<Space>(host, 0.5, opt);
    EXPECT_EQ(free.state(0), state_active) << name_of(c);
    if (free.state(1) == state_active)
      EXPECT_LT(relative_energy_error(host, free, 1), opt.monitor.energy_error_limit) << name_of(c);
    else
      EXPECT_NE(free.reason(1), reason_none) << name_of(c);
    if (c.model == WM::system_per_thread) continue;  // no stop conditions in registers (see below)
    for (int b = 0; b < 3; ++b) opt.monitor.radius[b] = 5e-3;
    const auto stopped = nbody_test::run_on<Space>(host, 0.5, opt);
    EXPECT_EQ(stopped.state(0), state_active) << name_of(c);
    EXPECT_EQ(stopped.state(1), state_inactive)
        << name_of(c) << ": " << reason_name(stopped.reason(1));
    EXPECT_EQ(stopped.reason(1), reason_collision) << name_of(c);
    EXPECT_GT(stopped.time(1), 0.05) << name_of(c);
    EXPECT_LT(stopped.time(1), 0.15) << name_of(c);
    const double gap = std::hypot(stopped.x(1, 2, 0) - stopped.x(1, 1, 0),
                                  stopped.x(1, 2, 1) - stopped.x(1, 1, 1));
    EXPECT_LT(gap, 1e-2) << name_of(c);
  }
  // The register Hermite has no stop conditions: asking for radii there is a clear error.
  IntegrateOptions opt = options_for(every_integrator[1]);
  opt.monitor.radius[1] = 1e-3;
  auto dev = clone<typename Space::memory_space>(host);
  EXPECT_THROW(integrate(Space(), dev, 0.5, opt), kosmos::invalid_input);
  opt.monitor.radius[1] = -1;
  opt.integrator.work_model = WM::team;
  EXPECT_THROW(integrate(Space(), dev, 0.5, opt), kosmos::invalid_input);
}
TYPED_TEST(NbodySafety, HeadOnCollisionsStopOrConserveEnergy) {
  check_head_on_collision<TypeParam>();
}

// The energy-sanity limit means what it says: a run whose drift D is measured independently (long
// double) is disabled under the limit D / 2 and stays active under 2 D (one launch, one check).
template <class Space>
void check_energy_limit() {
  const auto host = nbody_test::two_body_ensemble(1, 1e-3, 0.6);
  auto opt = nbody_test::options_for(Method::verlet, 2e-2);
  opt.monitor.energy_error_limit = 0;
  const auto free = nbody_test::run_on<Space>(host, 2.0, opt);
  const double drift = double(relative_energy_error(host, free, 0));
  ASSERT_GT(drift, 1e-8);
  opt.monitor.energy_error_limit = drift / 2;
  auto out = nbody_test::run_on<Space>(host, 2.0, opt);
  EXPECT_EQ(out.state(0), state_disabled);
  EXPECT_EQ(out.reason(0), reason_energy_error);
  opt.monitor.energy_error_limit = 2 * drift;
  out = nbody_test::run_on<Space>(host, 2.0, opt);
  EXPECT_EQ(out.state(0), state_active);
  // A reference energy given by the caller (a run continued from a checkpoint) is the one used.
  opt.reference_energy = {double(nbody_test::energy_ld(host, 0)) * (1 + 10 * drift)};
  out = nbody_test::run_on<Space>(host, 2.0, opt);
  EXPECT_EQ(out.reason(0), reason_energy_error);
  opt.reference_energy = {1.0, 2.0};
  auto dev = clone<typename Space::memory_space>(host);
  EXPECT_THROW(integrate(Space(), dev, 2.0, opt), kosmos::invalid_input);
  // The system-per-thread drivers run the same check: against a reference 1e-3 off the true
  // energy (long double), a limit of 1e-4 disables the system; against the true energy it does not.
  const auto planets = generate_planetary_ensemble(1, 3, 1e-3, 0.4, 0);
  const double e0 = double(nbody_test::energy_ld(planets, 0));
  for (const Case& c : {Case{Method::whfast, WM::team, 1e-2}, Case{Method::ias15, WM::team, 1e-3},
                        Case{Method::hermite, WM::system_per_thread, 1e-3}}) {
    auto o = options_for(c);
    o.monitor.energy_error_limit = 1e-4;
    o.reference_energy = {e0 * (1 + 1e-3)};
    out = nbody_test::run_on<Space>(planets, 1.0, o);
    EXPECT_EQ(out.state(0), state_disabled) << name_of(c);
    EXPECT_EQ(out.reason(0), reason_energy_error) << name_of(c);
    o.reference_energy = {e0};
    out = nbody_test::run_on<Space>(planets, 1.0, o);
    EXPECT_EQ(out.state(0), state_active) << name_of(c) << ": " << reason_name(out.reason(0));
  }
}
TYPED_TEST(NbodySafety, EnergyLimitDisablesDriftingSystems) {
  check_energy_limit<TypeParam>();
}

// Time far beyond the step: from t = 1e16 (ulp 2), steps of 1/64 in launches of 8 steps (1/8 of
// a time unit per launch, below half an ulp): the compensated time survives between launches, so
// the destination 1e16 + 16 is reached after exactly 1024 steps, at the right orbital phase.
template <class Space>
void check_time_far_from_zero() {
  auto host = nbody_test::two_body_ensemble(1, 1e-3, 0.0);
  const double t0 = 1e16, T = 16;
  host.time(0) = t0;
  for (const Case& c : fixed_step_drivers) {
    auto opt = options_for(c);
    opt.integrator.dt = 1.0 / 64;
    opt.integrator.steps_per_launch = 8;
    IntegrationReport rep;
    const auto out = nbody_test::run_on<Space>(host, t0 + T, opt, &rep);
    EXPECT_EQ(out.time(0), t0 + T) << name_of(c);
    EXPECT_EQ(rep.steps, 1024) << name_of(c);
    EXPECT_EQ(rep.reached_destination, 1) << name_of(c);
    Real r[3], v[3];
    nbody_test::kepler_orbit(1 + 1e-3L, 0, T, r, v);
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(out.x(0, 1, k) - out.x(0, 0, k), double(r[k]), 1e-6) << name_of(c);
  }
}
TYPED_TEST(NbodySafety, CompensatedTimeAdvancesFarFromZero) {
  check_time_far_from_zero<TypeParam>();
}

// The iteration budget spans calls: steps taken before (prior_iterations) count against it.
template <class Space>
void check_iteration_budget_across_calls() {
  const auto host = generate_planetary_ensemble(2, 3);
  for (const Case& c : fixed_step_drivers) {
    auto opt = options_for(c);
    opt.integrator.max_iterations = 1000;
    opt.prior_iterations = {900, 0};
    IntegrationReport rep;
    const auto out = nbody_test::run_on<Space>(host, 1.0, opt, &rep);
    EXPECT_EQ(rep.steps, 1100) << name_of(c);
    ASSERT_EQ(rep.iterations.size(), 2u) << name_of(c);
    EXPECT_EQ(rep.iterations[0], 1000) << name_of(c);
    EXPECT_EQ(rep.iterations[1], 1000) << name_of(c);
    EXPECT_EQ(rep.unfinished, 1) << name_of(c);
    EXPECT_NEAR(out.time(0), 0.1, 1e-12) << name_of(c);
    EXPECT_EQ(out.time(1), 1.0) << name_of(c);
    opt.prior_iterations = {-1, 0};
    auto dev = clone<typename Space::memory_space>(host);
    EXPECT_THROW(integrate(Space(), dev, 1.0, opt), kosmos::invalid_input);
  }
}
TYPED_TEST(NbodySafety, IterationBudgetSpansCalls) {
  check_iteration_budget_across_calls<TypeParam>();
}

// A destination before a system's time (e.g. negative) is refused, not silently ignored.
template <class Space>
void check_backward_destination() {
  auto dev = clone<typename Space::memory_space>(generate_planetary_ensemble(2, 3));
  EXPECT_THROW(integrate(Space(), dev, -1.0), kosmos::invalid_input);
  integrate(Space(), dev, 0.5, nbody_test::options_for(Method::hermite, 1e-3));
  EXPECT_THROW(integrate(Space(), dev, 0.25), kosmos::invalid_input);
  EXPECT_NO_THROW(integrate(Space(), dev, 0.5));  // already there: nothing to do
}
TYPED_TEST(NbodySafety, BackwardDestinationsAreRefused) {
  check_backward_destination<TypeParam>();
}

// MVS and WHFast split off body 0's Kepler motion: with the star listed second it used to lose
// 1000x accuracy silently; now the system is disabled with reason central_not_first, while Hermite
// (no central body) integrates it.
template <class Space>
void check_central_body_first() {
  auto host = generate_planetary_ensemble(2, 3, 1e-3, 0.4, 3);
  for (int k = 0; k < 7; ++k) {  // swap star and planet 1 in system 1
    double* a = k < 3 ? &host.x(1, 0, k) : k < 6 ? &host.v(1, 0, k - 3) : &host.m(1, 0);
    double* b = k < 3 ? &host.x(1, 1, k) : k < 6 ? &host.v(1, 1, k - 3) : &host.m(1, 1);
    std::swap(*a, *b);
  }
  IntegrationReport rep;
  for (Method method : {Method::mvs, Method::whfast}) {
    const auto out =
        nbody_test::run_on<Space>(host, 1.0, nbody_test::options_for(method, 1e-2), &rep);
    EXPECT_EQ(out.state(0), state_active) << method_name(method);
    EXPECT_EQ(out.state(1), state_disabled) << method_name(method);
    EXPECT_EQ(out.reason(1), reason_central_not_first) << method_name(method);
    EXPECT_EQ(out.time(1), 0.0) << method_name(method);
  }
  nbody_test::run_on<Space>(host, 1.0, nbody_test::options_for(Method::hermite, 1e-3), &rep);
  EXPECT_EQ(rep.reached_destination, 2);
}
TYPED_TEST(NbodySafety, MVSNeedsTheCentralBodyFirst) {
  check_central_body_first<TypeParam>();
}

// Test particles (massless bodies): a particle added to a star-planet system changes nothing for
// the massive bodies (bit for bit), follows the Kepler solution when alone with the star, and two
// coincident particles are fine (their pair is skipped).
template <class Space>
void check_test_particles() {
  auto massive = generate_planetary_ensemble(1, 2, 1e-3, 0.4, 0);
  HostEnsemble with_particles(1, 4);
  for (int b = 0; b < 4; ++b) {
    const int src = b < 2 ? b : 1;
    with_particles.m(0, b) = b < 2 ? massive.m(0, b) : 0.0;
    for (int c = 0; c < 3; ++c) {
      with_particles.x(0, b, c) = massive.x(0, src, c) * (b < 2 ? 1.0 : 2.0);
      with_particles.v(0, b, c) = massive.v(0, src, c) / (b < 2 ? 1.0 : std::sqrt(2.0));
    }
  }
  for (const Case& c : every_integrator) {
    const auto opt = options_for(c);
    const auto a = nbody_test::run_on<Space>(massive, 2.0, opt);
    const auto b = nbody_test::run_on<Space>(with_particles, 2.0, opt);
    EXPECT_EQ(b.state(0), state_active) << name_of(c) << ": " << reason_name(b.reason(0));
    // Adaptive steps also resolve the particles' orbits, so only fixed steps compare bit for bit.
    const bool fixed_step = c.method != Method::hermite_adaptive &&
                            c.method != Method::rkck_adaptive && c.method != Method::ias15;
    for (int body = 0; body < 2 && fixed_step; ++body)
      for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(a.x(0, body, k), b.x(0, body, k)) << name_of(c);
        EXPECT_EQ(a.v(0, body, k), b.v(0, body, k)) << name_of(c);
      }
    // The two particles started together and stay together.
    for (int k = 0; k < 3; ++k) EXPECT_EQ(b.x(0, 2, k), b.x(0, 3, k)) << name_of(c);
  }
  // Alone with the star: the Kepler orbit about mu = m_star.
  const auto lone = nbody_test::two_body_ensemble(1, 0.0, 0.5);
  const auto out =
      nbody_test::run_on<Space>(lone, 3.0, nbody_test::options_for(Method::hermite, 1e-3));
  Real r[3], v[3];
  nbody_test::kepler_orbit(1, 0.5, 3.0, r, v);
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(out.x(0, 0, c), 0.0);
    EXPECT_NEAR(out.x(0, 1, c), double(r[c]), 1e-9);
    EXPECT_NEAR(out.v(0, 1, c), double(v[c]), 1e-9);
  }
  // A system of massless bodies only is meaningless: disabled.
  auto empty = lone;
  empty.m(0, 0) = 0;
  const auto none =
      nbody_test::run_on<Space>(empty, 1.0, nbody_test::options_for(Method::hermite, 1e-3));
  EXPECT_EQ(none.reason(0), reason_nonpositive_mass);
}
TYPED_TEST(NbodySafety, TestParticlesExertNoForce) {
  check_test_particles<TypeParam>();
}

}  // namespace
