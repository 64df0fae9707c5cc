// `kosmos dust`: equilibrium dust temperatures and emission SEDs of a set of cells
// (Jonsson & Primack 2010), from Draine cross-section tables, a size distribution and a cells
// file, or for the paper's benchmark problem with synthetic MMP83-based radiation fields.
#include "options.hpp"
#include "plots.hpp"
#include "ranks.hpp"

#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/core/threads.hpp>
#include <kosmos/dust/dust.hpp>
#include <kosmos/dust/dust_models.hpp>
#include <kosmos/dust/stream.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <utility>

namespace {
using Space = Kokkos::DefaultExecutionSpace;

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
    "                    --density (one value or one per composition; default: the composition's,\n"
    "                    2.24 graphite, 3.5 silicate) shared equally between the compositions (dust\n"
    "                    masses are then in kg).\n"
    "  --wavelengths     lines 'lambda_micron [bin_width_micron]', strictly increasing; default:\n"
    "                    1208 log-spaced wavelengths from 0.0912 micron to 1 cm (the paper's 968 to\n"
    "                    1000 micron continued; 'paper': those 968 alone). Beyond a\n"
    "                    table's longest wavelength (1000 micron for Draine's) Q_abs is extrapolated as\n"
    "                    Q_abs(lambda_end) (lambda / lambda_end)^-beta (--beta, default 2) up to 1 cm.\n"
    "  --cells           one line per cell: 'dust_mass I_1 ... I_L', mean intensity I_lambda in\n"
    "                    W m^-2 m^-1 sr^-1 on the wavelength grid; dust mass in the size\n"
    "                    distribution's mass unit. Or --generate N synthetic cells: MMP83 field\n"
    "                    scaled by 10^[-1,4], screened by tau_V in [0,4] (tau ~ 1/lambda), dust mass\n"
    "                    10^[26,30] kg.\n"
    "HDF5 (any file named *.h5 or *.hdf5, in or out; several outputs may share one file): cells are\n"
    "  datasets intensity (cells, wavelengths) and dust_mass (cells), optionally wavelength_micron\n"
    "  (must match the grid); outputs add temperature (cells, species), status (cells, species, int32),\n"
    "  sed (cells, wavelengths), intensity + dust_mass (--write-cells), in the --precision type, with\n"
    "  wavelength_micron, radius_micron and composition (int32) per species; written chunk by chunk as\n"
    "  the results come off the device.\n"
    "Outputs (written atomically):\n"
    "  --temperatures    one line per cell: T (K) of each species (compositions in order, each in\n"
    "                    its --sizes order).\n"
    "  --sed             one line per cell: the cell's L_lambda (W m^-1 sr^-1) at each wavelength\n"
    "                    (listed in the header).\n"
    "  --status          one line per cell: the solver status of each species (codes below).\n"
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
    "                    (Guhathakurta & Draine 1989, Draine & Li 2001 heat capacities, --bins\n"
    "                    enthalpy bins, default 128) and its emission in the SED instead of the equilibrium emission;\n"
    "                    --temperatures still lists their equilibrium T. Status counts are printed:\n"
    "                    ok / no heating (SED unchanged) / energy imbalance above 1 % (P(T) truncated\n"
    "                    at 3000 K; a warning) / invalid heating (an error).\n"
    "  --materials       graphite or silicate per --cross-sections table (for the two options\n"
    "                    above); default: read from the table file names.\n"
    "Physics:\n"
    "  --t-cmb           the CMB blackbody B(T_cmb) is added to every cell's field (default 2.725 K;\n"
    "                    0: none); the temperature floor is then T_cmb / 2 (else 3 K).\n"
    "  --sublimation     per table (K); converged grains above it get status 6 and a warning.\n"
    "                    auto: 1500 K silicate, 1750 K graphite (Laor & Draine 1993); 0: no check.\n"
    "MPI (a build with MPI, under mpirun or srun): the cells are split over the ranks in blocks of whole\n"
    "  --chunk-cells chunks, one GPU per rank; rank 0 writes every output, the same files as one process.\n"
    "Solver status per (cell, species), all counted in the summary; grains at the floor or above\n"
    "sublimation are warned about; the run exits 1 when any solve is at the ceiling (unless\n"
    "--allow-ceiling: then a warning), invalid or not converged:";

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

// The materials when --materials gives them or every table's file name tells them; else empty.
std::vector<kosmos::dust::GrainMaterial> known_materials(const kosmos::cli::Options& o,
                                                         const std::vector<std::string>& table_paths) {
  if (o.has("materials") && !o.str("materials").empty()) return grain_materials(o, table_paths);
  for (const auto& path : table_paths) {
    const std::string file = path.substr(path.find_last_of('/') + 1);
    if ((file.find("graphite") != std::string::npos) == (file.find("silicate") != std::string::npos)) return {};
  }
  return grain_materials(o, table_paths);
}

// The DustEM data folder: --dust-data, $KOSMOS_DUST_DATA, or the one the build was configured with.
std::string dust_data_dir(const kosmos::cli::Options& o) {
  if (o.given("dust-data")) return o.str("dust-data");
  if (const char* env = std::getenv("KOSMOS_DUST_DATA")) return env;
#ifdef KOSMOS_DUST_DATA_DIR
  return KOSMOS_DUST_DATA_DIR;
#else
  throw kosmos::cli::usage_error("--dust-model needs --dust-data DIR (or KOSMOS_DUST_DATA)");
#endif
}

// --bands: the filters on the wavelength grid, or none.
std::unique_ptr<kosmos::dust::Photometry> band_photometry(const kosmos::cli::Options& o, const std::vector<double>& w,
                                                           const std::vector<double>& d) {
  if (!o.given("bands")) {
    o.reject_given({"photometry", "distance", "cell-area"}, "needs --bands");
    return nullptr;
  }
  if (!o.given("photometry")) throw kosmos::cli::usage_error("--bands needs --photometry FILE");
  std::string dir;
  if (o.given("filter-data")) {
    dir = o.str("filter-data");
  } else if (const char* env = std::getenv("KOSMOS_FILTER_DATA")) {
    dir = env;
  } else {
#ifdef KOSMOS_FILTER_DATA_DIR
    dir = KOSMOS_FILTER_DATA_DIR;
#else
    throw kosmos::cli::usage_error("--bands needs --filter-data DIR (or KOSMOS_FILTER_DATA)");
#endif
  }
  std::vector<kosmos::dust::Filter> filters;
  for (const auto& name : split_list(o.str("bands"))) filters.push_back(kosmos::dust::load_band(name, dir));
  return std::make_unique<kosmos::dust::Photometry>(std::move(filters), w, d);
}

// The cells whose P(T) choose the bins of --bins auto: the brightest cell and up to 7 spread over
// the run (file cells), or the first 8 generated cells; LayoutLeft on the device.
template <class T, class Space, class Cells, class Wave>
Kokkos::View<T**, Kokkos::LayoutLeft, Space> representative_cells(const Space& space, const Cells* cells,
                                                                  std::int64_t nc, const Wave& wavelength,
                                                                  std::uint64_t seed) {
  const std::int64_t nl = std::int64_t(wavelength.extent(0)), n = std::min<std::int64_t>(nc, 8);
  Kokkos::View<T**, Kokkos::LayoutLeft, Space> sample("kosmos::dust::representative_cells", n, nl);
  if (!cells) {
    Kokkos::View<T*, Space> mass("kosmos::dust::representative_mass", n);
    kosmos::dust::synthetic_cells(space, wavelength, sample, mass, seed, 0);
    space.fence();
    return sample;
  }
  std::int64_t brightest = 0;
  double most = -1;
  for (std::int64_t c = 0; c < nc; ++c) {
    double sum = 0;
    for (std::int64_t l = 0; l < nl; ++l) sum += double(cells->intensity(c, l));
    if (sum > most) most = sum, brightest = c;
  }
  auto h = Kokkos::create_mirror_view(sample);
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t c = k == 0 ? brightest : (k * nc) / n;
    for (std::int64_t l = 0; l < nl; ++l) h(k, l) = cells->intensity(c, l);
  }
  Kokkos::deep_copy(sample, h);
  return sample;
}

