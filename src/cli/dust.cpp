// `kosmos dust`: equilibrium dust temperatures and emission SEDs of a set of cells
// (Jonsson & Primack 2010), from Draine cross-section tables, a size distribution and a cells
// file, or for the paper's benchmark problem with synthetic MMP83-based radiation fields.
#include "options.hpp"

#include <kosmos/core/io.hpp>
#include <kosmos/dust/dust.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>

namespace {
using Space = Kokkos::DefaultExecutionSpace;
using Device = Kokkos::Device<Space, Space::memory_space>;

const char* kSummary =
    "Equilibrium grain temperatures and emission SEDs (Jonsson & Primack 2010): heating by a GEMM,\n"
    "Newton-Raphson (or table) solve of the energy balance, SED sum of their Eq. 10.\n"
    "\n"
    "Inputs (text, '#' starts a comment):\n"
    "  --cross-sections  B. T. Draine's table format (e.g. data/dust/draine_graphite_81.dat);\n"
    "                    sigma = pi a^2 Q_abs, interpolated log-log onto the wavelength grid. A comma-\n"
    "                    separated list gives several compositions (e.g. graphite,silicate).\n"
    "  --sizes           lines 'radius_micron number_per_unit_dust_mass' (one grain species each), one\n"
    "                    file per composition (comma-separated). Default: every table radius,\n"
    "                    dn/da ~ a^-3.5 exp(-a/0.25 micron), normalized to 1 kg of dust of density\n"
    "                    --density (one value or one per composition) shared equally between the\n"
    "                    compositions (dust masses are then in kg).\n"
    "  --wavelengths     lines 'lambda_micron [bin_width_micron]', strictly increasing; default:\n"
    "                    the paper's 968 log-spaced wavelengths from 0.0912 to 1000 micron.\n"
    "  --cells           one line per cell: 'dust_mass I_1 ... I_L', mean intensity I_lambda in\n"
    "                    W m^-2 m^-1 sr^-1 on the wavelength grid; dust mass in the size\n"
    "                    distribution's mass unit. Or --generate N synthetic cells: MMP83 field\n"
    "                    scaled by 10^[-1,4], screened by tau_V in [0,4] (tau ~ 1/lambda), dust mass\n"
    "                    10^[26,30] kg.\n"
    "Outputs (written atomically):\n"
    "  --temperatures    one line per cell: T (K) of each species (compositions in order, each in\n"
    "                    its --sizes order).\n"
    "  --sed             one line per cell: the cell's L_lambda (W m^-1 sr^-1) at each wavelength\n"
    "                    (listed in the header).\n"
    "  --status          one line per cell: the solver status of each species (0 converged, 1 at\n"
    "                    floor, 2 at ceiling, 3 not converged).\n"
    "  --write-cells     the cells in --cells format (to save a generated problem).\n"
    "Dust models:\n"
    "  --size-distribution mrn|wd01  instead of the default power law, on each table's radii: MRN\n"
    "                    (a^-3.5, 0.005-0.25 micron, Draine & Lee 1984 amplitudes) or Weingartner &\n"
    "                    Draine (2001) Milky Way R_V = 3.1, case A, b_C = 6e-5 (carbonaceous incl.\n"
    "                    the very small grains, and silicate). Each radius carries the mass of its\n"
    "                    bin (grains below the smallest table radius go to it); the compositions keep\n"
    "                    the model's mass ratio per H, normalized to 1 kg of dust in total (the dust\n"
    "                    mass per H is printed). Densities 2.24 (graphite) and 3.5 (silicate) g cm^-3.\n"
    "  --stochastic-below R  grains smaller than R micron get their temperature distribution P(T)\n"
    "                    (Guhathakurta & Draine 1989, Draine & Li 2001 heat capacities, 128 enthalpy\n"
    "                    bins) and its emission in the SED instead of the equilibrium emission;\n"
    "                    --temperatures still lists their equilibrium T. Status counts are printed:\n"
    "                    ok / no heating (SED unchanged) / energy imbalance above 1 % (P(T) truncated\n"
    "                    at 3000 K; a warning) / invalid heating (an error).\n"
    "  --materials       graphite or silicate per --cross-sections table (for the two options\n"
    "                    above); default: read from the table file names.\n"
    "Solver status: converged / at floor (heating below E(3 K), e.g. zero) / at ceiling (above\n"
    "E(3000 K)) / not converged; counts are printed.";

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (parts.back().empty()) throw kosmos::cli::usage_error("empty item in the list '" + text + "'");
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

// --materials, or each table's material from its file name (for --size-distribution and
// --stochastic-below).
std::vector<kosmos::dust::GrainMaterial> grain_materials(const kosmos::cli::Options& o,
                                                         const std::vector<std::string>& table_paths) {
  std::vector<kosmos::dust::GrainMaterial> materials;
  if (o.has("materials") && !o.str("materials").empty()) {
    for (const auto& name : split_list(o.str("materials"))) {
      if (name != "graphite" && name != "silicate")
        throw kosmos::cli::usage_error("--materials '" + name + "' is not graphite or silicate");
      materials.push_back(kosmos::dust::parse_grain_material(name));
    }
    if (materials.size() != table_paths.size())
      throw kosmos::cli::usage_error("--materials lists " + std::to_string(materials.size()) + " materials for " +
                                     std::to_string(table_paths.size()) + " --cross-sections tables");
    return materials;
  }
  for (const auto& path : table_paths) {
    const std::string file = path.substr(path.find_last_of('/') + 1);
    const bool graphite = file.find("graphite") != std::string::npos, silicate = file.find("silicate") != std::string::npos;
    if (graphite == silicate)
      throw kosmos::cli::usage_error("cannot tell the material of '" + path + "' from its name: give --materials");
    materials.push_back(graphite ? kosmos::dust::GrainMaterial::graphite : kosmos::dust::GrainMaterial::silicate);
  }
  return materials;
}

template <class T>
int run_dust(const kosmos::cli::Options& o) {
  using namespace kosmos::dust;
  using clock = std::chrono::steady_clock;
  auto seconds = [](clock::time_point a, clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };

  // Grain compositions (comma-separated lists) and grid (host).
  const auto table_paths = split_list(o.str("cross-sections"));
  std::vector<DraineTable> tables;
  for (const auto& path : table_paths) tables.push_back(read_draine_table(path));
  const std::size_t n_comp = tables.size();
  const bool sizes_given = o.has("sizes") && !o.str("sizes").empty();
  const auto size_paths = sizes_given ? split_list(o.str("sizes")) : std::vector<std::string>();
  if (sizes_given && size_paths.size() != n_comp)
    throw kosmos::cli::usage_error("--sizes lists " + std::to_string(size_paths.size()) + " files for " +
                                   std::to_string(n_comp) + " --cross-sections tables");
  std::vector<double> densities;
  for (const auto& d : split_list(o.str("density"))) {
    double v = 0;
    if (!kosmos::io::parse_double(d, v) || !(v > 0))
      throw kosmos::cli::usage_error("--density '" + d + "' is not a positive number");
    densities.push_back(v);
  }
  if (densities.size() == 1) densities.resize(n_comp, densities[0]);
  if (densities.size() != n_comp)
    throw kosmos::cli::usage_error("--density lists " + std::to_string(densities.size()) + " values for " +
                                   std::to_string(n_comp) + " --cross-sections tables");
  std::vector<double> w_micron, d_micron;
  if (o.has("wavelengths") && !o.str("wavelengths").empty()) {
    read_wavelength_grid(o.str("wavelengths"), w_micron, d_micron);
  } else {
    w_micron = paper_wavelength_grid();
    d_micron = bin_widths(w_micron);
  }
  const bool model_given = o.has("size-distribution") && !o.str("size-distribution").empty();
  const double stochastic_below = o.has("stochastic-below") ? o.number("stochastic-below") : 0.0;
  if (!(stochastic_below >= 0)) throw kosmos::cli::usage_error("--stochastic-below must be a radius >= 0 (micron)");
  if (model_given && sizes_given) throw kosmos::cli::usage_error("give --sizes or --size-distribution, not both");
  std::vector<GrainMaterial> materials;
  if (model_given || stochastic_below > 0) materials = grain_materials(o, table_paths);
  std::vector<SizeDistribution> model_sizes;  // per kg of dust, the model's mass ratio between compositions
  if (model_given) {
    const std::string name = o.str("size-distribution");
    if (name != "mrn" && name != "wd01")
      throw kosmos::cli::usage_error("--size-distribution must be mrn or wd01, not '" + name + "'");
    for (std::size_t k = 0; k < n_comp; ++k)
      model_sizes.push_back(
          binned_size_distribution(parse_size_distribution_model(name), materials[k], tables[k].radius_micron));
    const double per_h = normalize_to_dust_mass(model_sizes, materials);
    // gas mass per H: 1.4 m_H (helium at 10 % of H by number)
    std::cout << std::setprecision(4) << "size distribution " << name << ": dust mass per H nucleus " << per_h
              << " g (dust/gas " << per_h / (1.4 * 1.6735575e-24) << ")\n";
  }
  // All species: (composition, radius, number per unit dust mass).
  SizeDistribution sizes;
  std::vector<std::size_t> composition;
  for (std::size_t k = 0; k < n_comp; ++k) {
    auto sd = sizes_given   ? read_size_distribution(size_paths[k])
              : model_given ? model_sizes[k]
                            : power_law_size_distribution(tables[k].radius_micron, densities[k]);
    for (std::size_t i = 0; i < sd.radius_micron.size(); ++i) {
      sizes.radius_micron.push_back(sd.radius_micron[i]);
      // The default distributions share the unit dust mass equally between compositions.
      sizes.number_per_mass.push_back(sd.number_per_mass[i] / (sizes_given || model_given ? 1.0 : double(n_comp)));
      composition.push_back(k);
    }
  }
  const int nl = int(w_micron.size()), ns = int(sizes.radius_micron.size());

  SolverOptions options;
  options.tolerance = o.number("tolerance");
  const std::string method = o.str("method");
  if (method == "table") options.method = TemperatureMethod::table;
  else if (method != "newton") throw kosmos::cli::usage_error("--method must be newton or table, not '" + method + "'");

  // Cells.
  const bool generate = o.has("generate") && !o.str("generate").empty();
  const bool from_file = o.has("cells") && !o.str("cells").empty();
  if (generate == from_file) throw kosmos::cli::usage_error("give exactly one of --cells FILE and --generate N");
  std::vector<double> mass_h, intensity_h;
  if (from_file) read_cells(o.str("cells"), std::size_t(nl), mass_h, intensity_h);
  const std::int64_t nc = generate ? o.integer("generate", 1) : std::int64_t(mass_h.size());

  // Device data.
  Kokkos::View<double*, Device> wavelength("wavelength", nl), width("width", nl), radius("radius", ns),
      number("number", ns);
  Kokkos::View<double**, Kokkos::LayoutLeft, Device> sigma("sigma", ns, nl);
  {
    auto hw = Kokkos::create_mirror_view(wavelength);
    auto hd = Kokkos::create_mirror_view(width);
    auto hr = Kokkos::create_mirror_view(radius);
    auto hn = Kokkos::create_mirror_view(number);
    auto hs = Kokkos::create_mirror_view(sigma);
    for (int l = 0; l < nl; ++l) {
      hw(l) = w_micron[l] * 1e-6;
      hd(l) = d_micron[l] * 1e-6;
    }
    for (int s = 0; s < ns; ++s) {
      hr(s) = sizes.radius_micron[s] * 1e-6;
      hn(s) = sizes.number_per_mass[s];
      const auto sig = absorption_cross_section(tables[composition[s]], sizes.radius_micron[s], w_micron);
      for (int l = 0; l < nl; ++l) hs(s, l) = sig[l];
    }
    Kokkos::deep_copy(wavelength, hw);
    Kokkos::deep_copy(width, hd);
    Kokkos::deep_copy(radius, hr);
    Kokkos::deep_copy(number, hn);
    Kokkos::deep_copy(sigma, hs);
  }
  Kokkos::View<T**, Kokkos::LayoutLeft, Device> intensity("intensity", nc, nl), heat("heating", nc, ns),
      temperature("temperature", nc, ns), sed("sed", nc, nl);
  Kokkos::View<int**, Kokkos::LayoutLeft, Device> status("status", nc, ns);
  Kokkos::View<T*, Device> mass("dust_mass", nc);
  Space space;
  if (generate) {
    synthetic_cells(space, wavelength, intensity, mass, std::uint64_t(o.integer("seed")));
  } else {
    auto hi = Kokkos::create_mirror_view(intensity);
    auto hm = Kokkos::create_mirror_view(mass);
    for (std::int64_t c = 0; c < nc; ++c) {
      hm(c) = T(mass_h[c]);
      for (int l = 0; l < nl; ++l) hi(c, l) = T(intensity_h[std::size_t(c) * nl + l]);
    }
    Kokkos::deep_copy(intensity, hi);
    Kokkos::deep_copy(mass, hm);
  }
  space.fence();

  // The four stages, timed.
  const auto t0 = clock::now();
  const auto grains = prepare_grains<T>(space, wavelength, width, sigma, radius, number, options);
  space.fence();
  const auto t1 = clock::now();
  StageTimes stages;
  dust_emission(space, grains, intensity, mass, heat, temperature, status, sed, options, true, &stages);
  // Stochastic heating of the grains below --stochastic-below: P(T) emission replaces theirs.
  std::vector<StochasticSpecies> small;
  for (int s = 0; s < ns; ++s)
    if (sizes.radius_micron[s] < stochastic_below)
      small.push_back({s, materials[composition[s]], sizes.radius_micron[s]});
  std::map<int, std::int64_t> stochastic_counts;
  double stochastic_seconds = 0;
  if (!small.empty()) {
    const auto start = clock::now();
    const auto model = prepare_stochastic(space, grains, small);
    Kokkos::View<int**, Kokkos::LayoutLeft, Device> stochastic_status("stochastic_status", nc, small.size());
    add_stochastic_emission(space, grains, model, intensity, temperature, mass, sed, stochastic_status);
    space.fence();
    stochastic_seconds = seconds(start, clock::now());
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), stochastic_status);
    for (std::size_t i = 0; i < h.span(); ++i) ++stochastic_counts[h.data()[i]];
  }
  const auto t4 = clock::now();

  auto h_t = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), temperature);
  auto h_st = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), status);
  auto h_sed = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sed);
  auto h_heat = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), heat);
  auto h_m = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mass);

  std::map<int, std::int64_t> counts;
  double t_min = 1e300, t_max = 0, absorbed = 0, emitted = 0;
  std::int64_t nonfinite_sed = 0;
  for (std::int64_t c = 0; c < nc; ++c) {
    for (int s = 0; s < ns; ++s) {
      ++counts[h_st(c, s)];
      t_min = std::min(t_min, double(h_t(c, s)));
      t_max = std::max(t_max, double(h_t(c, s)));
      absorbed += double(h_m(c)) * sizes.number_per_mass[s] * double(h_heat(c, s));
    }
    for (int l = 0; l < nl; ++l) {
      if (!std::isfinite(double(h_sed(c, l)))) ++nonfinite_sed;
      emitted += double(h_sed(c, l)) * d_micron[l] * 1e-6;
    }
  }
  std::cout << std::setprecision(6) << "kosmos dust: " << nc << " cells x " << ns << " species x " << nl
            << " wavelengths, " << (sizeof(T) == 4 ? "float" : "double") << ", method " << method << ", on "
            << Space::name() << "\n"
            << "  time (s): grains " << seconds(t0, t1) << ", heating (GEMM) " << stages.heating
            << ", temperatures " << stages.temperature << ", SED " << stages.sed << ", total " << seconds(t0, t4)
            << "\n"
            << "  temperature range: " << t_min << " - " << t_max << " K\n"
            << "  status: converged " << counts[status_converged] << ", at floor " << counts[status_at_floor]
            << ", at ceiling " << counts[status_at_ceiling] << ", not converged " << counts[status_not_converged]
            << "\n"
            << "  energy: emitted / absorbed = " << std::setprecision(9) << (absorbed > 0 ? emitted / absorbed : 0.0)
            << "\n";
  if (!small.empty())
    std::cout << "  stochastic heating: " << small.size() << " species below " << stochastic_below
              << " micron, " << stochastic_seconds << " s; status: ok " << stochastic_counts[stochastic_ok] << ", no heating "
              << stochastic_counts[stochastic_no_heating] << ", energy imbalance "
              << stochastic_counts[stochastic_energy_imbalance] << ", invalid heating "
              << stochastic_counts[stochastic_invalid_heating] << "\n";
  if (stochastic_counts[stochastic_energy_imbalance] > 0)
    std::cerr << "kosmos dust: warning: " << stochastic_counts[stochastic_energy_imbalance]
              << " stochastic P(T) lose more than 1 % of the absorbed energy above 3000 K\n";

  if (o.has("temperatures") && !o.str("temperatures").empty()) {
    kosmos::io::write_atomically(o.str("temperatures"), [&](std::ostream& out) {
      out << "# kosmos dust: equilibrium temperatures (K), one line per cell, one column per species\n";
      for (std::size_t k = 0; k < n_comp; ++k) out << "# composition " << k << ": " << table_paths[k] << '\n';
      out << "# composition:radius_micron";
      for (int s = 0; s < ns; ++s) out << ' ' << composition[s] << ':' << sizes.radius_micron[s];
      out << '\n' << std::setprecision(sizeof(T) == 4 ? 8 : 17);
      for (std::int64_t c = 0; c < nc; ++c) {
        for (int s = 0; s < ns; ++s) out << (s ? " " : "") << h_t(c, s);
        out << '\n';
      }
    });
  }
  if (o.has("status") && !o.str("status").empty()) {
    kosmos::io::write_atomically(o.str("status"), [&](std::ostream& out) {
      out << "# kosmos dust: solver status (0 converged, 1 at floor, 2 at ceiling, 3 not converged)\n";
      for (std::int64_t c = 0; c < nc; ++c) {
        for (int s = 0; s < ns; ++s) out << (s ? " " : "") << h_st(c, s);
        out << '\n';
      }
    });
  }
  if (o.has("sed") && !o.str("sed").empty()) {
    kosmos::io::write_atomically(o.str("sed"), [&](std::ostream& out) {
      out << "# kosmos dust: emission SED L_lambda (W m^-1 sr^-1 per cell), one line per cell\n# lambda_micron";
      for (double w : w_micron) out << ' ' << w;
      out << '\n' << std::setprecision(sizeof(T) == 4 ? 8 : 17);
      for (std::int64_t c = 0; c < nc; ++c) {
        for (int l = 0; l < nl; ++l) out << (l ? " " : "") << h_sed(c, l);
        out << '\n';
      }
    });
  }
  if (o.has("write-cells") && !o.str("write-cells").empty()) {
    auto h_i = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), intensity);
    kosmos::io::write_atomically(o.str("write-cells"), [&](std::ostream& out) {
      out << "# kosmos dust cells: dust_mass I_1 ... I_" << nl << " (W m^-2 m^-1 sr^-1)\n"
          << std::setprecision(sizeof(T) == 4 ? 9 : 17);
      for (std::int64_t c = 0; c < nc; ++c) {
        out << h_m(c);
        for (int l = 0; l < nl; ++l) out << ' ' << h_i(c, l);
        out << '\n';
      }
    });
  }
  if (nonfinite_sed > 0) {
    std::cerr << "kosmos dust: error: " << nonfinite_sed << " SED values overflowed "
              << (sizeof(T) == 4 ? "float" : "double")
              << " (use --precision double or a larger mass unit for the dust masses)\n";
    return 1;
  }
  if (stochastic_counts[stochastic_invalid_heating] > 0) {
    std::cerr << "kosmos dust: error: " << stochastic_counts[stochastic_invalid_heating]
              << " stochastic heating calculations got invalid heating\n";
    return 1;
  }
  if (counts[status_not_converged] > 0) {
    std::cerr << "kosmos dust: error: " << counts[status_not_converged] << " temperature solves did not converge\n";
    return 1;
  }
  return 0;
}

