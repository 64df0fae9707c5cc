// Data staging (Section 5): job counts and layers of the paper's test polynomials, the 3m - 3
// rule, dependency order of every job, and clear errors for bad input.
#include <kosmos/core/error.hpp>
#include <kosmos/series/evaluate.hpp>
#include <kosmos/series/polynomial.hpp>

#include <test_spaces.hpp>

#include <set>

namespace {
using namespace kosmos::series;

// Every job reads only slots that are inputs or were written in an earlier layer, and no layer
// writes a slot twice (so jobs of one layer may run in any order).
void check_dependencies(const EvaluationPlan& plan) {
  std::vector<int> written_at(std::size_t(plan.num_slots), -1);
  const int inputs_end = plan.zero_slot + 1;
  auto ready_before = [&](int slot, int layer) { return slot < inputs_end || (written_at[std::size_t(slot)] >= 0 && written_at[std::size_t(slot)] < layer); };
  for (std::size_t l = 0; l < plan.convolution_layers.size(); ++l) {
    std::set<int> outs;
    for (const auto& j : plan.convolution_layers[l]) {
      ASSERT_TRUE(ready_before(j.x, int(l))) << "layer " << l;
      ASSERT_TRUE(ready_before(j.y, int(l))) << "layer " << l;
      ASSERT_GE(j.out, inputs_end);
      ASSERT_NE(j.out, j.x);
      ASSERT_NE(j.out, j.y);
      ASSERT_TRUE(outs.insert(j.out).second);
      ASSERT_EQ(written_at[std::size_t(j.out)], -1) << "slot written twice";
      written_at[std::size_t(j.out)] = int(l);
    }
  }
  const int conv_layers = int(plan.convolution_layers.size());
  for (std::size_t l = 0; l < plan.addition_layers.size(); ++l) {
    std::set<int> touched;
    for (const auto& j : plan.addition_layers[l]) {
      ASSERT_GE(j.out, inputs_end) << "an addition overwrites an input";
      ASSERT_TRUE(touched.insert(j.x).second && touched.insert(j.y).second) << "slot used twice in a layer";
      if (j.out != j.x && j.out != j.y) {
        ASSERT_TRUE(touched.insert(j.out).second);
      }
      written_at[std::size_t(j.out)] = conv_layers + int(l);
    }
  }
}

TEST(SeriesPlan, P1Has16380ConvolutionsInFourLayersAnd9084Additions) {
  const auto p = make_p1();
  ASSERT_EQ(p.monomials.size(), 1820u);
  const auto plan = make_plan(p);
  EXPECT_EQ(plan.num_convolutions(), 16380);
  ASSERT_EQ(plan.convolution_layers.size(), 4u);
  EXPECT_EQ(plan.convolution_layers[0].size(), 3640u);  // the paper's launch sizes
  EXPECT_EQ(plan.convolution_layers[1].size(), 5460u);
  EXPECT_EQ(plan.convolution_layers[2].size(), 5460u);
  EXPECT_EQ(plan.convolution_layers[3].size(), 1820u);
  EXPECT_EQ(plan.num_additions(), 9084);
  EXPECT_EQ(plan.addition_layers.size(), 11u);  // ceil(log2(1821))
  EXPECT_TRUE(plan.scale_jobs.empty());
  check_dependencies(plan);
}

TEST(SeriesPlan, P2Has24192ConvolutionsAnd8192Additions) {
  const auto plan = make_plan(make_p2());
  EXPECT_EQ(plan.num_convolutions(), 24192);
  EXPECT_EQ(plan.num_additions(), 8192);
  EXPECT_EQ(plan.convolution_layers.size(), 64u);  // m steps (Corollary 3.2)
  check_dependencies(plan);
}

TEST(SeriesPlan, P3Has24256Additions) {
  const auto plan = make_plan(make_p3());
  EXPECT_EQ(plan.num_monomials, 8128);
  EXPECT_EQ(plan.num_additions(), 24256);
  EXPECT_EQ(plan.num_convolutions(), 3 * 8128);  // three per monomial of two variables
  check_dependencies(plan);
}

TEST(SeriesPlan, EachMonomialOfMVariablesNeeds3MMinus3Convolutions) {
  for (int m = 1; m <= 40; ++m) {
    Polynomial p;
    p.num_variables = 50;
    Monomial mono;
    for (int j = 0; j < m; ++j) mono.variables.push_back((7 * j) % 50);  // distinct, unsorted
    p.monomials.push_back(mono);
    const auto plan = make_plan(p);
    EXPECT_EQ(plan.num_convolutions(), convolutions_per_monomial(m)) << "m = " << m;
    if (m > 2) {
      EXPECT_EQ(plan.num_convolutions(), 3 * m - 3);
      EXPECT_EQ(int(plan.convolution_layers.size()), m);  // Corollary 3.2: m steps
    }
    check_dependencies(plan);
  }
}

TEST(SeriesPlan, PowersUseRepeatedSquaringAndScaleJobs) {
  Polynomial p;
  p.num_variables = 2;
  p.monomials.push_back(Monomial{{0, 1}, {3, 5}});  // x^3 y^5 = (x^2 y^4) x y
  const auto plan = make_plan(p);
  // powers x^2 (1), y^2 and y^4 = (y^2)^2 (2), common factor a x^2 y^4 (2), then 3 for x y
  EXPECT_EQ(plan.num_convolutions(), 1 + 2 + 2 + 3);
  EXPECT_EQ(plan.scale_jobs.size(), 2u);
  check_dependencies(plan);
  // x^1000000: x^999999 from 19 squarings and 11 products (one per 1 bit past the leading one
  // of 999999), then the common factor and the product with x
  Polynomial q;
  q.num_variables = 1;
  q.monomials.push_back(Monomial{{0}, {1000000}});
  EXPECT_EQ(make_plan(q).num_convolutions(), 19 + 11 + 1 + 1);
  check_dependencies(make_plan(q));
  // a second monomial reuses the powers of the first
  q.monomials.push_back(Monomial{{0}, {500000}});
  EXPECT_EQ(make_plan(q).num_convolutions(), 19 + 11 + 1 + 1 + 1 + 1);
}

TEST(SeriesPlan, ConstantPolynomialHasNoJobsAndItsValueIsTheConstant) {
  Polynomial p;
  p.num_variables = 2;
  const auto plan = make_plan(p);
  EXPECT_EQ(plan.num_convolutions(), 0);
  EXPECT_EQ(plan.num_additions(), 0);
  EXPECT_EQ(plan.value_slot, plan.first_coefficient_slot);
  EXPECT_EQ(plan.gradient_slots, std::vector<int>(2, plan.zero_slot));
}

void expect_invalid(const Polynomial& p, const std::string& fragment) {
  try {
    make_plan(p);
    FAIL() << "no error for " << fragment;
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(SeriesPlan, BadPolynomialsGetClearErrors) {
  Polynomial p;
  p.num_variables = 3;
  p.monomials.push_back(Monomial{{0, 3}, {}});
  expect_invalid(p, "variable index 3 out of range [0, 3)");
  p.monomials[0] = Monomial{{1, -1}, {}};
  expect_invalid(p, "variable index -1 out of range");
  p.monomials[0] = Monomial{{1, 2, 1}, {}};
  expect_invalid(p, "variable 1 repeated");
  p.monomials[0] = Monomial{{}, {}};
  expect_invalid(p, "monomial 0 has no variables");
  p.monomials[0] = Monomial{{0, 1}, {1}};
  expect_invalid(p, "2 variables but 1 exponents");
  p.monomials[0] = Monomial{{0, 1}, {1, 0}};
  expect_invalid(p, "exponent 0 of variable 1");
  p.monomials[0] = Monomial{{0, 1}, {1, kosmos::series::max_exponent + 1}};
  expect_invalid(p, "exponent 1048577 of variable 1 is above the limit 1048576");
  p.num_variables = 0;
  expect_invalid(p, "0 variables");
  EXPECT_THROW(make_test_polynomial("p4"), kosmos::invalid_input);
}

template <class Space>
class SeriesErrors : public ::testing::Test {};
TYPED_TEST_SUITE(SeriesErrors, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

TYPED_TEST(SeriesErrors, NegativeDegreeAndMismatchedViewsAreRejected) {
  using Space = TypeParam;
  Polynomial p;
  p.num_variables = 2;
  p.monomials.push_back(Monomial{{0, 1}, {}});
  EXPECT_THROW((PolynomialEvaluator<2, false, Space>(p, -1)), kosmos::invalid_input);
  PolynomialEvaluator<2, false, Space> eval(p, 4);
  using V3 = Kokkos::View<double***, Kokkos::LayoutLeft, Space>;
  using V2 = Kokkos::View<double**, Kokkos::LayoutLeft, Space>;
  V3 a("a", 5, 2, 2), z("z", 5, 2, 2), g("g", 5, 2, 2);
  V2 v("v", 5, 2);
  EXPECT_NO_THROW(eval.evaluate(a, z, v, g));
  V3 z_bad_degree("z", 6, 2, 2);
  try {
    eval.evaluate(a, z_bad_degree, v, g);
    FAIL() << "degree mismatch accepted";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("z has 6 coefficients per series (degree 5), expected degree 4"),
              std::string::npos)
        << e.what();
  }
  V3 a_bad_count("a", 5, 3, 2);
  EXPECT_THROW(eval.evaluate(a_bad_count, z, v, g), kosmos::invalid_input);
  V3 z_bad_limbs("z", 5, 2, 3);
  EXPECT_THROW(eval.evaluate(a, z_bad_limbs, v, g), kosmos::invalid_input);
  V3 x("x", 5, 3, 2), y("y", 5, 3, 2), w("w", 4, 3, 2);
  EXPECT_THROW(convolve<2>(x, y, w), kosmos::invalid_input);
  EXPECT_THROW(convolve<2>(x, y, x), kosmos::invalid_input);  // aliasing
  EXPECT_THROW(add<2>(x, y, w), kosmos::invalid_input);
}
}  // namespace

namespace {
// On Kokkos::Cuda: the hand-tuned kernels and the generic Kokkos path give the same value and
// gradient of p1 (16380 convolution jobs) up to the rounding of different summation orders.
template <class Space, int N>
void compare_cuda_with_generic(int d) {
  using V3 = Kokkos::View<double***, Kokkos::LayoutLeft, Space>;
  using V2 = Kokkos::View<double**, Kokkos::LayoutLeft, Space>;
  const auto p = make_p1();
  PolynomialEvaluator<N, false, Space> fast(Space(), p, d, KernelChoice::automatic);
  PolynomialEvaluator<N, false, Space> generic(Space(), p, d, KernelChoice::generic);
  ASSERT_TRUE(fast.uses_cuda_specialization());
  ASSERT_FALSE(generic.uses_cuda_specialization());
  V3 a("a", d + 1, p.monomials.size() + 1, N), z("z", d + 1, p.num_variables, N);
  V3 g1("g1", d + 1, p.num_variables, N), g2("g2", d + 1, p.num_variables, N);
  V2 v1("v1", d + 1, N), v2("v2", d + 1, N);
  auto ha = Kokkos::create_mirror_view(a);
  auto hz = Kokkos::create_mirror_view(z);
  unsigned state = 12345u;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return double(state >> 8) / double(1u << 24) - 0.5;
  };
  for (std::size_t i = 0; i < ha.size(); ++i) ha.data()[i] = next() * (i >= ha.extent(0) * ha.extent(1) ? 0x1p-53 : 1.0);
  for (std::size_t i = 0; i < hz.size(); ++i) hz.data()[i] = next() * (i >= hz.extent(0) * hz.extent(1) ? 0x1p-53 : 1.0);
  Kokkos::deep_copy(a, ha);
  Kokkos::deep_copy(z, hz);
  fast.evaluate(a, z, v1, g1);
  generic.evaluate(a, z, v2, g2);
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g1);
  auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g2);
  auto w1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v1);
  auto w2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v2);
  double scale = 0;
  for (int k = 0; k <= d; ++k) scale = std::max(scale, std::fabs(w2(k, 0)));
  const double tol = 1e3 * (d + 1) * kosmos::mul_error_bound<N>() * scale;
  for (int k = 0; k <= d; ++k) {
    kosmos::MultiDouble<N> x, y;
    for (int l = 0; l < N; ++l) {
      x.limb[l] = w1(k, l);
      y.limb[l] = w2(k, l);
    }
    ASSERT_LE(std::fabs(kosmos::to_double(x - y)), tol) << "value k = " << k;
    for (int v = 0; v < p.num_variables; ++v) {
      for (int l = 0; l < N; ++l) {
        x.limb[l] = h1(k, v, l);
        y.limb[l] = h2(k, v, l);
      }
      ASSERT_LE(std::fabs(kosmos::to_double(x - y)), tol) << "gradient x" << v << " k = " << k;
    }
  }
}

