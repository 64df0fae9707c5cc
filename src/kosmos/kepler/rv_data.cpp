#include <kosmos/kepler/rv_data.hpp>

#include <kosmos/core/error.hpp>
#include <kosmos/core/io.hpp>

#include <algorithm>

namespace kosmos {
namespace kepler {

RVData read_rv_file(const std::string& path) {
  io::TextReader reader(path);
  RVData data;
  data.path = path;
  io::Record r;
  bool first = true;
  std::size_t previous_line = 0;
  while (reader.next(r)) {
    double probe = 0;
    if (first && !io::parse_double(r.fields[0], probe, true)) {  // header line
      first = false;
      continue;
    }
    first = false;
    if (r.fields.size() < 3)
      reader.fail(r.line_number, "expected at least 3 columns (time velocity sigma [instrument]), found " +
                                     std::to_string(r.fields.size()));
    const double t = reader.number(r, 0, "time");
    const double v = reader.number(r, 1, "velocity");
    const double s = reader.number(r, 2, "sigma");
    if (!(s > 0)) reader.fail(r.line_number, "sigma " + r.fields[2] + " must be > 0");
    if (!data.time.empty() && t < data.time.back())
      reader.fail(r.line_number, "time " + r.fields[0] + " is earlier than the previous observation (line " +
                                     std::to_string(previous_line) + "); the file must be sorted by time");
    const std::string name = r.fields.size() >= 4 ? r.fields[3] : std::string("default");
    auto it = std::find(data.instrument_names.begin(), data.instrument_names.end(), name);
    if (it == data.instrument_names.end()) {
      data.instrument_names.push_back(name);
      it = data.instrument_names.end() - 1;
    }
    data.time.push_back(t);
    data.velocity.push_back(v);
    data.sigma.push_back(s);
    data.instrument.push_back(int(it - data.instrument_names.begin()));
    previous_line = r.line_number;
  }
  if (data.time.empty()) throw file_error(path + ": no observations (empty data)");
  return data;
}
}  // namespace kepler
}  // namespace kosmos
