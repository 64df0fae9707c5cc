// The `kosmos series` pipeline: text and HDF5 system files carry the same numbers, the HDF5
// result file holds what the evaluation computed, precisions convert exactly, and bad HDF5 files
// get errors naming file and dataset.
#include <kosmos/core/error.hpp>
#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/multi_double.hpp>
#include <kosmos/series/pipeline.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>
#include <string>

namespace {
using namespace kosmos::series;

const std::string kExample = std::string(KOSMOS_SERIES_EXAMPLES_DIR) + "/simple.poly";

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "kosmos_series_files_" + name;
}

void expect_throws_with(const std::function<void()>& f, const std::string& fragment) {
  try {
    f();
    FAIL() << "no error, expected one containing '" << fragment << "'";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

#define KOSMOS_REQUIRE_HDF5() \
  if (!kosmos::io::hdf5_enabled()) GTEST_SKIP() << "built without HDF5 (KOSMOS_ENABLE_HDF5=OFF)"

TEST(SeriesFiles, Hdf5SystemRoundTripsTheNumbersAndStructure) {
  KOSMOS_REQUIRE_HDF5();
  for (const bool complex : {false, true}) {
    const auto sys = to_numeric(generate_system("p1", 3, complex, 11), 4, "generated");
    const std::string path = temp_path(complex ? "c.h5" : "r.h5");
    write_system_h5(path, sys, "test");
    const auto back = read_system_h5(path);
    std::remove(path.c_str());
    EXPECT_EQ(back.num_variables, 16);
    EXPECT_EQ(back.degree, 3);
    EXPECT_EQ(back.precision, 4);
    EXPECT_EQ(back.complex, complex);
    EXPECT_EQ(back.point, sys.point);
    ASSERT_EQ(back.polynomials.size(), 1u);
    EXPECT_EQ(back.polynomials[0].coefficients, sys.polynomials[0].coefficients);
    const auto& m = back.polynomials[0].structure.monomials;
    ASSERT_EQ(m.size(), 1820u);
    EXPECT_EQ(m.back().variables, (std::vector<int>{12, 13, 14, 15}));
  }
}

// The example's first polynomial, 1 + x1 x2^2 + (0.5 - t) x3 at x = (1 + t, 2 - t^2, 0.1 t), has
// the value 5 + 4.05 t - 4.1 t^2 - 4 t^3 (by hand); through .h5 in and .h5 out in double-double.
TEST(SeriesFiles, Hdf5PipelineMatchesTheClosedFormAndTheTextPipeline) {
  KOSMOS_REQUIRE_HDF5();
  const std::string in = temp_path("simple.h5"), out = temp_path("simple_values.h5");
  write_system_h5(in, load_system(kExample, 2), "example");
  FileEvaluation job;
  job.input = in;
  job.output = out;
  job.precision = 2;
  std::ostringstream unused;
  evaluate_file(job, unused);
  EXPECT_TRUE(unused.str().empty());
  kosmos::io::H5Reader r(out);
  EXPECT_EQ(r.attribute_string("/", "format"), "kosmos series values");
  EXPECT_EQ(r.dims("value"), (std::vector<std::size_t>{2, 2, 4}));        // (P, limbs, d + 1)
  EXPECT_EQ(r.dims("gradient"), (std::vector<std::size_t>{2, 2, 3, 4}));  // (P, limbs, n, d + 1)
  const auto value = r.read<double>("value");
  const char* expected[] = {"5", "4.05", "-4.1", "-4"};
  for (int k = 0; k < 4; ++k) {
    kosmos::MultiDouble<2> got, want;
    got.limb[0] = value[std::size_t(k)];
    got.limb[1] = value[std::size_t(4 + k)];
    ASSERT_TRUE(kosmos::from_string(expected[k], want));
    EXPECT_LE(std::fabs(kosmos::to_double(got - want)), 16 * kosmos::unit_roundoff<2>() * 5)
        << "t^" << k;
  }
  // the same numbers as the text pipeline computes from the text file
  const auto text_values = evaluate_system(load_system(kExample, 2));
  EXPECT_EQ(std::vector<double>(value.begin(), value.begin() + 8), text_values.values[0]);
  const auto gradient = r.read<double>("gradient");
  EXPECT_EQ(std::vector<double>(gradient.begin() + 24, gradient.end()), text_values.gradients[1]);
  std::remove(in.c_str());
  std::remove(out.c_str());
}

TEST(SeriesFiles, PrecisionConversionIsExactUpAndNearestDown) {
  auto sys = to_numeric(generate_system("p1", 1, true, 3), 2, "generated");
  const auto up = with_precision(sys, 5);
  const auto down = with_precision(sys, 1);
  const auto direct = to_numeric(generate_system("p1", 1, true, 3), 1, "generated");
  const std::size_t rows = sys.point.size() / 4;  // (d + 1) n rows, 2 parts x 2 limbs
  for (std::size_t r = 0; r < rows; ++r)
    for (int part = 0; part < 2; ++part) {
      for (int l = 0; l < 2; ++l)
        EXPECT_EQ(up.point[r + rows * std::size_t(part * 5 + l)],
                  sys.point[r + rows * std::size_t(part * 2 + l)]);
      for (int l = 2; l < 5; ++l) EXPECT_EQ(up.point[r + rows * std::size_t(part * 5 + l)], 0.0);
      // the generator's 17-digit decimals: the nearest double of their double-double is theirs
      EXPECT_EQ(down.point[r + rows * std::size_t(part)],
                direct.point[r + rows * std::size_t(part)]);
    }
}

TEST(SeriesFiles, BadHdf5FilesNameFileAndDataset) {
  KOSMOS_REQUIRE_HDF5();
  const std::string path = temp_path("bad.h5");
  {
    kosmos::io::H5Writer w(path);
    w.write("point", std::vector<double>{1.0});
    w.commit();
  }
  expect_throws_with([&] { read_system_h5(path); }, "bad.h5: not a kosmos series system");
  auto sys = load_system(kExample, 1);
  write_system_h5(path, sys, "example");
  const auto real_one_polynomial_header = [](kosmos::io::H5Writer& w, long long variables,
                                             long long degree) {
    w.attribute("/", "format", "kosmos series system");
    w.attribute("/", "variables", variables);
    w.attribute("/", "degree", degree);
    w.attribute("/", "precision", 1LL);
    w.attribute("/", "complex", 0LL);
    w.attribute("/", "polynomials", 1LL);
  };
  {  // a point of the wrong size
    sys.point.pop_back();
    sys.num_variables = 3;
    kosmos::io::H5Writer w(path);
    real_one_polynomial_header(w, 3, 3);
    w.write("point", sys.point.data(), {1, 11});
    w.commit();
  }
  expect_throws_with([&] { read_system_h5(path); },
                     "bad.h5: 'point': has shape (1, 11), expected (1, 3, 4)");
  {  // one monomial whose variable number the shift to 0-based would overflow (INT_MIN - 1)
    kosmos::io::H5Writer w(path);
    real_one_polynomial_header(w, 2, 1);
    const std::vector<double> point(4, 1.0), coefficients(4, 1.0);
    w.write("point", point.data(), {1, 2, 2});
    w.write("polynomial_1/coefficients", coefficients.data(), {1, 2, 2});
    w.write("polynomial_1/monomial_offsets", std::vector<std::int32_t>{0, 1});
    w.write("polynomial_1/variables",
            std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::min()});
    w.write("polynomial_1/exponents", std::vector<std::int32_t>{1});
    w.commit();
  }
  expect_throws_with([&] { read_system_h5(path); },
                     "bad.h5: dataset 'polynomial_1/variables' entry 0 is -2147483648, not a "
                     "variable 1..");
  sys = load_system(kExample, 1);
  sys.polynomials[1].coefficients[2] = std::nan("");
  write_system_h5(path, sys, "example");
  expect_throws_with([&] { read_system_h5(path); },
                     "dataset 'polynomial_2/coefficients' element 2 is nan");
  std::remove(path.c_str());
  expect_throws_with([&] { load_system(temp_path("missing.h5"), 2); }, "missing.h5");
}

TEST(SeriesFiles, BadNumbersInATextSystemNameTheLine) {
  auto text = read_system(kExample);
  text.polynomials[1].terms[0][2] = "1e999";
  expect_throws_with([&] { to_numeric(text, 2, "example"); },
                     "example:" + std::to_string(text.polynomials[1].lines[0]) +
                         ": coefficient '1e999' overflows");
  text.polynomials[1].terms[0][2] = "1.5.2";
  expect_throws_with([&] { to_numeric(text, 2, "example"); }, "coefficient '1.5.2' is malformed");
}

TEST(SeriesFiles, OverflowInTheEvaluationNamesFileLineAndCoefficient) {
  auto sys = load_system(kExample, 3);
  for (auto& x : sys.point) x *= 1e300;  // x1 x2^2 ~ 1e900
  expect_throws_with([&] { evaluate_system(sys); }, "simple.poly:");
  expect_throws_with([&] { evaluate_system(sys); }, "polynomial 1: value coefficient 0 is ");
}

// --newton's pipeline: sqrt(1 + t) = 1 + t/2 - t^2/8 + t^3/16 - 5 t^4/128 (dyadic, so exact in
// every precision) from the text system and from the same system as HDF5; the HDF5 solution file
// holds the limbs the solver returned.
TEST(SeriesFiles, NewtonPipelineSolvesTheSqrtHomotopyFromTextAndHdf5) {
  const std::string text = std::string(KOSMOS_SERIES_EXAMPLES_DIR) + "/sqrt_homotopy.poly";
  const double expected[] = {1, 0.5, -0.125, 0.0625, -5.0 / 128};
  const NumericSystem sys = load_system(text, 4);
  const NewtonSolution solution = solve_newton(sys, 4);
  ASSERT_EQ(solution.x.size(), 5u * 4u);
  for (std::size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(solution.x[k], expected[k]) << "coefficient " << k;
    for (std::size_t l = 1; l < 4; ++l) EXPECT_EQ(solution.x[k + 5 * l], 0.0) << k << " limb " << l;
  }
  ASSERT_EQ(solution.result.coefficient_ratio.size(), 1u);
  EXPECT_DOUBLE_EQ(solution.result.coefficient_ratio[0], 1.6);
  // --start -1: the other branch, -sqrt(1 + t)
  const NewtonSolution negative = solve_newton(sys, 4, {"-1"});
  for (std::size_t k = 0; k < 5; ++k) EXPECT_EQ(negative.x[k], -expected[k]) << "coefficient " << k;
  expect_throws_with([&] { solve_newton(sys, 4, {"1x"}); }, "start value '1x'");
  expect_throws_with([&] { solve_newton(sys, 4, {"1,2"}); },
                     "complex start value '1,2' for a real system");

  if (!kosmos::io::hdf5_enabled()) GTEST_SKIP() << "built without HDF5 (KOSMOS_ENABLE_HDF5=OFF)";
  const std::string system_h5 = temp_path("sqrt_homotopy.h5"), result_h5 = temp_path("sqrt.h5");
  write_system_h5(system_h5, sys, "sqrt homotopy");
  const NewtonSolution from_h5 = solve_newton(load_system(system_h5, 4), 4);
  EXPECT_EQ(from_h5.x, solution.x);
  write_newton_h5(result_h5, solution, text);
  const kosmos::io::H5Reader in(result_h5);
  EXPECT_EQ(in.attribute_string("/", "format"), "kosmos series newton");
  EXPECT_EQ(in.dims("x"), (std::vector<std::size_t>{4, 1, 5}));
  EXPECT_EQ(in.read<double>("x"), solution.x);
  EXPECT_EQ(in.read<double>("ratio"), solution.result.coefficient_ratio);
  std::remove(system_h5.c_str());
  std::remove(result_h5.c_str());
}
}  // namespace
