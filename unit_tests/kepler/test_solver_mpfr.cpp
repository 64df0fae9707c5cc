// Huge mean anomalies: the range reduction against MPFR's exact fmod (2 pi to 2400 bits), and
// the batched solvers' E for |M| up to the largest double / float, against the long-double
// reference solution of the exactly reduced M.
#include <kosmos/kepler/solver.hpp>

#include <kepler/solver_reference.hpp>
#include <test_spaces.hpp>

#include <mpfr.h>

#include <cfloat>
#include <random>
#include <vector>

namespace {
using kosmos_test::LD;

// M mod 2 pi in [0, 2pi), exact to far below long double's precision.
LD reduce_exact(double M) {
  mpfr_t two_pi, x, r;
  mpfr_inits2(2400, two_pi, x, r, static_cast<mpfr_ptr>(nullptr));
  mpfr_const_pi(two_pi, MPFR_RNDN);
  mpfr_mul_2ui(two_pi, two_pi, 1, MPFR_RNDN);
  mpfr_set_d(x, M, MPFR_RNDN);  // exact
  mpfr_fmod(r, x, two_pi, MPFR_RNDN);
  if (mpfr_sgn(r) < 0) mpfr_add(r, r, two_pi, MPFR_RNDN);
  const LD out = mpfr_get_ld(r, MPFR_RNDN);
  mpfr_clears(two_pi, x, r, static_cast<mpfr_ptr>(nullptr));
  return out;
}

// |M| log-uniform over [2^10, largest finite T] and a few values at the thresholds, both signs
// (all exactly representable in T).
template <class T>
std::vector<double> huge_inputs(int n) {
  std::mt19937_64 rng(2026);
  const double top = std::log2(double(std::numeric_limits<T>::max()));
  std::uniform_real_distribution<double> u(10.0, top);
  std::vector<double> M;
  for (double m :
       {double(std::numeric_limits<T>::max()), 1e18, 1e10, 4.5e15, 1125899906842624.0, 1048576.0}) {
    M.push_back(double(T(m)));  // exactly representable in T
    M.push_back(-double(T(m)));
  }
  while (int(M.size()) < n) {
    const double m = double(T(std::exp2(u(rng))));
    M.push_back(M.size() % 2 ? -m : m);
  }
  return M;
}

TEST(KeplerRangeReduction, AnyFiniteDoubleMatchesMpfr) {
  for (double M : huge_inputs<double>(20000)) {
    const double r = kosmos::kepler::reduce_mean_anomaly(M);
    ASSERT_TRUE(r >= 0 && r < 6.283185307179586) << M;
    EXPECT_LE(double(kosmos_test::angle_distance(LD(r), reduce_exact(M))), 1.8e-15)
        << M;  // 2 ulp of 2 pi
  }
}

TEST(KeplerRangeReduction, AnyFiniteFloatMatchesMpfr) {
  for (double M : huge_inputs<float>(20000)) {
    const float r = kosmos::kepler::reduce_mean_anomaly(float(M));
    ASSERT_TRUE(r >= 0 && r < 6.2831855f) << M;
    EXPECT_LE(double(kosmos_test::angle_distance(LD(r), reduce_exact(M))), 4.8e-7)
        << M;  // 1 ulp of 2 pi
  }
}

template <class Space>
class KeplerHugeAnomalyTest : public ::testing::Test {};
TYPED_TEST_SUITE(KeplerHugeAnomalyTest, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

// Before the exact reduction, |M| >= 1e18 (double) or 1e10 (float) gave a wrong E with status
// `converged`; now every finite M is solved to the documented accuracy.
template <class Space, class T>
void check_huge(kosmos::kepler::Solver solver, double bound) {
  const std::vector<double> M = huge_inputs<T>(4000);
  const int n = int(M.size());
  Kokkos::View<T*, Space> dM("M", n), de("e", n), E("E", n);
  Kokkos::View<std::uint8_t*, Space> status("status", n);
  auto hM = Kokkos::create_mirror_view(dM);
  auto he = Kokkos::create_mirror_view(de);
  for (int i = 0; i < n; ++i) {
    hM(i) = T(M[i]);
    he(i) = T(0.05 + 0.9 * (i % 19) / 18.0);
  }
  Kokkos::deep_copy(dM, hM);
  Kokkos::deep_copy(de, he);
  kosmos::kepler::SolverOptions options;
  options.solver = solver;
  kosmos::kepler::solve(Space(), dM, de, E, status, options);
  auto hE = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), E);
  auto hst = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), status);
  int failures = 0;
  for (int i = 0; i < n; ++i) {
    const LD e = LD(he(i));
    const LD Eref = kosmos_test::solve_reference(reduce_exact(M[i]), e);
    const LD err = kosmos_test::angle_distance(LD(hE(i)), Eref) * (1 - e);
    if ((hst(i) != kosmos::kepler::converged || !(err <= bound)) && ++failures <= 5)
      ADD_FAILURE() << kosmos::kepler::solver_name(solver) << " M = " << M[i]
                    << " e = " << double(e) << ": E = " << double(hE(i)) << " ref " << double(Eref)
                    << " status " << int(hst(i));
  }
  EXPECT_EQ(failures, 0);
}
TYPED_TEST(KeplerHugeAnomalyTest, MarkleyDouble) {
  check_huge<TypeParam, double>(kosmos::kepler::Solver::Markley, 3e-15);
}
TYPED_TEST(KeplerHugeAnomalyTest, MarkleyFloat) {
  check_huge<TypeParam, float>(kosmos::kepler::Solver::Markley, 1.5e-6);
}
TYPED_TEST(KeplerHugeAnomalyTest, DanbyDouble) {
  check_huge<TypeParam, double>(kosmos::kepler::Solver::Danby, 3e-15);
}
TYPED_TEST(KeplerHugeAnomalyTest, DanbyFloat) {
  check_huge<TypeParam, float>(kosmos::kepler::Solver::Danby, 1.5e-6);
}
}  // namespace
