// IAS15-class integrator (Method::ias15) against independent references: the analytic two-body
// solution (Kepler's equation in long double), energy conservation on the outer solar system of
// Hairer, Lubich & Wanner (2006), per-system adaptive steps and step rejection.
#include "nbody_test_utils.hpp"

#include <test_spaces.hpp>

#include <cmath>
#include <cstdio>

namespace {
using namespace kosmos::nbody;
using nbody_test::Real;

template <class Space>
class IAS15 : public ::testing::Test {};
TYPED_TEST_SUITE(IAS15, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

IntegrateOptions ias15_options(double first_dt, double epsilon = 1e-9) {
  IntegrateOptions o = nbody_test::options_for(Method::ias15, first_dt);
  o.integrator.epsilon = epsilon;
  return o;
}

TYPED_TEST(IAS15, OuterSolarSystemEnergyToMachinePrecision) {
  // 2000 yr of the outer solar system in 0.4 s (a quick check before the 1e5-yr run below).
  const auto init = outer_solar_system(1);
  IntegrationReport rep;
  const double span = 2000 * 2 * M_PI;
  const auto out = nbody_test::run_on<TypeParam>(init, span, ias15_options(0.01), &rep);
  const Real e0 = nbody_test::energy_ld(init, 0);
  const double err = double(std::fabs((nbody_test::energy_ld(out, 0) - e0) / e0));
  std::printf("  outer solar system, 2000 yr: |dE/E| %.2e in %lld steps (last dt %.3f)\n", err,
              rep.steps, out.step(0));
  EXPECT_EQ(rep.reached_destination, 1);
  EXPECT_LE(err, 1e-14);
}

TYPED_TEST(IAS15, OuterSolarSystemEnergyOver1e5Years) {
  // The target: the outer solar system, first step 0.377 (then adaptive), 1e5 yr in one
  // call: |dE/E| <= 1e-14 (REBOUND's IAS15 on the same initial conditions: 1.4e-14 measured in
  // long double, the 5.4e-15 in double; Kosmos: 4.1e-15, perturbed copies 0.9e-15 to
  // 1.1e-14). About 300000 steps, a few seconds on one core.
  if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename TypeParam::memory_space>::accessible)
    GTEST_SKIP()
        << "one system is one GPU thread: 300000 sequential steps there take longer than "
           "the suite (measured on an H100: over 45 s, not finished); the same kernel runs "
           "this on the host spaces, and OuterSolarSystemEnergyToMachinePrecision and "
           "IAS15Cuda.SpecializationMatchesGenericKernel check it on the GPU";
  const auto init = outer_solar_system(1);
  IntegrationReport rep;
  const double span = 1e5 * 2 * M_PI;
  const auto out = nbody_test::run_on<TypeParam>(init, span, ias15_options(0.377), &rep);
  const Real e0 = nbody_test::energy_ld(init, 0);
  const double err = double(std::fabs((nbody_test::energy_ld(out, 0) - e0) / e0));
  std::printf("  outer solar system, 1e5 yr: |dE/E| %.2e in %lld steps\n", err, rep.steps);
  EXPECT_EQ(rep.reached_destination, 1);
  EXPECT_LE(err, 1e-14);
}

TYPED_TEST(IAS15, TwoBodyMatchesKeplersEquation) {
  // e = 0.5 to 100.3 periods and an e = 1.5 hyperbola: position and velocity errors <= 1e-10.
  for (const double e : {0.5, 1.5}) {
    const double m1 = 1e-3, M = 1 + m1;
    const double span = e < 1 ? 100.3 * 2 * M_PI / std::sqrt(M) : 30.0;
    IntegrationReport rep;
    const auto out = nbody_test::run_on<TypeParam>(nbody_test::two_body_ensemble(2, m1, e), span,
                                                   ias15_options(1e-3), &rep);
    Real r[3], v[3];
    nbody_test::kepler_orbit(M, e, span, r, v);
    double err = 0;
    for (int s = 0; s < 2; ++s) {
      EXPECT_EQ(out.state(s), state_active);
      EXPECT_EQ(out.time(s), span);
      for (int c = 0; c < 3; ++c) {
        err = std::fmax(err, double(std::fabs(Real(out.x(s, 1, c)) - Real(out.x(s, 0, c)) - r[c])));
        err = std::fmax(err, double(std::fabs(Real(out.v(s, 1, c)) - Real(out.v(s, 0, c)) - v[c])));
      }
    }
    std::printf("  two-body e = %.1f: max |error| %.2e, %lld steps\n", e, err, rep.steps);
    EXPECT_LE(err, 1e-10) << "e = " << e;
  }
}

TYPED_TEST(IAS15, EachSystemAdaptsItsOwnStepAndRecoversFromATooLargeOne) {
  // System 0: a circular orbit; system 1: e = 0.9. Started with dt = 3 (half a period: rejected
  // until the error estimate allows it), both must land exactly after 3 periods and keep energy
  // to 1e-13, and the eccentric one, back at pericenter, must carry a much smaller step.
  HostEnsemble init(2, 2);
  const auto circ = nbody_test::two_body_ensemble(1, 1e-3, 0.0),
             ecc = nbody_test::two_body_ensemble(1, 1e-3, 0.9);
  for (int b = 0; b < 2; ++b) {
    init.m(0, b) = circ.m(0, b);
    init.m(1, b) = ecc.m(0, b);
    for (int c = 0; c < 3; ++c) {
      init.x(0, b, c) = circ.x(0, b, c);
      init.v(0, b, c) = circ.v(0, b, c);
      init.x(1, b, c) = ecc.x(0, b, c);
      init.v(1, b, c) = ecc.v(0, b, c);
    }
  }
  IntegrationReport rep;
  const double span = 3 * 2 * M_PI / std::sqrt(1 + 1e-3);
  const auto out = nbody_test::run_on<TypeParam>(init, span, ias15_options(3.0), &rep);
  EXPECT_EQ(rep.reached_destination, 2);
  for (int s = 0; s < 2; ++s) {
    EXPECT_EQ(out.time(s), span);
    const Real e0 = nbody_test::energy_ld(init, s);
    EXPECT_LT(double(std::fabs((nbody_test::energy_ld(out, s) - e0) / e0)), 1e-13)
        << "system " << s;
  }
  std::printf("  carried steps: circular %.3e, e = 0.9 %.3e\n", out.step(0), out.step(1));
  EXPECT_LT(out.step(1), 0.5 * out.step(0));
}

TEST(IAS15Input, RejectsABadEpsilonAndDisablesACollision) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  auto ens = clone<Space::memory_space>(outer_solar_system(1));
  EXPECT_THROW(integrate(Space(), ens, 1.0, ias15_options(0.01, 0.0)), kosmos::invalid_input);
  EXPECT_THROW(integrate(Space(), ens, 1.0, ias15_options(0.01, std::nan(""))),
               kosmos::invalid_input);
  // A radial plunge into the star: the step collapses towards the collision and the system is
  // disabled (step_underflow) instead of spinning in place.
  HostEnsemble host(1, 2);
  host.m(0, 0) = 1;
  host.m(0, 1) = 1e-3;
  host.x(0, 1, 0) = 1;
  auto bad = clone<Space::memory_space>(host);
  const auto rep = integrate(Space(), bad, 10.0, ias15_options(0.01));
  const auto out = clone<Kokkos::HostSpace>(bad);
  std::printf("  radial plunge: state %s, reason %s\n", state_name(out.state(0)),
              reason_name(out.reason(0)));
  EXPECT_EQ(rep.disabled, 1);
  EXPECT_EQ(out.reason(0), reason_step_underflow);
  EXPECT_LT(out.time(0), 1.2);  // the collision is at t = pi / (2 sqrt(2 (1 + 1e-3))) = 1.11
}