// "M" for one bin count, else "LO-HI (mean M)" of the species' bins.
std::string bins_summary(const std::vector<int>& species_bins, int bins) {
  if (species_bins.empty()) return std::to_string(bins);
  const auto range = std::minmax_element(species_bins.begin(), species_bins.end());
  if (*range.first == *range.second) return std::to_string(*range.first);
  double mean = 0;
  for (const int b : species_bins) mean += b;
  return std::to_string(*range.first) + "-" + std::to_string(*range.second) + " (mean " +
         std::to_string(int(std::lround(mean / double(species_bins.size())))) + ")";
}

// --stochastic-below of --dust-model runs (micron): P(T) for every grain smaller than 500 A.
constexpr double default_model_stochastic_below = 0.05;

// Cells from which --method auto builds the table: its set-up costs about as much as Newton
// solves for that many cells of the paper's problem (README, "Choosing the method").
constexpr std::int64_t auto_table_cells = 1000;

// Nominal sublimation temperatures (K): silicate 1500, graphite 1750, as adopted for AGN dust
// since Laor & Draine (1993, ApJ 402, 441); the real limit depends on grain size, gas pressure and
// exposure time (Guhathakurta & Draine 1989, ApJ 345, 230).
double nominal_sublimation_temperature(kosmos::dust::GrainMaterial material) {
  return material == kosmos::dust::GrainMaterial::graphite ? 1750.0 : 1500.0;
}

std::vector<double> number_list(const std::string& option, const std::string& text, std::size_t n, bool zero_ok) {
  std::vector<double> values;
  for (const auto& d : split_list(text)) {
    double v = 0;
    if (!kosmos::io::parse_double(d, v) || !(zero_ok ? v >= 0 : v > 0) || !std::isfinite(v))
      throw kosmos::cli::usage_error("--" + option + " '" + d + "' is not a " + (zero_ok ? "number >= 0" : "positive number"));
    values.push_back(v);
  }
  if (values.size() == 1) values.resize(n, values[0]);
  if (values.size() != n)
    throw kosmos::cli::usage_error("--" + option + " lists " + std::to_string(values.size()) + " values for " +
                                   std::to_string(n) + " --cross-sections tables");
  return values;
}

std::string summary() {
  std::string text = kSummary;
  for (int k = 0; k < kosmos::dust::temperature_status_count; ++k)
    text += "\n  " + std::to_string(k) + " " + kosmos::dust::temperature_status_name(k) + ": " +
            kosmos::dust::temperature_status_meaning(k);
  return text;
}

// An HDF5 cells file: datasets "intensity" (C, L) and "dust_mass" (C), optionally
// "wavelength_micron" (L), which must then equal the grid. Returns C.
std::size_t check_hdf5_cells(const kosmos::io::H5Reader& in, const std::vector<double>& w_micron) {
  if (!in.has("intensity") || !in.has("dust_mass"))
    throw kosmos::file_error(in.path() + ": expected datasets intensity (cells, " + std::to_string(w_micron.size()) +
                             " wavelengths) and dust_mass (cells)");
  const auto dims = in.expect_shape("intensity", {kosmos::io::H5Reader::any_extent, w_micron.size()});
  in.expect_shape("dust_mass", {dims[0]});
  if (in.has("wavelength_micron")) in.expect_shape("wavelength_micron", {w_micron.size()});
  if (in.has("wavelength_micron")) {
    const auto w = in.read<double>("wavelength_micron");
    for (std::size_t l = 0; l < w.size(); ++l)  // w.size() == L: intensity's dims checked it
      if (!(std::fabs(w[l] - w_micron[l]) <= 1e-9 * w_micron[l]))
        throw kosmos::file_error(in.path() + ": wavelength_micron(" + std::to_string(l) + ") = " +
                                 std::to_string(w[l]) + " differs from the grid's " + std::to_string(w_micron[l]));
  }
  if (dims[0] == 0) throw kosmos::file_error(in.path() + ": no cells");
  return dims[0];
}

