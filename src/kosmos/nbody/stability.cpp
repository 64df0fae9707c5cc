#include <kosmos/core/error.hpp>
#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/nbody/stability.hpp>

#include <algorithm>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <random>

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
RVPosterior read_rv_posterior_hdf5(const std::string& path, std::size_t max_samples) {
  const io::H5Reader in(path);
  auto fail = [&](const std::string& message) { throw file_error(path + ": " + message); };
  RVPosterior post;
  if (!in.has("samples") || !in.has("columns"))
    fail("expected datasets samples and columns: not a kosmos rv posterior file?");
  post.columns = in.read_strings("columns");
  post.planets = count_planets(post.columns, fail);
  const std::size_t cols = post.columns.size();
  const std::size_t stored = in.expect_shape("samples", {io::H5Reader::any_extent, cols})[0];
  if (stored == 0) fail("no samples");
  // Only the rows asked for are read (the file may declare far more than memory holds).
  const std::size_t rows = max_samples > 0 ? std::min(max_samples, stored) : stored;
  std::vector<double> flat(rows * cols);
  in.read_rows("samples", 0, rows, flat.data());
  for (std::size_t r = 0; r < rows; ++r)
    post.samples.emplace_back(flat.begin() + std::ptrdiff_t(r * cols), flat.begin() + std::ptrdiff_t((r + 1) * cols));
  return post;
}
}  // namespace

