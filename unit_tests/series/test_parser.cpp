// The symbolic input syntax (kosmos/series/parser.hpp): structure and coefficients of parsed
// systems against hand-expanded ones, exactness of decimal coefficients, file:line errors, and a
// parsed system solved by the tracker (x^2 + y^2 = 5, x y = 2: (1, 2), (2, 1), (-1, -2), (-2, -1)).
#include <kosmos/core/error.hpp>
#include <kosmos/core/multi_double.hpp>
#include <kosmos/series/parser.hpp>
#include <kosmos/series/track.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace {
using namespace kosmos::series;

// Coefficient k of the series of monomial `m` (0: the constant) of polynomial p, limb l.
double coefficient(const NumericSystem& s, std::size_t p, std::size_t m, std::size_t k, int l) {
  const NumericPolynomial& q = s.polynomials[p];
  const std::size_t count = q.structure.monomials.size() + 1, n1 = std::size_t(s.degree) + 1;
  return q.coefficients[k + n1 * (m + count * std::size_t(l))];
}
// Index (1-based, as a coefficient slot) of the monomial with these variables and exponents.
std::size_t slot(const NumericSystem& s, std::size_t p, std::vector<int> vars,
                 std::vector<int> exps) {
  const auto& ms = s.polynomials[p].structure.monomials;
  for (std::size_t j = 0; j < ms.size(); ++j)
    if (ms[j].variables == vars && ms[j].exponents == exps) return j + 1;
  ADD_FAILURE() << "monomial not found";
  return 0;
}

