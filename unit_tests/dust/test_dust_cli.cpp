// `kosmos dust` with HDF5 outputs only streams its results through a small ring of pinned chunk
// slots that several writer threads copy into memory-mapped datasets, reusing a slot once its rows
// are written. The same run with a text output keeps every row in host memory (no slot reused):
// both files must hold the same bytes, and the temperatures the same values as the text file.
#include "options.hpp"

#include <kosmos/core/hdf5.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
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
  // 203 cells in 26 chunks of 8 (the last one short) through a ring of 7 slots.
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
  ASSERT_EQ(run_dust(with({"--sed", ring, "--status", ring, "--temperatures", ring})), 0);
  ASSERT_EQ(run_dust(with({"--sed", kept, "--status", kept, "--temperatures", text})), 0);

  kosmos::io::H5Reader a(ring), b(kept);
  std::vector<std::size_t> dims;
  const auto sed = a.read<float>("sed", &dims);
  EXPECT_EQ(dims, (std::vector<std::size_t>{203, 968}));
  EXPECT_EQ(sed, b.read<float>("sed"));
  EXPECT_EQ(a.read<std::int32_t>("status"), b.read<std::int32_t>("status"));
  EXPECT_TRUE(std::any_of(sed.begin(), sed.end(), [](float x) { return x > 0; }));

  // The text file: header lines, then one row per cell, each value with enough digits to round-trip.
  const auto temperature = a.read<float>("temperature", &dims);
  ASSERT_EQ(dims, (std::vector<std::size_t>{203, 81}));
  std::ifstream in(text);
  std::string line;
  std::vector<double> from_text;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    for (double t; row >> t;) from_text.push_back(t);
  }
  ASSERT_EQ(from_text.size(), temperature.size());
  for (std::size_t i = 0; i < temperature.size(); ++i) EXPECT_EQ(float(from_text[i]), temperature[i]) << i;
  for (const auto& path : {ring, kept, text}) std::remove(path.c_str());
}
}  // namespace