#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
// The kernels' parameters for a run to `destination` in one launch, epsilon 1e-9.
Impl::IAS15Params one_launch_params(double destination, double first_dt) {
  Impl::IAS15Params p;
  p.destination = destination;
  p.pause = destination;  // the drivers set it; 0 would stop every system after one step
  p.dt = first_dt;
  p.step_factor = std::pow(5040 * 1e-9, 1.0 / 7);
  p.steps = 1 << 20;
  p.max_iterations = 1LL << 40;
  p.k = Impl::IAS15Constants::make();
  return p;
}
#endif

TEST(IAS15Cuda, SpecializationMatchesGenericKernel) {
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
  // 100 time units: ~60 adaptive steps, rejections included, in one launch.
  const Impl::IAS15Params p = one_launch_params(100, 0.1);
  nbody_test::expect_specialization_matches_generic(
      p.destination,
      [&](const auto& space, const auto& ens, const auto& it) {
        Impl::launch_ias15_system<5>(space, ens, it, p);
      },
      [&](const auto& space, const auto& ens, const auto& it) {
        Impl::launch_ias15_system_generic<5>(space, ens, it, p);
      });
#else
  GTEST_SKIP() << "the CUDA IAS15 specialization is not compiled in this build";
#endif
}

TEST(IAS15Cuda, LanePerBodyMatchesGenericWithMonitorsAndTwoBodies) {
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
  // Two bodies (lane groups of 2) with the collision monitor on: even systems on a circular
  // orbit reach t = 5, odd ones plunge radially into the star and stop at contact (t ~ 1.1).
  // The specialization (a lane per body, monitors on the gathered system) against the generic
  // system-per-thread kernel on the GPU.
  constexpr int n_sys = 64;
  const auto circular = nbody_test::two_body_ensemble(1, 1e-3, 0.0);
  HostEnsemble init(n_sys, 2);
  for (int s = 0; s < n_sys; ++s)
    for (int b = 0; b < 2; ++b) {
      init.m(s, b) = circular.m(0, b);
      for (int c = 0; c < 3; ++c) {
        init.x(s, b, c) = s % 2 ? (b == 1 && c == 0 ? 1.0 + 1e-3 * s : 0.0) : circular.x(0, b, c);
        init.v(s, b, c) = s % 2 ? 0.0 : circular.v(0, b, c);
      }
    }
  Impl::IAS15Params p = one_launch_params(5, 0.01);
  p.monitor.config.radius[0] = p.monitor.config.radius[1] = 0.05;
  p.monitor.on = true;
  using Mem = Kokkos::CudaSpace;
  auto lanes = clone<Mem>(init), generic = clone<Mem>(init);
  Kokkos::View<long long*, Mem> it_lanes("it_lanes", n_sys), it_generic("it_generic", n_sys);
  Impl::launch_ias15_system<2>(Kokkos::Cuda(), lanes, it_lanes, p);
  Impl::launch_ias15_system_generic<2>(Kokkos::Cuda(), generic, it_generic, p);
  const auto a = clone<Kokkos::HostSpace>(lanes), b = clone<Kokkos::HostSpace>(generic);
  for (int s = 0; s < n_sys; ++s) {
    EXPECT_EQ(a.state(s), s % 2 ? state_inactive : state_active) << "system " << s;
    EXPECT_EQ(a.reason(s), s % 2 ? reason_collision : reason_none) << "system " << s;
    EXPECT_EQ(a.state(s), b.state(s)) << "system " << s;
    EXPECT_EQ(a.reason(s), b.reason(s)) << "system " << s;
    EXPECT_NEAR(a.time(s), b.time(s), 1e-9) << "system " << s;
    double dx, dv;
    nbody_test::max_difference(a, b, s, dx, dv);
    EXPECT_LT(dx, 1e-9) << "system " << s;
    EXPECT_LT(dv, 1e-8) << "system " << s;
  }
#else
  GTEST_SKIP() << "the CUDA IAS15 specialization is not compiled in this build";
#endif
}

}  // namespace
