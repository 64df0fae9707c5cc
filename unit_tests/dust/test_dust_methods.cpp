// The two stage-3 methods against an independent long-double bisection of the energy balance:
// Newton stops at the energy tolerance (1e-3: T to ~2e-4), the 2000-point table is limited by its
// interpolation only. The measured worst errors are printed for the README.
#include "dust_test_problem.hpp"

#include <test_spaces.hpp>

#include <cmath>
#include <cstdio>

namespace {
using namespace dust_test;
using kosmos::dust::SolverOptions;
using kosmos::dust::TemperatureMethod;

template <class Space>
class DustMethodTest : public ::testing::Test {};
TYPED_TEST_SUITE(DustMethodTest, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

// Worst |T / T_ref - 1| over the problem's (cell, species).
template <class Space>
double worst_error(const Problem& p, TemperatureMethod method) {
  SolverOptions o;
  o.method = method;
  const auto r = run<double, Space>(p, o);
  double worst = 0;
  for (int c = 0; c < p.nc(); ++c)
    for (int s = 0; s < p.ns(); ++s) {
      EXPECT_EQ(r.st(c, s), kosmos::dust::status_converged) << c << ' ' << s;
      const double t_ref = bisect_temperature(p, s, heating_ref(p, c, s));
      worst = std::max(worst, std::fabs(double(r.t(c, s)) / t_ref - 1));
    }
  return worst;
}

TYPED_TEST(DustMethodTest, TableIsMoreAccurateThanNewtonAtTheDefaultTolerance) {
  using Space = TypeParam;
  const auto p = graphite_problem(121, 6, 10, 5);  // 14 radii 0.001-10 micron, U = 0.1-1e4
  const double newton = worst_error<Space>(p, TemperatureMethod::newton);
  const double table = worst_error<Space>(p, TemperatureMethod::table);
  std::printf("worst relative temperature error: newton %.3e, table %.3e\n", newton, table);
  EXPECT_LE(newton, 3e-4);
  EXPECT_LE(table, 2e-5);
  EXPECT_LT(table, newton);
}
}  // namespace
