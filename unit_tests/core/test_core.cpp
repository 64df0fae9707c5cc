#include <kosmos/config.hpp>
#include <kosmos/core/compensated.hpp>
#include <kosmos/core/configuration.hpp>
#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/core/validation.hpp>

#include <test_spaces.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

namespace {

template <class Space>
class CoreTest : public ::testing::Test {};
TYPED_TEST_SUITE(CoreTest, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

#if defined(__SIZEOF_FLOAT128__) && !defined(__CUDACC__)
using Wide = __float128;  // 113-bit mantissa: holds every exact double product and close sum
constexpr bool exact_products = true;
#else
using Wide = long double;  // 64-bit mantissa: exact sums only, products are checked loosely
constexpr bool exact_products = false;
#endif

TEST(ErrorFreeTransforms, TwoSumAndTwoProdAreExact) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-5, 5);
  for (int i = 0; i < 10000; ++i) {
    const double a = std::ldexp(mantissa(rng), exponent(rng));
    const double b = std::ldexp(mantissa(rng), exponent(rng));
    double s, e, p, f;
    kosmos::two_sum(a, b, s, e);
    kosmos::two_prod(a, b, p, f);
    EXPECT_TRUE(Wide(s) + Wide(e) == Wide(a) + Wide(b)) << a << " + " << b;
    EXPECT_EQ(s, a + b);
    EXPECT_LE(std::fabs(e), std::ldexp(std::fabs(s), -53));
    if (exact_products) {
      EXPECT_TRUE(Wide(p) + Wide(f) == Wide(a) * Wide(b)) << a << " * " << b;
    }
    EXPECT_EQ(p, a * b);
    EXPECT_LE(std::fabs(f), std::ldexp(std::fabs(p), -53));
  }
}

TEST(CompensatedSum, RecoversWhatNaiveFloatSummationLoses) {
  // 1 + n * 1e-8 in float: naive summation never moves off 1.0f (1e-8 < half an ulp of 1).
  const int n = 1000000;
  float naive = 1.0f;
  kosmos::CompensatedSum<float> compensated;
  compensated.add(1.0f);
  for (int i = 0; i < n; ++i) {
    naive += 1e-8f;
    compensated.add(1e-8f);
  }
  const double exact = 1.0 + n * double(1e-8f);
  EXPECT_EQ(naive, 1.0f);
  EXPECT_NEAR(compensated.value(), exact, 2 * std::numeric_limits<float>::epsilon() * exact);
}

// nvcc forbids device lambdas inside a test body (a private member): kernels live in free functions.
template <class Space>
void check_first_index_where() {
  const std::int64_t n = 100000;
  Kokkos::View<double*, Space> v("v", n);
  Kokkos::parallel_for(
      "test::fill", Kokkos::RangePolicy<Space>(0, n), KOKKOS_LAMBDA(const int i) { v(i) = i; });
  const auto first = kosmos::Impl::first_index_where(
      Space(), "test::find", n, KOKKOS_LAMBDA(std::int64_t i) { return v(i) > 76543.5; });
  EXPECT_EQ(first, 76544);
  const auto none = kosmos::Impl::first_index_where(
      Space(), "test::find", n, KOKKOS_LAMBDA(std::int64_t i) { return v(i) < 0; });
  EXPECT_EQ(none, -1);
}

TYPED_TEST(CoreTest, FirstIndexWhereFindsTheSmallestMatch) { check_first_index_where<TypeParam>(); }

TYPED_TEST(CoreTest, RequireAllFiniteNamesTheBadElement) {
  using Space = TypeParam;
  Kokkos::View<double*, Space> v("v", 1000);
  Kokkos::deep_copy(v, 1.5);
  EXPECT_NO_THROW(kosmos::Impl::require_all_finite(Space(), "kosmos::test", "velocity", v));
  Kokkos::deep_copy(Kokkos::subview(v, 417), std::numeric_limits<double>::quiet_NaN());
  try {
    kosmos::Impl::require_all_finite(Space(), "kosmos::test", "velocity", v);
    FAIL() << "NaN not detected";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("velocity(417) = nan is not finite"), std::string::npos) << e.what();
  }
}

TEST(TextReader, ReportsFileAndLineOfBadNumbers) {
  const std::string path = ::testing::TempDir() + "kosmos_reader_test.txt";
  {
    std::ofstream out(path);
    out << "# header comment\n\n1.0 2.0\n3.0 abc\n";
  }
  kosmos::io::TextReader reader(path);
  kosmos::io::Record r;
  ASSERT_TRUE(reader.next(r));
  EXPECT_EQ(r.line_number, 3u);
  EXPECT_DOUBLE_EQ(reader.number(r, 1, "y"), 2.0);
  ASSERT_TRUE(reader.next(r));
  try {
    reader.number(r, 1, "velocity");
    FAIL() << "bad number accepted";
  } catch (const kosmos::file_error& e) {
    EXPECT_NE(std::string(e.what()).find(":4: velocity 'abc' is not a finite number"), std::string::npos) << e.what();
  }
  EXPECT_THROW(reader.number(r, 5, "z"), kosmos::file_error);
  EXPECT_FALSE(reader.next(r));
  EXPECT_THROW(kosmos::io::TextReader("/nonexistent/kosmos.txt"), kosmos::file_error);
  std::remove(path.c_str());
}