TYPED_TEST(SeriesErrors, CudaSpecializationMatchesGenericPathOnP1) {
  using Space = TypeParam;
  if constexpr (!PolynomialEvaluator<2, false, Space>::has_cuda_specialization) {
    GTEST_SKIP() << "no CUDA specialization for " << Space::name();
  } else {
    compare_cuda_with_generic<Space, 1>(31);
    compare_cuda_with_generic<Space, 2>(8);
    compare_cuda_with_generic<Space, 10>(152);  // two tiles in the CUDA kernel, several in the generic one
  }
}
}  // namespace

#include <kosmos/series/text_format.hpp>

#include <cstdio>
#include <fstream>

namespace {
// generate_system -> write_system -> read_system gives back the same structure and numbers.
TEST(SeriesTextFormat, GeneratedTestPolynomialsRoundTrip) {
  for (const bool complex : {false, true}) {
    const std::string name = "p1";
    const auto sys = generate_system(name, 2, complex, 7);
    const std::string path = ::testing::TempDir() + "kosmos_series_roundtrip_" + (complex ? "c" : "r") + ".poly";
    {
      std::ofstream out(path);
      write_system(out, sys, "round trip test");
    }
    const auto back = read_system(path);
    std::remove(path.c_str());
    ASSERT_EQ(back.num_variables, sys.num_variables);
    ASSERT_EQ(back.degree, 2);
    ASSERT_EQ(back.complex, complex);
    ASSERT_EQ(back.polynomials.size(), 1u);
    const auto& p = back.polynomials[0];
    ASSERT_EQ(p.structure.monomials.size(), sys.polynomials[0].structure.monomials.size());
    for (std::size_t k = 0; k < p.structure.monomials.size(); ++k)
      ASSERT_EQ(p.structure.monomials[k].variables, sys.polynomials[0].structure.monomials[k].variables);
    EXPECT_EQ(p.terms, sys.polynomials[0].terms);
    EXPECT_EQ(p.constant, sys.polynomials[0].constant);
    EXPECT_EQ(back.point, sys.point);
    EXPECT_EQ(make_plan(p.structure).num_convolutions(), make_plan(make_test_polynomial(name)).num_convolutions());
  }
}
}  // namespace
