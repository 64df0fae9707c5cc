// Newton's method on power series against closed-form solutions evaluated in MPFR (64 N + 128
// bits), coefficient by coefficient, for N = 1, 2, 4, 8, 10, real and complex:
//   3 x^2 - 3 - c t = 0, x(0) = 1, c = 1 or i:   x = sqrt(1 + c t / 3), x_k = binom(1/2, k) (c/3)^k
//   x1 x2 - 1 = 0, 3 x1 - 3 x2 - c t = 0, x(0) = (1, 1), c = 1 or i:
//       x1 = c t / 6 + sqrt(1 + c^2 t^2 / 36),  x2 = -c t / 6 + sqrt(1 + c^2 t^2 / 36)
// (the factor 3 keeps the coefficients exact in the input and the solution not dyadic, so that
// every coefficient is rounded; binom(1/2, k) alone is a dyadic rational).
// Degrees 8 and 64, and 152 (the paper's largest degree, 8 Newton steps) for N = 10.
// Tolerance: |x_k - exact| <= 16 (k + 1) u_N M_k, with u_N = 2^(-53 N) and M_k = sum_j s_j s_(k-j)
// (s_j the largest |exact coefficient j| over the variables): each coefficient is a sum of k
// products of earlier ones, solved with J_0. A lost limb or a wrong index is off by 2^53 or more.
#include "mpfr_reference.hpp"

#include <kosmos/series/newton.hpp>

#include <test_spaces.hpp>

#include <complex>
#include <limits>

