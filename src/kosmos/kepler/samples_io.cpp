// Posterior samples to HDF5 or a text table.
#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/kepler/evidence.hpp>
#include <kosmos/kepler/search.hpp>

#include <kosmos/core/validation.hpp>

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace kosmos {
namespace kepler {
namespace {
// One star's posterior into `group` ("/" or a group per star): datasets samples, columns, chain
// and the attributes of write_samples.
void write_posterior(io::H5Writer& out, const std::string& group, const SearchResult& result,
                     const RVData& data) {
  const std::string prefix = group == "/" ? "" : group + "/";
  const std::size_t rows = result.samples.size(), cols = result.columns.size();
  out.write<double>(prefix + "samples", result.samples.data(), {rows, cols});
  out.write_strings(prefix + "columns", result.columns);
  out.write(prefix + "chain",
            std::vector<std::int32_t>(result.sample_chain.begin(), result.sample_chain.end()));
  out.attribute(group, "data", data.path);
  out.attribute(group, "epoch", result.epoch);
  out.attribute(group, "planets", (long long)result.planets);
  out.attribute(group, "trend", (long long)result.trend);
  out.attribute(group, "n_obs", (long long)result.n_obs);
  out.attribute(group, "max_rhat", result.max_rhat);
  out.attribute(group, "acceptance", result.acceptance);
  out.attribute(group, "map_loglike", result.best_loglike);
  // The MAP model (the polished optimum), which plots draw: orbits as rows P K e omega M0
  // (days, m/s, -, radians, radians at the epoch), offsets and jitters in instrument order.
  std::vector<double> orbits;
  for (const auto& o : result.best_orbits)
    orbits.insert(orbits.end(), {o.P, o.K, o.e, o.omega, o.M0});
  out.write<double>(prefix + "map_orbits", orbits.data(), {result.best_orbits.size(), 5});
  out.write(prefix + "map_offsets", result.best_offsets);
  out.write(prefix + "map_jitters", result.best_jitters);
  out.write(prefix + "map_trend", result.best_trend);
  out.write_strings(prefix + "instruments", result.instruments);
}
constexpr const char* kUnits =
    "angles in degrees, times in the data's units; M0 at the epoch; Tc, Tp: conjunction and "
    "periastron; dvdt [m/s/d], curv [m/s/d^2] about the epoch";
}  // namespace

void write_samples(const std::string& path, const SearchResult& result, const RVData& data) {
  if (io::is_hdf5_path(path)) {
    io::H5Writer out(path);
    write_posterior(out, "/", result, data);
    out.attribute("/", "units", kUnits);
    out.commit();
    return;
  }
  io::write_atomically(path, [&](std::ostream& out) {
    out << "# kosmos rv posterior samples (DE-MCMC): data " << data.path << ", epoch "
        << std::setprecision(17) << result.epoch << ", " << result.samples.size() << " samples, "
        << result.planets << " planet(s), trend " << result.trend << "\n";
    out << "# " << kUnits << "\n";
    const int chains =
        result.sample_chain.empty()
            ? 0
            : 1 + *std::max_element(result.sample_chain.begin(), result.sample_chain.end());
    out << "# chains " << chains << ": row r belongs to chain r mod " << chains << "\n";
    // The MAP model (the polished optimum), which plots draw: per planet P K e omega M0 (days,
    // m/s, -, radians, radians at the epoch); offsets and jitters in instrument order.
    out << std::setprecision(17) << "# map_loglike " << result.best_loglike << "\n";
    const auto line = [&](const std::string& key, const std::vector<double>& values) {
      out << "# " << key;
      for (double v : values) out << " " << v;
      out << "\n";
    };
    for (std::size_t p = 0; p < result.best_orbits.size(); ++p) {
      const auto& o = result.best_orbits[p];
      line("map_orbit_" + std::string(1, char('b' + p)), {o.P, o.K, o.e, o.omega, o.M0});
    }
    out << "# instruments";
    for (const auto& name : result.instruments) out << " " << name;
    out << "\n";
    line("map_offsets", result.best_offsets);
    line("map_jitters", result.best_jitters);
    line("map_trend", result.best_trend);
    for (std::size_t c = 0; c < result.columns.size(); ++c)
      out << (c ? " " : "") << result.columns[c];
    out << "\n" << std::setprecision(17);
    for (const auto& row : result.samples) {
      for (std::size_t c = 0; c < row.size(); ++c) out << (c ? " " : "") << row[c];
      out << "\n";
    }
  });
}

void write_survey_samples(const std::string& path, const std::vector<RVData>& stars,
                          const std::vector<SearchResult>& results) {
  kosmos::Impl::require(io::is_hdf5_path(path), "kosmos::kepler::write_survey_samples", "'", path,
                        "': a survey's posteriors go to one HDF5 file (.h5 or .hdf5)");
  kosmos::Impl::require(stars.size() == results.size(), "kosmos::kepler::write_survey_samples",
                        stars.size(), " stars and ", results.size(), " results");
  io::H5Writer out(path);
  std::vector<std::string> groups;
  for (std::size_t s = 0; s < stars.size(); ++s) {
    groups.push_back(survey_group(s));
    write_posterior(out, "/" + groups.back(), results[s], stars[s]);
  }
  out.write_strings("stars", groups);
  std::vector<std::string> paths;
  for (const auto& d : stars) paths.push_back(d.path);
  out.write_strings("data", paths);
  out.attribute("/", "units", kUnits);
  out.commit();
}

std::string survey_group(std::size_t star) {
  std::ostringstream name;
  name << "star_" << std::setw(5) << std::setfill('0') << star;
  return name.str();
}

void write_survey_table_header(std::ostream& out) {
  out << "# star planets parameter median lower upper map rhat ess_bulk ess_tail (lower, upper: "
         "15.87 and 84.13 percentiles; "
      << kUnits << ")\n";
  out << "star planets parameter median lower upper map rhat ess_bulk ess_tail\n";
}

void write_survey_table_rows(std::ostream& out, const RVData& star, const SearchResult& result,
                             const EvidenceResult* evidence) {
  for (const auto& p : result.summary)
    out << star.path << " " << result.planets << " " << p.name << " " << std::setprecision(10)
        << p.median << " " << p.lower << " " << p.upper << " " << p.best << " "
        << std::setprecision(4) << p.rhat << " " << std::setprecision(6) << p.ess << " "
        << p.ess_tail << "\n";
  if (evidence)
    for (const auto& c : evidence->counts)
      out << star.path << " " << result.planets << " lnZ_" << c.planets << "_planets "
          << std::setprecision(10) << c.ln_z << " " << c.ln_z - c.ln_z_error << " "
          << c.ln_z + c.ln_z_error << " nan nan nan nan\n";
}

void write_survey_lines_header(std::ostream& out, int planets, int first_count, bool evidence) {
  const std::string letters = "bcdefghi";
  out << "star n_obs planets";
  for (int j = 0; j < planets; ++j)
    for (const char* q : {"P", "P_err", "K", "K_err", "e", "e_err"})
      out << " " << q << "_" << letters[std::size_t(j)];
  out << " lnL_MAP max_rhat min_ess";
  if (evidence) {
    for (int c = first_count; c <= planets; ++c) out << " lnZ_" << c << " lnZ_err_" << c;
    out << " ln_odds top_of_range evidence_method";
  }
  out << "\n";
}

void write_survey_line(std::ostream& out, const RVData& star, const SearchResult& result,
                       int planets, const EvidenceResult* evidence) {
  const std::string letters = "bcdefghi";
  std::ostringstream row;
  row << star.path << " " << result.n_obs << " " << result.planets << std::setprecision(10);
  for (int j = 0; j < planets; ++j)
    for (const char* q : {"P_", "K_", "e_"}) {
      if (j >= result.planets) {  // a count below the range's top: no such planet
        row << " - -";
        continue;
      }
      const auto& p = result.get(q + std::string(1, letters[std::size_t(j)]));
      row << " " << p.median << " " << std::setprecision(3) << 0.5 * (p.upper - p.lower)
          << std::setprecision(10);
    }
  row << " " << result.best_loglike << std::setprecision(4) << " " << result.max_rhat << " "
      << std::setprecision(0) << std::fixed << result.min_ess << std::defaultfloat;
  if (evidence) {  // ln Z per count, the supported count's ln odds against the best other one
    double other = -HUGE_VAL;
    row << std::fixed << std::setprecision(2);
    for (const auto& c : evidence->counts) {
      row << " " << c.ln_z << " " << c.ln_z_error;
      if (c.planets != evidence->preferred) other = std::max(other, c.ln_z);
    }
    row << " "
        << (evidence->counts.size() > 1
                ? evidence->get(evidence->preferred, evidence->preferred_trend).ln_z - other
                : 0.0)
        << " " << (evidence->top_of_range ? "yes" : "no") << " "
        << (evidence->decided_by == "importance"                          ? "importance"
            : evidence->decided_by.rfind("importance and ladder", 0) == 0 ? "importance+ladder"
                                                                          : "ladder");
  }
  out << row.str() << "\n";
}

void write_survey_table(std::ostream& out, const std::vector<RVData>& stars,
                        const std::vector<SearchResult>& results) {
  write_survey_table_header(out);
  for (std::size_t s = 0; s < stars.size() && s < results.size(); ++s)
    write_survey_table_rows(out, stars[s], results[s]);
}
}  // namespace kepler
}  // namespace kosmos