RVPosterior read_rv_posterior(const std::string& path, std::size_t max_samples) {
  if (io::is_hdf5_path(path)) return read_rv_posterior_hdf5(path, max_samples);
  io::TextReader reader(path);
  io::Record rec;
  RVPosterior post;
  if (!reader.next(rec))
    reader.fail(1, "empty file, expected a line of column names (P_b K_b e_b ...)");
  post.columns = rec.fields;
  post.planets = count_planets(post.columns, [&](const std::string& message) { reader.fail(rec.line_number, message); });
  while ((max_samples == 0 || post.samples.size() < max_samples) && reader.next(rec)) {
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

std::vector<double> posterior_stellar_masses(const RVPosterior& posterior) {
  std::vector<double> out;
  int direct = column_index(posterior.columns, "mstar");
  if (direct < 0) direct = column_index(posterior.columns, "stellar_mass");
  const int a = column_index(posterior.columns, "a_au_b"),
            msini = column_index(posterior.columns, "msini_jup_b"),
            P = column_index(posterior.columns, "P_b");
  if (direct < 0 && (a < 0 || msini < 0 || P < 0)) return out;
  // kosmos::kepler::minimum_mass: a_au = cbrt(G (M* + m) P^2 / (2 pi)^2) / au, m = msini_jup
  // G M_jup, in its constants (IAU values, m^3/s^2 and m).
  constexpr double kepler_gm_sun = 1.3271244e20, kepler_gm_jupiter = 1.26686534e17,
                   kepler_au = 1.495978707e11;
  for (const auto& row : posterior.samples) {
    if (direct >= 0) {
      out.push_back(row[std::size_t(direct)]);
      continue;
    }
    const double a_m = row[std::size_t(a)] * kepler_au, n = 2 * M_PI / (row[std::size_t(P)] * seconds_per_day);
    out.push_back((a_m * a_m * a_m * n * n - row[std::size_t(msini)] * kepler_gm_jupiter) / kepler_gm_sun);
  }
  return out;
}

std::string planet_order_name(const std::vector<int>& order) {
  const std::string letters = "bcdefghi";
  std::string name;
  for (int j : order) name += letters[std::size_t(j)];
  return name;
}

namespace {
// The orbit normal (sin i sin Omega, -sin i cos Omega, cos i) of elements_to_state's rotations,
// tilted by theta towards the direction phi about it; returns the tilted (i, Omega).
void tilt_orbit(double inc, double node, double theta, double phi, double& inc_out, double& node_out) {
  const double n0[3] = {std::sin(inc) * std::sin(node), -std::sin(inc) * std::cos(node), std::cos(inc)};
  // Two unit vectors normal to n0: the node line and n0 x it.
  const double e1[3] = {std::cos(node), std::sin(node), 0};
  const double e2[3] = {n0[1] * e1[2] - n0[2] * e1[1], n0[2] * e1[0] - n0[0] * e1[2],
                        n0[0] * e1[1] - n0[1] * e1[0]};
  double n[3];
  for (int c = 0; c < 3; ++c)
    n[c] = std::cos(theta) * n0[c] + std::sin(theta) * (std::cos(phi) * e1[c] + std::sin(phi) * e2[c]);
  inc_out = std::atan2(std::hypot(n[0], n[1]), n[2]);
  node_out = std::atan2(n[0], -n[1]);
}
}  // namespace

PosteriorSystems systems_from_rv_posterior(const RVPosterior& posterior, const StabilitySetup& setup) {
  const char* where = "kosmos::nbody::systems_from_rv_posterior";
  kosmos::Impl::require(posterior.planets >= 1 && posterior.planets < max_bodies, where,
                        posterior.planets, " planets");
  // Masses scale as 1 / sin i; sin(180 deg) rounds to 1.2e-16, not 0, so the bound is not 0.
  kosmos::Impl::require(std::isfinite(setup.inclination) && std::sin(setup.inclination) > 1e-9, where,
                        "inclination ", setup.inclination / deg,
                        " deg: sin i must be above 1e-9 (an inclination inside (0, 180) deg)");
  kosmos::Impl::require(setup.max_samples >= 0, where, "max_samples = ", setup.max_samples, " < 0");
  kosmos::Impl::require(setup.star_mass >= 0 && std::isfinite(setup.star_mass), where, "star mass ",
                        setup.star_mass, " must be > 0 (or 0: the posterior's)");
  kosmos::Impl::require(setup.mutual_inclination >= 0 && setup.mutual_inclination <= M_PI, where,
                        "mutual inclination scale ", setup.mutual_inclination / deg,
                        " deg is outside [0, 180]");
  int n_sys = int(posterior.samples.size());
  if (setup.max_samples > 0 && setup.max_samples < n_sys) n_sys = setup.max_samples;
  const int n_pl = posterior.planets;
  std::vector<double> star_masses;
  if (setup.star_mass == 0) {
    star_masses = posterior_stellar_masses(posterior);
    kosmos::Impl::require(!star_masses.empty(), where,
                          "the posterior has no stellar mass (a column mstar, or the msini_jup_b and "
                          "a_au_b of `kosmos rv --stellar-mass`): give the stellar mass");
  }
  int col[max_bodies][5];
  const std::string letters = "bcdefghi";
  for (int j = 0; j < n_pl; ++j)
    for (int q = 0; q < 5; ++q)
      col[j][q] = column_index(posterior.columns,
                               std::string(rv_quantities[q]) + "_" + letters[std::size_t(j)]);
  PosteriorSystems out;
  out.ensemble = HostEnsemble(n_sys, n_pl + 1, 1);
  std::mt19937_64 rng(setup.seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> masses(static_cast<std::size_t>(n_pl));
  std::vector<OrbitalElements> planets(static_cast<std::size_t>(n_pl));
  for (int s = 0; s < n_sys; ++s) try {
    const auto& row = posterior.samples[std::size_t(s)];
    const double star_mass = setup.star_mass > 0 ? setup.star_mass : star_masses[std::size_t(s)];
    kosmos::Impl::require(star_mass > 0 && std::isfinite(star_mass), where, "stellar mass ",
                          star_mass, " of the posterior must be positive");
    // By increasing period: the RV fit's Keplerians are Jacobi orbits only in that order.
    std::vector<int> order(static_cast<std::size_t>(n_pl));
    for (int j = 0; j < n_pl; ++j) {
      order[std::size_t(j)] = j;
      const double P = row[std::size_t(col[j][0])];
      kosmos::Impl::require(P > 0 && std::isfinite(P), where, "P_", letters[std::size_t(j)], " = ", P,
                            " d must be positive");
    }
    std::stable_sort(order.begin(), order.end(), [&](int i, int j) {
      return row[std::size_t(col[i][0])] < row[std::size_t(col[j][0])];
    });
    double system_inc = setup.inclination;
    if (setup.isotropic_inclination) system_inc = std::acos(uniform(rng));  // cos i in (0, 1]
    std::vector<double> incs(std::size_t(n_pl), system_inc), nodes(std::size_t(n_pl), 0.0);
    if (setup.mutual_inclination > 0)
      for (int k = 0; k < n_pl; ++k) {
        const double theta = setup.mutual_inclination * std::sqrt(-2 * std::log(1 - uniform(rng)));
        tilt_orbit(system_inc, 0.0, std::fmin(theta, M_PI), 2 * M_PI * uniform(rng),
                   incs[std::size_t(k)], nodes[std::size_t(k)]);
      }
    double inner_mass = star_mass;
    for (int k = 0; k < n_pl; ++k) {
      const int j = order[std::size_t(k)];
      const double P = row[std::size_t(col[j][0])], K = row[std::size_t(col[j][1])],
                   e = row[std::size_t(col[j][2])];
      const double sin_i = std::sin(incs[std::size_t(k)]);
      kosmos::Impl::require(sin_i > 1e-9, where, "planet ", letters[std::size_t(j)], " drawn at inclination ",
                            incs[std::size_t(k)] / deg, " deg: sin i below 1e-9");
      const double m = planet_mass_from_rv(K, P, e, star_mass, sin_i);
      const double mu = (setup.frame == ElementFrame::jacobi ? inner_mass : star_mass) + m;
      const double n = 2 * M_PI / (P / days_per_time_unit);
      OrbitalElements& el = planets[std::size_t(k)];
      el.a = std::cbrt(mu / (n * n));
      el.e = e;
      el.inc = incs[std::size_t(k)];
      el.Omega = nodes[std::size_t(k)];
      el.omega = row[std::size_t(col[j][3])] * deg + M_PI;
      el.M = row[std::size_t(col[j][4])] * deg;
      masses[std::size_t(k)] = m;
      inner_mass += m;
    }
    set_system_from_elements(out.ensemble, s, star_mass, masses, planets, setup.frame);
    out.ensemble.attributes(s, 0) = s;
    out.order.push_back(order);
    out.star_mass.push_back(star_mass);
    out.inclination.push_back(incs);
    out.node.push_back(nodes);
  } catch (const invalid_input& e) {  // which sample of the file
    throw invalid_input(std::string(e.what()) + " (posterior sample " + std::to_string(s + 1) + ")");
  }
  return out;
}

HostEnsemble ensemble_from_rv_posterior(const RVPosterior& posterior, const StabilitySetup& setup) {
  return systems_from_rv_posterior(posterior, setup).ensemble;
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

void write_stability_table(const std::string& path, const RVPosterior& posterior,
                           const PosteriorSystems& systems, const HostEnsemble& final_state,
                           const StabilityOutcomes& outcomes) {
  const char* where = "kosmos::nbody::write_stability_table";
  const int n_sys = final_state.n_systems(), n_pl = final_state.n_bodies() - 1;
  kosmos::Impl::require(int(systems.order.size()) == n_sys && systems.ensemble.n_systems() == n_sys &&
                            int(posterior.samples.size()) >= n_sys,
                        where, n_sys, " systems for ", systems.order.size(), " built of ",
                        posterior.samples.size(), " samples");
  const auto value = [&](const std::vector<double>& v, int s) {
    return v.empty() ? std::numeric_limits<double>::quiet_NaN() : v[std::size_t(s)];
  };
  for (const auto* v : {&outcomes.max_eccentricity, &outcomes.megno, &outcomes.lyapunov_time})
    kosmos::Impl::require(v->empty() || int(v->size()) == n_sys, where, v->size(), " outcomes for ",
                          n_sys, " systems");
  const auto row_of = [&](int s) { return std::size_t(systems.ensemble.attributes(s, 0)); };
  if (io::is_hdf5_path(path)) {
    io::H5Writer out(path);
    std::vector<std::int32_t> sample;
    std::vector<std::string> order, state, reason;
    std::vector<double> star_mass, inc, flat, time, max_e, megno, lyapunov;
    for (int s = 0; s < n_sys; ++s) {
      sample.push_back(std::int32_t(row_of(s)));
      order.push_back(planet_order_name(systems.order[std::size_t(s)]));
      star_mass.push_back(systems.star_mass[std::size_t(s)]);
      for (double i : systems.inclination[std::size_t(s)]) inc.push_back(i / deg);
      const auto& row = posterior.samples[row_of(s)];
      flat.insert(flat.end(), row.begin(), row.end());
      state.push_back(state_name(final_state.state(s)));
      reason.push_back(reason_name(final_state.reason(s)));
      time.push_back(final_state.time(s));
      max_e.push_back(value(outcomes.max_eccentricity, s));
      megno.push_back(value(outcomes.megno, s));
      lyapunov.push_back(value(outcomes.lyapunov_time, s));
    }
    out.write("sample", sample);
    out.write_strings("order", order);
    out.write("star_mass", star_mass);
    out.write<double>("inclination", inc.data(), {std::size_t(n_sys), std::size_t(n_pl)});
    out.write_strings("columns", posterior.columns);
    out.write<double>("posterior", flat.data(), {std::size_t(n_sys), posterior.columns.size()});
    out.write_strings("state", state);
    out.write_strings("reason", reason);
    out.write("time", time);
    out.write("max_eccentricity", max_e);
    out.write("megno", megno);
    out.write("lyapunov_time", lyapunov);
    out.attribute("/", "format", "kosmos-nbody-stability");
    out.attribute("/", "units",
                  "star_mass in solar masses, inclination (per body, planets by period) in degrees "
                  "to the sky plane, time and lyapunov_time in 1/k days (58.1324 d)");
    out.commit();
    return;
  }
  io::write_atomically(path, [&](std::ostream& out) {
    out << "# kosmos nbody stability: one line per posterior sample; order: the planets by period "
           "(body 1, 2, ...); star_mass in solar masses; inc_k: body k's inclination to the sky "
           "(deg); time: where the system stopped (the destination if it survived); time and "
           "lyapunov_time in 1/k days (58.1324 d)\n";
    out << "sample order star_mass";
    for (int k = 1; k <= n_pl; ++k) out << " inc_" << k;
    for (const auto& c : posterior.columns) out << ' ' << c;
    out << " state reason time max_eccentricity megno lyapunov_time\n" << std::setprecision(17);
    for (int s = 0; s < n_sys; ++s) {
      out << row_of(s) << ' ' << planet_order_name(systems.order[std::size_t(s)]) << ' '
          << systems.star_mass[std::size_t(s)];
      for (double i : systems.inclination[std::size_t(s)]) out << ' ' << i / deg;
      for (double v : posterior.samples[row_of(s)]) out << ' ' << v;
      out << ' ' << state_name(final_state.state(s)) << ' ' << reason_name(final_state.reason(s)) << ' '
          << final_state.time(s) << ' ' << value(outcomes.max_eccentricity, s) << ' '
          << value(outcomes.megno, s) << ' ' << value(outcomes.lyapunov_time, s) << '\n';
    }
  });
}

}  // namespace nbody
}  // namespace kosmos
