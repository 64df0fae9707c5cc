// RV data files: the bundled HD 164922 set, and malformed / unsorted / empty files.
#include <kosmos/core/error.hpp>
#include <kosmos/kepler/rv_data.hpp>
#include <kosmos/kepler/search.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

TEST(KeplerRVData, ReadsTheBundledHD164922File) {
  const auto d = kosmos::kepler::read_rv_file(KOSMOS_DATA_DIR "/rv/hd164922_radvel.txt");
  ASSERT_EQ(d.size(), 401u);  // data/README.md: 401 points, instruments k, j, a
  ASSERT_EQ(d.n_instruments(), 3);
  EXPECT_EQ(d.instrument_names[0], "k");
  EXPECT_EQ(d.instrument_names[1], "j");
  EXPECT_EQ(d.instrument_names[2], "a");
  EXPECT_DOUBLE_EQ(d.time[0], 2450275.9700771);  // first data line of the file
  EXPECT_DOUBLE_EQ(d.velocity[0], 10.865898802);
  EXPECT_DOUBLE_EQ(d.sigma[0], 1.14224851131);
  for (std::size_t k = 1; k < d.size(); ++k) EXPECT_LE(d.time[k - 1], d.time[k]);
}

std::string write_temp(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << content;
  return path;
}