template <class T>
int run_dust(const kosmos::cli::Options& o) {
  using namespace kosmos::dust;
  using clock = std::chrono::steady_clock;
  auto seconds = [](clock::time_point a, clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  const auto t_begin = clock::now();

  // Grain compositions: a named model (its populations), or tables (comma-separated lists).
  const bool named_model = o.given("dust-model");
  if (named_model == o.given("cross-sections"))
    throw kosmos::cli::usage_error("give exactly one of --cross-sections FILE[,FILE] and --dust-model NAME");
  if (named_model)
    o.reject_given({"sizes", "size-distribution", "materials", "density"},
                   "does not apply to --dust-model (the model sets its sizes and materials)");
  std::unique_ptr<DustModel> model;
  std::vector<std::string> table_paths;
  std::vector<DraineTable> tables;
  if (named_model) {
    model = std::make_unique<DustModel>(load_dust_model(o.str("dust-model"), dust_data_dir(o)));
    for (const auto& pop : model->populations) {
      table_paths.push_back(pop.type);
      tables.push_back(pop.optics);
    }
    std::cout << std::setprecision(4) << "dust model " << model->name << ": " << model->populations.size()
              << " populations, dust mass per H nucleus " << model->dust_mass_per_h_g << " g, q_PAH "
              << 100 * model->pah_mass_fraction << " %\n";
  } else {
    table_paths = split_list(o.str("cross-sections"));
    for (const auto& path : table_paths) tables.push_back(read_draine_table(path));
  }
  const std::size_t n_comp = tables.size();
  const bool sizes_given = o.has("sizes") && !o.str("sizes").empty();
  const auto size_paths = sizes_given ? split_list(o.str("sizes")) : std::vector<std::string>();
  if (sizes_given && size_paths.size() != n_comp)
    throw kosmos::cli::usage_error("--sizes lists " + std::to_string(size_paths.size()) + " files for " +
                                   std::to_string(n_comp) + " --cross-sections tables");
  // Densities, for the default size distribution: given, or each composition's (Draine & Li 2001).
  std::vector<GrainMaterial> named_materials;
  if (model)
    for (const auto& pop : model->populations) named_materials.push_back(pop.material);
  else
    named_materials = known_materials(o, table_paths);
  std::vector<double> densities(n_comp, 0.0);
  if (o.has("density") && !o.str("density").empty()) {
    densities = number_list("density", o.str("density"), n_comp, false);
  } else if (!named_materials.empty()) {
    for (std::size_t k = 0; k < n_comp; ++k) densities[k] = material_properties(named_materials[k]).density_g_cm3;
  }
  // Sublimation temperatures per composition: given (0: no check), or nominal for known materials.
  std::vector<double> sublimation(n_comp, 0.0);
  if (o.str("sublimation") != "auto")
    sublimation = number_list("sublimation", o.str("sublimation"), n_comp, true);
  else if (!named_materials.empty())
    for (std::size_t k = 0; k < n_comp; ++k) sublimation[k] = nominal_sublimation_temperature(named_materials[k]);
  const double t_cmb = o.number("t-cmb");
  if (!(t_cmb >= 0) || !(t_cmb < 1000))
    throw kosmos::cli::usage_error("--t-cmb must be a temperature in [0, 1000) K (0: no CMB)");
  const double beta = o.number("beta");
  if (!(beta >= 0) || !std::isfinite(beta)) throw kosmos::cli::usage_error("--beta must be finite and >= 0");
  std::vector<double> w_micron, d_micron;
  if (o.has("wavelengths") && o.str("wavelengths") == "paper") {
    w_micron = paper_wavelength_grid();
    d_micron = bin_widths(w_micron);
  } else if (o.has("wavelengths") && !o.str("wavelengths").empty()) {
    read_wavelength_grid(o.str("wavelengths"), w_micron, d_micron);
  } else {
    w_micron = default_wavelength_grid();
    d_micron = bin_widths(w_micron);
  }
  const bool model_given = o.has("size-distribution") && !o.str("size-distribution").empty();
  // A named model's small grains (PAHs above all) are heated stochastically unless told otherwise:
  // in equilibrium they would show no features.
  const double stochastic_below = o.given("stochastic-below") ? o.number("stochastic-below")
                                  : named_model               ? default_model_stochastic_below
                                                              : 0.0;
  if (!(stochastic_below >= 0)) throw kosmos::cli::usage_error("--stochastic-below must be a radius >= 0 (micron)");
  if (model_given && sizes_given) throw kosmos::cli::usage_error("give --sizes or --size-distribution, not both");
  std::vector<GrainMaterial> materials;
  if (model)
    materials = named_materials;
  else if (model_given || stochastic_below > 0)
    materials = grain_materials(o, table_paths);
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
  if (model) {
    sizes = model->sizes;
    composition = model->population_of;
  }
  for (std::size_t k = 0; k < n_comp && !model; ++k) {
    if (!sizes_given && !model_given && !(densities[k] > 0))
      throw kosmos::cli::usage_error("cannot tell the material of '" + table_paths[k] +
                                     "' from its name: give --density or --materials");
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
  // With the CMB in the field no grain is colder than T_cmb: the floor moves below it.
  if (t_cmb > 0) options.min_temperature = std::min(options.min_temperature, 0.5 * t_cmb);
  const std::string method_option = o.str("method");
  if (method_option != "newton" && method_option != "table" && method_option != "auto")
    throw kosmos::cli::usage_error("--method must be newton, table or auto, not '" + method_option + "'");

  // Cells: row-major in (pinned) host memory; generated ones only on the device unless written out.
  const bool generate = o.has("generate") && !o.str("generate").empty();
  const bool from_file = o.has("cells") && !o.str("cells").empty();
  if (generate == from_file) throw kosmos::cli::usage_error("give exactly one of --cells FILE and --generate N");
  auto output = [&](const char* name) { return o.has(name) ? o.str(name) : std::string(); };
  const std::string cells_out = output("write-cells");
  std::vector<double> mass_h, intensity_h;
  std::int64_t nc = 0;
  std::unique_ptr<kosmos::io::H5Reader> cells_h5;
  if (generate) {
    nc = o.integer("generate", 1, kosmos::cli::Options::largest_integer);
  } else if (kosmos::io::is_hdf5_path(o.str("cells"))) {
    cells_h5 = std::make_unique<kosmos::io::H5Reader>(o.str("cells"));
    nc = std::int64_t(check_hdf5_cells(*cells_h5, w_micron));
  } else {
    read_cells(o.str("cells"), std::size_t(nl), mass_h, intensity_h);
    nc = std::int64_t(mass_h.size());
  }
  // auto: the table, more accurate than Newton at the default tolerance, once there are enough
  // cells to pay for building it (2000 points per species; README: "Choosing the method").
  const std::string method =
      method_option == "auto" ? (nc >= auto_table_cells ? "table" : "newton") : method_option;
  if (method == "table") options.method = TemperatureMethod::table;
  // Every cell's results stay in host memory only for text outputs and --write-cells; otherwise
  // they stream through a ring of chunk buffers straight into the HDF5 files.
  // Over several MPI ranks each rank streams its block of whole chunks (the chunks of a one-rank
  // run) and sends its rows to rank 0, which writes every file as one rank does; every rank holds
  // the cells' inputs, only rank 0 every cell's results.
  const bool root = kosmos::cli::is_root(), several_ranks = kosmos::cli::ranks() > 1;
  auto h5_path = [](const std::string& path) { return !path.empty() && kosmos::io::is_hdf5_path(path); };
  auto text_output = [&](const char* name) {  // written by rank 0
    const std::string path = output(name);
    return root && !path.empty() && !h5_path(path);
  };
  const bool keep_all = text_output("temperatures") || text_output("status") || text_output("sed") ||
                        text_output("photometry") || (root && !cells_out.empty());
  const bool keep_inputs = !generate || !cells_out.empty();
  using Cells = HostCells<T>;
  const Cells cells = keep_all      ? Cells(nc, nl, ns, keep_inputs ? Cells::both : Cells::results)
                      : keep_inputs ? Cells(nc, nl, ns, Cells::inputs)
                                    : Cells();
  // Stages 2-4 are streamed through the device (below). Each chunk's summary is reduced on its
  // instance and comes back with its rows; its HDF5 rows go to writer threads, so that the host
  // thread keeps the device fed. Without text outputs the results land in a ring of pinned rows
  // with a slot per instance plus one per chunk the writers may hold (a slot is reused only after
  // its rows are written); pinning costs ~1 ms per MB, so a helper thread allocates the ring
  // while the grains, the stochastic tables and the HDF5 files are prepared.
  PipelineOptions streaming;
  const std::string pt_out = output("pt-output");
  if (!pt_out.empty() && !h5_path(pt_out))
    throw kosmos::cli::usage_error("--pt-output '" + pt_out + "' must be an HDF5 file (*.h5 or *.hdf5)");
  if (!pt_out.empty() && !(stochastic_below > 0))
    throw kosmos::cli::usage_error("--pt-output needs --stochastic-below (the grains that get a P(T))");
  const bool any_h5 = h5_path(output("temperatures")) || h5_path(output("status")) || h5_path(output("photometry")) ||
                      h5_path(output("sed")) || h5_path(cells_out) || !pt_out.empty();
  // The result datasets are mapped into memory (H5Writer::RowWrites::concurrent) and chunks are
  // copied in by several threads, each holding one ring slot: on the 16-core GPU machine four
  // threads wrote 0.59 GB fastest (81-93 ms; 99-112 ms with 16, 131-204 ms for one write() stream).
  const int writer_threads = int(o.integer("writer-threads", 1, 64));
  // By default the writers together hold about 18 MiB of results (1024 cells per chunk for the
  // paper's problem in float with 4 writers): on the GPU machine twice that made their copies
  // 3-8x slower (perf_tests/RESULTS.md). No buffer rows beyond the cells.
  const std::int64_t result_bytes_per_cell = std::int64_t(nl) * std::int64_t(sizeof(T)) +
                                             std::int64_t(ns) * std::int64_t(sizeof(T) + sizeof(int));
  const std::int64_t chunk_cells =
      o.str("chunk-cells") == "auto"
          ? std::max<std::int64_t>(1, (std::int64_t(18) << 20) / (writer_threads * result_bytes_per_cell))
          : o.integer("chunk-cells", 1, kosmos::cli::Options::largest_integer);
  streaming.chunk_cells = std::max<std::int64_t>(1, std::min(chunk_cells, nc));
  const auto block = kosmos::cli::chunk_block(nc, streaming.chunk_cells);  // this rank's cells
  if (any_h5 && !keep_all) streaming.ring_chunks = streaming.instances + writer_threads;
  const std::int64_t ring_rows = std::min(streaming.ring_rows(), nc);
  auto ring = keep_all ? std::future<Cells>()
                       : std::async(std::launch::async, [=] {
                           kosmos::Impl::use_process_cpus();
                           return Cells(ring_rows, nl, ns, Cells::results);
                         });
  // Cells whose field is zero at every wavelength: their grains alone may end with no heating
  // (counted from the file's numbers, before a conversion to float could flush them to zero).
  std::int64_t zero_field_cells = 0;
  auto count_zero_fields = [&](const auto* intensity) {
    for (std::int64_t c = 0; c < nc; ++c) {
      const auto* row = intensity + std::size_t(c) * nl;
      zero_field_cells += std::all_of(row, row + nl, [](auto v) { return v == 0; });
    }
  };
  if (cells_h5) {
    cells_h5->read_into("intensity", cells.intensity.data(), std::size_t(nc) * nl);
    cells_h5->read_into("dust_mass", cells.dust_mass.data(), std::size_t(nc));
    count_zero_fields(cells.intensity.data());
  } else if (from_file) {
    for (std::int64_t c = 0; c < nc; ++c) {
      cells.dust_mass(c) = T(mass_h[std::size_t(c)]);
      for (int l = 0; l < nl; ++l) cells.intensity(c, l) = T(intensity_h[std::size_t(c) * nl + l]);
    }
    count_zero_fields(intensity_h.data());
  }

  // Grains on the device.
  const auto grain_inputs = upload_grain_inputs<Space::memory_space>(w_micron, d_micron, sizes, [&](int s) {
    return absorption_cross_section(tables[composition[s]], sizes.radius_micron[s], w_micron, beta);
  });
  Space space;
  space.fence();
  const auto t0 = clock::now();
  const auto grains = prepare_grains<T>(space, grain_inputs.wavelength, grain_inputs.width, grain_inputs.sigma,
                                         grain_inputs.radius, grain_inputs.number, options);
  space.fence();
  const auto t1 = clock::now();
  // Stochastic heating of the grains below --stochastic-below: its tables are built once here; in
  // each chunk the P(T) emission replaces theirs in the SED (pipeline step below).
  std::vector<StochasticSpecies> small;
  for (int s = 0; s < ns; ++s)
    if (sizes.radius_micron[s] < stochastic_below)
      small.push_back({s, materials[composition[s]], sizes.radius_micron[s],
                       model ? model->populations[composition[s]].heat_capacity : nullptr});
  const int nq = int(small.size());
  StochasticOptions stochastic_options;
  stochastic_options.min_temperature = options.min_temperature;
  // auto: nodes 0.04 apart in float, whose SED's own error (5e-5) is above the interpolation's
  // (4e-6); every wavelength in double.
  stochastic_options.emission_node_spacing = o.str("pt-emission-spacing") == "auto"
                                                 ? (std::is_same<T, float>::value ? 0.04 : 0.0)
                                                 : o.number("pt-emission-spacing");
  if (!(stochastic_options.emission_node_spacing >= 0 && stochastic_options.emission_node_spacing <= 1))
    throw kosmos::cli::usage_error("--pt-emission-spacing " + o.str("pt-emission-spacing") +
                                   " must be in [0, 1] (ln lambda)");
  // --bins auto: each species' bins doubled from 64 (up to 4096) until the 3-60 micron band powers
  // of representative cells change by less than 1 % (refine_bins_for_cells); a number fixes them.
  const bool auto_bins = o.str("bins") == "auto";
  stochastic_options.bins = auto_bins ? 32 : int(o.integer("bins", 8, 4096));
  BinRefinement refinement;
  StochasticModel<Space> stochastic;
  if (nq > 0 && auto_bins) {
    const auto sample = representative_cells<T>(space, generate ? nullptr : &cells, nc, grain_inputs.wavelength,
                                                std::uint64_t(o.integer("seed", 0, kosmos::cli::Options::largest_integer)));
    stochastic = refine_bins_for_cells(space, grains, small, sample, options, stochastic_options, 0.01, 4096, &refinement);
    stochastic_options.bins = refinement.bins;
  } else if (nq > 0) {
    stochastic = prepare_stochastic(space, grains, small, stochastic_options);
  }
  space.fence();
  const auto t_stochastic = clock::now();
  const double stochastic_seconds = seconds(t1, t_stochastic);

  // HDF5 outputs (several may share one file) are written chunk by chunk as the results land.
  std::map<std::string, std::unique_ptr<kosmos::io::H5Writer>> h5;
  auto h5_output = [&](const char* name) -> kosmos::io::H5Writer* {
    const std::string path = output(name);
    if (path.empty() || !kosmos::io::is_hdf5_path(path) || !root) return nullptr;
    auto& writer = h5[path];
    if (!writer) {
      writer = std::make_unique<kosmos::io::H5Writer>(path);
      writer->attribute("/", "kosmos_dust_precision", sizeof(T) == 4 ? "float" : "double");
      writer->write("wavelength_micron", w_micron);
      writer->write("radius_micron", sizes.radius_micron);
      std::vector<std::int32_t> comp(composition.begin(), composition.end());
      writer->write("composition", comp);
      writer->attribute("wavelength_micron", "units", "micron");
      writer->attribute("radius_micron", "units", "micron");
      writer->attribute("composition", "units", "index of the --cross-sections table");
      writer->attribute("/", "kosmos_dust_t_cmb_K", t_cmb);
    }
    return writer.get();
  };
  const std::size_t cells_dim = std::size_t(nc), l_dim = std::size_t(nl), s_dim = std::size_t(ns);
  kosmos::io::H5Writer* const h5_temperature = h5_output("temperatures");
  kosmos::io::H5Writer* const h5_status = h5_output("status");
  kosmos::io::H5Writer* const h5_sed = h5_output("sed");
  kosmos::io::H5Writer* const h5_cells = h5_output("write-cells");
  constexpr auto concurrent = kosmos::io::H5Writer::RowWrites::concurrent;
  if (h5_temperature) h5_temperature->create<T>("temperature", {cells_dim, s_dim}, concurrent);
  if (h5_status) h5_status->create<std::int32_t>("status", {cells_dim, s_dim}, concurrent);
  if (h5_sed) h5_sed->create<T>("sed", {cells_dim, l_dim}, concurrent);
  if (h5_cells) {
    h5_cells->create<T>("intensity", {cells_dim, l_dim}, concurrent);
    h5_cells->create<T>("dust_mass", {cells_dim}, concurrent);
  }
  kosmos::io::H5Writer* const h5_pt = nq > 0 ? h5_output("pt-output") : nullptr;
  if (h5_pt) {
    const std::size_t q_dim = std::size_t(nq), b_dim = std::size_t(stochastic_options.bins);
    std::vector<std::int32_t> index;
    for (const auto& sp : small) index.push_back(sp.index);
    h5_pt->write("stochastic_species", index);
    h5_pt->attribute("stochastic_species", "units", "index into radius_micron and composition");
    std::vector<std::int32_t> species_bins;
    for (int q = 0; q < nq; ++q) species_bins.push_back(stochastic.species_bins(q));
    h5_pt->write("species_bins", species_bins);
    h5_pt->attribute("species_bins", "units",
                     "bins of each stochastic species (the rest of its row: probability 0 at its top bin's temperature)");
    h5_pt->create<double>("probability", {cells_dim, q_dim, b_dim}, concurrent);
    h5_pt->create<double>("bin_temperature", {cells_dim, q_dim, b_dim}, concurrent);
    h5_pt->attribute("probability", "units", "probability of each bin (sums to 1 over the bins)");
    h5_pt->attribute("bin_temperature", "units", "K");
  }
  const char* mass_unit = sizes_given ? "the --sizes mass unit" : "kg";
  if (h5_temperature) h5_temperature->attribute("temperature", "units", "K");
  if (h5_status) h5_status->attribute("status", "units", "TemperatureStatus code (kosmos dust --help)");
  if (h5_sed) h5_sed->attribute("sed", "units", std::string("W m^-1 sr^-1 per cell (dust masses in ") + mass_unit + ")");
  if (h5_cells) {
    h5_cells->attribute("intensity", "units", "W m^-2 m^-1 sr^-1 (mean intensity, without the CMB)");
    h5_cells->attribute("dust_mass", "units", mass_unit);
  }
  // Synthetic photometry (--bands): photon-weighted mean L_nu per band, in Jy at --distance or in
  // MJy/sr over --cell-area.
  const auto photometry = band_photometry(o, w_micron, d_micron);
  std::string band_unit;
  double band_scale = 1;
  if (photometry) {
    if (o.given("distance") == o.given("cell-area"))
      throw kosmos::cli::usage_error("--bands needs exactly one of --distance PC (Jy) and --cell-area PC2 (MJy/sr)");
    const double v = o.number(o.given("distance") ? "distance" : "cell-area");
    if (!(v > 0) || !std::isfinite(v)) throw kosmos::cli::usage_error("--distance and --cell-area must be > 0");
    band_scale = o.given("distance") ? jansky_scale(v) : mjy_per_sr_scale(v);
    band_unit = std::string(o.given("distance") ? "Jy at " : "MJy/sr over ") + o.str(o.given("distance") ? "distance" : "cell-area") +
                (o.given("distance") ? " pc" : " pc^2") + " (photon-weighted mean F_nu; dust masses in " + mass_unit + ")";
  }
  kosmos::io::H5Writer* const h5_bands = photometry ? h5_output("photometry") : nullptr;
  if (h5_bands) {
    std::vector<double> pivot;
    std::string names;
    for (const auto& f : photometry->filters()) {
      pivot.push_back(f.pivot_micron);
      names += (names.empty() ? "" : ",") + f.name;
    }
    h5_bands->write("band_pivot_micron", pivot);
    h5_bands->attribute("band_pivot_micron", "units", "micron");
    h5_bands->attribute("band_pivot_micron", "bands", names);
    h5_bands->create<double>("photometry", {cells_dim, std::size_t(photometry->bands())}, concurrent);
    h5_bands->attribute("photometry", "units", band_unit);
    h5_bands->attribute("photometry", "bands", names);
  }

  const auto t_files = clock::now();
  StreamOptions stream_options;
  stream_options.pipeline = streaming;
  stream_options.solver = options;
  stream_options.cmb_temperature = t_cmb;
  for (int s = 0; s < ns; ++s) stream_options.sublimation_temperature.push_back(sublimation[composition[s]]);
  if (std::all_of(sublimation.begin(), sublimation.end(), [](double t) { return t == 0; }))
    stream_options.sublimation_temperature.clear();
  else
    for (auto& t : stream_options.sublimation_temperature)
      if (t == 0) t = options.max_temperature;  // no check for this composition
  const auto t_progress = clock::now();
  if (o.is_set("progress") && root)
    stream_options.on_progress = [&](std::int64_t done, std::int64_t total) {
      std::fprintf(stderr, "\r[kosmos dust] %lld of %s%lld cells (%5.1f%%), %.1f s   ", (long long)done,
                   several_ranks ? "rank 0's " : "", (long long)total, 100.0 * double(done) / double(total),
                   seconds(t_progress, clock::now()));
      if (done == total) std::fprintf(stderr, "\n");
    };
  stream_options.worker_threads = any_h5 ? writer_threads : 0;
  stream_options.distributions = nq > 0 && !pt_out.empty();  // every rank: rank 0 writes them
  EmissionStream<T, Space> stream(space, grains, grain_inputs, stream_options, stochastic);
  const auto t_buffers = clock::now();
  const Cells results = keep_all ? cells : ring.get();  // run() checks its rows
  const auto t_ring = clock::now();
  // HDF5 rows go to the stream's worker threads as each chunk lands (the text outputs read the
  // rows kept in `cells` afterwards); other ranks pack each chunk's rows for rank 0, the parts it
  // writes.
  using Packed = PackedRows<T>;
  auto part_if = [](bool wanted, unsigned part) { return wanted ? part : 0u; };
  const unsigned sent_parts = Packed::dust_mass | part_if(!output("temperatures").empty(), Packed::temperature) |
                              part_if(!output("status").empty(), Packed::status) |
                              part_if(!output("sed").empty() || photometry, Packed::sed) |
                              part_if(!pt_out.empty(), Packed::distributions) |
                              part_if(generate && !cells_out.empty(), Packed::intensity);
  std::vector<kosmos::distributed::Piece> pieces(
      root ? 0 : std::size_t((block.size() + streaming.chunk_cells - 1) / streaming.chunk_cells));
  auto write_rows = [&](const StreamRows<T>& rows) {
    if (!root) {
      const T* intensity = sent_parts & Packed::intensity ? &cells.intensity(rows.first_cell, 0) : nullptr;
      pieces[std::size_t((rows.first_cell - block.begin) / streaming.chunk_cells)] = {
          {rows.first_cell, rows.first_cell + rows.cells}, Packed(rows, sent_parts, intensity).bytes()};
      return;
    }
    if (!any_h5) return;
    const std::size_t first = std::size_t(rows.first_cell), n = std::size_t(rows.cells);
    if (h5_temperature) h5_temperature->write_rows("temperature", first, n, rows.temperature.data());
    if (h5_status) h5_status->write_rows<std::int32_t>("status", first, n, rows.status.data());
    if (h5_sed) h5_sed->write_rows("sed", first, n, rows.sed.data());
    if (h5_pt) {
      h5_pt->write_rows("probability", first, n, rows.probability.data());
      h5_pt->write_rows("bin_temperature", first, n, rows.bin_temperature.data());
    }
    if (h5_bands) {
      std::vector<double> bands(n * std::size_t(photometry->bands()));
      for (std::size_t c = 0; c < n; ++c)
        photometry->apply(&rows.sed(c, 0), band_scale, &bands[c * std::size_t(photometry->bands())]);
      h5_bands->write_rows("photometry", first, n, bands.data());
    }
    if (h5_cells) {  // --write-cells keeps every row: cells.intensity has them
      h5_cells->write_rows("intensity", first, n, &cells.intensity(rows.first_cell, 0));
      h5_cells->write_rows("dust_mass", first, n, rows.dust_mass.data());
    }
  };
  using Input = typename EmissionStream<T, Space>::Input;
  const auto seed = std::uint64_t(o.integer("seed", 0, kosmos::cli::Options::largest_integer));
  const auto t_run = clock::now();
  StreamSummary summary =
      generate ? stream.run_range(
                     block.begin, block.size(),
                     [&](const Space& instance, std::int64_t c0, const Input& in) {
                       synthetic_cells(instance, grain_inputs.wavelength, in.intensity, in.dust_mass, seed, c0);
                       if (cells.intensity.extent(0) > 0) {  // --write-cells
                         const Kokkos::pair<std::int64_t, std::int64_t> range(
                             c0, c0 + std::int64_t(in.dust_mass.extent(0)));
                         Kokkos::deep_copy(instance, Kokkos::subview(cells.intensity, range, Kokkos::ALL),
                                           in.intensity);
                       }
                     },
                     results, write_rows)
               : stream.run_range(block.begin, block.size(),
                                  EmissionStream<T, Space>::pipeline_type::copy_cells_in(cells), results, write_rows);
  if (several_ranks) {
    // Rank 0 writes the other ranks' rows as they arrive, and every rank sums every chunk's
    // summary in chunk order, as one rank does.
    kosmos::cli::send_pieces_to_root(pieces, [&](const kosmos::distributed::IndexRange&, std::vector<char> bytes) {
      const Packed packed(std::move(bytes));
      const auto rows = packed.rows();
      const std::int64_t first = rows.first_cell;
      auto copy = [](const auto& part, auto* to) { std::copy(part.data(), part.data() + part.size(), to); };
      if (packed.has(Packed::intensity))
        std::copy(packed.intensities(), packed.intensities() + rows.cells * nl, &cells.intensity(first, 0));
      if (keep_all) {
        copy(rows.dust_mass, &results.dust_mass(first));
        copy(rows.temperature, &results.temperature(first, 0));
        copy(rows.status, &results.status(first, 0));
        copy(rows.sed, &results.sed(first, 0));
      }
      write_rows(rows);
    });
    pieces.clear();
    const std::int64_t chunk = streaming.chunk_cells;
    const auto all_chunks = kosmos::cli::gather_rows({{block.begin / chunk, (block.end + chunk - 1) / chunk}},
                                                     summary.chunk_summaries, StreamSummary::chunk_width,
                                                     (nc + chunk - 1) / chunk, true);
    StreamSummary all = sum_chunk_summaries(all_chunks);
    all.device_wait_seconds = summary.device_wait_seconds;  // rank 0's timings
    all.summary_seconds = summary.summary_seconds;
    all.worker_blocked_seconds = summary.worker_blocked_seconds;
    all.worker_busy_seconds = summary.worker_busy_seconds;
    all.worker_threads = summary.worker_threads;
    summary = std::move(all);
  }
  const auto t_drained = clock::now();
  const auto& counts = summary.status_counts;
  const auto& stochastic_counts = summary.stochastic_counts;
  const double t_min = summary.min_temperature, t_max = summary.max_temperature;
  for (auto& file : h5) file.second->commit();
  const auto t3 = clock::now();

  std::cout << std::setprecision(6) << "kosmos dust: " << nc << " cells x " << ns << " species x "
            << nl << " wavelengths, " << (sizeof(T) == 4 ? "float" : "double") << ", method "
            << method << ", on " << Space::name()
            << (several_ranks ? " x " + std::to_string(kosmos::cli::ranks()) + " MPI ranks" : std::string()) << "\n"
            << "  time (s): grains " << seconds(t0, t1)
            << ", cells in + heating + temperatures + SED + out "
            << "(pipelined) " << seconds(t_run, t_drained) << ", HDF5 commit "
            << seconds(t_drained, t3) << "\n"
            << "  temperature range: ";
  if (t_min <= t_max)
    std::cout << t_min << " - " << t_max << " K (heated grains)\n";
  else
    std::cout << "none (no grain is heated)\n";
  std::cout << "  status:";
  for (int k = 0; k < temperature_status_count; ++k)
    std::cout << (k ? ", " : " ") << temperature_status_name(k) << ' ' << counts[std::size_t(k)];
  std::cout << "\n"
            << "  energy: emitted / absorbed = " << std::setprecision(9) << summary.emitted_over_absorbed()
            << "\n";
  if (nq > 0)
    std::cout << "  stochastic heating: " << nq << " species below " << stochastic_below << " micron, "
              << bins_summary(refinement.species_bins, stochastic_options.bins) << " bins"
              << (auto_bins ? std::string(refinement.converged ? " (refined: " : " (NOT converged: ") +
                                  std::to_string(100 * refinement.change).substr(0, 5) + " % last change)"
                            : std::string())
              << ", emission "
              << (stochastic_options.emission_node_spacing > 0
                      ? "at nodes " + std::to_string(stochastic_options.emission_node_spacing).substr(0, 6) +
                            " apart in ln lambda"
                      : std::string("at every wavelength"))
              << " (tables " << std::setprecision(3) << stochastic_seconds
              << " s, P(T) per chunk in the pipeline); status: ok "
              << stochastic_counts[stochastic_ok] << ", no heating "
              << stochastic_counts[stochastic_no_heating] << ", energy imbalance "
              << stochastic_counts[stochastic_energy_imbalance] << ", invalid heating "
              << stochastic_counts[stochastic_invalid_heating] << "\n";
  if (stochastic_counts[stochastic_energy_imbalance] > 0)
    std::cerr << "kosmos dust: warning: " << stochastic_counts[stochastic_energy_imbalance]
              << " stochastic P(T) lose more than 1 % of the absorbed energy above 3000 K\n";

  // Text outputs, each as a whole (keep_all: `results` is `cells`, one row per cell).
  if (text_output("temperatures")) {
    kosmos::io::write_atomically(o.str("temperatures"), [&](std::ostream& out) {
      out << "# kosmos dust: equilibrium temperatures (K), one line per cell, one column per species\n";
      for (std::size_t k = 0; k < n_comp; ++k) out << "# composition " << k << ": " << table_paths[k] << '\n';
      out << "# composition:radius_micron";
      for (int s = 0; s < ns; ++s) out << ' ' << composition[s] << ':' << sizes.radius_micron[s];
      out << '\n' << std::setprecision(std::numeric_limits<T>::max_digits10);
      for (std::int64_t c = 0; c < nc; ++c) {
        for (int s = 0; s < ns; ++s) out << (s ? " " : "") << results.temperature(c, s);
        out << '\n';
      }
    });
  }
  if (text_output("status")) {
    kosmos::io::write_atomically(o.str("status"), [&](std::ostream& out) {
      out << "# kosmos dust: solver status per species, one line per cell\n";
      for (int k = 0; k < temperature_status_count; ++k)
        out << "# " << k << ' ' << temperature_status_name(k) << ": " << temperature_status_meaning(k) << '\n';
      for (std::int64_t c = 0; c < nc; ++c) {
        for (int s = 0; s < ns; ++s) out << (s ? " " : "") << results.status(c, s);
        out << '\n';
      }
    });
  }
  if (text_output("sed")) {
    kosmos::io::write_atomically(o.str("sed"), [&](std::ostream& out) {
      out << "# kosmos dust: emission SED L_lambda (W m^-1 sr^-1 per cell), one line per cell\n# lambda_micron";
      out << std::setprecision(17);
      for (double w : w_micron) out << ' ' << w;
      out << '\n' << std::setprecision(std::numeric_limits<T>::max_digits10);
      for (std::int64_t c = 0; c < nc; ++c) {
        for (int l = 0; l < nl; ++l) out << (l ? " " : "") << results.sed(c, l);
        out << '\n';
      }
    });
  }
  if (photometry && text_output("photometry")) {
    kosmos::io::write_atomically(o.str("photometry"), [&](std::ostream& out) {
      out << "# kosmos dust: synthetic photometry, " << band_unit << ", one line per cell\n# band";
      for (const auto& f : photometry->filters()) out << ' ' << f.name;
      out << "\n# pivot_micron" << std::setprecision(6);
      for (const auto& f : photometry->filters()) out << ' ' << f.pivot_micron;
      out << '\n' << std::setprecision(9);
      std::vector<double> bands(std::size_t(photometry->bands()));
      for (std::int64_t c = 0; c < nc; ++c) {
        photometry->apply(&results.sed(c, 0), band_scale, bands.data());
        for (std::size_t b = 0; b < bands.size(); ++b) out << (b ? " " : "") << bands[b];
        out << '\n';
      }
    });
  }
  if (text_output("write-cells")) {
    kosmos::io::write_atomically(o.str("write-cells"), [&](std::ostream& out) {
      out << "# kosmos dust cells: dust_mass I_1 ... I_" << nl << " (W m^-2 m^-1 sr^-1)\n"
          << std::setprecision(std::numeric_limits<T>::max_digits10);
      for (std::int64_t c = 0; c < nc; ++c) {
        out << results.dust_mass(c);
        for (int l = 0; l < nl; ++l) out << ' ' << cells.intensity(c, l);
        out << '\n';
      }
    });
  }
  if (o.is_set("timings")) {
    const auto t_end = clock::now();
    std::cerr << std::setprecision(4) << "kosmos dust: timings (s): set-up " << seconds(t_begin, t0)
              << ", grains " << seconds(t0, t1) << ", stochastic tables " << stochastic_seconds
              << ", HDF5 files " << seconds(t_stochastic, t_files) << ", device buffers "
              << seconds(t_files, t_buffers) << ", waiting for the pinned ring " << seconds(t_buffers, t_ring)
              << ", other buffers " << seconds(t_ring, t_run) << ", pipeline "
              << seconds(t_run, t_drained) << " (chunks of " << streaming.chunk_cells
              << " cells, waiting for the device " << summary.device_wait_seconds << ", chunk summaries "
              << summary.summary_seconds << ", waiting for the writer " << summary.worker_blocked_seconds
              << "), HDF5 writes " << summary.worker_busy_seconds << " (summed over " << summary.worker_threads
              << " writer threads), HDF5 close "
              << seconds(t_drained, t3) << ", summary and text outputs " << seconds(t3, t_end)
              << ", total " << seconds(t_begin, t_end) << "\n";
  }
  const std::int64_t nonfinite_sed = summary.nonfinite_sed;
  if (nonfinite_sed > 0) {
    std::cerr << "kosmos dust: error: " << nonfinite_sed << " SED values overflowed "
              << (sizeof(T) == 4 ? "float" : "double")
              << (sizeof(T) == 4 ? " (use --precision double or a larger mass unit for the dust masses)\n"
                                 : " (check the dust masses and cross sections for huge values)\n");
    return 1;
  }
  int exit_code = 0;
  auto report = [&](int status, const std::string& what) {
    const std::int64_t n = counts[std::size_t(status)];
    if (n == 0) return;
    std::cerr << "kosmos dust: error: " << n << " temperature solves " << what << "\n";
    exit_code = 1;
  };
  // Grains of a cell with light in it got exactly zero heating: every product I sigma dlambda
  // underflowed (in float below ~1e-45), which would silently give them T = 0 and no emission.
  const std::int64_t underflowed = counts[status_no_heating] - zero_field_cells * ns;
  if (underflowed > 0) {
    std::cerr << "kosmos dust: error: " << underflowed << " temperature solves got zero heating from a "
              << "field that is not zero: the heating underflows " << (sizeof(T) == 4 ? "float" : "double")
              << " (use " << (sizeof(T) == 4 ? "--precision double or " : "")
              << "a larger unit for the intensities)\n";
    exit_code = 1;
  }
  report(status_not_converged, "did not converge (raise --tolerance or check the grains)");
  if (counts[status_at_floor] > 0)
    std::cerr << "kosmos dust: warning: " << counts[status_at_floor] << " temperature solves at the "
              << options.min_temperature << " K floor (heating below E(T_floor)"
              << (t_cmb > 0 ? "" : "; no CMB: --t-cmb 0") << "): those grains emit more than they absorb\n";
  if (counts[status_above_sublimation] > 0) {
    std::cerr << "kosmos dust: warning: " << counts[status_above_sublimation]
              << " temperature solves above the sublimation temperature (";
    for (std::size_t k = 0; k < n_comp; ++k)
      std::cerr << (k ? ", " : "") << "table " << k << ": " << sublimation[k] << " K";
    std::cerr << "): those grains would not survive\n";
  }
  report(status_invalid_heating, "had invalid (NaN or negative) heating: T = NaN");
  if (stochastic_counts[stochastic_invalid_heating] > 0) {
    std::cerr << "kosmos dust: error: " << stochastic_counts[stochastic_invalid_heating]
              << " stochastic heating calculations got invalid heating\n";
    exit_code = 1;
  }
  if (counts[status_at_ceiling] > 0 && o.is_set("allow-ceiling")) {
    std::cerr << "kosmos dust: WARNING: " << counts[status_at_ceiling] << " temperature solves hit the "
              << options.max_temperature << " K ceiling: T clamped, those grains emit less than they absorb "
              << "(they would sublimate); accepted because of --allow-ceiling\n";
  } else {
    report(status_at_ceiling, "hit the " + std::to_string(int(options.max_temperature)) +
                                  " K ceiling (heating above E(T_max); the grains would sublimate): T clamped; "
                                  "pass --allow-ceiling to accept");
  }
  return exit_code;
}

int run_dust_command(const std::vector<std::string>& args) {
  kosmos::cli::Options o("dust", summary());
  o.option("cross-sections", "FILE[,FILE]",
           "Draine optical-property table(s), one per grain composition", "", true)
      .option("dust-model", "NAME[:K=V]",
              "a named dust model instead of --cross-sections (dl07[:qpah=PERCENT], themis, zda04, "
              "dustem:GRAIN_FILE)", "", true)
      .option("dust-data", "DIR",
              "folder of the DustEM data files (default: $KOSMOS_DUST_DATA, else the source tree's "
              "data/dust/dustem)",
              "", true)
      .option("sizes", "FILE[,FILE]",
              "size distribution per composition (default: power law over the table radii)", "",
              true)
      .option("density", "G_CM3[,G_CM3]",
              "bulk density for the default size distribution (default: 2.24 graphite, 3.5 "
              "silicate, from the table names or --materials)",
              "", true)
      .option("t-cmb", "K", "CMB temperature: B(T_cmb) is added to every cell's field (0: none)", "2.725")
      .option("sublimation", "K[,K]",
              "sublimation temperature per table (0: no check); auto: 1750 graphite, 1500 silicate",
              "auto")
      .flag("progress", "print progress to stderr")
      .option("wavelengths", "FILE", "wavelength grid, or paper (the paper's 968 to 1000 micron); default: 1208 to 1 cm", "",
              true)
      .option("cells", "FILE", "cells file (dust mass and intensities)", "", true)
      .option("generate", "N", "generate N synthetic cells instead of --cells", "", true)
      .option("seed", "S", "seed of the synthetic cells", "1")
      .option("precision", "P", "float (the paper's GPU code) or double", "double")
      .option("method", "M",
              "newton (Eq. 7, Newton-Raphson), table (2000-point interpolation, more accurate) or "
              "auto (table from 1000 cells on)",
              "auto")
      .option("tolerance", "TOL", "relative energy-balance tolerance", "1e-3")
      .option("size-distribution", "MODEL", "mrn or wd01 size distribution on the table radii", "",
              true)
      .option("stochastic-below", "RADIUS",
              "P(T) and its emission for grains below RADIUS micron (default 0; 0.05 with --dust-model)",
              "0")
      .option("bins", "M",
              "temperature bins of each stochastic P(T); auto: per species, doubled from 64 (up to 4096) "
              "until the 3-6, 6-12, 12-25 and 25-60 micron band powers of representative cells change by "
              "< 1 % (spectra and bins beyond the fast team scratch go to global memory)",
              "auto")
      .option("pt-emission-spacing", "D",
              "P(T) emission sums at wavelengths at most D apart in ln lambda, cubic in ln lambda "
              "between (0.04: within 5e-6 of the exact SED above 1e-6 of its peak); 0: at every "
              "wavelength; auto: 0.04 with --precision float, 0 with double",
              "auto")
      .option("materials", "M[,M]", "graphite or silicate per table (default: from the file names)",
              "", true)
      .option("beta", "B",
              "emissivity index of Q_abs ~ lambda^-B beyond the table's longest wavelength", "2")
      .option("chunk-cells", "N",
              "cells per chunk streamed through the device (3 chunks in flight, one more per "
              "HDF5 writer thread held in the pinned host buffers of HDF5-only runs); auto: "
              "about 18 MiB of results over all writer threads",
              "auto")
      .option("writer-threads", "N",
              "threads copying the chunks into the HDF5 files (at most 64; the files are mapped "
              "into memory where the file system allows)",
              "4")
      .flag("allow-ceiling", "exit 0 (with a warning) when solves hit the 3000 K ceiling")
      .flag("timings",
            "print where the time goes (set-up, grains, pipeline, waits, HDF5 writes) on stderr")
      .option("temperatures", "FILE", "write temperatures here", "", true)
      .option("sed", "FILE", "write SEDs here", "", true)
      .option("status", "FILE", "write solver statuses here", "", true)
      .option("write-cells", "FILE", "write the cells (e.g. generated ones) here", "", true)
      .option("bands", "B[,B]",
              "synthetic photometry in these bands (IRAC1-4, MIPS24/70/160, WISE1-4, PACS70/100/160, "
              "SPIRE250/350/500, NIRCAM_F150W/F200W/F335M/F444W, MIRI_F560W/F770W/F1000W/F1130W/"
              "F1280W/F1500W/F1800W/F2100W/F2550W)",
              "", true)
      .option("photometry", "FILE", "write the --bands photometry here (text, or HDF5 dataset photometry)", "", true)
      .option("distance", "PC", "photometry in Jy for cells at this distance", "", true)
      .option("cell-area", "PC2", "photometry in MJy/sr for cells of this projected area", "", true)
      .option("filter-data", "DIR",
              "folder of the filter curves (default: $KOSMOS_FILTER_DATA, else the source tree's data/filters)", "",
              true)
      .option("pt-output", "FILE.h5",
              "P(T) of the --stochastic-below grains: probability and bin_temperature (cells, "
              "stochastic species, --bins), stochastic_species (their species indices)",
              "", true)
      .option("plot", "DIR",
              "after the run, draw the SEDs (--sed), temperatures against radius "
              "(--temperatures) and P(T) (--pt-output) of a few cells into DIR as PNG (the "
              "Python package's kosmos.cli_plots, matplotlib)",
              "", true);
  if (!o.parse(args)) return 0;
  const std::string plot_dir = o.given("plot") ? o.str("plot") : std::string();
  if (!plot_dir.empty()) {
    if (!o.given("sed") && !o.given("temperatures") && !o.given("pt-output"))
      o.reject_given({"plot"}, "needs an output to draw: --sed, --temperatures or --pt-output");
    kosmos::cli::require_plotting("plot");
  }
  const std::string precision = o.str("precision");
  std::vector<kosmos::cli::FileArgument> inputs, outputs;
  for (const char* in : {"cross-sections", "sizes", "wavelengths", "cells"})
    if (o.has(in))
      for (const auto& path : split_list(o.str(in))) inputs.push_back({in, path});
  for (const char* out : {"temperatures", "sed", "status", "write-cells", "pt-output", "photometry"})
    if (o.has(out)) outputs.push_back({out, o.str(out)});
  kosmos::cli::check_output_files(inputs, outputs);
  if (precision != "float" && precision != "double")
    throw kosmos::cli::usage_error("--precision must be float or double, not '" + precision + "'");
  const int status = precision == "float" ? run_dust<float>(o) : run_dust<double>(o);
  if (!plot_dir.empty() && kosmos::cli::is_root()) {
    std::vector<std::string> plot_args{"dust", "--output", plot_dir};
    for (const auto& [option, flag] : {std::pair<const char*, const char*>{"sed", "--sed"},
                                       {"temperatures", "--temperatures"},
                                       {"pt-output", "--pt"}})
      if (o.given(option)) plot_args.insert(plot_args.end(), {flag, o.str(option)});
    kosmos::cli::run_plots(plot_args);
  }
  return status;
}

const kosmos::cli::CommandRegistration registration{
    {"dust", "dust grain temperatures and emission SEDs (Jonsson & Primack 2010)", &run_dust_command}};
}  // namespace