int run_dust_command(const std::vector<std::string>& args) {
  kosmos::cli::Options o("dust", kSummary);
  o.option("cross-sections", "FILE[,FILE]", "Draine optical-property table(s), one per grain composition")
      .option("sizes", "FILE[,FILE]", "size distribution per composition (default: power law over the table radii)",
              "", true)
      .option("density", "G_CM3[,G_CM3]", "bulk density for the default size distribution", "2.24")
      .option("wavelengths", "FILE", "wavelength grid (default: the paper's 968 wavelengths)", "", true)
      .option("cells", "FILE", "cells file (dust mass and intensities)", "", true)
      .option("generate", "N", "generate N synthetic cells instead of --cells", "", true)
      .option("seed", "S", "seed of the synthetic cells", "1")
      .option("precision", "P", "float (the paper's GPU code) or double", "double")
      .option("method", "M", "newton (Eq. 7, Newton-Raphson) or table (2000-point interpolation)", "newton")
      .option("tolerance", "TOL", "relative energy-balance tolerance", "1e-3")
      .option("size-distribution", "MODEL", "mrn or wd01 size distribution on the table radii", "", true)
      .option("stochastic-below", "RADIUS", "P(T) and its emission for grains below RADIUS micron", "0")
      .option("materials", "M[,M]", "graphite or silicate per table (default: from the file names)", "", true)
      .option("temperatures", "FILE", "write temperatures here", "", true)
      .option("sed", "FILE", "write SEDs here", "", true)
      .option("status", "FILE", "write solver statuses here", "", true)
      .option("write-cells", "FILE", "write the cells (e.g. generated ones) here", "", true);
  if (!o.parse(args)) return 0;
  const std::string precision = o.str("precision");
  for (const char* out : {"temperatures", "sed", "status", "write-cells"})
    for (const char* in : {"cross-sections", "sizes", "wavelengths", "cells"})
      if (o.has(out) && o.has(in) && !o.str(out).empty() && !o.str(in).empty())
        for (const auto& input : split_list(o.str(in)))
          if (o.str(out) == input)
            throw kosmos::cli::usage_error(std::string("--") + out + " would overwrite the input --" + in);
  if (precision == "float") return run_dust<float>(o);
  if (precision == "double") return run_dust<double>(o);
  throw kosmos::cli::usage_error("--precision must be float or double, not '" + precision + "'");
}

const kosmos::cli::CommandRegistration registration{
    {"dust", "dust grain temperatures and emission SEDs (Jonsson & Primack 2010)", &run_dust_command}};
}  // namespace
