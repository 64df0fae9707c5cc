// Host-side data of the dust module: Draine tables, interpolation, grids, size distributions,
// the MMP83 field and the cells file, with errors that name the file and line.
#include "dust_test_problem.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <limits>

namespace {
using namespace dust_test;

std::string write_temp(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << content;
  return path;
}

template <class Fn>
void expect_file_error(Fn&& fn, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "no file_error; expected one mentioning '" << fragment << "'";
  } catch (const kosmos::file_error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(DraineTable, ReadsTheBundledTables) {
  for (const char* name : {"dust/draine_graphite_81.dat", "dust/draine_suvsilicate_81.dat"}) {
    const auto t = kosmos::dust::read_draine_table(data_path(name));
    ASSERT_EQ(t.radius_micron.size(), 81u);
    ASSERT_EQ(t.wavelength_micron.size(), 241u);
    EXPECT_DOUBLE_EQ(t.radius_micron.front(), 1e-3);
    EXPECT_DOUBLE_EQ(t.radius_micron.back(), 10.0);
    EXPECT_DOUBLE_EQ(t.wavelength_micron.front(), 1e-3);
    EXPECT_DOUBLE_EQ(t.wavelength_micron.back(), 1e3);
  }
  // Values copied from the file's text: graphite a = 0.001 micron, first and last rows of block 1.
  const auto g = kosmos::dust::read_draine_table(data_path("dust/draine_graphite_81.dat"));
  EXPECT_DOUBLE_EQ(g.q_abs[0].back(), 2.403e-7);  // w = 1000 micron
  EXPECT_DOUBLE_EQ(g.q_abs[0][0], 3.986e-4);      // w = 0.001 micron
  EXPECT_DOUBLE_EQ(g.q_abs[80][0], 9.447e-1);     // a = 10 micron, w = 0.001 micron
}

TEST(DraineTable, CrossSectionsInterpolateThroughTablePoints) {
  const auto t = kosmos::dust::read_draine_table(data_path("dust/draine_graphite_81.dat"));
  // At table nodes: exactly pi a^2 Q_abs.
  const std::vector<double> w = {t.wavelength_micron[10], t.wavelength_micron[120], t.wavelength_micron[240]};
  const auto s = kosmos::dust::absorption_cross_section(t, t.radius_micron[40], w);
  const double a = t.radius_micron[40] * 1e-6;
  EXPECT_NEAR(s[0] / (M_PI * a * a * t.q_abs[40][10]), 1.0, 1e-12);
  EXPECT_NEAR(s[1] / (M_PI * a * a * t.q_abs[40][120]), 1.0, 1e-12);
  EXPECT_NEAR(s[2] / (M_PI * a * a * t.q_abs[40][240]), 1.0, 1e-12);
  // Between nodes: the geometric mean of the neighbours at the log-midpoint (log-log linear).
  const double wm = std::sqrt(t.wavelength_micron[100] * t.wavelength_micron[101]);
  const auto sm = kosmos::dust::absorption_cross_section(t, t.radius_micron[40], {wm});
  EXPECT_NEAR(sm[0] / (M_PI * a * a * std::sqrt(t.q_abs[40][100] * t.q_abs[40][101])), 1.0, 1e-12);
  EXPECT_THROW(kosmos::dust::absorption_cross_section(t, 20.0, w), kosmos::invalid_input);
  EXPECT_THROW(kosmos::dust::absorption_cross_section(t, 0.1, {5e-4}), kosmos::invalid_input);
}

// Beyond the table's last wavelength (1000 micron): Q_abs(lambda_end) (lambda / lambda_end)^-beta up
// to 1 cm, from the table's own last row; continuous at lambda_end; nothing past 1 cm.
TEST(DraineTable, ExtrapolatesAsAPowerLawToOneCentimetre) {
  const auto t = kosmos::dust::read_draine_table(data_path("dust/draine_graphite_81.dat"));
  const double a = t.radius_micron[30], a_m = a * 1e-6, q_end = t.q_abs[30].back();
  ASSERT_DOUBLE_EQ(t.wavelength_micron.back(), 1000.0);
  for (double beta : {2.0, 1.5, 0.0}) {
    const auto s = kosmos::dust::absorption_cross_section(t, a, {1000.0, 2000.0, 3162.0, 1e4}, beta);
    for (const auto& [i, w] : std::vector<std::pair<int, double>>{{0, 1000.0}, {1, 2000.0}, {2, 3162.0}, {3, 1e4}})
      EXPECT_NEAR(s[i] / (M_PI * a_m * a_m * q_end * std::pow(w / 1000.0, -beta)), 1.0, 1e-12) << beta << " " << w;
  }
  // The default index is 2.
  const auto d = kosmos::dust::absorption_cross_section(t, a, {5000.0});
  EXPECT_NEAR(d[0] / (M_PI * a_m * a_m * q_end / 25.0), 1.0, 1e-12);
  EXPECT_THROW(kosmos::dust::absorption_cross_section(t, a, {1.0001e4}), kosmos::invalid_input);
  EXPECT_THROW(kosmos::dust::absorption_cross_section(t, a, {2000.0}, -1.0), kosmos::invalid_input);
}

TEST(DraineTable, MalformedFilesNameFileAndLine) {
  const std::string header =
      "# test\n  2 1.0E-03 1.0E-02 = NRAD, a_1, a_NRAD\n   3 1.0E+01 1.0E-01 = NWAV, w_1, w_NWAV\n";
  const std::string block1 = "1.0E-03 = radius(micron) test\n1.0E+01 1.0E-03 0 0\n1.0E+00 1.0E-02 0 0\n1.0E-01 1.0E-01 0 0\n";
  const std::string good = header + block1 + "1.0E-02 = radius(micron) test\n1.0E+01 2.0E-03 0 0\n1.0E+00 2.0E-02 0 0\n1.0E-01 2.0E-01 0 0\n";
  const auto ok = kosmos::dust::read_draine_table(write_temp("draine_ok.dat", good));
  EXPECT_EQ(ok.radius_micron.size(), 2u);
  EXPECT_DOUBLE_EQ(ok.q_abs[1][0], 2.0e-1);  // ascending wavelength: 0.1 micron first
  expect_file_error([&] { kosmos::dust::read_draine_table(write_temp("draine_bad1.dat", header + block1 + "1.0E-02 = radius(micron) test\n1.0E+01 abc 0 0\n")); },
                    "draine_bad1.dat:9: Q_abs 'abc' is not a finite number");
  expect_file_error([&] { kosmos::dust::read_draine_table(write_temp("draine_bad2.dat", header + block1)); },
                    "1 radius blocks, header says 2");
  expect_file_error([&] { kosmos::dust::read_draine_table(write_temp("draine_bad3.dat", header + block1 + "1.0E-02 = radius(micron) test\n1.0E+01 2.0E-03 0 0\n")); },
                    "last radius block has 1 wavelengths, header says 3");
  expect_file_error([&] { kosmos::dust::read_draine_table(write_temp("draine_bad4.dat", header + "1.0E-03 = radius(micron) test\n1.0E+01 -1.0E-03 0 0\n")); },
                    "draine_bad4.dat:5: Q_abs must be > 0");
  expect_file_error([&] { kosmos::dust::read_draine_table("/nonexistent/draine.dat"); }, "/nonexistent/draine.dat");
  // A second NWAV line between blocks (a larger count overran the first block's grid; a smaller
  // one left ragged rows) and a repeated header line.
  const std::string wider = "   4 1.0E+01 1.0E-01 = NWAV, w_1, w_NWAV\n";
  expect_file_error([&] { kosmos::dust::read_draine_table(write_temp("draine_bad5.dat", header + block1 + wider)); },
                    "draine_bad5.dat:8: a second NWAV line after the radius blocks began");
  expect_file_error([&] { kosmos::dust::read_draine_table(write_temp("draine_bad6.dat", header + wider + block1)); },
                    "draine_bad6.dat:4: a second NWAV line");
}

TEST(WavelengthGrid, PaperGridAndBinWidthsTileTheRange) {
  const auto w = kosmos::dust::paper_wavelength_grid();
  ASSERT_EQ(w.size(), 968u);
  EXPECT_DOUBLE_EQ(w.front(), 0.0912);
  EXPECT_DOUBLE_EQ(w.back(), 1000.0);
  const auto d = kosmos::dust::bin_widths(w);
  long double sum = 0;
  for (double x : d) sum += x;
  EXPECT_NEAR(double(sum / (w.back() - w.front())), 1.0, 1e-12);
  EXPECT_THROW(kosmos::dust::bin_widths({1.0, 3.0, 2.0}), kosmos::invalid_input);

  std::vector<double> wl, wd;
  kosmos::dust::read_wavelength_grid(write_temp("grid1.txt", "# micron\n0.1\n1\n10\n"), wl, wd);
  EXPECT_EQ(wl, (std::vector<double>{0.1, 1, 10}));
  EXPECT_DOUBLE_EQ(wd[1], 4.95);
  expect_file_error([&] { kosmos::dust::read_wavelength_grid(write_temp("grid2.txt", "0.1\n1\n0.5\n"), wl, wd); },
                    "grid2.txt:3: wavelengths must be strictly increasing");
  expect_file_error([&] { kosmos::dust::read_wavelength_grid(write_temp("grid3.txt", "0.1 0.01\n1\n"), wl, wd); },
                    "grid3.txt:2: expected 2 columns");
}

TEST(SizeDistribution, PowerLawIsNormalizedToOneKilogram) {
  const auto t = kosmos::dust::read_draine_table(data_path("dust/draine_graphite_81.dat"));
  const auto sd = kosmos::dust::power_law_size_distribution(t.radius_micron, 2.24);
  long double mass = 0;
  for (std::size_t i = 0; i < sd.radius_micron.size(); ++i) {
    ASSERT_GT(sd.number_per_mass[i], 0.0);
    const long double a = sd.radius_micron[i] * 1e-6L;
    mass += sd.number_per_mass[i] * 4.0L / 3.0L * 3.14159265358979323846L * a * a * a * 2240.0L;
  }
  EXPECT_NEAR(double(mass), 1.0, 1e-12);
  // n_i ~ a_i^-3.5 exp(-a_i / 0.25) (a_{i+1} - a_{i-1}) / 2: the ratio of two neighbouring bins.
  const auto& a = sd.radius_micron;
  auto unnormalized = [&](int i) { return std::pow(a[i], -3.5) * std::exp(-a[i] / 0.25) * (a[i + 1] - a[i - 1]) / 2; };
  const double ratio = sd.number_per_mass[41] / sd.number_per_mass[40];
  const double expected = unnormalized(41) / unnormalized(40);
  EXPECT_NEAR(ratio / expected, 1.0, 1e-9);

  const auto read = kosmos::dust::read_size_distribution(write_temp("sizes.txt", "0.01 1e20\n0.1 1e17\n"));
  EXPECT_EQ(read.radius_micron.size(), 2u);
  expect_file_error([&] { kosmos::dust::read_size_distribution(write_temp("sizes_bad.txt", "0.01 1e20\n0.1 0\n")); },
                    "sizes_bad.txt:2: number per unit mass must be > 0");
}

TEST(Fields, Mmp83MatchesItsPiecewiseDefinition) {
  EXPECT_EQ(kosmos::dust::mmp83_mean_intensity(0.09), 0.0);
  EXPECT_NEAR(kosmos::dust::mmp83_mean_intensity(0.1), 3069.0 * std::pow(0.1, 3.4172), 1e-12);
  EXPECT_EQ(kosmos::dust::mmp83_mean_intensity(0.12), 1.627);
  EXPECT_NEAR(kosmos::dust::mmp83_mean_intensity(0.2), 0.0566 * std::pow(0.2, -1.6678), 1e-12);
  const double l = 1.0;  // micron: the three diluted blackbodies, long double reference
  const LD ref = 1e-14L * planck(1e-6L, 7500) + 1e-13L * planck(1e-6L, 4000) + 4e-13L * planck(1e-6L, 3000);
  EXPECT_NEAR(kosmos::dust::mmp83_mean_intensity(l) / double(ref), 1.0, 1e-12);
  // The piecewise UV fits join to a few per cent.
  EXPECT_NEAR(kosmos::dust::mmp83_mean_intensity(0.10999) / 1.627, 1.0, 0.03);
  EXPECT_NEAR(kosmos::dust::mmp83_mean_intensity(0.13401) / 1.627, 1.0, 0.03);
  // Planck in double against long double across 3-3000 K and 0.09-1000 micron (no overflow).
  for (double t : {3.0, 30.0, 300.0, 3000.0})
    for (double lm : {0.0912, 1.0, 20.0, 1000.0}) {
      const double b = kosmos::dust::planck_lambda(lm * 1e-6, t);
      const LD r = planck(lm * 1e-6L, t);
      if (r < 1e-300L) {
        EXPECT_GE(b, 0.0);
        EXPECT_LT(b, 1e-290);
      } else {
        EXPECT_NEAR(b / double(r), 1.0, 1e-12) << lm << " micron " << t << " K";
      }
    }
}

TEST(Cells, ReaderChecksEveryLine) {
  std::vector<double> m, i;
  kosmos::dust::read_cells(write_temp("cells.txt", "# m I1 I2\n2.0 1 0\n3e30 0.5 0.25\n"), 2, m, i);
  EXPECT_EQ(m, (std::vector<double>{2.0, 3e30}));
  EXPECT_EQ(i, (std::vector<double>{1, 0, 0.5, 0.25}));
  expect_file_error([&] { kosmos::dust::read_cells(write_temp("cells_b1.txt", "2.0 1 0\n3 0.5\n"), 2, m, i); },
                    "cells_b1.txt:2: expected 3 fields");
  expect_file_error([&] { kosmos::dust::read_cells(write_temp("cells_b2.txt", "2.0 1 -4\n"), 2, m, i); },
                    "cells_b2.txt:1: intensity 2 is negative");
  expect_file_error([&] { kosmos::dust::read_cells(write_temp("cells_b3.txt", "0 1 4\n"), 2, m, i); },
                    "cells_b3.txt:1: dust mass must be > 0");
  expect_file_error([&] { kosmos::dust::read_cells(write_temp("cells_b4.txt", "1 nan 4\n"), 2, m, i); },
                    "cells_b4.txt:1: intensity 'nan' is not a finite number");
}
}  // namespace

namespace {
// The occupation 1/(e^u - 1) over the whole 3-3000 K x 0.09-1000 micron range (u from ~5e-3 to
// ~5e4): no inf or NaN in float or double, and accurate wherever the value is representable.
template <class T>
void check_occupation(double rel) {
  const double c2 = kosmos::dust::constants::c2;
  for (int i = 0; i <= 200; ++i)
    for (int j = 0; j <= 200; ++j) {
      const double t = 3.0 * std::pow(1000.0, i / 200.0);
      const double lambda = 0.09e-6 * std::pow(1000.0 / 0.09, j / 200.0);
      const T u = T(c2 / (lambda * t));
      const T q = kosmos::dust::planck_occupation(u);
      const LD ref = 1.0L / std::expm1(LD(u));
      ASSERT_TRUE(std::isfinite(q) && q >= 0) << "T " << t << " lambda " << lambda;
      if (ref > LD(std::numeric_limits<T>::min()) * 1e6L) {
        EXPECT_NEAR(double(q / ref), 1.0, rel) << "u = " << u;
      } else {
        EXPECT_LE(double(q), 1e6 * double(std::numeric_limits<T>::min()));
      }
    }
}
}  // namespace

TEST(Planck, OccupationIsSafeAndAccurateAcrossTheRange) {
  check_occupation<float>(1e-6);
  check_occupation<double>(3e-13);
}