// The error parsing `text` as the file sys.txt gives ("no error" if none).
std::string message(const std::string& text) {
  try {
    parse_symbolic(text, "sys.txt", 1);
  } catch (const kosmos::file_error& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

TEST(SymbolicInput, StructureAndCoefficients) {
  std::vector<std::string> names;
  const NumericSystem s = parse_symbolic(
      "2\n# comment\n x1^2*x2 - (1 + 2*t)*x3 + 0.5;\n"
      "x3*(x1 - x2) = 3 * x2**2 ;",
      "mem", 2, &names);
  ASSERT_EQ(names, (std::vector<std::string>{"x1", "x2", "x3"}));
  EXPECT_EQ(s.num_variables, 3);
  EXPECT_EQ(s.degree, 1);
  EXPECT_FALSE(s.complex);
  ASSERT_EQ(s.polynomials.size(), 2u);
  EXPECT_EQ(s.polynomials[0].line, 3u);
  EXPECT_EQ(s.polynomials[1].line, 4u);
  EXPECT_EQ(coefficient(s, 0, 0, 0, 0), 0.5);
  const std::size_t a = slot(s, 0, {0, 1}, {2, 1}), b = slot(s, 0, {2}, {1});
  EXPECT_EQ(coefficient(s, 0, a, 0, 0), 1.0);
  EXPECT_EQ(coefficient(s, 0, a, 1, 0), 0.0);
  EXPECT_EQ(coefficient(s, 0, b, 0, 0), -1.0);
  EXPECT_EQ(coefficient(s, 0, b, 1, 0), -2.0);
  // x1 x3 - x2 x3 - 3 x2^2
  EXPECT_EQ(coefficient(s, 1, slot(s, 1, {0, 2}, {1, 1}), 0, 0), 1.0);
  EXPECT_EQ(coefficient(s, 1, slot(s, 1, {1, 2}, {1, 1}), 0, 0), -1.0);
  EXPECT_EQ(coefficient(s, 1, slot(s, 1, {1}, {2}), 0, 0), -3.0);
}

TEST(SymbolicInput, DecimalsAreCorrectlyRoundedAndComplexUnitsRead) {
  const NumericSystem s = parse_symbolic("0.1*x + 2.5e-1*I*x - i;", "mem", 2);
  ASSERT_TRUE(s.complex);
  kosmos::MultiDouble<2> tenth;
  ASSERT_TRUE(kosmos::from_string("0.1", tenth));
  const std::size_t x = slot(s, 0, {0}, {1});
  EXPECT_EQ(coefficient(s, 0, x, 0, 0), tenth.limb[0]);
  EXPECT_EQ(coefficient(s, 0, x, 0, 1), tenth.limb[1]);
  EXPECT_EQ(coefficient(s, 0, x, 0, 2), 0.25);  // imaginary part, limb 0
  EXPECT_EQ(coefficient(s, 0, 0, 0, 2), -1.0);
  EXPECT_EQ(coefficient(s, 0, 0, 0, 0), 0.0);
  // 1/3 by division in 10-fold double, rounded to 2 limbs: the double-double nearest 1/3
  const NumericSystem third = parse_symbolic("x - 1/3;", "mem", 2);
  kosmos::MultiDouble<2> one_third;
  ASSERT_TRUE(kosmos::from_string("0.33333333333333333333333333333333333333", one_third));
  EXPECT_EQ(coefficient(third, 0, 0, 0, 0), -one_third.limb[0]);
  EXPECT_EQ(coefficient(third, 0, 0, 0, 1), -one_third.limb[1]);
}

// Powers of t that cancel leave series longer than the system's degree: only the coefficients up
// to the degree are stored (fuzzing found the cancelled ones written past the monomial's slots,
// over the constant's second limb and past the end).
TEST(SymbolicInput, CancelledPowersOfTAreNotStored) {
  const NumericSystem s = parse_symbolic("(1 + t - t)*x^2 - 0.1;", "mem", 2);
  ASSERT_EQ(s.degree, 0);
  ASSERT_EQ(s.polynomials[0].coefficients.size(), 4u);  // (constant, x^2) x 2 limbs
  kosmos::MultiDouble<2> tenth;
  ASSERT_TRUE(kosmos::from_string("0.1", tenth));
  ASSERT_NE(tenth.limb[1], 0.0);
  const std::size_t x2 = slot(s, 0, {0}, {2});
  EXPECT_EQ(coefficient(s, 0, 0, 0, 0), -tenth.limb[0]);
  EXPECT_EQ(coefficient(s, 0, 0, 0, 1), -tenth.limb[1]);
  EXPECT_EQ(coefficient(s, 0, x2, 0, 0), 1.0);
  EXPECT_EQ(coefficient(s, 0, x2, 0, 1), 0.0);
}

TEST(SymbolicInput, ErrorsNameFileAndLine) {
  EXPECT_NE(message("x + 1;\ny - 2").find("sys.txt:2: missing ';'"), std::string::npos);
  EXPECT_NE(message("x + 1;\n\ny - * 2;").find("sys.txt:3: unexpected '*'"), std::string::npos);
  EXPECT_NE(
      message("x^-1;").find("sys.txt:1: the exponent after '^' must be a non-negative integer"),
      std::string::npos);
  EXPECT_NE(message("x/y;").find("sys.txt:1: division by a non-constant"), std::string::npos);
  EXPECT_NE(message("3\nx - 1;\ny - 1;")
                .find("sys.txt:1: the first line declares 3 equation(s), the file has 2"),
            std::string::npos);
  EXPECT_NE(message("x - 1e999;").find("number '1e999' overflows"), std::string::npos);
  EXPECT_NE(message("(x - 1;").find("expected ')'"), std::string::npos);
  EXPECT_TRUE(is_symbolic("# c\nx - 1;"));
  EXPECT_FALSE(is_symbolic("# c\nvariables 2\n"));
}

// Powers by squaring equal their expansion: (1 + 2t)^13 has the binomial coefficients
// C(13, k) 2^k (exact in double), x^1000000 is one monomial, t^2000 one coefficient; expansions
// past the parser's budget or max_degree are refused at their line, in well under a second
// (a fuzzed t^1111 took minutes by repeated multiplication).
TEST(SymbolicInput, PowersBySquaringAndTheirLimits) {
  const auto s = parse_symbolic("x - (1 + 2*t)^13;\ny^1000000 - t^2000;", "sys.txt", 1);
  ASSERT_EQ(s.degree, 2000);
  double binomial = 1;
  for (int k = 0; k <= 13; ++k) {
    EXPECT_EQ(coefficient(s, 0, 0, std::size_t(k), 0), -binomial * std::ldexp(1.0, k)) << k;
    binomial = binomial * (13 - k) / (k + 1);
  }
  const std::size_t y = slot(s, 1, {1}, {1000000});
  EXPECT_EQ(coefficient(s, 1, y, 0, 0), 1.0);
  EXPECT_EQ(coefficient(s, 1, 0, 2000, 0), -1.0);
  EXPECT_EQ(coefficient(s, 1, 0, 1999, 0), 0.0);
  EXPECT_NE(message("x - 1;\nx - (1 + t)^5000;").find("sys.txt:2: expanding the expressions takes "
                                                      "more than 200000 products"),
            std::string::npos);
  EXPECT_NE(message("x - t^60000 * t^60000;").find("would pass degree 100000"), std::string::npos);
}

TEST(SymbolicInput, ParsedSystemIsSolvedByTheTracker) {
  const NumericSystem s = parse_symbolic("2\nx^2 + y^2 - 5;\nx*y - 2;\n", "mem", 1);
  const TrackResult r = track(Kokkos::DefaultHostExecutionSpace(), s, TrackOptions{});
  ASSERT_EQ(r.solutions.size(), 4u);
  std::vector<std::pair<double, double>> found;
  for (const Solution& sol : r.solutions) {
    const PathResult& p = r.paths[std::size_t(sol.path)];
    EXPECT_EQ(p.status, PathStatus::regular);
    EXPECT_LT(std::abs(p.x(0).imag()) + std::abs(p.x(1).imag()), 1e-13);
    found.push_back({std::round(p.x(0).real()), std::round(p.x(1).real())});
    EXPECT_LT(std::abs(p.x(0) - found.back().first) + std::abs(p.x(1) - found.back().second),
              1e-13);
  }
  std::sort(found.begin(), found.end());
  EXPECT_EQ(found, (std::vector<std::pair<double, double>>{{-2, -1}, {-1, -2}, {1, 2}, {2, 1}}));
}
}  // namespace
