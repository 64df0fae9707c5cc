// The HDF5 layer: every element type round-trips bit for bit, row-wise writes and reads land where
// they should, strings and attributes survive, and every failure names the file and object.
#include <kosmos/core/hdf5.hpp>

#include <gtest/gtest.h>
#ifdef KOSMOS_TEST_HDF5_C_API
#include <hdf5.h>
#endif

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using kosmos::io::H5Reader;
using kosmos::io::H5Writer;

class Hdf5Test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kosmos::io::hdf5_enabled()) GTEST_SKIP() << "Kosmos was built without HDF5";
    path_ = ::testing::TempDir() + "kosmos_hdf5_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".h5";
    std::remove(path_.c_str());
  }
  void TearDown() override { std::remove(path_.c_str()); }
  // After a writer abandoned without commit(): the user's old file stays, no temporary remains.
  void expect_old_file_and_no_temporary() const {
    std::ifstream old(path_);
    std::string line;
    std::getline(old, line);
    EXPECT_EQ(line, "the user's old file");
    EXPECT_NE(::access((path_ + ".tmp." + std::to_string(::getpid())).c_str(), F_OK), 0);
  }
  std::string path_;
};

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>)
      x = static_cast<T>(std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng),
                                    std::uniform_int_distribution<int>(-300, 300)(rng) /
                                        (sizeof(T) == 4 ? 3 : 1)));
    else
      x = static_cast<T>(rng());
  }
  return v;
}

template <class T>
void expect_round_trip(const std::string& path) {
  const auto values = random_values<T>(3 * 5 * 7, 11);
  {
    H5Writer out(path);
    out.write("group/inner/values", values.data(), {3, 5, 7});
    out.commit();
  }
  H5Reader in(path);
  std::vector<std::size_t> dims;
  const auto back = in.read<T>("group/inner/values", &dims);
  EXPECT_EQ(dims, (std::vector<std::size_t>{3, 5, 7}));
  ASSERT_EQ(back.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      // Bit patterns: the layer must not round through another type.
      EXPECT_EQ(std::memcmp(&back[i], &values[i], sizeof(T)), 0) << i;
    } else {
      EXPECT_EQ(back[i], values[i]) << i;
    }
  }
}

TEST_F(Hdf5Test, EveryElementTypeRoundTripsExactly) {
  expect_round_trip<double>(path_);
  expect_round_trip<float>(path_);
  expect_round_trip<std::int32_t>(path_);
  expect_round_trip<std::int64_t>(path_);
  expect_round_trip<std::uint8_t>(path_);
  expect_round_trip<std::uint64_t>(path_);
}

