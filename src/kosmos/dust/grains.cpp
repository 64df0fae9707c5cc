#include <kosmos/dust/grains.hpp>

#include <kosmos/core/error.hpp>
#include <kosmos/core/io.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <utility>

namespace kosmos {
namespace dust {
namespace {
bool is_number(const std::string& token) {
  double v;
  return io::parse_double(token, v);
}

// Index i with x[i] <= v <= x[i+1] in an ascending vector, clamped to [0, n-2].
std::size_t bracket(const std::vector<double>& x, double v) {
  auto it = std::upper_bound(x.begin(), x.end(), v);
  std::size_t i = it == x.begin() ? 0 : std::size_t(it - x.begin()) - 1;
  return std::min(i, x.size() - 2);
}
}  // namespace

namespace {
std::string shortest(double x) {
  std::ostringstream out;
  out << std::setprecision(6) << x;
  return out.str();
}
}  // namespace

DraineTable read_draine_table(const std::string& path) {
  io::TextReader reader(path);
  DraineTable t;
  t.path = path;
  io::Record r;
  long long nrad = -1, nwav = -1;
  double header_first[2] = {0, 0}, header_last[2] = {0, 0};  // radii, wavelengths (micron)
  std::size_t header_line[2] = {0, 0};
  std::vector<double> file_wavelengths;
  std::vector<std::vector<double>> q;  // as in the file (wavelength descending)
  std::size_t rows_in_block = 0;
  while (reader.next(r)) {
    const auto& f = r.fields;
    if (f.size() >= 5 && f[3] == "=" && (f[4] == "NRAD," || f[4] == "NWAV,")) {
      const char* name = f[4] == "NRAD," ? "NRAD" : "NWAV";
      long long& count = f[4] == "NRAD," ? nrad : nwav;
      // Once each, before the blocks: every block is checked against the first one's grid.
      if (count >= 0 || !q.empty())
        reader.fail(r.line_number, std::string("a second ") + name + " line" + (q.empty() ? "" : " after the radius blocks began"));
      const long long n = reader.integer(r, 0, name);
      if (n < 2) reader.fail(r.line_number, "table needs at least 2 radii and 2 wavelengths");
      count = n;
      const int k = f[4] == "NRAD," ? 0 : 1;
      header_first[k] = reader.number(r, 1, k == 0 ? "a_1" : "w_1");
      header_last[k] = reader.number(r, 2, k == 0 ? "a_NRAD" : "w_NWAV");
      header_line[k] = r.line_number;
      continue;
    }
    if (f.size() >= 3 && f[1] == "=" && f[2].rfind("radius", 0) == 0) {
      if (nrad < 0 || nwav < 0) reader.fail(r.line_number, "radius block before the NRAD/NWAV header lines");
      if (!q.empty() && rows_in_block != std::size_t(nwav))
        reader.fail(r.line_number, "previous radius block has " + std::to_string(rows_in_block) +
                                       " wavelengths, header says " + std::to_string(nwav));
      const double a = reader.number(r, 0, "radius");
      if (!(a > 0)) reader.fail(r.line_number, "radius must be > 0");
      if (!t.radius_micron.empty() && !(a > t.radius_micron.back()))
        reader.fail(r.line_number, "radii must increase from block to block");
      t.radius_micron.push_back(a);
      q.emplace_back();
      rows_in_block = 0;
      continue;
    }
    if (q.empty()) reader.fail(r.line_number, "unrecognized line before the first radius block");
    if (f.size() < 2 || !is_number(f[0])) reader.fail(r.line_number, "expected 'w(micron) Q_abs Q_sca g'");
    const double w = reader.number(r, 0, "wavelength");
    const double qa = reader.number(r, 1, "Q_abs");
    // Q_sca and g are not used, but a damaged number there means a damaged table.
    if (f.size() > 2) reader.number(r, 2, "Q_sca");
    if (f.size() > 3) reader.number(r, 3, "g");
    if (!(w > 0)) reader.fail(r.line_number, "wavelength must be > 0");
    if (!(qa > 0)) reader.fail(r.line_number, "Q_abs must be > 0");
    if (rows_in_block >= std::size_t(nwav))
      reader.fail(r.line_number, "more than NWAV = " + std::to_string(nwav) + " rows in a radius block");
    if (q.size() == 1) {
      if (!file_wavelengths.empty() && !(w < file_wavelengths.back()))
        reader.fail(r.line_number, "wavelengths must be strictly descending within a block");
      file_wavelengths.push_back(w);
    } else if (std::fabs(w - file_wavelengths[rows_in_block]) > 1e-6 * w) {
      reader.fail(r.line_number, "wavelength differs from the first radius block's grid");
    }
    q.back().push_back(qa);
    ++rows_in_block;
  }
  if (nrad < 0 || nwav < 0) throw file_error(path + ": missing the NRAD/NWAV header lines");
  if (q.size() != std::size_t(nrad))
    throw file_error(path + ": " + std::to_string(q.size()) + " radius blocks, header says " + std::to_string(nrad));
  if (rows_in_block != std::size_t(nwav))
    throw file_error(path + ": last radius block has " + std::to_string(rows_in_block) + " wavelengths, header says " +
                     std::to_string(nwav));
  // The header's first and last radius and wavelength (4 digits in Draine's files) must be the
  // blocks' own.
  const double blocks_first[2] = {t.radius_micron.front(), file_wavelengths.front()},
               blocks_last[2] = {t.radius_micron.back(), file_wavelengths.back()};
  for (int k = 0; k < 2; ++k)
    for (const auto& [header, blocks] : {std::pair<double, double>{header_first[k], blocks_first[k]},
                                         std::pair<double, double>{header_last[k], blocks_last[k]}})
      if (!(std::fabs(header - blocks) <= 1e-3 * std::fabs(blocks)))
        reader.fail(header_line[k], std::string(k == 0 ? "radius" : "wavelength") + " range " + shortest(header) +
                                        " in the header, but the table's is " + shortest(blocks));
  t.wavelength_micron.assign(file_wavelengths.rbegin(), file_wavelengths.rend());
  for (auto& row : q) std::reverse(row.begin(), row.end());
  t.q_abs = std::move(q);
  return t;
}

std::vector<double> absorption_cross_section(const DraineTable& t, double radius_micron,
                                             const std::vector<double>& wavelength_micron, double beta) {
  const char* where = "kosmos::dust::absorption_cross_section";
  kosmos::Impl::require(radius_micron >= t.radius_micron.front() * (1 - 1e-12) &&
                            radius_micron <= t.radius_micron.back() * (1 + 1e-12),
                        where, "radius ", radius_micron, " micron is outside the table's [",
                        t.radius_micron.front(), ", ", t.radius_micron.back(), "] (", t.path, ")");
  kosmos::Impl::require(std::isfinite(beta) && beta >= 0, where, "beta = ", beta, " must be finite and >= 0");
  const std::size_t ia = bracket(t.radius_micron, radius_micron);
  const double fa = std::clamp((std::log(radius_micron) - std::log(t.radius_micron[ia])) /
                                   (std::log(t.radius_micron[ia + 1]) - std::log(t.radius_micron[ia])),
                               0.0, 1.0);
  const double table_end = t.wavelength_micron.back();
  std::vector<double> sigma(wavelength_micron.size());
  const double a_m = radius_micron * 1e-6;
  for (std::size_t l = 0; l < wavelength_micron.size(); ++l) {
    const double w = wavelength_micron[l];
    kosmos::Impl::require(w >= t.wavelength_micron.front() * (1 - 1e-12) && w <= max_extrapolated_wavelength_micron,
                          where, "wavelength(", l, ") = ", w, " micron is outside [", t.wavelength_micron.front(),
                          ", ", max_extrapolated_wavelength_micron, "] (the table's range ", t.wavelength_micron.front(),
                          "-", table_end, " of ", t.path, ", extrapolated as lambda^-beta up to 1 cm)");
    // Beyond the table: Q_abs(lambda) = Q_abs(lambda_end) (lambda / lambda_end)^-beta.
    const double wt = std::min(w, table_end);
    const double log_extrapolation = w > table_end ? -beta * std::log(w / table_end) : 0.0;
    const std::size_t il = bracket(t.wavelength_micron, wt);
    const double fl = std::clamp((std::log(wt) - std::log(t.wavelength_micron[il])) /
                                     (std::log(t.wavelength_micron[il + 1]) - std::log(t.wavelength_micron[il])),
                                 0.0, 1.0);
    auto lq = [&](std::size_t a, std::size_t b) { return std::log(t.q_abs[a][b]); };
    const double log_q = (1 - fa) * ((1 - fl) * lq(ia, il) + fl * lq(ia, il + 1)) +
                         fa * ((1 - fl) * lq(ia + 1, il) + fl * lq(ia + 1, il + 1));
    sigma[l] = M_PI * a_m * a_m * std::exp(log_q + log_extrapolation);
  }
  return sigma;
}

std::vector<double> log_wavelength_grid(double lo, double hi, int n) {
  kosmos::Impl::require(lo > 0 && hi > lo && std::isfinite(hi) && n >= 2, "kosmos::dust::log_wavelength_grid",
                        "need 0 < lo < hi and n >= 2, got lo = ", lo, ", hi = ", hi, ", n = ", n);
  std::vector<double> w(n);
  for (int i = 0; i < n; ++i) w[i] = lo * std::pow(hi / lo, double(i) / (n - 1));
  w.back() = hi;
  return w;
}

std::vector<double> bin_widths(const std::vector<double>& w) {
  const char* where = "kosmos::dust::bin_widths";
  kosmos::Impl::require(w.size() >= 2, where, "need at least 2 wavelengths, got ", w.size());
  for (std::size_t i = 0; i + 1 < w.size(); ++i)
    kosmos::Impl::require(w[i + 1] > w[i] && w[i] > 0, where, "wavelengths must be > 0 and strictly increasing: w(",
                          i, ") = ", w[i], ", w(", i + 1, ") = ", w[i + 1]);
  std::vector<double> d(w.size());
  d.front() = 0.5 * (w[1] - w[0]);
  d.back() = 0.5 * (w[w.size() - 1] - w[w.size() - 2]);
  for (std::size_t i = 1; i + 1 < w.size(); ++i) d[i] = 0.5 * (w[i + 1] - w[i - 1]);
  return d;
}

void read_wavelength_grid(const std::string& path, std::vector<double>& w, std::vector<double>& d) {
  io::TextReader reader(path);
  io::Record r;
  w.clear();
  d.clear();
  std::size_t columns = 0;
  while (reader.next(r)) {
    if (columns == 0) columns = r.fields.size();
    if (r.fields.size() != columns || columns > 2)
      reader.fail(r.line_number, "expected " + std::string(columns == 2 ? "2 columns" : "1 column") +
                                     " (wavelength in micron [, bin width in micron]) on every line");
    const double v = reader.number(r, 0, "wavelength");
    if (!(v > 0)) reader.fail(r.line_number, "wavelength must be > 0");
    if (!w.empty() && !(v > w.back()))
      reader.fail(r.line_number, "wavelengths must be strictly increasing (" + r.fields[0] + " after " +
                                     std::to_string(w.back()) + ")");
    w.push_back(v);
    if (columns == 2) {
      const double width = reader.number(r, 1, "bin width");
      if (!(width > 0)) reader.fail(r.line_number, "bin width must be > 0");
      d.push_back(width);
    }
  }
  if (w.size() < 2) throw file_error(path + ": need at least 2 wavelengths");
  if (columns == 1) d = bin_widths(w);
}

SizeDistribution read_size_distribution(const std::string& path) {
  io::TextReader reader(path);
  io::Record r;
  SizeDistribution s;
  while (reader.next(r)) {
    if (r.fields.size() != 2) reader.fail(r.line_number, "expected 'radius_micron number_per_unit_dust_mass'");
    const double a = reader.number(r, 0, "radius");
    const double n = reader.number(r, 1, "number per unit mass");
    if (!(a > 0)) reader.fail(r.line_number, "radius must be > 0");
    if (!(n > 0)) reader.fail(r.line_number, "number per unit mass must be > 0");
    s.radius_micron.push_back(a);
    s.number_per_mass.push_back(n);
  }
  if (s.radius_micron.empty()) throw file_error(path + ": no grain species");
  return s;
}

SizeDistribution power_law_size_distribution(const std::vector<double>& radius, double rho, double exponent,
                                             double a_cut) {
  const char* where = "kosmos::dust::power_law_size_distribution";
  kosmos::Impl::require(radius.size() >= 2, where, "need at least 2 radii");
  kosmos::Impl::require(rho > 0 && a_cut > 0, where, "density and cutoff must be > 0");
  const auto width = bin_widths(radius);
  SizeDistribution s;
  s.radius_micron = radius;
  double mass = 0;  // kg of dust per unit of the unnormalized distribution
  for (std::size_t i = 0; i < radius.size(); ++i) {
    const double a = radius[i];
    const double n = std::pow(a, exponent) * std::exp(-a / a_cut) * width[i];
    s.number_per_mass.push_back(n);
    const double a_m = a * 1e-6;
    mass += n * 4.0 / 3.0 * M_PI * a_m * a_m * a_m * rho * 1e3;
  }
  for (auto& n : s.number_per_mass) n /= mass;
  return s;
}

void read_cells(const std::string& path, std::size_t nl, std::vector<double>& dust_mass, std::vector<double>& intensity) {
  io::TextReader reader(path);
  io::Record r;
  dust_mass.clear();
  intensity.clear();
  while (reader.next(r)) {
    if (r.fields.size() != nl + 1)
      reader.fail(r.line_number, "expected " + std::to_string(nl + 1) +
                                     " fields (dust_mass and one intensity per wavelength), found " +
                                     std::to_string(r.fields.size()));
    const double m = reader.number(r, 0, "dust mass");
    if (!(m > 0)) reader.fail(r.line_number, "dust mass must be > 0");
    dust_mass.push_back(m);
    for (std::size_t l = 0; l < nl; ++l) {
      const double v = reader.number(r, l + 1, "intensity");
      if (!(v >= 0)) reader.fail(r.line_number, "intensity " + std::to_string(l + 1) + " is negative");
      intensity.push_back(v);
    }
  }
  if (dust_mass.empty()) throw file_error(path + ": no cells");
}
}  // namespace dust
}  // namespace kosmos