void expect_file_error(const std::string& content, const std::string& fragment) {
  const auto path = write_temp("kosmos_rv_test.txt", content);
  try {
    kosmos::kepler::read_rv_file(path);
    ADD_FAILURE() << "accepted: " << content;
  } catch (const kosmos::file_error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(KeplerRVData, RejectsBadFilesNamingTheLine) {
  expect_file_error("1.0 2.0 1.0 k\n2.0 abc 1.0 k\n", ":2: velocity 'abc' is not a finite number");
  expect_file_error("1.0 2.0\n", ":1: expected at least 3 columns");
  expect_file_error("time,mnvel,errvel,tel\n1.0,2.0,1.0,k\n2.0,,1.0,k\n",
                    ":3: velocity '' is not a finite number");
  expect_file_error("1.0 2.0 0.0 k\n", ":1: sigma 0.0 must be > 0");
  expect_file_error("1.0 2.0 -1 k\n", ":1: sigma -1 must be > 0");
  expect_file_error("# only a comment\ntime mnvel errvel\n", "no observations (empty data)");
  expect_file_error("", "no observations (empty data)");
  EXPECT_THROW(kosmos::kepler::read_rv_file("/nonexistent/rv.txt"), kosmos::file_error);
  // Found by feeding odd files: a typo in the first row was taken for a header (the row dropped);
  // header names that left two quantities in one column read velocities as times; values whose
  // weights or squares overflow gave NaN posteriors.
  expect_file_error("245O106.5 3.2 1.0\n2450107.5 3.0 1.0\n", ":1: time '245O106.5' is not a finite number");
  expect_file_error("rv foo err\n1.0 2.0 1.0\n", ":1: header: the time, velocity, sigma and instrument columns");
  expect_file_error("mnvel\n1.0 2.0 1.0\n", ":1: header: the time, velocity, sigma and instrument columns");
  expect_file_error("1.0 2.0 1e-200\n", ":1: sigma 1e-200 is outside [1e-100, 1e100]");
  expect_file_error("1.0 1e300 1.0\n", ":1: velocity 1e300 is beyond +-1e100");
}

// With known header names the instrument is read only from its own named column (RadVel files
// without 'tel' had their fourth column, e.g. svalue, taken for instruments); a UTF-8 byte order
// mark is not part of the first field.
TEST(KeplerRVData, NamedHeaderWithoutInstrumentHasOneInstrument) {
  const auto path = write_temp("kosmos_rv_svalue.txt",
                               "\xEF\xBB\xBFtime mnvel errvel svalue\n1.0 2.0 1.0 0.54\n2.0 3.0 1.5 0.86\n");
  const auto d = kosmos::kepler::read_rv_file(path);
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d.n_instruments(), 1);
  EXPECT_EQ(d.instrument_names[0], "default");
  std::remove(path.c_str());
}

TEST(KeplerRVData, InstrumentColumnIsOptional) {
  const auto path = write_temp("kosmos_rv_noinst.txt", "1.0 2.0 1.0\n2.0 3.0 1.5\n");
  const auto d = kosmos::kepler::read_rv_file(path);
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d.n_instruments(), 1);
  std::remove(path.c_str());
}
// Rows grouped by instrument come back sorted by time with their labels; the same data as
// RadVel's CSV (header names in another order, extra columns, spaces after commas) reads the same.
TEST(KeplerRVData, SortsRowsAndReadsRadVelCsv) {
  const auto text = write_temp("kosmos_rv_grouped.txt",
                               "time mnvel errvel tel svalue\n"
                               "5.0 1.5 1.1 hires 0.1\n"
                               "1.0 -2.0 1.0 hires 0.1\n"
                               "3.0 4.0 2.0 lick 0.2\n"
                               "2.0 0.5 2.5 lick 0.2\n"
                               "4.0 7.0 3.0 apf 0.3\n");
  const auto csv = write_temp("kosmos_rv_grouped.csv",
                              "errvel,time,tel,mnvel,svalue\n"
                              "1.1,5.0,hires,1.5,0.1\n"
                              "1.0, 1.0, hires, -2.0, 0.1\n"
                              "2.0,3.0,lick,4.0,0.2\n"
                              "2.5,2.0,lick,0.5,0.2\n"
                              "3.0,4.0,apf,7.0,0.3\n");
  for (const auto& path : {text, csv}) {
    const auto d = kosmos::kepler::read_rv_file(path);
    ASSERT_EQ(d.size(), 5u) << path;
    const double t[] = {1, 2, 3, 4, 5}, v[] = {-2.0, 0.5, 4.0, 7.0, 1.5},
                 s[] = {1.0, 2.5, 2.0, 3.0, 1.1};
    const char* inst[] = {"hires", "lick", "lick", "apf", "hires"};
    for (int k = 0; k < 5; ++k) {
      EXPECT_EQ(d.time[k], t[k]) << path;
      EXPECT_EQ(d.velocity[k], v[k]) << path;
      EXPECT_EQ(d.sigma[k], s[k]) << path;
      EXPECT_EQ(d.instrument_names[d.instrument[k]], inst[k]) << path << " row " << k;
    }
    EXPECT_EQ(d.n_instruments(), 3) << path;
    std::remove(path.c_str());
  }
}
// Columns the header names beyond time, velocity, sigma and instrument are kept (sorted with the
// rows, with each row's line); an activity indicator that is absent, or missing or not finite in
// a row, is an error naming the column (and the file and line) before any fitting.
TEST(KeplerRVData, KeepsNamedColumnsAndNamesBadActivityIndicators) {
  const auto path = write_temp("kosmos_rv_activity.txt",
                               "time mnvel errvel svalue bis\n"
                               "3.0 1.0 1.0 0.3 -4\n"
                               "1.0 2.0 1.0 0.1 2\n"
                               "2.0 3.0 1.0 0.2 x\n"
                               "4.0 1.5 1.0 nan 1\n"
                               "5.0 2.5 1.0 0.5 3\n"
                               "6.0 0.5 1.0 0.6 3\n");
  const auto d = kosmos::kepler::read_rv_file(path);
  ASSERT_EQ(d.columns.size(), 2u);
  EXPECT_EQ(d.columns[0].name, "svalue");
  EXPECT_EQ(d.columns[0].values[0], 0.1);  // time-sorted
  EXPECT_EQ(d.columns[0].values[2], 0.3);
  EXPECT_EQ(d.line[0], 3);
  EXPECT_TRUE(std::isnan(d.columns[1].values[1]));  // 'x'
  auto error_of = [&](const std::vector<std::string>& activity) {
    kosmos::kepler::SearchOptions o;
    o.planets = 0;
    o.chains = 24;
    o.activity = activity;
    try {
      kosmos::kepler::search(d, o);
    } catch (const kosmos::invalid_input& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string missing = error_of({"fwhm"});
  EXPECT_NE(missing.find(path + ": no activity indicator column 'fwhm' (the header names the other "
                                "columns svalue, bis"),
            std::string::npos)
      << missing;
  const std::string nan = error_of({"svalue"});
  EXPECT_NE(nan.find(path + ":5: activity indicator 'svalue' of observation 3 (time 4) is missing "
                            "or not a finite number"),
            std::string::npos)
      << nan;
  const std::string text = error_of({"bis"});
  EXPECT_NE(text.find(path + ":4: activity indicator 'bis'"), std::string::npos) << text;
  std::remove(path.c_str());
}
}  // namespace