TEST(ParseDouble, IsStrict) {
  double v;
  EXPECT_TRUE(kosmos::io::parse_double("-1.25e3", v));
  EXPECT_EQ(v, -1250.0);
  EXPECT_FALSE(kosmos::io::parse_double("1.0x", v));
  EXPECT_FALSE(kosmos::io::parse_double("", v));
  EXPECT_FALSE(kosmos::io::parse_double("nan", v));
  EXPECT_FALSE(kosmos::io::parse_double("inf", v));
  EXPECT_FALSE(kosmos::io::parse_double("1e999", v));
  EXPECT_TRUE(kosmos::io::parse_double("1e-320", v));  // subnormal is a number
  for (const char* decimal : {"+1", "-.5", "2.", "1E+3", "007", "-0"}) {
    EXPECT_TRUE(kosmos::io::parse_double(decimal, v)) << decimal;
    EXPECT_EQ(v, std::strtod(decimal, nullptr)) << decimal;
  }
  for (const char* not_decimal : {"0x1p3", "0X10", "0x1.8p1", ".", "e5", "1e", "1e+", "--1", "+-1", "1.2.3",
                                  " 1", "1 ", "infinity", "1d3", "1_000"})
    EXPECT_FALSE(kosmos::io::parse_double(not_decimal, v)) << not_decimal;
  for (const char* nonfinite : {"nan", "NaN", "-inf", "+Infinity"})
    EXPECT_TRUE(kosmos::io::parse_double(nonfinite, v, true)) << nonfinite;
  EXPECT_FALSE(kosmos::io::parse_double("0x1p3", v, true));
}

TEST(WriteAtomically, KeepsTheOldFileWhenTheWriterFails) {
  const std::string path = ::testing::TempDir() + "kosmos_atomic_test.txt";
  kosmos::io::write_atomically(path, [](std::ostream& out) { out << "first\n"; });
  EXPECT_THROW(kosmos::io::write_atomically(path,
                                            [](std::ostream& out) {
                                              out << "partial";
                                              throw std::runtime_error("interrupted");
                                            }),
               std::runtime_error);
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "first\n");
  std::remove(path.c_str());
}

// A link stays a link (its target gets the new file); a FIFO (as /dev/stdout or /dev/null) is
// written in place, not replaced by a regular file (which, for /dev/null as root, broke the system).
TEST(WriteAtomically, WritesThroughLinksAndIntoSpecialFiles) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("kosmos_links_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path target = dir / "target.txt", link = dir / "link.txt", fifo = dir / "fifo";
  std::ofstream(target) << "old\n";
  fs::create_symlink(target, link);
  kosmos::io::write_atomically(link.string(), [](std::ostream& out) { out << "new\n"; });
  EXPECT_TRUE(fs::is_symlink(link));
  std::ifstream in(target);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "new");

  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // so that a writer can open it
  ASSERT_GE(reader, 0);
  kosmos::io::write_atomically(fifo.string(), [](std::ostream& out) { out << "through the pipe\n"; });
  char buffer[64] = {};
  const ssize_t n = ::read(reader, buffer, sizeof buffer);
  ::close(reader);
  EXPECT_EQ(std::string(buffer, std::size_t(std::max<ssize_t>(n, 0))), "through the pipe\n");
  EXPECT_TRUE(fs::is_fifo(fifo));
  fs::remove_all(dir);
}

// The pid of a process that has ended (a child reaped here).
pid_t ended_process() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

// A run killed while writing leaves NAME.tmp.PID: the next write of NAME removes it, but not the
// temporary of a process that still runs, nor other files.
TEST(WriteAtomically, RemovesTemporariesOfEndedProcesses) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("kosmos_stale_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const std::string name : {"out.txt", "out.h5"}) {
    const fs::path out = dir / name;
    const fs::path dead = dir / (name + ".tmp." + std::to_string(ended_process()));
    const fs::path alive = dir / (name + ".tmp." + std::to_string(::getppid()));
    const fs::path other = dir / (name + ".tmp.notapid"), unrelated = dir / ("x" + name + ".tmp.1");
    for (const auto& file : {dead, alive, other, unrelated}) std::ofstream(file) << "left\n";
    if (name == "out.txt") {
      kosmos::io::write_atomically(out.string(), [](std::ostream& o) { o << "new\n"; });
    } else if (kosmos::io::hdf5_enabled()) {
      kosmos::io::H5Writer writer(out.string());
      writer.write("x", std::vector<double>{1});
      writer.commit();
    } else {
      continue;
    }
    EXPECT_FALSE(fs::exists(dead)) << dead;
    for (const auto& kept : {alive, other, unrelated, out}) EXPECT_TRUE(fs::exists(kept)) << kept;
  }
  fs::remove_all(dir);
}
}  // namespace

// The generated kosmos/config.hpp must describe the build it came from: each KOSMOS_HAVE_* macro
// against what the library and Kokkos report at run time.
TEST(BuildConfiguration, ConfigHeaderMatchesTheBuild) {
  EXPECT_EQ(KOSMOS_HAVE_HDF5 == 1, kosmos::io::hdf5_enabled());
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS)
  EXPECT_EQ(KOSMOS_HAVE_CUDA_SPECIALIZATIONS, 1);
#else
  EXPECT_EQ(KOSMOS_HAVE_CUDA_SPECIALIZATIONS, 0);
#endif
  std::string backend = KOSMOS_BACKEND_NAME;
  std::string space = Kokkos::DefaultExecutionSpace::name();
  for (auto* name : {&backend, &space})
    std::transform(name->begin(), name->end(), name->begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  EXPECT_EQ(backend, space);
  const auto config = kosmos::current_configuration();
  EXPECT_EQ(config.kosmos_version, std::string(KOSMOS_VERSION_STRING));
  EXPECT_EQ(config.features.find("hdf5") != std::string::npos, KOSMOS_HAVE_HDF5 == 1)
      << config.features;
}