TEST_F(Hdf5Test, SpecialDoublesSurvive) {
  const std::vector<double> values = {0.0,
                                      -0.0,
                                      std::numeric_limits<double>::denorm_min(),
                                      std::numeric_limits<double>::max(),
                                      -std::numeric_limits<double>::min(),
                                      std::numeric_limits<double>::infinity(),
                                      std::nan("")};
  {
    H5Writer out(path_);
    out.write("special", values);
    out.commit();
  }
  const auto back = H5Reader(path_).read<double>("special");
  ASSERT_EQ(back.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(std::memcmp(&back[i], &values[i], sizeof(double)), 0) << i;
}

TEST_F(Hdf5Test, RowsWrittenInPiecesReadBackWholeAndInPieces) {
  const std::size_t rows = 10, cols = 4;
  const auto values = random_values<double>(rows * cols, 3);
  {
    H5Writer out(path_);
    out.create<double>("table", {rows, cols});
    // Out of order, uneven pieces: each must land at its own rows.
    out.write_rows("table", 7, 3, values.data() + 7 * cols);
    out.write_rows("table", 0, 2, values.data());
    out.write_rows("table", 2, 5, values.data() + 2 * cols);
    out.commit();
  }
  H5Reader in(path_);
  EXPECT_EQ(in.read<double>("table"), values);
  std::vector<double> middle(4 * cols);
  in.read_rows("table", 3, 4, middle.data());
  EXPECT_EQ(middle, std::vector<double>(values.begin() + 3 * cols, values.begin() + 7 * cols));
  // Stored as double, read as float: HDF5 converts, each value rounds to nearest.
  const auto as_float = in.read<float>("table");
  for (std::size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(as_float[i], static_cast<float>(values[i]));
}

// RowWrites::concurrent: rows copied into a memory map of the file by several threads at once,
// next to datasets, strings and attributes HDF5 writes itself (before and after), read back through
// HDF5: every byte must land inside its own dataset and the file must stay valid.
TEST_F(Hdf5Test, ConcurrentRowsFromSeveralThreadsReadBackThroughHdf5) {
  const std::size_t rows = 1000, cols = 37;
  const auto sed = random_values<float>(rows * cols, 5);
  const auto status = random_values<std::int32_t>(rows * 3, 6);
  const auto mass = random_values<double>(rows, 7);
  const std::vector<double> before = {1.5, 2.5};
  {
    H5Writer out(path_);
    out.write("wavelength", before);
    out.create<float>("sed", {rows, cols}, H5Writer::RowWrites::concurrent);
    out.create<std::int32_t>("results/status", {rows, 3}, H5Writer::RowWrites::concurrent);
    out.create<double>("dust_mass", {rows}, H5Writer::RowWrites::concurrent);
    out.create<double>("serial", {rows});
    EXPECT_TRUE(out.mapped("sed") && out.mapped("results/status") && out.mapped("dust_mass"))
        << "the temporary directory " << ::testing::TempDir() << " allows no memory map";
    EXPECT_FALSE(out.mapped("serial"));
    out.write_strings("names", {"a", "bc"});
    out.attribute("sed", "unit", "W m^-1 sr^-1");
    // Four threads, each every fourth 7-row piece, so neighbouring pieces come from other threads.
    const std::size_t piece = 7, threads = 4;
    std::vector<std::thread> writers;
    for (std::size_t t = 0; t < threads; ++t)
      writers.emplace_back([&, t] {
        for (std::size_t r = t * piece; r < rows; r += threads * piece) {
          const std::size_t n = std::min(piece, rows - r);
          out.write_rows("sed", r, n, sed.data() + r * cols);
          out.write_rows("results/status", r, n, status.data() + r * 3);
          out.write_rows("dust_mass", r, n, mass.data() + r);
        }
      });
    for (auto& w : writers) w.join();
    out.write_rows("serial", 0, rows, mass.data());
    out.attribute("", "after", 42LL);
    out.commit();
  }
  H5Reader in(path_);
  EXPECT_EQ(in.read<float>("sed"), sed);
  EXPECT_EQ(in.read<std::int32_t>("results/status"), status);
  EXPECT_EQ(in.read<double>("dust_mass"), mass);
  EXPECT_EQ(in.read<double>("serial"), mass);
  EXPECT_EQ(in.read<double>("wavelength"), before);
  EXPECT_EQ(in.read_strings("names"), (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(in.attribute_string("sed", "unit"), "W m^-1 sr^-1");
  EXPECT_EQ(in.attribute_integer("", "after"), 42);
}

TEST_F(Hdf5Test, StringsAndAttributes) {
  const std::vector<std::string> names = {"P", "K", "sqrt(e) cos(omega)", "", "jitter_hires"};
  {
    H5Writer out(path_);
    out.write_strings("columns", names);
    out.write("samples", std::vector<double>{1, 2, 3});
    out.attribute("", "kosmos_version", "0.1.0");
    out.attribute("samples", "reference_epoch", 2456789.123456789);
    out.attribute("samples", "chains", 160LL);
    out.commit();
  }
  H5Reader in(path_);
  EXPECT_EQ(in.read_strings("columns"), names);
  EXPECT_EQ(in.attribute_string("", "kosmos_version"), "0.1.0");
  EXPECT_EQ(in.attribute_double("samples", "reference_epoch"), 2456789.123456789);
  EXPECT_EQ(in.attribute_integer("samples", "chains"), 160);
  EXPECT_TRUE(in.has_attribute("samples", "chains"));
  EXPECT_FALSE(in.has_attribute("samples", "missing"));
  EXPECT_TRUE(in.has("columns"));
  EXPECT_FALSE(in.has("nothing/here"));
}

// Runs `f` and returns the message of the kosmos exception it must throw.
template <class Exception, class F>
std::string message_of(const F& f) {
  try {
    f();
  } catch (const Exception& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception thrown";
  return "";
}

TEST_F(Hdf5Test, ErrorsNameTheFileAndObject) {
  {
    H5Writer out(path_);
    out.write("values", std::vector<double>{1, 2, 3});
    out.commit();
  }
  H5Reader in(path_);
  EXPECT_NE(message_of<kosmos::file_error>([&] { in.dims("absent"); }).find("'absent': no such dataset"),
            std::string::npos);
  std::vector<double> four(4);
  EXPECT_NE(message_of<kosmos::file_error>([&] { in.read_into("values", four.data(), 4); })
                .find("holds 3 values, expected 4"),
            std::string::npos);
  EXPECT_NE(message_of<kosmos::file_error>([&] { in.read_rows("values", 2, 2, four.data()); })
                .find("outside its 3 rows"),
            std::string::npos);
  EXPECT_NE(message_of<kosmos::file_error>([&] { in.attribute_double("values", "unit"); })
                .find("has no attribute 'unit'"),
            std::string::npos);

  const std::string missing = path_ + ".missing.h5";
  EXPECT_NE(message_of<kosmos::file_error>([&] { H5Reader r(missing); }).find(missing),
            std::string::npos);
  const std::string text = path_ + ".txt.h5";
  std::ofstream(text) << "1 2 3\n";
  EXPECT_NE(message_of<kosmos::file_error>([&] { H5Reader r(text); }).find("is not an HDF5 file"),
            std::string::npos);
  std::remove(text.c_str());
}

TEST_F(Hdf5Test, ConcurrentRowsOutsideOrOfAnotherTypeAreErrors) {
  std::ofstream(path_) << "the user's old file\n";
  {
    H5Writer out(path_);
    out.create<float>("sed", {10, 4}, H5Writer::RowWrites::concurrent);
    std::vector<float> values(4 * 4, 1.0f);
    std::vector<double> doubles(4, 1.0);
    EXPECT_NE(message_of<kosmos::file_error>([&] { out.write_rows("sed", 8, 3, values.data()); })
                  .find("'sed': rows 8..11 are outside its 10 rows"),
              std::string::npos);
    EXPECT_NE(message_of<kosmos::file_error>([&] { out.write_rows("sed", 0, 1, doubles.data()); })
                  .find("another element type"),
              std::string::npos);
    out.write_rows("sed", 0, 4, values.data());
    // Abandoned: the mapping is closed, the temporary removed, the old file kept.
  }
  expect_old_file_and_no_temporary();
}

// A dataset that does not fit (here: past the file size limit, as a full disk would) is refused at
// create(), naming it and its size, rather than a SIGBUS when a copy touches its map.
TEST_F(Hdf5Test, ConcurrentDatasetThatCannotBeAllocatedIsAnError) {
  H5Writer out(path_);
  out.write("small", std::vector<double>{1, 2, 3});
  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit limit = old_limit;
  limit.rlim_cur = 1 << 20;
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  const std::string message = message_of<kosmos::file_error>(
      [&] { out.create<float>("sed", {1 << 20, 4}, H5Writer::RowWrites::concurrent); });
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(message.find("'sed': cannot allocate 16777216 bytes"), std::string::npos) << message;
}

// A disk that fills up as the file is closed: commit() is a file_error, and the process still
// exits cleanly (HDF5's exit handler crashed on the file whose close had failed). The file size
// limit stands in for the full disk; the limits are tried upwards until the close is what fails.
TEST_F(Hdf5Test, ACloseThatFailsIsAnErrorAndExitStaysClean) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
    const std::vector<double> values(20000, 1.5);
    for (rlim_t bytes = 4096; bytes < 400000; bytes += 2048) {
      rlimit limit{bytes, RLIM_INFINITY};
      ::setrlimit(RLIMIT_FSIZE, &limit);
      try {
        H5Writer out(path_);
        out.write("values", values);
        // Metadata that no longer fits the first block: the close writes it past the raw data.
        for (int k = 0; k < 60; ++k) {
          out.write("small/" + std::to_string(k), std::vector<double>{1, 2});
          out.attribute("small/" + std::to_string(k), "unit", "m");
        }
        out.commit();
      } catch (const kosmos::file_error& e) {
        if (std::string(e.what()).find("closing the file failed") != std::string::npos) std::exit(0);
      }
    }
    std::exit(3);  // no limit made the close fail
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the process died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "no file size limit made the close fail";
}

#ifdef KOSMOS_TEST_HDF5_C_API
// A Kosmos file at `path` opened for writing through the HDF5 C API, to add what another tool
// could have written.
hid_t kosmos_file_for_raw_edits(const std::string& path) {
  {
    H5Writer out(path);
    out.write("x", std::vector<double>{1});
    out.commit();
  }
  return H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
}

// Attributes of 16 values where Kosmos stores one (another tool's file): an error naming them, not
// 16 values read into one (a heap or stack overflow before).
TEST_F(Hdf5Test, ArrayAttributesAreErrorsNotOverruns) {
  const hid_t file = kosmos_file_for_raw_edits(path_);
  ASSERT_GE(file, 0);
  const hsize_t n = 16;
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t numbers = H5Acreate2(file, "variables", H5T_NATIVE_LLONG, space, H5P_DEFAULT, H5P_DEFAULT);
  const std::vector<long long> values(n, 7);
  H5Awrite(numbers, H5T_NATIVE_LLONG, values.data());
  const hid_t text = H5Tcopy(H5T_C_S1);
  H5Tset_size(text, 8);
  const hid_t strings = H5Acreate2(file, "format", text, space, H5P_DEFAULT, H5P_DEFAULT);
  const std::vector<char> letters(n * 8, 'a');
  H5Awrite(strings, text, letters.data());
  for (hid_t id : {strings, numbers}) H5Aclose(id);
  H5Tclose(text);
  H5Sclose(space);
  H5Fclose(file);
  H5Reader in(path_);
  EXPECT_NE(message_of<kosmos::file_error>([&] { in.attribute_integer("", "variables"); })
                .find("attribute 'variables' holds 16 values, not one"),
            std::string::npos);
  EXPECT_NE(message_of<kosmos::file_error>([&] { in.attribute_double("", "variables"); })
                .find("attribute 'variables' holds 16 values, not one"),
            std::string::npos);
  EXPECT_NE(message_of<kosmos::file_error>([&] { in.attribute_string("", "format"); })
                .find("attribute 'format' holds 16 values, not one"),
            std::string::npos);
}

// Creates dataset `name` of doubles with `dims` in `file`, chunked by 16 along every dimension and
// never written: a few bytes on disk whatever its dimensions.
void unwritten_chunked(hid_t file, const char* name, std::vector<hsize_t> dims) {
  const hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  const hid_t properties = H5Pcreate(H5P_DATASET_CREATE);
  std::vector<hsize_t> chunk(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) chunk[i] = std::min<hsize_t>(dims[i], 16);
  H5Pset_chunk(properties, int(chunk.size()), chunk.data());
  const hid_t set = H5Dcreate2(file, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, properties, H5P_DEFAULT);
  EXPECT_GE(set, 0);
  H5Dclose(set);
  H5Pclose(properties);
  H5Sclose(space);
}

// Dimensions are metadata: a dataset that declares more values than its file holds is an error
// naming it before anything is allocated (it was a bad_alloc, or tens of GB allocated and filled),
// from dims() as from every read.
TEST_F(Hdf5Test, DatasetsDeclaringMoreThanTheFileHoldsAreNamed) {
  const hid_t file = kosmos_file_for_raw_edits(path_);
  ASSERT_GE(file, 0);
  unwritten_chunked(file, "beyond_max_size", {hsize_t(1) << 21, hsize_t(1) << 20, hsize_t(1) << 20});
  unwritten_chunked(file, "samples", {hsize_t(1) << 28, 10});  // 21 GB declared
  H5Fclose(file);
  H5Reader in(path_);
  EXPECT_NE(message_of<kosmos::file_error>([&] { in.read<double>("beyond_max_size"); })
                .find("'beyond_max_size': declares 2.306e+18 values (1.845e+19 bytes) but stores 0 "
                      "bytes: an unwritten, truncated or damaged dataset"),
            std::string::npos);
  for (const auto& attempt : std::vector<std::function<void()>>{
           [&] { in.dims("samples"); }, [&] { in.read<float>("samples"); },
           [&] { in.expect_shape("samples", {H5Reader::any_extent, 10}); },
           [&] { std::vector<double> row(10); in.read_rows("samples", 0, 1, row.data()); }})
    EXPECT_NE(message_of<kosmos::file_error>(attempt).find(
                  "'samples': declares 2.684e+09 values (2.147e+10 bytes) but stores 0 bytes"),
              std::string::npos);
}

// (2^62 + 1) x 4 values wrap a 64-bit count to 4: an error, not 4 values read out of bounds.
TEST_F(Hdf5Test, DimensionsWhoseProductWrapsAreErrors) {
  const hid_t file = kosmos_file_for_raw_edits(path_);
  ASSERT_GE(file, 0);
  unwritten_chunked(file, "time", {(hsize_t(1) << 62) + 1, 4});
  H5Fclose(file);
  H5Reader in(path_);
  std::vector<double> four(4);
  for (const auto& attempt : std::vector<std::function<void()>>{
           [&] { in.dims("time"); }, [&] { in.read_into("time", four.data(), 4); }})
    EXPECT_NE(message_of<kosmos::file_error>(attempt).find(
                  "'time': declares dimensions (4611686018427387905, 4), more elements than can be "
                  "counted (a damaged file)"),
              std::string::npos);
}

// A compressed dataset holds more values than bytes: up to deflate's ratio it is read as it is.
TEST_F(Hdf5Test, CompressedDatasetsStillRead) {
  const hid_t file = kosmos_file_for_raw_edits(path_);
  ASSERT_GE(file, 0);
  const hsize_t n = hsize_t(1) << 20, chunk = n;
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t properties = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(properties, 1, &chunk);
  ASSERT_GE(H5Pset_deflate(properties, 9), 0);
  const hid_t set = H5Dcreate2(file, "zeros", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, properties, H5P_DEFAULT);
  const std::vector<double> zeros(n, 0.0);
  ASSERT_GE(H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros.data()), 0);
  EXPECT_LT(H5Dget_storage_size(set), n * sizeof(double) / 100);  // it really is compressed
  H5Dclose(set);
  H5Pclose(properties);
  H5Sclose(space);
  H5Fclose(file);
  EXPECT_EQ(H5Reader(path_).read<double>("zeros"), zeros);
}

// Kosmos writes its strings fixed-length (no heap to follow in a damaged file); variable-length
// strings of other tools' files still read.
TEST_F(Hdf5Test, OwnStringsAreFixedLengthForeignVariableLengthOnesRead) {
  {
    H5Writer out(path_);
    out.write_strings("names", {"a", "", "longer name"});
    out.write("x", std::vector<double>{1});
    out.attribute("x", "unit", "m/s");
    out.attribute("x", "empty", "");
    out.commit();
  }
  const hid_t file = H5Fopen(path_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t names = H5Dopen2(file, "names", H5P_DEFAULT);
  const hid_t names_type = H5Dget_type(names);
  EXPECT_EQ(H5Tis_variable_str(names_type), 0);
  const hid_t x = H5Dopen2(file, "x", H5P_DEFAULT);
  const hid_t unit = H5Aopen(x, "unit", H5P_DEFAULT);
  const hid_t unit_type = H5Aget_type(unit);
  EXPECT_EQ(H5Tis_variable_str(unit_type), 0);
  const hid_t variable = H5Tcopy(H5T_C_S1);
  H5Tset_size(variable, H5T_VARIABLE);
  const hsize_t two = 2;
  const hid_t space = H5Screate_simple(1, &two, nullptr);
  const hid_t foreign = H5Dcreate2(file, "foreign", variable, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const char* values[] = {"from", "another tool"};
  ASSERT_GE(H5Dwrite(foreign, variable, H5S_ALL, H5S_ALL, H5P_DEFAULT, values), 0);
  for (hid_t id : {foreign, space, variable, unit_type, unit, x, names_type, names, file}) H5Idec_ref(id);
  H5Reader in(path_);
  EXPECT_EQ(in.read_strings("names"), (std::vector<std::string>{"a", "", "longer name"}));
  EXPECT_EQ(in.attribute_string("x", "unit"), "m/s");
  EXPECT_EQ(in.attribute_string("x", "empty"), "");
  EXPECT_EQ(in.read_strings("foreign"), (std::vector<std::string>{"from", "another tool"}));
}

unsigned superblock_version(const std::string& path) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  H5F_info2_t info{};
  EXPECT_GE(H5Fget_info2(file, &info), 0);
  H5Fclose(file);
  return info.super.version;
}

// Kosmos' own files carry checksummed metadata (superblock version 3): HDF5 refuses a damaged
// header of theirs instead of decoding it.
TEST_F(Hdf5Test, OwnFilesCarryMetadataChecksums) {
  H5Writer out(path_);
  out.write("x", std::vector<double>{1});
  out.commit();
  EXPECT_EQ(superblock_version(path_), 3u);
}

// No creation or modification times in the file (the root, groups, datasets): the same content
// written a second later is the same file, byte for byte.
TEST_F(Hdf5Test, SameContentMakesTheSameBytes) {
  const auto write = [](const std::string& path) {
    H5Writer out(path);
    out.write("group/inner/values", std::vector<double>{1, 2, 3});
    out.attribute("group", "unit", "m");
    out.attribute("", "version", 3LL);
    out.commit();
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string first = write(path_);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // times have 1 s resolution
  EXPECT_TRUE(first == write(path_));
}

// A file in HDF5's default format (no metadata checksums: h5py's and most tools' files) is read
// from a checksummed copy that a child process makes in TMPDIR: every dataset, group and
// attribute as it is, names relative to the root, and the copy gone once it is open.
TEST_F(Hdf5Test, FilesWithoutChecksumsAreReadFromACheckedCopy) {
  std::string tmpdir = ::testing::TempDir() + "kosmos_tmpdir_XXXXXX";
  ASSERT_NE(::mkdtemp(&tmpdir[0]), nullptr);
  const char* saved = std::getenv("TMPDIR");
  const std::string saved_tmpdir = saved ? saved : "";
  ::setenv("TMPDIR", tmpdir.c_str(), 1);
  const hid_t file = H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hsize_t dims[2] = {2, 3};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t group = H5Gcreate2(file, "chains", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t set =
      H5Dcreate2(group, "samples", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const std::vector<double> values{1, 2, 3, 4, 5, -6.25};
  H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  const hid_t scalar = H5Screate(H5S_SCALAR);
  const long long degree = 7;
  const hid_t on_root =
      H5Acreate2(file, "degree", H5T_NATIVE_LLONG, scalar, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(on_root, H5T_NATIVE_LLONG, &degree);
  const hid_t text = H5Tcopy(H5T_C_S1);
  H5Tset_size(text, H5T_VARIABLE);
  const char* unit = "m/s";
  const hid_t on_set = H5Acreate2(set, "unit", text, scalar, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(on_set, text, &unit);
  for (hid_t id : {on_set, text, on_root, scalar, set, group, space, file}) H5Idec_ref(id);
  ASSERT_EQ(superblock_version(path_), 0u);
  {
    H5Reader in(path_);
    std::vector<std::size_t> shape;
    EXPECT_EQ(in.read<double>("chains/samples", &shape), values);
    EXPECT_EQ(shape, (std::vector<std::size_t>{2, 3}));
    EXPECT_TRUE(in.has("chains/samples"));
    EXPECT_TRUE(in.has("/chains/samples"));
    EXPECT_FALSE(in.has("chains/absent"));
    EXPECT_FALSE(in.has("kosmos_checksummed_copy"));
    EXPECT_EQ(in.attribute_integer("", "degree"), 7);
    EXPECT_EQ(in.attribute_integer("/", "degree"), 7);
    EXPECT_TRUE(in.has_attribute("chains/samples", "unit"));
    EXPECT_EQ(in.attribute_string("chains/samples", "unit"), "m/s");
    std::vector<double> row(3);
    in.read_rows("chains/samples", 1, 1, row.data());
    EXPECT_EQ(row, (std::vector<double>{4, 5, -6.25}));
  }
  EXPECT_EQ(::rmdir(tmpdir.c_str()), 0) << "a copy was left in " << tmpdir;
  // Damaged (here truncated) metadata fails the copying process: an error naming the file.
  {
    std::ifstream whole(path_, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(whole)), std::istreambuf_iterator<char>());
    std::ofstream(path_, std::ios::binary | std::ios::trunc).write(bytes.data(), 700);
  }
  ::mkdir(tmpdir.c_str(), 0700);
  const std::string message = message_of<kosmos::file_error>([&] { H5Reader in(path_); });
  EXPECT_NE(message.find(path_ + ": "), std::string::npos) << message;
  EXPECT_NE(message.find("(damaged"), std::string::npos) << message;
  EXPECT_EQ(::rmdir(tmpdir.c_str()), 0) << "a copy was left in " << tmpdir;
  // Nowhere to copy to: an error naming the folder (a checksummed file needs no copy).
  ::setenv("TMPDIR", (tmpdir + "/absent").c_str(), 1);
  {
    H5Writer kosmos_file(path_);
    kosmos_file.write("x", std::vector<double>{2});
    kosmos_file.commit();
  }
  EXPECT_EQ(H5Reader(path_).read<double>("x"), std::vector<double>{2});
  H5Fclose(H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  EXPECT_NE(message_of<kosmos::file_error>([&] {
              H5Reader in(path_);
            }).find("'" + tmpdir + "/absent' (TMPDIR) is not writable"),
            std::string::npos);
  if (saved)
    ::setenv("TMPDIR", saved_tmpdir.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
}
#endif

TEST_F(Hdf5Test, ExpectShapeNamesBothShapes) {
  {
    H5Writer out(path_);
    const std::vector<double> values(12, 1.0);
    out.write("mass", values.data(), {3, 4});
    out.commit();
  }
  H5Reader in(path_);
  EXPECT_EQ(in.expect_shape("mass", {3, 4}), (std::vector<std::size_t>{3, 4}));
  EXPECT_EQ(in.expect_shape("mass", {H5Reader::any_extent, 4}), (std::vector<std::size_t>{3, 4}));
  EXPECT_NE(message_of<kosmos::file_error>([&] { in.expect_shape("mass", {4, 3}); })
                .find("'mass': has shape (3, 4), expected (4, 3)"),
            std::string::npos);
  EXPECT_NE(message_of<kosmos::file_error>([&] { in.expect_shape("mass", {12}); })
                .find("'mass': has shape (3, 4), expected (12)"),
            std::string::npos);
  EXPECT_NE(message_of<kosmos::file_error>([&] { in.expect_shape("mass", {H5Reader::any_extent, 4, 1}); })
                .find("expected (*, 4, 1)"),
            std::string::npos);
}

TEST_F(Hdf5Test, NothingIsLeftBehindWithoutCommit) {
  {
    std::ofstream(path_) << "the user's old file\n";
    H5Writer out(path_);
    out.write("values", std::vector<double>{1, 2, 3});
    // Abandoned (as when an exception unwinds): the old file stays, no temporary remains.
  }
  expect_old_file_and_no_temporary();
}

TEST(Hdf5Paths, ExtensionDecidesTheFormat) {
  EXPECT_TRUE(kosmos::io::is_hdf5_path("posterior.h5"));
  EXPECT_TRUE(kosmos::io::is_hdf5_path("dir/cells.HDF5"));
  EXPECT_TRUE(kosmos::io::is_hdf5_path("a.H5"));
  EXPECT_FALSE(kosmos::io::is_hdf5_path("posterior.txt"));
  EXPECT_FALSE(kosmos::io::is_hdf5_path("h5"));
  EXPECT_FALSE(kosmos::io::is_hdf5_path("file.h5.txt"));
}
}  // namespace

namespace {
TEST(Hdf5Disabled, BuildsWithoutHdf5SayHowToGetIt) {
  if (kosmos::io::hdf5_enabled()) GTEST_SKIP() << "this build has HDF5";
  try {
    kosmos::io::H5Writer out("result.h5");
    ADD_FAILURE() << "no exception";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("result.h5: this Kosmos was built without HDF5"),
              std::string::npos);
  }
}
}  // namespace
