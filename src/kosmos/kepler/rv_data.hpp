// Radial-velocity data files: whitespace-separated or comma-separated (CSV) columns
// `time velocity sigma [instrument ...]` (RadVel's formats: time, mnvel, errvel, tel, svalue).
// An optional first line without numbers is a header naming the columns: RadVel's names (and
// time/t/jd/bjd, vel/rv/velocity, err/sigma/e_rv, inst/instrument/telescope) pick them in any
// order; a time, velocity or sigma not named is at its position above, the instrument only where
// named (a header of none of these names: all by position); the columns must differ. '#'
// comments are skipped. The other columns a header names are kept as `columns` (activity
// indicators such as FWHM, BIS, S-index: SearchOptions::activity picks them); their values are
// checked only when used (a value that is missing or not a finite number is kept as NaN, and
// its line reported then). Rows may come in any order (e.g. grouped by
// instrument): they are sorted by time (stably), instrument labels kept. |velocity| and sigma are
// within [1 / largest_rv_magnitude, largest_rv_magnitude]. Errors name the file and line.
#pragma once

#include <string>
#include <vector>

namespace kosmos {
namespace kepler {

// Largest magnitude of a velocity, sigma or prior value (and 1 / the smallest sigma): beyond it
// the squares and weights of the likelihood overflow double to inf and NaN.
constexpr double largest_rv_magnitude = 1e100;

// A named data column beyond time, velocity, sigma and instrument, one value per observation
// (NaN where the file has none or not a finite number).
struct RVColumn {
  std::string name;
  std::vector<double> values;
};

struct RVData {
  std::string path;
  std::vector<double> time, velocity, sigma;
  std::vector<int> instrument;                // index into instrument_names
  std::vector<std::string> instrument_names;  // in order of first appearance
  std::vector<RVColumn> columns;              // the header's other named columns
  std::vector<int> line;                      // each observation's line in `path` (0: unknown)
  std::size_t size() const { return time.size(); }
  int n_instruments() const { return int(instrument_names.size()); }
  // Midpoint of the time span (a good epoch for M0: least correlation with P).
  double mid_time() const { return time.empty() ? 0.0 : 0.5 * (time.front() + time.back()); }
  double baseline() const { return time.empty() ? 0.0 : time.back() - time.front(); }
};

// Reads, checks and time-sorts an RV file; throws kosmos::file_error "<path>:<line>: ..." on
// malformed or empty data.
RVData read_rv_file(const std::string& path);
}  // namespace kepler
}  // namespace kosmos
