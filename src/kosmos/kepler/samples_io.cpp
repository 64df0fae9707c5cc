// Posterior samples to HDF5 or a text table.
#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/kepler/search.hpp>

#include <algorithm>
#include <iomanip>

namespace kosmos {
namespace kepler {
void write_samples(const std::string& path, const SearchResult& result, const RVData& data) {
  if (io::is_hdf5_path(path)) {
    io::H5Writer out(path);
    const std::size_t rows = result.samples.size(), cols = result.columns.size();
    std::vector<double> flat;
    flat.reserve(rows * cols);
    for (const auto& row : result.samples) flat.insert(flat.end(), row.begin(), row.end());
    out.write<double>("samples", flat.data(), {rows, cols});
    out.write_strings("columns", result.columns);
    out.write(std::string("chain"),
              std::vector<std::int32_t>(result.sample_chain.begin(), result.sample_chain.end()));
    out.attribute("/", "data", data.path);
    out.attribute("/", "epoch", result.epoch);
    out.attribute("/", "planets", (long long)result.planets);
    out.attribute("/", "trend", (long long)result.trend);
    out.attribute("/", "n_obs", (long long)result.n_obs);
    out.attribute("/", "max_rhat", result.max_rhat);
    out.attribute("/", "acceptance", result.acceptance);
    out.attribute("/", "map_loglike", result.best_loglike);
    // The MAP model (the polished optimum), which plots draw: orbits as rows P K e omega M0
    // (days, m/s, -, radians, radians at the epoch), offsets and jitters in instrument order.
    std::vector<double> orbits;
    for (const auto& o : result.best_orbits) orbits.insert(orbits.end(), {o.P, o.K, o.e, o.omega, o.M0});
    out.write<double>("map_orbits", orbits.data(), {result.best_orbits.size(), 5});
    out.write(std::string("map_offsets"), result.best_offsets);
    out.write(std::string("map_jitters"), result.best_jitters);
    out.write(std::string("map_trend"), result.best_trend);
    out.write_strings("instruments", result.instruments);
    out.attribute(
        "/", "units",
        "angles in degrees, times in the data's units; M0 at the epoch; Tc, Tp: conjunction and "
        "periastron; dvdt [m/s/d], curv [m/s/d^2] about the epoch");
    out.commit();
    return;
  }
  io::write_atomically(path, [&](std::ostream& out) {
    out << "# kosmos rv posterior samples (DE-MCMC): data " << data.path << ", epoch "
        << std::setprecision(17) << result.epoch << ", " << result.samples.size() << " samples, "
        << result.planets << " planet(s), trend " << result.trend << "\n";
    out << "# angles in degrees, times in the data's units; M0 at the epoch; Tc, Tp: conjunction "
           "and periastron; "
           "dvdt [m/s/d], curv [m/s/d^2] about the epoch\n";
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
}  // namespace kepler
}  // namespace kosmos
