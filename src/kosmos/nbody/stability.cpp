#include <kosmos/core/error.hpp>
#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/nbody/stability.hpp>

#include <cmath>
#include <cstddef>

namespace kosmos {
namespace nbody {

namespace {
const char* const rv_quantities[5] = {"P", "K", "e", "omega_deg", "M0_deg"};
constexpr double deg = 0.017453292519943295;
constexpr double gm_sun = 1.32712440018e20;  // m^3 / s^2
constexpr double seconds_per_day = 86400.0;

int column_index(const std::vector<std::string>& columns, const std::string& name) {
  for (std::size_t c = 0; c < columns.size(); ++c)
    if (columns[c] == name) return int(c);
  return -1;
}
}  // namespace

namespace {
// The planets of a posterior's columns (P_b, P_c, ...); `fail` reports a missing column.
template <class Fail>
int count_planets(const std::vector<std::string>& columns, const Fail& fail) {
  const std::string letters = "bcdefghi";
  int planets = 0;
  while (planets < int(letters.size()) &&
         column_index(columns, std::string("P_") + letters[std::size_t(planets)]) >= 0)
    ++planets;
  if (planets == 0) fail("no column P_b: not a kosmos rv posterior file?");
  for (int j = 0; j < planets; ++j)
    for (const char* q : rv_quantities) {
      const std::string name = std::string(q) + "_" + letters[std::size_t(j)];
      if (column_index(columns, name) < 0) fail("missing column " + name);
    }
  return planets;
}

// The .h5 file of `kosmos rv --samples FILE.h5`: samples (rows, columns) and column names.
RVPosterior read_rv_posterior_hdf5(const std::string& path) {
  const io::H5Reader in(path);
  auto fail = [&](const std::string& message) { throw file_error(path + ": " + message); };
  RVPosterior post;
  if (!in.has("samples") || !in.has("columns"))
    fail("expected datasets samples and columns: not a kosmos rv posterior file?");
  post.columns = in.read_strings("columns");
  post.planets = count_planets(post.columns, fail);
  std::vector<std::size_t> dims;
  const std::vector<double> flat = in.read<double>("samples", &dims);
  if (dims.size() != 2 || dims[1] != post.columns.size())
    fail("samples must be (samples, " + std::to_string(post.columns.size()) + " columns)");
  if (dims[0] == 0) fail("no samples");
  for (std::size_t r = 0; r < dims[0]; ++r)
    post.samples.emplace_back(flat.begin() + std::ptrdiff_t(r * dims[1]), flat.begin() + std::ptrdiff_t((r + 1) * dims[1]));
  return post;
}
}  // namespace

RVPosterior read_rv_posterior(const std::string& path) {
  if (io::is_hdf5_path(path)) return read_rv_posterior_hdf5(path);
  io::TextReader reader(path);
  io::Record rec;
  RVPosterior post;
  if (!reader.next(rec))
    reader.fail(1, "empty file, expected a line of column names (P_b K_b e_b ...)");
  post.columns = rec.fields;
  post.planets = count_planets(post.columns, [&](const std::string& message) { reader.fail(rec.line_number, message); });
  while (reader.next(rec)) {
    if (rec.fields.size() != post.columns.size())
      reader.fail(rec.line_number, std::to_string(rec.fields.size()) + " fields, expected " +
                                       std::to_string(post.columns.size()) +
                                       " (one per column name)");
    std::vector<double> row(rec.fields.size());
    for (std::size_t c = 0; c < row.size(); ++c)
      row[c] = reader.number(rec, c, post.columns[c].c_str());
    post.samples.push_back(std::move(row));
  }
  if (post.samples.empty()) reader.fail(rec.line_number, "no samples after the column names");
  return post;
}

double planet_mass_from_rv(double K, double P_days, double e, double star_mass, double sin_i) {
  const char* where = "kosmos::nbody::planet_mass_from_rv";
  kosmos::Impl::require(K >= 0 && std::isfinite(K), where, "K = ", K, " m/s must be >= 0");
  kosmos::Impl::require(P_days > 0 && std::isfinite(P_days), where, "P = ", P_days,
                        " d must be positive");
  kosmos::Impl::require(e >= 0 && e < 1, where, "e = ", e, " is outside [0, 1)");
  kosmos::Impl::require(star_mass > 0 && std::isfinite(star_mass), where, "star mass ", star_mass,
                        " must be positive");
  kosmos::Impl::require(sin_i > 0 && sin_i <= 1, where, "sin i = ", sin_i, " is outside (0, 1]");
  // m = K sqrt(1 - e^2) (P / (2 pi G M_sun))^(1/3) (M* + m)^(2/3) / sin i, in solar masses;
  // a contraction for m << M* (a few iterations reach round-off).
  const double scale =
      K * std::sqrt(1 - e * e) * std::cbrt(P_days * seconds_per_day / (2 * M_PI * gm_sun)) / sin_i;
  double m = 0;
  for (int it = 0; it < 100; ++it) {
    const double next = scale * std::pow(star_mass + m, 2.0 / 3.0);
    const bool converged = std::fabs(next - m) <= 1e-15 * next;
    m = next;
    if (converged) break;
  }
  return m;
}

HostEnsemble ensemble_from_rv_posterior(const RVPosterior& posterior, const StabilitySetup& setup) {
  const char* where = "kosmos::nbody::ensemble_from_rv_posterior";
  kosmos::Impl::require(posterior.planets >= 1 && posterior.planets < max_bodies, where,
                        posterior.planets, " planets");
  // Masses scale as 1 / sin i; sin(180 deg) rounds to 1.2e-16, not 0, so the bound is not 0.
  kosmos::Impl::require(std::isfinite(setup.inclination) && std::sin(setup.inclination) > 1e-9, where,
                        "inclination ", setup.inclination / deg,
                        " deg: sin i must be above 1e-9 (an inclination inside (0, 180) deg)");
  kosmos::Impl::require(setup.max_samples >= 0, where, "max_samples = ", setup.max_samples, " < 0");
  int n_sys = int(posterior.samples.size());
  if (setup.max_samples > 0 && setup.max_samples < n_sys) n_sys = setup.max_samples;
  const int n_pl = posterior.planets;
  int col[max_bodies][5];
  const std::string letters = "bcdefghi";
  for (int j = 0; j < n_pl; ++j)
    for (int q = 0; q < 5; ++q)
      col[j][q] = column_index(posterior.columns,
                               std::string(rv_quantities[q]) + "_" + letters[std::size_t(j)]);
  HostEnsemble ens(n_sys, n_pl + 1, 1);
  const double sin_i = std::sin(setup.inclination);
  std::vector<double> masses(static_cast<std::size_t>(n_pl));
  std::vector<OrbitalElements> planets(static_cast<std::size_t>(n_pl));
  for (int s = 0; s < n_sys; ++s) try {
    const auto& row = posterior.samples[std::size_t(s)];
    double inner_mass = setup.star_mass;
    for (int j = 0; j < n_pl; ++j) {
      const double P = row[std::size_t(col[j][0])], K = row[std::size_t(col[j][1])],
                   e = row[std::size_t(col[j][2])];
      const double m = planet_mass_from_rv(K, P, e, setup.star_mass, sin_i);
      const double mu = (setup.frame == ElementFrame::jacobi ? inner_mass : setup.star_mass) + m;
      const double n = 2 * M_PI / (P / days_per_time_unit);
      OrbitalElements& el = planets[std::size_t(j)];
      el.a = std::cbrt(mu / (n * n));
      el.e = e;
      el.inc = setup.inclination;
      el.Omega = 0;
      el.omega = row[std::size_t(col[j][3])] * deg + M_PI;
      el.M = row[std::size_t(col[j][4])] * deg;
      masses[std::size_t(j)] = m;
      inner_mass += m;
    }
    set_system_from_elements(ens, s, setup.star_mass, masses, planets, setup.frame);
    ens.attributes(s, 0) = s;
  } catch (const invalid_input& e) {  // which sample of the file
    throw invalid_input(std::string(e.what()) + " (posterior sample " + std::to_string(s + 1) + ")");
  }
  return ens;
}

StabilitySummary summarize_stability(const HostEnsemble& ens, double destination) {
  StabilitySummary sum;
  sum.samples = ens.n_systems();
  for (int s = 0; s < ens.n_systems(); ++s) {
    if (ens.state(s) == state_disabled) {
      ++sum.failures;
    } else if (ens.state(s) == state_inactive) {
      const int r = ens.reason(s);
      ++(r == reason_close_encounter ? sum.close_encounters
         : r == reason_ejection      ? sum.ejections
         : r == reason_collision     ? sum.collisions
                                     : sum.other_stops);
    } else if (Impl::time_left(destination, ens.time(s), ens.time_lo(s)) > 0) {
      ++sum.unfinished;
    } else {
      ++sum.survived;
    }
  }
  return sum;
}

}  // namespace nbody
}  // namespace kosmos
