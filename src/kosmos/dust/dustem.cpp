#include <kosmos/dust/dustem.hpp>

#include <kosmos/core/error.hpp>
#include <kosmos/core/io.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace kosmos {
namespace dust {
namespace {
constexpr double proton_mass_g = 1.67262158e-24;  // DustEM's xmp

std::string lower(std::string s) {
  for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Parameters each size-distribution keyword takes.
std::size_t parameter_count(const DustemPopulation& p) {
  std::size_t n = p.has("logn") ? 2 : p.has("plaw") ? 1 : 0;
  if (p.has("-ed")) n += 3;
  if (p.has("-cv")) n += 3;
  return n;
}

// Fractional position of v between x[i] and x[i+1] (x ascending), i clamped to the table.
std::size_t bracket(const std::vector<double>& x, double v, double& f) {
  auto it = std::upper_bound(x.begin(), x.end(), v);
  std::size_t i = it == x.begin() ? 0 : std::size_t(it - x.begin()) - 1;
  i = std::min(i, x.size() - 2);
  f = (v - x[i]) / (x[i + 1] - x[i]);
  return i;
}
// A Q_ or C_ file's line of sizes (micron), increasing.
std::vector<double> read_sizes(const io::TextReader& reader, const io::Record& r) {
  std::vector<double> sizes;
  for (std::size_t k = 0; k < r.fields.size(); ++k) {
    const double a = reader.number(r, k, "size");
    if (!(a > 0) || (!sizes.empty() && !(a > sizes.back())))
      reader.fail(r.line_number, "sizes must be > 0 and increasing");
    sizes.push_back(a);
  }
  return sizes;
}
}  // namespace

bool DustemPopulation::has(const std::string& keyword) const {
  return lower(keywords).find(lower(keyword)) != std::string::npos;
}

DustemGrainFile read_dustem_grain_file(const std::string& path) {
  io::TextReader reader(path);
  DustemGrainFile file;
  file.path = path;
  io::Record r;
  bool have_g0 = false;
  while (reader.next(r)) {
    const auto& f = r.fields;
    double g0 = 0;
    if (!have_g0) {
      if (f.size() == 1 && io::parse_double(f[0], g0)) {
        if (!(g0 > 0)) reader.fail(r.line_number, "G0 must be > 0");
        file.g0 = g0;
        have_g0 = true;
      }
      continue;  // the run keywords line (or none) comes before G0
    }
    if (f.size() < 8)
      reader.fail(r.line_number,
                  "expected 'type nsize keywords M/M_H rho a_min a_max parameters...'");
    DustemPopulation p;
    p.type = f[0];
    p.sizes = int(reader.integer(r, 1, "nsize"));
    p.keywords = f[2];
    p.mass_per_h_mass = reader.number(r, 3, "Mdust/MH");
    p.density_g_cm3 = reader.number(r, 4, "rho");
    p.a_min_cm = reader.number(r, 5, "amin");
    p.a_max_cm = reader.number(r, 6, "amax");
    if (p.sizes < 2) reader.fail(r.line_number, "nsize must be >= 2");
    if (!(p.mass_per_h_mass > 0) || !(p.density_g_cm3 > 0))
      reader.fail(r.line_number, "Mdust/MH and rho must be > 0");
    if (!(p.a_min_cm > 0) || !(p.a_max_cm > p.a_min_cm))
      reader.fail(r.line_number, "need 0 < amin < amax");
    if (!p.has("logn") && !p.has("plaw"))
      reader.fail(r.line_number, "size distribution '" + p.keywords +
                                     "' is neither logn nor plaw (SIZE files are not supported)");
    const std::size_t n = parameter_count(p);
    if (f.size() < 7 + n)
      reader.fail(r.line_number, "'" + p.keywords + "' needs " + std::to_string(n) + " parameters");
    for (std::size_t k = 0; k < n; ++k)
      p.parameters.push_back(reader.number(r, 7 + k, "size distribution parameter"));
    if (p.has("logn") && !(p.parameters[0] > 0 && p.parameters[1] > 0))
      reader.fail(r.line_number, "log-normal centre and width must be > 0");
    file.populations.push_back(p);
  }
  if (file.populations.empty()) throw file_error(path + ": no grain populations");
  return file;
}

SizeDistribution dustem_population_sizes(const DustemPopulation& p) {
  const int n = p.sizes;
  const double step = std::log(p.a_max_cm / p.a_min_cm) / (n - 1);
  SizeDistribution s;
  std::vector<double> volume;  // a^3 (a dn/da) in ln a, unnormalized (DustEM's "ava")
  std::size_t extra = 0;       // index of the -ed / -cv parameters
  for (int j = 0; j < n; ++j) {
    const double ln_a = std::log(p.a_min_cm) + j * step;
    const double a = j == n - 1 ? p.a_max_cm : std::exp(ln_a);
    double v;
    if (p.has("zda")) {
      v = a * a * a * a * zda_dn_da(p.parameters, a * 1e4);
      extra = 15;
    } else if (p.has("logn")) {
      const double x = std::log(a / p.parameters[0]) / p.parameters[1];
      v = a * a * a * std::exp(-0.5 * x * x);
      extra = 2;
    } else {
      v = std::pow(a, 4 + p.parameters[0]);
      extra = 1;
    }
    std::size_t k = extra;
    if (p.has("-ed")) {
      const double a_t = p.parameters[k], a_c = p.parameters[k + 1], gamma = p.parameters[k + 2];
      if (a >= a_t) v *= std::exp(-std::pow((a - a_t) / a_c, gamma));
      k += 3;
    }
    if (p.has("-cv")) {
      const double a_u = p.parameters[k], zeta = p.parameters[k + 1], eta = p.parameters[k + 2];
      v *= std::pow(1 + std::fabs(zeta) * std::pow(a / a_u, eta), zeta < 0 ? -1.0 : 1.0);
    }
    s.radius_micron.push_back(a * 1e4);
    volume.push_back(v);
  }
  // Trapezoid in ln a: the mass sum_j w_j volume_j rho 4 pi / 3 is mass_per_h_mass m_p.
  double mass = 0;
  for (int j = 0; j < n; ++j) {
    const double w = (j == 0 || j == n - 1) ? 0.5 * step : step;
    mass += w * volume[std::size_t(j)] * p.density_g_cm3 * 4.0 * M_PI / 3.0;
  }
  kosmos::Impl::require(mass > 0 && std::isfinite(mass), "kosmos::dust::dustem_population_sizes",
                        "population ", p.type, " (", p.keywords, ") has no mass on its size grid");
  const double scale = p.mass_per_h_mass * proton_mass_g / mass;
  for (int j = 0; j < n; ++j) {
    const double a = s.radius_micron[std::size_t(j)] * 1e-4;
    const double w = (j == 0 || j == n - 1) ? 0.5 * step : step;
    s.number_per_mass.push_back(scale * w * volume[std::size_t(j)] / (a * a * a));
  }
  return s;
}

double zda_dn_da(const std::vector<double>& c, double a_micron) {
  kosmos::Impl::require(c.size() == 15, "kosmos::dust::zda_dn_da", "needs 15 coefficients, got ",
                        c.size());
  const double log_a = std::log10(a_micron);
  const double log_g = c[1] + c[2] * log_a -
                       c[4] * std::pow(std::fabs(std::log10(a_micron / c[3])), c[5]) -
                       c[7] * std::pow(std::fabs(std::log10(a_micron / c[6])), c[8]) -
                       c[10] * std::pow(std::fabs(a_micron - c[9]), c[11]) -
                       c[13] * std::pow(std::fabs(a_micron - c[12]), c[14]);
  return c[0] * std::pow(10.0, log_g);
}

double zda_mass_per_h_mass(const DustemPopulation& p) {
  // Midpoint rule in ln a on a fine grid (the coarse size grid's own sum is normalized to this).
  const int n = 20000;
  const double lo = std::log(p.a_min_cm * 1e4), step = std::log(p.a_max_cm / p.a_min_cm) / n;
  double mass = 0;
  for (int j = 0; j < n; ++j) {
    const double a = std::exp(lo + (j + 0.5) * step), a_cm = a * 1e-4;
    mass += step * a * zda_dn_da(p.parameters, a) * 4.0 * M_PI / 3.0 * a_cm * a_cm * a_cm;
  }
  return mass * p.density_g_cm3 / proton_mass_g;
}

DraineTable read_dustem_optics(const std::string& q_path, const std::string& lambda_path) {
  std::vector<double> wavelength;
  {
    io::TextReader reader(lambda_path);
    io::Record r;
    long long n = -1;
    while (reader.next(r)) {
      if (n < 0) {
        n = reader.integer(r, 0, "number of wavelengths");
        continue;
      }
      const double w = reader.number(r, 0, "wavelength");
      if (!(w > 0) || (!wavelength.empty() && !(w > wavelength.back())))
        reader.fail(r.line_number, "wavelengths must be > 0 and increasing");
      wavelength.push_back(w);
    }
    if (n < 2 || std::size_t(n) != wavelength.size())
      throw file_error(lambda_path + ": " + std::to_string(wavelength.size()) +
                       " wavelengths, header says " + std::to_string(n));
  }
  io::TextReader reader(q_path);
  io::Record r;
  DraineTable t;
  t.path = q_path;
  t.wavelength_micron = wavelength;
  long long n_sizes = -1;
  while (t.q_abs.empty() || t.q_abs[0].size() < wavelength.size()) {
    if (!reader.next(r))
      throw file_error(q_path + ": ends before its " + std::to_string(wavelength.size()) +
                       " Q_abs rows (" + lambda_path + ")");
    if (n_sizes < 0) {
      n_sizes = reader.integer(r, 0, "number of sizes");
      if (n_sizes < 2) reader.fail(r.line_number, "need at least 2 sizes");
      continue;
    }
    if (r.fields.size() != std::size_t(n_sizes))
      reader.fail(r.line_number, "expected " + std::to_string(n_sizes) + " columns (one per size)");
    if (t.radius_micron.empty()) {
      t.radius_micron = read_sizes(reader, r);
      t.q_abs.assign(t.radius_micron.size(), {});
      continue;
    }
    for (std::size_t k = 0; k < r.fields.size(); ++k) {
      const double q = reader.number(r, k, "Q_abs");
      if (!(q >= 0)) reader.fail(r.line_number, "Q_abs must be >= 0");
      // Zeros (e.g. below a PAH's absorption edge) as 1e-300: the log-log interpolation keeps
      // them zero for every purpose.
      t.q_abs[k].push_back(std::max(q, 1e-300));
    }
  }
  return t;
}

HeatCapacityTable read_dustem_heat_capacity(const std::string& path) {
  io::TextReader reader(path);
  io::Record r;
  HeatCapacityTable t;
  t.path = path;
  long long n_sizes = -1, n_temperatures = -1;
  while (reader.next(r)) {
    if (n_sizes < 0) {
      n_sizes = reader.integer(r, 0, "number of sizes");
      if (n_sizes < 2) reader.fail(r.line_number, "need at least 2 sizes");
      continue;
    }
    if (t.radius_micron.empty()) {
      if (r.fields.size() != std::size_t(n_sizes))
        reader.fail(r.line_number, "expected the " + std::to_string(n_sizes) + " sizes");
      t.radius_micron = read_sizes(reader, r);
      t.log10_capacity.assign(t.radius_micron.size(), {});
      continue;
    }
    if (n_temperatures < 0) {
      n_temperatures = reader.integer(r, 0, "number of temperatures");
      if (n_temperatures < 2) reader.fail(r.line_number, "need at least 2 temperatures");
      continue;
    }
    if (r.fields.size() != std::size_t(n_sizes) + 1)
      reader.fail(r.line_number, "expected log T and " + std::to_string(n_sizes) + " log C values");
    const double log_t = reader.number(r, 0, "log T");
    if (!t.log10_temperature.empty() && !(log_t > t.log10_temperature.back()))
      reader.fail(r.line_number, "temperatures must increase");
    t.log10_temperature.push_back(log_t);
    for (std::size_t k = 0; k + 1 < r.fields.size(); ++k)
      t.log10_capacity[k].push_back(reader.number(r, k + 1, "log C"));
  }
  if (n_temperatures < 0 || t.log10_temperature.size() != std::size_t(n_temperatures))
    throw file_error(path + ": " + std::to_string(t.log10_temperature.size()) +
                     " temperature rows, header says " + std::to_string(n_temperatures));
  return t;
}

std::vector<double> read_dustem_mix(const std::string& path, int sizes) {
  io::TextReader reader(path);
  io::Record r;
  std::vector<double> f;
  while (reader.next(r)) {
    const double v = reader.number(r, 0, "fraction");
    if (!(v >= 0 && v <= 1)) reader.fail(r.line_number, "fraction must be in [0, 1]");
    f.push_back(v);
  }
  if (f.size() != std::size_t(sizes))
    throw file_error(path + ": " + std::to_string(f.size()) + " fractions for " +
                     std::to_string(sizes) + " sizes");
  return f;
}

std::vector<double> table_enthalpies(const HeatCapacityTable& t, double radius_micron,
                                     const std::vector<double>& temperature) {
  const char* where = "kosmos::dust::table_enthalpy";
  kosmos::Impl::require(radius_micron >= t.radius_micron.front() * (1 - 1e-9) &&
                            radius_micron <= t.radius_micron.back() * (1 + 1e-9),
                        where, "radius ", radius_micron, " micron is outside [",
                        t.radius_micron.front(), ", ", t.radius_micron.back(), "] of ", t.path);
  std::vector<double> log_a(t.radius_micron.size());
  for (std::size_t k = 0; k < log_a.size(); ++k) log_a[k] = std::log10(t.radius_micron[k]);
  double fa;
  const std::size_t ia = bracket(log_a, std::log10(radius_micron), fa);
  fa = std::clamp(fa, 0.0, 1.0);
  // This radius' C(T_k) (erg/K/cm^3), the power-law slope of each segment and E(T_k) from 0 K.
  const auto& lt = t.log10_temperature;
  const std::size_t nt = lt.size();
  std::vector<double> tk(nt), ck(nt), slope(nt), ek(nt);
  for (std::size_t k = 0; k < nt; ++k) {
    tk[k] = std::pow(10.0, lt[k]);
    ck[k] = std::pow(10.0, (1 - fa) * t.log10_capacity[ia][k] + fa * t.log10_capacity[ia + 1][k]);
  }
  for (std::size_t k = 0; k + 1 < nt; ++k)
    slope[k] = std::log(ck[k + 1] / ck[k]) / std::log(tk[k + 1] / tk[k]);
  slope[nt - 1] = slope[nt - 2];
  kosmos::Impl::require(slope[0] > -1, where, t.path,
                        ": C(T) falls faster than 1/T at its lowest temperature");
  // int_{T_k}^{T} C dT for C = C_k (T/T_k)^s (one log-log segment).
  auto segment = [&](std::size_t k, double temp) {
    const double s = slope[k];
    return std::fabs(s + 1) < 1e-12 ? ck[k] * tk[k] * std::log(temp / tk[k])
                                    : ck[k] * tk[k] / (s + 1) * (std::pow(temp / tk[k], s + 1) - 1);
  };
  ek[0] = ck[0] * tk[0] / (slope[0] + 1);  // below the table: the first segment's law from 0 K
  for (std::size_t k = 1; k < nt; ++k) ek[k] = ek[k - 1] + segment(k - 1, tk[k]);
  const double a_cm = radius_micron * 1e-4;
  const double volume_joule = 4.0 / 3.0 * M_PI * a_cm * a_cm * a_cm * 1e-7;  // erg -> J
  std::vector<double> e(temperature.size());
  for (std::size_t i = 0; i < temperature.size(); ++i) {
    const double temp = temperature[i];
    kosmos::Impl::require(temp > 0 && std::isfinite(temp), where, "temperature = ", temp);
    double v;
    if (temp <= tk[0]) {
      v = ek[0] * std::pow(temp / tk[0], slope[0] + 1);
    } else {
      const std::size_t k = std::min(
          std::size_t(std::upper_bound(tk.begin(), tk.end(), temp) - tk.begin()) - 1, nt - 1);
      v = ek[k] + segment(k, temp);  // beyond the table: the last segment's law
    }
    e[i] = v * volume_joule;
  }
  return e;
}

double table_enthalpy(const HeatCapacityTable& t, double radius_micron, double temperature) {
  return table_enthalpies(t, radius_micron, {temperature})[0];
}
}  // namespace dust
}  // namespace kosmos
