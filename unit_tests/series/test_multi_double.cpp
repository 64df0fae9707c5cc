// Multiple-double arithmetic against MPFR: the documented error bounds of add, mul, div and sqrt
// (decimal conversion: test_decimal.cpp), for N = 1, 2, 3, 4, 5, 8, 10, on the host and inside Kokkos kernels.
#include "mpfr_reference.hpp"

#include <kosmos/core/multi_double.hpp>

#include <test_spaces.hpp>

#include <cmath>
#include <random>

namespace {
using kosmos::MultiDouble;
using kosmos_test::exact;
using kosmos_test::Mp;
using kosmos_test::random_md;
using kosmos_test::relative_difference;

constexpr int kSamples = 3000;

template <int N>
void check_add_mul() {
  std::mt19937_64 rng(1000 + N);
  double worst_add = 0, worst_mul = 0;
  for (int s = 0; s < kSamples; ++s) {
    const auto a = random_md<N>(rng, -40, 40);
    const auto b = random_md<N>(rng, -40, 40);
    const Mp ea = exact(a), eb = exact(b);
    Mp sum, prod, scale, t;
    mpfr_add(sum.get(), ea.get(), eb.get(), MPFR_RNDN);
    mpfr_abs(scale.get(), ea.get(), MPFR_RNDN);
    mpfr_abs(t.get(), eb.get(), MPFR_RNDN);
    mpfr_add(scale.get(), scale.get(), t.get(), MPFR_RNDN);
    mpfr_mul(prod.get(), ea.get(), eb.get(), MPFR_RNDN);
    Mp abs_prod;
    mpfr_abs(abs_prod.get(), prod.get(), MPFR_RNDN);
    const double e_add = relative_difference(exact(a + b), sum, scale);
    const double e_mul = relative_difference(exact(a * b), prod, abs_prod);
    worst_add = std::max(worst_add, e_add);
    worst_mul = std::max(worst_mul, e_mul);
    ASSERT_LE(e_add, kosmos::add_error_bound<N>()) << "N = " << N << " sample " << s;
    ASSERT_LE(e_mul, kosmos::mul_error_bound<N>()) << "N = " << N << " sample " << s;
    // subtraction with cancellation in the leading limb: accurate relative to the inputs
    const auto c = a + MultiDouble<N>(std::ldexp(1.0, -30) * a.limb[0]);
    Mp diff;
    mpfr_sub(diff.get(), exact(c).get(), ea.get(), MPFR_RNDN);
    Mp sc;
    mpfr_abs(sc.get(), exact(c).get(), MPFR_RNDN);
    mpfr_abs(t.get(), ea.get(), MPFR_RNDN);
    mpfr_add(sc.get(), sc.get(), t.get(), MPFR_RNDN);
    ASSERT_LE(relative_difference(exact(c - a), diff, sc), kosmos::add_error_bound<N>()) << "N = " << N;
  }
  std::printf("[ MD %2d ] worst add %.3g (bound %.3g)  mul %.3g (bound %.3g)  [units of 2^-53N: %.2f, %.2f]\n",
              N, worst_add, kosmos::add_error_bound<N>(), worst_mul, kosmos::mul_error_bound<N>(),
              worst_add / kosmos::unit_roundoff<N>(), worst_mul / kosmos::unit_roundoff<N>());
}

TEST(MultiDouble, AddAndMulWithinDocumentedBoundsAgainstMpfr) {
  check_add_mul<1>();
  check_add_mul<2>();
  check_add_mul<3>();
  check_add_mul<4>();
  check_add_mul<5>();
  check_add_mul<8>();
  check_add_mul<10>();
}

// Division and square root: relative error within div_error_bound<N>() = 8 (N + 1) 2^(-53N).
template <int N>
void check_div_sqrt() {
  std::mt19937_64 rng(2000 + N);
  const double bound = kosmos::div_error_bound<N>();
  for (int s = 0; s < 500; ++s) {
    const auto a = random_md<N>(rng, -30, 30);
    auto b = random_md<N>(rng, -30, 30);
    Mp q, ab;
    mpfr_div(q.get(), exact(a).get(), exact(b).get(), MPFR_RNDN);
    mpfr_abs(ab.get(), q.get(), MPFR_RNDN);
    ASSERT_LE(relative_difference(exact(a / b), q, ab), bound) << "N = " << N << " sample " << s;
    const auto pa = kosmos::abs(a);
    Mp r;
    mpfr_sqrt(r.get(), exact(pa).get(), MPFR_RNDN);
    ASSERT_LE(relative_difference(exact(kosmos::sqrt(pa)), r, r), bound) << "N = " << N << " sample " << s;
  }
  EXPECT_EQ(kosmos::sqrt(MultiDouble<N>(0.0)).limb[0], 0.0);
  EXPECT_TRUE(std::isnan(kosmos::sqrt(MultiDouble<N>(-1.0)).limb[0]));
}

TEST(MultiDouble, DivisionAndSquareRootAgainstMpfr) {
  check_div_sqrt<1>();
  check_div_sqrt<2>();
  check_div_sqrt<3>();
  check_div_sqrt<4>();
  check_div_sqrt<5>();
  check_div_sqrt<8>();
  check_div_sqrt<10>();
}

template <int N>
void check_comparisons() {
  std::mt19937_64 rng(3000 + N);
  for (int s = 0; s < 300; ++s) {
    const auto a = random_md<N>(rng, -5, 5);
    // b differs from a only in the last limb's range
    const auto b = a + MultiDouble<N>(std::ldexp(a.limb[0], -52 * N + 2));
    EXPECT_EQ(mpfr_cmp(exact(a).get(), exact(b).get()) < 0, a < b);
    EXPECT_TRUE(a == a);
    EXPECT_TRUE(a != b);
    EXPECT_TRUE(a <= a && a >= a);
    EXPECT_EQ(b > a, a < b);
    EXPECT_EQ(kosmos::to_double(a), exact(a).to_double());
  }
}

TEST(MultiDouble, ComparisonsAndConversionToDouble) {
  check_comparisons<1>();
  check_comparisons<2>();
  check_comparisons<3>();
  check_comparisons<4>();
  check_comparisons<5>();
  check_comparisons<8>();
  check_comparisons<10>();
}

// The same arithmetic inside kernels: products and sums of N-doubles stored limb by limb
// (structure of arrays) agree bit for bit with the host results.
template <class Space, int N>
void check_in_kernel() {
  const int n = 257;
  Kokkos::View<double**, Kokkos::LayoutLeft, Space> a("a", n, N), b("b", n, N), p("p", n, N), s("s", n, N);
  auto ha = Kokkos::create_mirror_view(a), hb = Kokkos::create_mirror_view(b);
  std::mt19937_64 rng(5000 + N);
  std::vector<MultiDouble<N>> va, vb;
  for (int i = 0; i < n; ++i) {
    va.push_back(random_md<N>(rng, -20, 20));
    vb.push_back(random_md<N>(rng, -20, 20));
    for (int l = 0; l < N; ++l) {
      ha(i, l) = va.back().limb[l];
      hb(i, l) = vb.back().limb[l];
    }
  }
  Kokkos::deep_copy(a, ha);
  Kokkos::deep_copy(b, hb);
  Kokkos::parallel_for(
      "test::md_kernel", Kokkos::RangePolicy<Space>(0, n), KOKKOS_LAMBDA(const int i) {
        MultiDouble<N> x, y;
        for (int l = 0; l < N; ++l) {
          x.limb[l] = a(i, l);
          y.limb[l] = b(i, l);
        }
        const auto q = x * y, r = x + y;
        for (int l = 0; l < N; ++l) {
          p(i, l) = q.limb[l];
          s(i, l) = r.limb[l];
        }
      });
  auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p);
  auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
  for (int i = 0; i < n; ++i) {
    const auto q = va[std::size_t(i)] * vb[std::size_t(i)], r = va[std::size_t(i)] + vb[std::size_t(i)];
    for (int l = 0; l < N; ++l) {
      ASSERT_EQ(hp(i, l), q.limb[l]) << "N = " << N << " i = " << i << " limb " << l;
      ASSERT_EQ(hs(i, l), r.limb[l]) << "N = " << N << " i = " << i << " limb " << l;
    }
  }
}

template <class Space>
class MultiDoubleKernel : public ::testing::Test {};
TYPED_TEST_SUITE(MultiDoubleKernel, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

TYPED_TEST(MultiDoubleKernel, DeviceResultsMatchHostBitForBit) {
  check_in_kernel<TypeParam, 1>();
  check_in_kernel<TypeParam, 2>();
  check_in_kernel<TypeParam, 3>();
  check_in_kernel<TypeParam, 4>();
  check_in_kernel<TypeParam, 5>();
  check_in_kernel<TypeParam, 8>();
  check_in_kernel<TypeParam, 10>();
}
}  // namespace