namespace {
using namespace kosmos::series;
using kosmos_test::Mp;
using Complex = std::complex<double>;

constexpr mpfr_prec_t precision_for(int N) {
  return 64 * N + 128;
}

// A system with small exact coefficients: series[i][s] is the coefficient series of monomial s of
// polynomial i (s = 0: the constant), given up to some degree (zero above).
struct TestSystem {
  std::vector<Polynomial> polynomials;
  std::vector<std::vector<std::vector<Complex>>> series;
  std::vector<Complex> start;
};

Polynomial polynomial(int n, std::vector<Monomial> monomials) {
  Polynomial p;
  p.num_variables = n;
  p.monomials = std::move(monomials);
  return p;
}

// 3 x^2 - 3 - c t
TestSystem square_root(Complex c) {
  return {{polynomial(1, {Monomial{{0}, {2}}})}, {{{-3.0, -c}, {3.0}}}, {1.0}};
}
// x1 x2 - 1, 3 x1 - 3 x2 - c t
TestSystem hyperbola(Complex c) {
  return {{polynomial(2, {Monomial{{0, 1}, {}}}),
           polynomial(2, {Monomial{{0}, {}}, Monomial{{1}, {}}})},
          {{{-1.0}, {1.0}}, {{0.0, -c}, {3.0}, {-3.0}}},
          {1.0, 1.0}};
}

// binom(1/2, k) (c / q)^k, k = 0..d: the coefficients of sqrt(1 + c t / q), c = c_re + i c_im
// with small integers (rounded once per operation at 64 N + 128 bits).
std::vector<std::pair<Mp, Mp>> sqrt_series(int d, long c_re, long c_im, long q, mpfr_prec_t prec) {
  std::vector<std::pair<Mp, Mp>> out;
  Mp re(prec), im(prec), t(prec), u(prec);
  mpfr_set_d(re.get(), 1.0, MPFR_RNDN);
  for (int k = 0; k <= d; ++k) {
    out.emplace_back(re, im);
    // (re + i im) * c * (1 - 2k) / (2 (k + 1))
    mpfr_mul_si(t.get(), re.get(), c_re, MPFR_RNDN);
    mpfr_mul_si(u.get(), im.get(), c_im, MPFR_RNDN);
    mpfr_sub(t.get(), t.get(), u.get(), MPFR_RNDN);
    mpfr_mul_si(u.get(), re.get(), c_im, MPFR_RNDN);
    mpfr_mul_si(im.get(), im.get(), c_re, MPFR_RNDN);
    mpfr_add(im.get(), im.get(), u.get(), MPFR_RNDN);
    re = t;
    for (Mp* part : {&re, &im}) {
      mpfr_mul_si(part->get(), part->get(), 1 - 2 * k, MPFR_RNDN);
      mpfr_div_si(part->get(), part->get(), 2 * (k + 1) * q, MPFR_RNDN);
    }
  }
  return out;
}

using Exact = std::vector<std::vector<std::pair<Mp, Mp>>>;  // [variable][k] = (re, im)

Exact square_root_exact(int d, bool complex, mpfr_prec_t prec) {
  return {sqrt_series(d, complex ? 0 : 1, complex ? 1 : 0, 3, prec)};
}
// sqrt(1 + c^2 t^2 / 36) +- c t / 6, c = 1 or i
Exact hyperbola_exact(int d, bool complex, mpfr_prec_t prec) {
  const auto root = sqrt_series(d / 2, complex ? -1 : 1, 0, 36, prec);
  Exact x(2);
  for (int k = 0; k <= d; ++k)
    for (auto& v : x) v.emplace_back(k % 2 ? Mp(prec) : root[std::size_t(k / 2)].first, Mp(prec));
  if (d >= 1) {
    Mp& half1 = complex ? x[0][1].second : x[0][1].first;
    Mp& half2 = complex ? x[1][1].second : x[1][1].first;
    mpfr_set_si(half1.get(), 1, MPFR_RNDN);
    mpfr_div_si(half1.get(), half1.get(), 6, MPFR_RNDN);
    mpfr_neg(half2.get(), half1.get(), MPFR_RNDN);
  }
  return x;
}

template <class Space, int N, bool C>
struct Run {
  static constexpr int L = C ? 2 * N : N;
  using Series = Kokkos::View<double***, Kokkos::LayoutLeft, Space>;
  NewtonResult result;
  kosmos::host_mirror_t<Series> x;
};

template <class Space, int N, bool C>
Run<Space, N, C> run_newton(const TestSystem& sys, int d) {
  using R = Run<Space, N, C>;
  using Series = typename R::Series;
  const int n = int(sys.start.size());
  std::vector<Series> coefficients;
  for (std::size_t i = 0; i < sys.polynomials.size(); ++i) {
    const auto& given = sys.series[i];
    Series a("a", std::size_t(d) + 1, given.size(), R::L);
    auto h = Kokkos::create_mirror_view(a);
    for (std::size_t s = 0; s < given.size(); ++s)
      for (int k = 0; k <= d && k < int(given[s].size()); ++k) {
        h(k, s, 0) = given[s][std::size_t(k)].real();
        if (C) h(k, s, N) = given[s][std::size_t(k)].imag();
      }
    Kokkos::deep_copy(a, h);
    coefficients.push_back(a);
  }
  Series x("x", std::size_t(d) + 1, std::size_t(n), R::L);
  auto hx = Kokkos::create_mirror_view(x);
  for (int j = 0; j < n; ++j) {
    hx(0, j, 0) = sys.start[std::size_t(j)].real();
    if (C) hx(0, j, N) = sys.start[std::size_t(j)].imag();
  }
  Kokkos::deep_copy(x, hx);
  SeriesNewton<N, C, Space> newton(sys.polynomials, d);
  R run;
  run.result = newton.solve(coefficients, x);
  run.x = Kokkos::create_mirror_view(x);
  Kokkos::deep_copy(run.x, x);
  return run;
}

template <int N>
double error_of(const kosmos::MultiDouble<N>& computed, const Mp& exact) {
  Mp diff = kosmos_test::exact(computed, precision_for(N));
  mpfr_sub(diff.get(), diff.get(), exact.get(), MPFR_RNDN);
  return std::fabs(diff.to_double());
}

template <class Space, int N, bool C>
void check_against(const TestSystem& sys, const Exact& exact, int d, const std::string& name) {
  SCOPED_TRACE(name + ", N = " + std::to_string(N) + (C ? " complex" : " real") + ", degree " +
               std::to_string(d));
  const auto run = run_newton<Space, N, C>(sys, d);
  ASSERT_EQ(run.result.status, NewtonStatus::success) << to_string(run.result.status);
  // From an exact root the schedule gives every term: one refinement step confirms it.
  EXPECT_EQ(run.result.steps.size(), newton_schedule(d).size() + 1);
  EXPECT_EQ(run.result.start_residual, 0.0);
  const double u = kosmos::unit_roundoff<N>();
  std::vector<double> largest(std::size_t(d) + 1, 0.0);
  for (const auto& v : exact)
    for (int k = 0; k <= d; ++k)
      largest[std::size_t(k)] =
          std::max(largest[std::size_t(k)], std::fabs(v[std::size_t(k)].first.to_double()) +
                                                std::fabs(v[std::size_t(k)].second.to_double()));
  double worst = 0;  // in units of u_N M_k
  for (std::size_t j = 0; j < exact.size(); ++j)
    for (int k = 0; k <= d; ++k) {
      double m = 0;
      for (int i = 0; i <= k; ++i) m += largest[std::size_t(i)] * largest[std::size_t(k - i)];
      kosmos::MultiDouble<N> re, im;
      for (int l = 0; l < N; ++l) {
        re.limb[l] = run.x(k, j, l);
        if (C) im.limb[l] = run.x(k, j, N + l);
      }
      double err = error_of<N>(re, exact[j][std::size_t(k)].first);
      if (C)
        err += error_of<N>(im, exact[j][std::size_t(k)].second);
      else
        EXPECT_TRUE(mpfr_zero_p(exact[j][std::size_t(k)].second.get()));
      const double units = err / (u * m);
      worst = std::max(worst, units);
      EXPECT_LE(units, 16.0 * (k + 1)) << "x" << j + 1 << " coefficient " << k << ": error " << err;
    }
  // The residual of the solution to working precision (coefficients of H are at most 2 here).
  EXPECT_LE(run.result.residual, 64.0 * (d + 1) * u);
  ASSERT_EQ(run.result.coefficient_ratio.size(), exact.size());
  ::testing::Test::RecordProperty(
      "worst_units_" + name + "_N" + std::to_string(N) + (C ? "c" : "r"), std::to_string(worst));
}

template <class Space, int N>
void check_precision() {
  const mpfr_prec_t prec = precision_for(N);
  for (const int d : {8, 64}) {
    check_against<Space, N, false>(square_root(1.0), square_root_exact(d, false, prec), d,
                                   "sqrt(1+t/3)");
    check_against<Space, N, true>(square_root(Complex(0, 1)), square_root_exact(d, true, prec), d,
                                  "sqrt(1+it/3)");
    check_against<Space, N, false>(hyperbola(1.0), hyperbola_exact(d, false, prec), d,
                                   "x1x2=1;x1-x2=t/3");
    check_against<Space, N, true>(hyperbola(Complex(0, 1)), hyperbola_exact(d, true, prec), d,
                                  "x1x2=1;x1-x2=it/3");
  }
  if (N == 10)
    check_against<Space, N, false>(square_root(1.0), square_root_exact(152, false, prec), 152,
                                   "sqrt(1+t/3)");
}

template <class Space>
class SeriesNewtonTest : public ::testing::Test {};
TYPED_TEST_SUITE(SeriesNewtonTest, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

TYPED_TEST(SeriesNewtonTest, ClosedFormsInDoubleAndDoubleDouble) {
  check_precision<TypeParam, 1>();
  check_precision<TypeParam, 2>();
}
TYPED_TEST(SeriesNewtonTest, ClosedFormsInQuadOctoDecaDouble) {
  check_precision<TypeParam, 4>();
  check_precision<TypeParam, 8>();
  check_precision<TypeParam, 10>();
}

// sqrt(1 + t/3) has its singularity at t = -3: |x_(d-1) / x_d| = 3 (2d) / (2d - 3) (Fabry).
TYPED_TEST(SeriesNewtonTest, CoefficientRatioEstimatesTheRadiusOfConvergence) {
  for (const int d : {8, 40}) {
    const auto run = run_newton<TypeParam, 2, false>(square_root(1.0), d);
    ASSERT_EQ(run.result.coefficient_ratio.size(), 1u);
    EXPECT_NEAR(run.result.coefficient_ratio[0], 6.0 * d / (2.0 * d - 3.0), 1e-13);
  }
}

TYPED_TEST(SeriesNewtonTest, DoublesTheOrderEachStep) {
  EXPECT_EQ(newton_schedule(0), std::vector<int>({0}));
  EXPECT_EQ(newton_schedule(1), std::vector<int>({1}));
  EXPECT_EQ(newton_schedule(7), std::vector<int>({1, 3, 7}));
  EXPECT_EQ(newton_schedule(8), std::vector<int>({1, 3, 7, 8}));
  EXPECT_EQ(newton_schedule(152), std::vector<int>({1, 3, 7, 15, 31, 63, 127, 152}));
  // Quadratic convergence: the step at degree 2m - 1 starts from m correct terms, so its update
  // is of the size of coefficient m of sqrt(1 + t/3) = |binom(1/2, m)| / 3^m, not of the first
  // ones.
  const auto run = run_newton<TypeParam, 4, false>(square_root(1.0), 31);
  const double binom[] = {1.0, 0.5 / 3, 0.125 / 9, 0.0625 / 27, 0.0390625 / 81};
  ASSERT_EQ(run.result.steps.size(), 6u);  // 1, 3, 7, 15, 31 and the refinement step that confirms
  EXPECT_NEAR(run.result.steps[0].update, binom[1], 1e-15);  // degree 1: x_1 = 1/2
  EXPECT_NEAR(run.result.steps[1].update, binom[2], 1e-15);  // degree 3: x_2, x_3 from 2 terms
  EXPECT_NEAR(run.result.steps[2].update, binom[4], 1e-15);  // degree 7: x_4 .. x_7
}

// A start near the root (x0 = 1.1 for 3 x^2 - 3 - t): the refinement steps run Newton on
// x0 as well and reach the series of the exact root to working precision, in quad double.
TYPED_TEST(SeriesNewtonTest, StartNearARootIsRefined) {
  constexpr int N = 4, d = 16;
  TestSystem near = square_root(1.0);
  near.start = {1.1};
  const auto run = run_newton<TypeParam, N, false>(near, d);
  ASSERT_EQ(run.result.status, NewtonStatus::success) << to_string(run.result.status);
  EXPECT_NEAR(run.result.start_residual, 3 * (1.1 * 1.1 - 1), 1e-15);
  EXPECT_GT(run.result.steps.size(), newton_schedule(d).size() + 1);
  EXPECT_LE(run.result.steps.size(), newton_schedule(d).size() + 8);
  const auto exact = square_root_exact(d, false, precision_for(N));
  for (int k = 0; k <= d; ++k) {
    kosmos::MultiDouble<N> xk;
    for (int l = 0; l < N; ++l) xk.limb[l] = run.x(k, 0, l);
    EXPECT_LE(error_of<N>(xk, exact[0][std::size_t(k)].first), 64.0 * (k + 1) * kosmos::unit_roundoff<N>())
        << "coefficient " << k;
  }
}

// 3 x^2 + 3 + t has no real root at t = 0: from x0 = 2 Newton wanders (x -> (x - 1/x) / 2) and
// the result says so instead of returning the last iterate as a solution.
TYPED_TEST(SeriesNewtonTest, StartThatIsNoRootDoesNotConverge) {
  const TestSystem no_real_root{{polynomial(1, {Monomial{{0}, {2}}})}, {{{3.0, 1.0}, {3.0}}}, {2.0}};
  const auto run = run_newton<TypeParam, 2, false>(no_real_root, 8);
  EXPECT_EQ(run.result.status, NewtonStatus::not_converged);
  constexpr std::size_t refinements = SeriesNewton<2, false, TypeParam>::max_refinement_steps;
  EXPECT_EQ(run.result.steps.size(), newton_schedule(8).size() + refinements);
  EXPECT_EQ(run.result.start_residual, 15.0);
  EXPECT_GT(run.result.steps.back().update, 1e-8);
}

TYPED_TEST(SeriesNewtonTest, SingularLeadingJacobianIsReported) {
  // x^2 - t at x0 = 0: J_0 = 2 x0 = 0 (x = sqrt(t) is no power series).
  const TestSystem cusp{{polynomial(1, {Monomial{{0}, {2}}})}, {{{0.0, -1.0}, {1.0}}}, {0.0}};
  const auto run = run_newton<TypeParam, 2, false>(cusp, 8);
  EXPECT_EQ(run.result.status, NewtonStatus::singular_jacobian);
  EXPECT_EQ(run.result.singular_column, 0);
  EXPECT_EQ(run.result.steps.size(), 1u);
  // x1 + x2 - 2 - t, x1 x2 - 1 at (1, 1): J_0 = [[1, 1], [1, 1]], rank 1.
  const TestSystem tangent{{polynomial(2, {Monomial{{0}, {}}, Monomial{{1}, {}}}),
                            polynomial(2, {Monomial{{0, 1}, {}}})},
                           {{{-2.0, -1.0}, {1.0}, {1.0}}, {{-1.0}, {1.0}}},
                           {1.0, 1.0}};
  const auto rank_one = run_newton<TypeParam, 4, false>(tangent, 8);
  EXPECT_EQ(rank_one.result.status, NewtonStatus::singular_jacobian);
  EXPECT_EQ(rank_one.result.singular_column, 1);
}

TYPED_TEST(SeriesNewtonTest, NotFiniteIsReported) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // NaN in the t coefficient: J_0 is fine, the update of x_1 is not.
  const TestSystem late{{polynomial(1, {Monomial{{0}, {2}}})}, {{{-1.0, nan}, {1.0}}}, {1.0}};
  EXPECT_EQ((run_newton<TypeParam, 2, false>(late, 4).result.status), NewtonStatus::not_finite);
  // NaN in the leading coefficient of x^2: J_0 itself.
  const TestSystem early{{polynomial(1, {Monomial{{0}, {2}}})}, {{{-1.0, -1.0}, {nan}}}, {1.0}};
  EXPECT_EQ((run_newton<TypeParam, 2, false>(early, 4).result.status), NewtonStatus::not_finite);
}

TYPED_TEST(SeriesNewtonTest, NonSquareSystemIsRejected) {
  const std::vector<Polynomial> one_in_two{polynomial(2, {Monomial{{0, 1}, {}}})};
  EXPECT_THROW((SeriesNewton<2, false, TypeParam>(one_in_two, 4)), kosmos::invalid_input);
  const std::vector<Polynomial> mixed{polynomial(2, {Monomial{{0}, {}}}),
                                      polynomial(3, {Monomial{{2}, {}}})};
  EXPECT_THROW((SeriesNewton<2, false, TypeParam>(mixed, 4)), kosmos::invalid_input);
}
}  // namespace
