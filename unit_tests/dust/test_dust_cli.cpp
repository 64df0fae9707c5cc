// `kosmos dust` with HDF5 outputs only streams its results through a small ring of pinned chunk
// slots that its writer threads (1, 4 and 7 here) copy into memory-mapped datasets, reusing a slot
// once its rows are written. The same run with a text output keeps every row in host memory (no
// slot reused): the files must hold the same bytes, and the temperatures the text file's values.
#include "options.hpp"

#include <kosmos/core/hdf5.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

int run_dust(const std::vector<std::string>& args) {
  const auto& commands = kosmos::cli::command_registry();
  const auto dust = std::find_if(commands.begin(), commands.end(),
                                 [](const auto& c) { return std::string(c.name) == "dust"; });
  if (dust == commands.end()) return -1;
  return dust->run(args);
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "kosmos_dust_cli_" + std::to_string(::getpid()) + "_" + name;
}

TEST(DustCli, HdfRingWithSeveralWritersMatchesRowsKeptInMemory) {
  if (!kosmos::io::hdf5_enabled()) GTEST_SKIP() << "Kosmos was built without HDF5";
  const std::string ring = temp_path("ring.h5"), kept = temp_path("kept.h5"),
                    text = temp_path("temperatures.txt");
  // 203 cells in 26 chunks of 8 (the last one short) through a ring of 3 slots + one per writer.
  const std::vector<std::string> common = {
      "--cross-sections", std::string(KOSMOS_DATA_DIR) + "/dust/draine_graphite_81.dat",
      "--generate",       "203",
      "--chunk-cells",    "8",
      "--precision",      "float"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = common;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  ASSERT_EQ(run_dust(with({"--sed", kept, "--status", kept, "--temperatures", text})), 0);
  kosmos::io::H5Reader b(kept);
  const auto sed = b.read<float>("sed");
  EXPECT_TRUE(std::any_of(sed.begin(), sed.end(), [](float x) { return x > 0; }));
  // The text file: header lines, then one row per cell, each value with enough digits to
  // round-trip.
  std::ifstream in(text);
  std::string line;
  std::vector<float> temperature;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    for (std::string t; row >> t;) temperature.push_back(std::strtof(t.c_str(), nullptr));
  }
  ASSERT_EQ(temperature.size(), std::size_t(203 * 81));

  for (const char* writers : {"1", "4", "7"}) {
    SCOPED_TRACE(std::string("--writer-threads ") + writers);
    ASSERT_EQ(run_dust(with({"--sed", ring, "--status", ring, "--temperatures", ring,
                             "--writer-threads", writers})),
              0);
    kosmos::io::H5Reader a(ring);
    std::vector<std::size_t> dims;
    EXPECT_EQ(a.read<float>("sed", &dims), sed);
    EXPECT_EQ(dims, (std::vector<std::size_t>{203, 1208}));
    EXPECT_EQ(a.read<std::int32_t>("status"), b.read<std::int32_t>("status"));
    EXPECT_EQ(a.read<float>("temperature", &dims), temperature);
    EXPECT_EQ(dims, (std::vector<std::size_t>{203, 81}));
  }
  for (const auto& path : {ring, kept, text}) std::remove(path.c_str());
}

// --pt-output: P(T) of every (cell, stochastic species) in the file, normalized over its bins on
// increasing bin temperatures, through the HDF5 ring (2 writers, chunks of 2 cells).
TEST(DustCli, TemperatureDistributionsInHdf5) {
  if (!kosmos::io::hdf5_enabled()) GTEST_SKIP() << "Kosmos was built without HDF5";
  const std::string pt = temp_path("pt.h5");
  const std::string data = std::string(KOSMOS_DATA_DIR) + "/dust/";
  ASSERT_EQ(
      run_dust({"--cross-sections",
                data + "draine_graphite_81.dat," + data + "draine_suvsilicate_81.dat",
                "--size-distribution", "wd01", "--stochastic-below", "0.01", "--generate", "5",
                "--chunk-cells", "2", "--writer-threads", "2", "--bins", "64", "--pt-output", pt}),
      0);
  kosmos::io::H5Reader in(pt);
  std::vector<std::size_t> dims;
  const auto p = in.read<double>("probability", &dims);
  ASSERT_EQ(dims, (std::vector<std::size_t>{5, 40, 64}));
  const auto t = in.read<double>("bin_temperature");
  ASSERT_EQ(in.read<std::int32_t>("stochastic_species").size(), 40u);
  for (std::size_t k = 0; k < 5 * 40; ++k) {
    double sum = 0;
    for (std::size_t j = 0; j < 64; ++j) {
      sum += p[k * 64 + j];
      if (j > 0) {
        EXPECT_GT(t[k * 64 + j], t[k * 64 + j - 1]);
      }
    }
    EXPECT_NEAR(sum, 1.0, 1e-9) << k;
  }
  std::remove(pt.c_str());
}
}  // namespace
