// Decimal <-> multiple-double conversion against MPFR (4000-bit values, exact limb extraction):
// parsing gives the greedy round-to-nearest limbs of the exact decimal for N = 1..10 over every
// finite double exponent (subnormals and DBL_MAX included); printing is the exact value correctly
// rounded to any number of digits, and the default digits read back to the same value.
#include "mpfr_reference.hpp"

#include <kosmos/core/multi_double.hpp>

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {
using kosmos::DecimalStatus;
using kosmos::MultiDouble;
using kosmos_test::Mp;

constexpr mpfr_prec_t kPrec = 4000;  // far beyond the 2100 bits between DBL_MAX and 2^-1074

// The greedy nearest-double expansion of `text` by MPFR: limb i = RN(x - limbs 0..i-1), each
// subtraction exact at kPrec bits. Empty when the leading limb overflows.
std::vector<double> mpfr_limbs(const std::string& text, int n) {
  Mp x(kPrec);
  EXPECT_EQ(mpfr_set_str(x.get(), text.c_str(), 10, MPFR_RNDN), 0) << text;
  std::vector<double> limbs;
  for (int i = 0; i < n; ++i) {
    const double limb = mpfr_get_d(x.get(), MPFR_RNDN);
    if (std::isinf(limb)) return {};
    limbs.push_back(limb);
    EXPECT_EQ(mpfr_sub_d(x.get(), x.get(), limb, MPFR_RNDN), 0) << "inexact reference remainder";
  }
  return limbs;
}

// Exact sum of limbs (kPrec bits hold any sum of finite doubles exactly).
Mp exact_sum(const std::vector<double>& limbs) {
  Mp r(kPrec);
  for (double l : limbs) mpfr_add_d(r.get(), r.get(), l, MPFR_RNDN);
  return r;
}

void expect_parse(const std::string& text, int n) {
  std::vector<double> limbs(std::size_t(n), -1.0);
  const DecimalStatus status = kosmos::Impl::parse_decimal(text, limbs.data(), n);
  const auto reference = mpfr_limbs(text, n);
  if (reference.empty()) {
    EXPECT_EQ(status, DecimalStatus::overflow) << text << " N = " << n;
    return;
  }
  ASSERT_EQ(status, DecimalStatus::ok) << text << " N = " << n;
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(limbs[std::size_t(i)], reference[std::size_t(i)])
        << text << " N = " << n << " limb " << i;
}

// A random decimal: 1..40 significant digits, value about 10^e with e in [emin, emax].
std::string random_decimal(std::mt19937_64& rng, int emin, int emax) {
  std::uniform_int_distribution<int> length(1, 40), digit(0, 9), exponent(emin, emax), coin(0, 1);
  const int L = length(rng);
  std::string s = coin(rng) ? "-" : "";
  s += char('1' + digit(rng) % 9);
  s += '.';
  for (int i = 1; i < L; ++i) s += char('0' + digit(rng));
  return s + "e" + std::to_string(exponent(rng));
}

TEST(Decimal, ParsesToTheGreedyNearestLimbsOverEveryExponent) {
  std::mt19937_64 rng(2024);
  for (int n = 1; n <= 10; ++n)
    for (int s = 0; s < 300; ++s) expect_parse(random_decimal(rng, -324, 308), n);
}

TEST(Decimal, ParsesTheCasesOfTheIssue) {
  for (int n = 1; n <= 10; ++n) {
    for (const char* text : {"1.5e-308",
                             "12345e-310",
                             "1.7976931348623157e308",
                             "-1.7976931348623157e+308",
                             "84.477",
                             "0.1",
                             "4.9406564584124654e-324",
                             "2.4703282292062328e-324",
                             "2.4703282292062327e-324",
                             "1e-320",
                             "2.2250738585072011e-308",
                             "1e-305",
                             "0.000000000000000000000000000000000000000000000001",
                             "123456789012345678901234567890",
                             "1.7976931348623158e308",
                             "1.8e308",
                             "1e309",
                             "1e-400",
                             "0e999999",
                             "1e-304",
                             "-3.0517578125e-305"})
      expect_parse(text, n);
  }
  MultiDouble<1> x;
  ASSERT_EQ(kosmos::parse_decimal("1.5e-308", x), DecimalStatus::ok);
  EXPECT_EQ(x.limb[0], 1.5e-308);  // no longer read as 0
  ASSERT_EQ(kosmos::parse_decimal("12345e-310", x), DecimalStatus::ok);
  EXPECT_EQ(x.limb[0], 12345e-310);
  ASSERT_EQ(kosmos::parse_decimal("1.7976931348623157e308", x), DecimalStatus::ok);
  EXPECT_EQ(x.limb[0], DBL_MAX);
  ASSERT_EQ(kosmos::parse_decimal("4.9e-324", x), DecimalStatus::ok);
  EXPECT_EQ(x.limb[0], 0x1p-1074);
}

TEST(Decimal, RejectsMalformedAndOverflowingNumbers) {
  MultiDouble<3> x;
  for (const char* text :
       {"", "-", ".", "1.2.3", "nan", "inf", "-inf", "1e", "1e+", "0x12", "--1", "e5", "1 ", "1,5"})
    EXPECT_EQ(kosmos::parse_decimal(text, x), DecimalStatus::malformed) << "'" << text << "'";
  for (const char* text : {"1e309", "-1.8e308", "1e999999999999999", "1.797693134862315808e308"})
    EXPECT_EQ(kosmos::parse_decimal(text, x), DecimalStatus::overflow) << text;
  // rounds down to DBL_MAX (below DBL_MAX + half an ulp), not an overflow
  EXPECT_EQ(kosmos::parse_decimal("1.797693134862315807e308", x), DecimalStatus::ok);
  EXPECT_EQ(kosmos::parse_decimal("1e-999999999", x), DecimalStatus::ok);
  EXPECT_EQ(x.limb[0], 0.0);
  EXPECT_FALSE(kosmos::from_string("1e999", x));
  EXPECT_TRUE(kosmos::from_string(".5", x));
  EXPECT_EQ(x.limb[0], 0.5);
}

// MPFR's correctly rounded D-digit scientific notation of the exact sum, as (digits, exponent).
std::pair<std::string, long> mpfr_digits(const std::vector<double>& limbs, int D) {
  const Mp x = exact_sum(limbs);
  std::vector<char> buffer(std::size_t(D) + 64);
  mpfr_snprintf(buffer.data(), buffer.size(), "%.*Re", D - 1, x.get());
  const std::string s(buffer.data());
  const auto e = s.find('e');
  std::string digits;
  for (char c : s.substr(0, e))
    if (c >= '0' && c <= '9') digits += c;
  return {(s[0] == '-' ? "-" : "") + digits, std::stol(s.substr(e + 1))};
}
std::pair<std::string, long> our_digits(const std::string& s) {
  const auto e = s.find('e');
  std::string digits;
  for (char c : s.substr(0, e))
    if (c >= '0' && c <= '9') digits += c;
  return {(s[0] == '-' ? "-" : "") + digits, std::stol(s.substr(e + 1))};
}

template <int N>
void check_printing(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> digits(1, 60 * N);
  for (int s = 0; s < 60; ++s) {
    // parsed values (greedy limbs, down to subnormals) and arithmetic results (mixed-sign limbs)
    MultiDouble<N> x;
    if (s % 2) {
      ASSERT_EQ(kosmos::parse_decimal(random_decimal(rng, -322, 307), x), DecimalStatus::ok);
    } else {
      x = kosmos_test::random_md<N>(rng, -1000, 1000);
    }
    const std::vector<double> limbs(x.limb, x.limb + N);
    const int D = digits(rng);
    const std::string text = kosmos::to_string(x, D);
    EXPECT_EQ(our_digits(text), mpfr_digits(limbs, D)) << text << " N = " << N;
    // default: reads back to the same value
    const std::string shortest = kosmos::to_string(x);
    MultiDouble<N> back;
    ASSERT_EQ(kosmos::parse_decimal(shortest, back), DecimalStatus::ok) << shortest;
    EXPECT_EQ(mpfr_cmp(exact_sum(limbs).get(),
                       exact_sum(std::vector<double>(back.limb, back.limb + N)).get()),
              0)
        << shortest << " N = " << N;
    if (s % 2) {  // N greedy limbs: about 16 digits per limb suffice
      EXPECT_LE(our_digits(shortest).first.size(), std::size_t(17 * N + 2)) << shortest;
    }
  }
}

TEST(Decimal, PrintsTheExactValueCorrectlyRoundedToAnyDigits) {
  std::mt19937_64 rng(77);
  check_printing<1>(rng);
  check_printing<2>(rng);
  check_printing<3>(rng);
  check_printing<4>(rng);
  check_printing<5>(rng);
  check_printing<6>(rng);
  check_printing<7>(rng);
  check_printing<8>(rng);
  check_printing<9>(rng);
  check_printing<10>(rng);
}

TEST(Decimal, PrintsTheCasesOfTheIssue) {
  // 84.477 at N = 2 with 34 digits: a digit below zero used to be clamped without a borrow
  MultiDouble<2> x;
  ASSERT_EQ(kosmos::parse_decimal("84.477", x), DecimalStatus::ok);
  const std::string text = kosmos::to_string(x, 34);
  EXPECT_EQ(our_digits(text), mpfr_digits({x.limb[0], x.limb[1]}, 34)) << text;
  EXPECT_NE(text, "8.447700000000000999999999999999932e+1");
  // ties to even on the exact digits; carries into a new leading digit
  EXPECT_EQ(kosmos::to_string(MultiDouble<1>(2.5), 1), "2e+0");
  EXPECT_EQ(kosmos::to_string(MultiDouble<1>(3.5), 1), "4e+0");
  EXPECT_EQ(kosmos::to_string(MultiDouble<1>(9.96), 2), "1.0e+1");
  EXPECT_EQ(kosmos::to_string(MultiDouble<3>(-2.5), 3), "-2.50e+0");
  EXPECT_EQ(kosmos::to_string(MultiDouble<3>(0.0)), "0");
  EXPECT_EQ(kosmos::to_string(MultiDouble<1>(0.1)), "1e-1");    // reads back to the same double
  EXPECT_EQ(kosmos::to_string(MultiDouble<2>(1.5)), "1.5e+0");  // exact: no padding
  EXPECT_EQ(kosmos::to_string(MultiDouble<1>(DBL_MAX)), "1.7976931348623157e+308");
  EXPECT_EQ(kosmos::to_string(MultiDouble<1>(0x1p-1074)), "5e-324");
  EXPECT_EQ(kosmos::to_string(MultiDouble<1>(std::nan(""))), "nan");
  EXPECT_EQ(kosmos::to_string(MultiDouble<1>(-HUGE_VAL)), "-inf");
}
}  // namespace
