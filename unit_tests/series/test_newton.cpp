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

#include <algorithm>
#include <complex>
#include <limits>
#include <random>

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
Run<Space, N, C> run_newton(const TestSystem& sys, int d, const NewtonOptions& options = {}) {
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
  run.result = newton.solve(coefficients, x, options);
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

NewtonOptions refine_start() {
  NewtonOptions options;
  options.refine_start = true;
  return options;
}

// A start near the root (x0 = 1.1 for 3 x^2 - 3 - t), on request: the refinement steps run
// Newton on x0 as well and reach the series of the exact root to working precision, in quad
// double.
TYPED_TEST(SeriesNewtonTest, StartNearARootIsRefinedOnRequest) {
  constexpr int N = 4, d = 16;
  TestSystem near = square_root(1.0);
  near.start = {1.1};
  EXPECT_EQ((run_newton<TypeParam, N, false>(near, d).result.status), NewtonStatus::start_not_root);
  const auto run = run_newton<TypeParam, N, false>(near, d, refine_start());
  ASSERT_EQ(run.result.status, NewtonStatus::success) << to_string(run.result.status);
  EXPECT_NEAR(run.result.start_residual, 3 * (1.1 * 1.1 - 1), 1e-15);
  // Newton from 1.1: 1.1 -> 1.00454..., then quadratically to 1: the shift is about 0.1.
  EXPECT_GE(run.result.start_shift, 0.1 - 1e-15);
  EXPECT_LE(run.result.start_shift, 0.1 + 1e-3);
  EXPECT_GT(run.result.steps.size(), newton_schedule(d).size() + 1);
  EXPECT_LE(run.result.steps.size(), newton_schedule(d).size() + 8);
  const auto exact = square_root_exact(d, false, precision_for(N));
  for (int k = 0; k <= d; ++k) {
    kosmos::MultiDouble<N> xk;
    for (int l = 0; l < N; ++l) xk.limb[l] = run.x(k, 0, l);
    EXPECT_LE(error_of<N>(xk, exact[0][std::size_t(k)].first),
              64.0 * (k + 1) * kosmos::unit_roundoff<N>())
        << "coefficient " << k;
  }
}

// 3 x^2 + 3 + t has no real root at t = 0: from x0 = 2 Newton wanders (x -> (x - 1/x) / 2) and
// the result says so instead of returning the last iterate as a solution.
TYPED_TEST(SeriesNewtonTest, StartThatIsNoRootDoesNotConverge) {
  const TestSystem no_real_root{
      {polynomial(1, {Monomial{{0}, {2}}})}, {{{3.0, 1.0}, {3.0}}}, {2.0}};
  const auto run = run_newton<TypeParam, 2, false>(no_real_root, 8, refine_start());
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

// x^2 - 2 - t from x0 = 1 is no root: Newton would return sqrt(2 + t), another branch than the
// one through the start, so the start is refused after the first step (its correction of x0 is
// 1/2); on request it is refined, and the shift says how far x(0) moved (sqrt(2) - 1 at least).
// A start within the tolerance (a root to 1e-9) is taken without the option.
TYPED_TEST(SeriesNewtonTest, StartThatIsNotARootIsRefusedUnlessRefinementIsAsked) {
  TestSystem other_branch{{polynomial(1, {Monomial{{0}, {2}}})}, {{{-2.0, -1.0}, {1.0}}}, {1.0}};
  const auto refused = run_newton<TypeParam, 2, false>(other_branch, 8);
  EXPECT_EQ(refused.result.status, NewtonStatus::start_not_root);
  EXPECT_EQ(refused.result.steps.size(), 1u);
  EXPECT_EQ(refused.result.start_shift, 0.5);
  EXPECT_EQ(refused.result.start_residual, 1.0);
  const auto refined = run_newton<TypeParam, 2, false>(other_branch, 8, refine_start());
  ASSERT_EQ(refined.result.status, NewtonStatus::success);
  EXPECT_NEAR(refined.x(0, 0, 0), std::sqrt(2.0), 1e-15);
  EXPECT_GE(refined.result.start_shift, std::sqrt(2.0) - 1);
  other_branch.start = {std::sqrt(2.0) * (1 + 1e-9)};
  const auto near = run_newton<TypeParam, 2, false>(other_branch, 8);
  ASSERT_EQ(near.result.status, NewtonStatus::success);
  EXPECT_NEAR(near.x(0, 0, 0), std::sqrt(2.0), 1e-15);
  EXPECT_LE(near.result.start_shift, 2e-9);
}

// x^2 + 1 - t from 1: J(1) = 2 is regular; the first step moves x(0) to 0, where the second step
// meets J = 0. The result names that step, not the start.
TYPED_TEST(SeriesNewtonTest, SingularJacobianAfterTheFirstStepNamesTheStep) {
  const TestSystem to_zero{{polynomial(1, {Monomial{{0}, {2}}})}, {{{1.0, -1.0}, {1.0}}}, {1.0}};
  const auto run = run_newton<TypeParam, 2, false>(to_zero, 8, refine_start());
  EXPECT_EQ(run.result.status, NewtonStatus::singular_jacobian);
  EXPECT_EQ(run.result.steps.size(), 2u);
  EXPECT_EQ(run.result.start_shift, 1.0);
  // Without refine_start the start is refused as no root of H(x, 0) before that.
  const auto refused = run_newton<TypeParam, 2, false>(to_zero, 8);
  EXPECT_EQ(refused.result.status, NewtonStatus::start_not_root);
  EXPECT_EQ(refused.result.steps.size(), 1u);
}

// x^2 - 1 - t from x0 = 1000 (refined on request): the residual reported is that of the series
// returned, after the last update, checked against H(x(t)) of the returned limbs in MPFR. (The
// iterate before the last update has a residual near 1e-20 in double double.)
TYPED_TEST(SeriesNewtonTest, ResidualIsThatOfTheReturnedSeries) {
  constexpr int N = 2, d = 8;
  const TestSystem far{{polynomial(1, {Monomial{{0}, {2}}})}, {{{-1.0, -1.0}, {1.0}}}, {1000.0}};
  const auto run = run_newton<TypeParam, N, false>(far, d, refine_start());
  ASSERT_EQ(run.result.status, NewtonStatus::success) << to_string(run.result.status);
  const mpfr_prec_t prec = precision_for(N);
  double reference = 0;
  for (int k = 0; k <= d; ++k) {
    Mp sum(prec), product(prec);
    mpfr_set_si(sum.get(), k <= 1 ? -1 : 0, MPFR_RNDN);
    for (int j = 0; j <= k; ++j) {
      kosmos::MultiDouble<N> a, b;
      for (int l = 0; l < N; ++l) {
        a.limb[l] = run.x(j, 0, l);
        b.limb[l] = run.x(k - j, 0, l);
      }
      mpfr_mul(product.get(), kosmos_test::exact(a, prec).get(), kosmos_test::exact(b, prec).get(),
               MPFR_RNDN);
      mpfr_add(sum.get(), sum.get(), product.get(), MPFR_RNDN);
    }
    reference = std::max(reference, std::fabs(sum.to_double()));
  }
  const double u = kosmos::unit_roundoff<N>();
  EXPECT_LE(reference, 16 * u);
  EXPECT_LE(run.result.residual, 16 * u);
  EXPECT_NEAR(run.x(0, 0, 0), 1.0, 1e-15);
}

// The radius of convergence from the Pade poles of the tail: exact for a conjugate pair
// c_k = r^-k cos(k theta) (poles r e^(+-i theta)), the ratio for a geometric tail, infinite for a
// vanishing one.
TYPED_TEST(SeriesNewtonTest, PadeRadiusSeesConjugatePairs) {
  for (const double r : {0.5, 1.0, 3.0})
    for (const double theta : {0.3, 2.0944, 3.0}) {
      std::complex<double> tail[4];
      for (int k = 0; k < 4; ++k) tail[k] = std::pow(r, -(20 + k)) * std::cos((20 + k) * theta);
      EXPECT_NEAR(pade_radius(tail), r, 1e-9 * r) << "r " << r << " theta " << theta;
    }
  std::complex<double> geometric[4], zero[4];
  for (int k = 0; k < 4; ++k) geometric[k] = std::pow(std::complex<double>(0, 0.5), -k);
  EXPECT_NEAR(pade_radius(geometric), 0.5, 1e-15);
  EXPECT_EQ(pade_radius(zero), HUGE_VAL);
}

// sqrt(1 + t + t^2) (x^2 - 1 - t - t^2 from 1) has branch points e^(+-2 pi i / 3): radius 1, a
// conjugate pair. The ratio |c_(d-1) / c_d| swings with d (0.37 .. 4.3); the Pade radius tends
// to 1 like 1 + 1.5 / d (the algebraic factor k^(-3/2) of the coefficients).
TYPED_TEST(SeriesNewtonTest, RadiusOfAConjugatePairIsNearOne) {
  const TestSystem pair{
      {polynomial(1, {Monomial{{0}, {2}}})}, {{{-1.0, -1.0, -1.0}, {1.0}}}, {1.0}};
  for (const int d : {16, 32, 40}) {
    const auto run = run_newton<TypeParam, 2, false>(pair, d);
    ASSERT_EQ(run.result.status, NewtonStatus::success);
    ASSERT_EQ(run.result.radius.size(), 1u);
    EXPECT_GT(run.result.radius[0], 1.0) << "degree " << d;
    EXPECT_LT(run.result.radius[0], 1.0 + 2.0 / d) << "degree " << d;
  }
}

// A 6 x 6 quadratic homotopy H(x, t) = F(x) - F(x0 + t v) with small integer coefficients: its
// solution is exactly x0 + t v (coefficients 2 .. d are 0), so the error of every computed
// coefficient is known. Rounding errors grow with the degree through the block substitution
// (J(x(t)) is singular somewhere near t = 0); the error estimate must follow them (not the
// residual, orders of magnitude smaller), and cond_1(J_0) must match a dense reference.
TYPED_TEST(SeriesNewtonTest, ErrorEstimateFollowsTheCoefficientErrors) {
  constexpr int n = 6, d = 16;
  std::mt19937 random(29);
  std::uniform_int_distribution<int> small(-3, 3);
  std::vector<std::vector<double>> linear(n, std::vector<double>(n));
  std::vector<std::vector<std::vector<double>>> quadratic(
      n, std::vector<std::vector<double>>(n, std::vector<double>(n, 0.0)));
  std::vector<double> x0(n), v(n);
  for (int j = 0; j < n; ++j) {
    x0[j] = small(random);
    v[j] = small(random);
  }
  TestSystem sys;
  for (int i = 0; i < n; ++i) {
    std::vector<Monomial> monomials;
    std::vector<std::vector<Complex>> series(1);  // the constant first
    // F_i(x0 + t v) = f0 + f1 t + f2 t^2
    double f0 = 0, f1 = 0, f2 = 0;
    for (int j = 0; j < n; ++j) {
      linear[i][j] = small(random);
      monomials.push_back(Monomial{{j}, {}});
      series.push_back({linear[i][j]});
      f0 += linear[i][j] * x0[j];
      f1 += linear[i][j] * v[j];
      for (int k = j; k < n; ++k) {
        const double b = small(random);
        quadratic[i][j][k] = b;
        if (k == j)
          monomials.push_back(Monomial{{j}, {2}});
        else
          monomials.push_back(Monomial{{j, k}, {}});
        series.push_back({b});
        f0 += b * x0[j] * x0[k];
        f1 += b * (x0[j] * v[k] + v[j] * x0[k]);
        f2 += b * v[j] * v[k];
      }
    }
    series[0] = {-f0, -f1, -f2};
    sys.polynomials.push_back(polynomial(n, monomials));
    sys.series.push_back(series);
  }
  for (int j = 0; j < n; ++j) sys.start.push_back(x0[j]);
  const auto run = run_newton<TypeParam, 1, false>(sys, d);
  ASSERT_EQ(run.result.status, NewtonStatus::success) << to_string(run.result.status);
  double error = 0;
  for (int k = 0; k <= d; ++k)
    for (int j = 0; j < n; ++j)
      error = std::max(error, std::fabs(run.x(k, j, 0) - (k == 0 ? x0[j] : k == 1 ? v[j] : 0.0)));
  // cond_1(J_0) of J_0 = dF(x0) by Gauss-Jordan in long double.
  std::vector<std::vector<long double>> a(n, std::vector<long double>(2 * n, 0.0L));
  for (int i = 0; i < n; ++i) {
    a[i][n + i] = 1;
    for (int j = 0; j < n; ++j) {
      a[i][j] = linear[i][j];
      for (int k = 0; k < n; ++k)
        a[i][j] += (k >= j ? quadratic[i][j][k] : quadratic[i][k][j]) * x0[k] * (k == j ? 2 : 1);
    }
  }
  auto norm1 = [&](int offset) {
    long double biggest = 0;
    for (int j = 0; j < n; ++j) {
      long double sum = 0;
      for (int i = 0; i < n; ++i) sum += std::fabs(a[i][offset + j]);
      biggest = std::max(biggest, sum);
    }
    return biggest;
  };
  const long double jacobian_norm = norm1(0);
  for (int c = 0; c < n; ++c) {
    int p = c;
    for (int i = c + 1; i < n; ++i)
      if (std::fabs(a[i][c]) > std::fabs(a[p][c])) p = i;
    std::swap(a[c], a[p]);
    for (int i = 0; i < n; ++i) {
      if (i == c) continue;
      const long double f = a[i][c] / a[c][c];
      for (int j = 0; j < 2 * n; ++j) a[i][j] -= f * a[c][j];
    }
  }
  for (int i = 0; i < n; ++i)
    for (int j = n; j < 2 * n; ++j) a[i][j] /= a[i][i];
  const double condition = double(jacobian_norm * norm1(n));
  EXPECT_NEAR(run.result.condition, condition, 1e-10 * condition);
  // The estimate is within a factor 10 below and 1e3 above the true largest error.
  EXPECT_GE(run.result.error, error / 10);
  EXPECT_LE(run.result.error, error * 1e3);
  ::testing::Test::RecordProperty("condition", std::to_string(condition));
  ::testing::Test::RecordProperty("error", std::to_string(error));
  ::testing::Test::RecordProperty("error_estimate", std::to_string(run.result.error));
  ::testing::Test::RecordProperty("residual", std::to_string(run.result.residual));
}
}  // namespace
