#include <kosmos/kepler/rv_data.hpp>

#include <kosmos/core/error.hpp>
#include <kosmos/core/io.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kosmos {
namespace kepler {
namespace {
// A record's fields, split at commas when the line has any (CSV), else the whitespace fields.
std::vector<std::string> split_fields(const io::Record& r) {
  std::string line;
  for (const auto& f : r.fields) line += (line.empty() ? "" : " ") + f;
  if (line.find(',') == std::string::npos) return r.fields;
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    std::string f =
        line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto first = f.find_first_not_of(' '), last = f.find_last_not_of(' ');
    out.push_back(first == std::string::npos ? std::string() : f.substr(first, last - first + 1));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// Column of each quantity: RadVel's header names (and common synonyms) when there is a header,
// else the positions time, velocity, sigma, instrument.
struct Columns {
  int time = 0, velocity = 1, sigma = 2, instrument = 3;
};

Columns columns_from_header(const std::vector<std::string>& header) {
  Columns c;
  auto named = [&](std::initializer_list<const char*> names) {
    for (std::size_t i = 0; i < header.size(); ++i) {
      std::string h = header[i];
      std::transform(h.begin(), h.end(), h.begin(),
                     [](unsigned char ch) { return char(std::tolower(ch)); });
      for (const char* n : names)
        if (h == n) return int(i);
    }
    return -1;
  };
  const int time = named({"time", "t", "jd", "bjd", "bjd_tdb", "hjd"});
  const int velocity = named({"mnvel", "vel", "rv", "velocity"});
  const int sigma = named({"errvel", "err", "sigma", "e_rv", "erv", "error"});
  const int instrument = named({"tel", "inst", "instrument", "telescope"});
  // A header of other names: the columns by position. One of these names: the columns by name
  // (a column not found falls back to its position), the instrument only by name.
  const bool any_named = time >= 0 || velocity >= 0 || sigma >= 0 || instrument >= 0;
  c.time = time >= 0 ? time : 0;
  c.velocity = velocity >= 0 ? velocity : 1;
  c.sigma = sigma >= 0 ? sigma : 2;
  c.instrument = instrument >= 0 ? instrument : any_named ? -1 : 3;
  return c;
}
}  // namespace

RVData read_rv_file(const std::string& path) {
  io::TextReader reader(path);
  RVData data;
  data.path = path;
  io::Record r;
  Columns col;
  std::vector<std::size_t> extra_index;  // the field of each of data.columns
  bool first = true;
  while (reader.next(r)) {
    r.fields = split_fields(r);
    // A first line without numbers is a header (a number in it: a data line, checked below).
    const bool header = first && std::none_of(r.fields.begin(), r.fields.end(), [](const std::string& f) {
                          double probe = 0;
                          return io::parse_double(f, probe, true);
                        });
    if (header) {
      col = columns_from_header(r.fields);
      for (std::size_t i = 0; i < r.fields.size(); ++i)
        if (int(i) != col.time && int(i) != col.velocity && int(i) != col.sigma &&
            int(i) != col.instrument && !r.fields[i].empty()) {
          data.columns.push_back({r.fields[i], {}});
          extra_index.push_back(i);
        }
      const int columns[] = {col.time, col.velocity, col.sigma, col.instrument};
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < i; ++j)
          if (columns[i] >= 0 && columns[i] == columns[j])
            reader.fail(r.line_number, "header: the time, velocity, sigma and instrument columns are not distinct "
                                       "(name them, e.g. 'time mnvel errvel tel')");
      first = false;
      continue;
    }
    first = false;
    const int needed = std::max({col.time, col.velocity, col.sigma}) + 1;
    if (int(r.fields.size()) < needed)
      reader.fail(r.line_number,
                  "expected at least " + std::to_string(needed) +
                      " columns (time velocity sigma [instrument]), found " +
                      std::to_string(r.fields.size()) +
                      (int(r.fields.size()) > std::max(col.time, col.velocity)
                           ? ": no sigma column; the likelihood needs each velocity's "
                             "uncertainty (column " +
                                 std::to_string(col.sigma + 1) + ", same units as the velocity)"
                           : std::string()));
    const double t = reader.number(r, col.time, "time");
    const double v = reader.number(r, col.velocity, "velocity");
    const double s = reader.number(r, col.sigma, "sigma");
    if (!(s > 0)) reader.fail(r.line_number, "sigma " + r.fields[col.sigma] + " must be > 0");
    if (!(std::fabs(v) <= largest_rv_magnitude))
      reader.fail(r.line_number, "velocity " + r.fields[col.velocity] + " is beyond +-1e100");
    if (!(s >= 1 / largest_rv_magnitude && s <= largest_rv_magnitude))
      reader.fail(r.line_number, "sigma " + r.fields[col.sigma] + " is outside [1e-100, 1e100]");
    const bool has_instrument = col.instrument >= 0 && int(r.fields.size()) > col.instrument &&
                                !r.fields[col.instrument].empty();
    const std::string name = has_instrument ? r.fields[col.instrument] : std::string("default");
    auto it = std::find(data.instrument_names.begin(), data.instrument_names.end(), name);
    if (it == data.instrument_names.end()) {
      data.instrument_names.push_back(name);
      it = data.instrument_names.end() - 1;
    }
    data.time.push_back(t);
    data.velocity.push_back(v);
    data.sigma.push_back(s);
    data.instrument.push_back(int(it - data.instrument_names.begin()));
    data.line.push_back(int(r.line_number));
    for (std::size_t c = 0; c < extra_index.size(); ++c) {
      double x = std::numeric_limits<double>::quiet_NaN();
      if (extra_index[c] >= r.fields.size() ||
          !io::parse_double(r.fields[extra_index[c]], x, false))
        x = std::numeric_limits<double>::quiet_NaN();
      data.columns[c].values.push_back(x);
    }
  }
  if (data.time.empty()) throw file_error(path + ": no observations (empty data)");
  // Time order (files are often grouped by instrument); stable, so equal times keep file order.
  std::vector<std::size_t> order(data.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return data.time[a] < data.time[b]; });
  auto permute = [&](auto& column) {
    auto copy = column;
    for (std::size_t k = 0; k < order.size(); ++k) column[k] = copy[order[k]];
  };
  permute(data.time);
  permute(data.velocity);
  permute(data.sigma);
  permute(data.instrument);
  permute(data.line);
  for (auto& c : data.columns) permute(c.values);
  return data;
}
}  // namespace kepler
}  // namespace kosmos
