// `kosmos dust`: equilibrium dust temperatures and emission SEDs of a set of cells
// (Jonsson & Primack 2010), from Draine cross-section tables, a size distribution and a cells
// file, or for the paper's benchmark problem with synthetic MMP83-based radiation fields.
#include "options.hpp"

#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/dust/dust.hpp>
#include <kosmos/dust/pipeline.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>

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
    "                    the paper's 968 log-spaced wavelengths from 0.0912 to 1000 micron. Beyond a\n"
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
    "Solver status per (cell, species), all counted in the summary; the run exits 1 when any solve\n"
    "is at the ceiling (unless --allow-ceiling: then a warning), invalid or not converged:";

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
  const auto dims = in.dims("intensity");
  const auto mass_dims = in.dims("dust_mass");
  const bool grid_ok = !in.has("wavelength_micron") || in.dims("wavelength_micron") == std::vector<std::size_t>{w_micron.size()};
  if (!grid_ok || dims.size() != 2 || dims[1] != w_micron.size() || mass_dims.size() != 1 || mass_dims[0] != dims[0])
    throw kosmos::file_error(in.path() + ": expected datasets intensity (cells, " + std::to_string(w_micron.size()) +
                             " wavelengths) and dust_mass (cells)");
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
  const double beta = o.number("beta");
  if (!(beta >= 0) || !std::isfinite(beta)) throw kosmos::cli::usage_error("--beta must be finite and >= 0");
  std::vector<double> w_micron, d_micron;
  if (o.has("wavelengths") && !o.str("wavelengths").empty()) {
    read_wavelength_grid(o.str("wavelengths"), w_micron, d_micron);
  } else {
    w_micron = paper_wavelength_grid();
    d_micron = bin_widths(w_micron);
  }
  // All species: (composition, radius, number per unit dust mass).
  SizeDistribution sizes;
  std::vector<std::size_t> composition;
  for (std::size_t k = 0; k < n_comp; ++k) {
    auto sd = sizes_given ? read_size_distribution(size_paths[k])
                          : power_law_size_distribution(tables[k].radius_micron, densities[k]);
    for (std::size_t i = 0; i < sd.radius_micron.size(); ++i) {
      sizes.radius_micron.push_back(sd.radius_micron[i]);
      // The default distributions share the unit dust mass equally between compositions.
      sizes.number_per_mass.push_back(sd.number_per_mass[i] / (sizes_given ? 1.0 : double(n_comp)));
      composition.push_back(k);
    }
  }
  const int nl = int(w_micron.size()), ns = int(sizes.radius_micron.size());

  SolverOptions options;
  options.tolerance = o.number("tolerance");
  const std::string method = o.str("method");
  if (method == "table") options.method = TemperatureMethod::table;
  else if (method != "newton") throw kosmos::cli::usage_error("--method must be newton or table, not '" + method + "'");

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
    nc = o.integer("generate", 1);
  } else if (kosmos::io::is_hdf5_path(o.str("cells"))) {
    cells_h5 = std::make_unique<kosmos::io::H5Reader>(o.str("cells"));
    nc = std::int64_t(check_hdf5_cells(*cells_h5, w_micron));
  } else {
    read_cells(o.str("cells"), std::size_t(nl), mass_h, intensity_h);
    nc = std::int64_t(mass_h.size());
  }
  // Every cell's results stay in host memory only for text outputs and --write-cells; otherwise
  // they stream through a ring of chunk buffers straight into the HDF5 files.
  auto text_output = [&](const char* name) {
    const std::string path = output(name);
    return !path.empty() && !kosmos::io::is_hdf5_path(path);
  };
  const bool keep_all =
      text_output("temperatures") || text_output("status") || text_output("sed") || !cells_out.empty();
  using Cells = HostCells<T>;
  const Cells cells = keep_all ? Cells(nc, nl, ns, generate && cells_out.empty() ? Cells::results : Cells::both)
                      : generate ? Cells()
                                 : Cells(nc, nl, ns, Cells::inputs);
  if (cells_h5) {
    cells_h5->read_into("intensity", cells.intensity.data(), std::size_t(nc) * nl);
    cells_h5->read_into("dust_mass", cells.dust_mass.data(), std::size_t(nc));
  } else if (from_file) {
    for (std::int64_t c = 0; c < nc; ++c) {
      cells.dust_mass(c) = T(mass_h[std::size_t(c)]);
      for (int l = 0; l < nl; ++l) cells.intensity(c, l) = T(intensity_h[std::size_t(c) * nl + l]);
    }
  }

  // Grains on the device.
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
      const auto sig = absorption_cross_section(tables[composition[s]], sizes.radius_micron[s], w_micron, beta);
      for (int l = 0; l < nl; ++l) hs(s, l) = sig[l];
    }
    Kokkos::deep_copy(wavelength, hw);
    Kokkos::deep_copy(width, hd);
    Kokkos::deep_copy(radius, hr);
    Kokkos::deep_copy(number, hn);
    Kokkos::deep_copy(sigma, hs);
  }
  Space space;
  space.fence();
  const auto t0 = clock::now();
  const auto grains = prepare_grains<T>(space, wavelength, width, sigma, radius, number, options);
  space.fence();
  const auto t1 = clock::now();

  // HDF5 outputs (several may share one file) are written chunk by chunk as the results land.
  std::map<std::string, std::unique_ptr<kosmos::io::H5Writer>> h5;
  auto h5_output = [&](const char* name) -> kosmos::io::H5Writer* {
    const std::string path = output(name);
    if (path.empty() || !kosmos::io::is_hdf5_path(path)) return nullptr;
    auto& writer = h5[path];
    if (!writer) {
      writer = std::make_unique<kosmos::io::H5Writer>(path);
      writer->attribute("/", "kosmos_dust_precision", sizeof(T) == 4 ? "float" : "double");
      writer->write("wavelength_micron", w_micron);
      writer->write("radius_micron", sizes.radius_micron);
      std::vector<std::int32_t> comp(composition.begin(), composition.end());
      writer->write("composition", comp);
    }
    return writer.get();
  };
  const std::size_t cells_dim = std::size_t(nc), l_dim = std::size_t(nl), s_dim = std::size_t(ns);
  kosmos::io::H5Writer* const h5_temperature = h5_output("temperatures");
  kosmos::io::H5Writer* const h5_status = h5_output("status");
  kosmos::io::H5Writer* const h5_sed = h5_output("sed");
  kosmos::io::H5Writer* const h5_cells = h5_output("write-cells");
  if (h5_temperature) h5_temperature->create<T>("temperature", {cells_dim, s_dim});
  if (h5_status) h5_status->create<std::int32_t>("status", {cells_dim, s_dim});
  if (h5_sed) h5_sed->create<T>("sed", {cells_dim, l_dim});
  if (h5_cells) {
    h5_cells->create<T>("intensity", {cells_dim, l_dim});
    h5_cells->create<T>("dust_mass", {cells_dim});
  }

  // Stages 2-4 streamed through the device; each chunk's summary and HDF5 rows as it lands.
  std::vector<std::int64_t> counts(temperature_status_count, 0);
  double t_min = 1e300, t_max = 0, absorbed = 0, emitted = 0;
  std::int64_t nonfinite_sed = 0;
  // Host-side summary of each chunk, in parallel on the host while the device works on the next.
  using Host = Kokkos::DefaultHostExecutionSpace;
  using HostRange = Kokkos::RangePolicy<Host, Kokkos::IndexType<std::int64_t>>;
  std::vector<double> n_per_mass = sizes.number_per_mass, width_m(d_micron);
  for (auto& w : width_m) w *= 1e-6;
  PipelineOptions streaming;
  streaming.chunk_cells = o.integer("chunk-cells", 1);
  EmissionPipeline<T, Space> pipeline(space, grains, streaming);
  const Cells results = keep_all ? cells : Cells(pipeline.ring_rows(), nl, ns, Cells::results);
  auto on_chunk = [&](std::int64_t c0, std::int64_t n, std::int64_t row) {
    const auto temperature = results.temperature;
    const auto status = results.status;
    const auto heat = results.heating;
    const auto sed = results.sed;
    const auto mass = results.dust_mass;
    const double* number = n_per_mass.data();
    const double* width = width_m.data();
    const std::int64_t r1 = row + n;  // the chunk's rows in `results`: [row, r1)
    // Per (cell, species): k = (c - row) * ns + s.
    auto cs = [=](std::int64_t k, std::int64_t& c, int& s) {
      c = row + k / ns;
      s = int(k % ns);
    };
    for (int st = 0; st < temperature_status_count; ++st) {
      std::int64_t count = 0;
      Kokkos::parallel_reduce(
          "kosmos::dust::cli_status_counts", HostRange(0, n * ns),
          [=](std::int64_t k, std::int64_t& sum) {
            std::int64_t c;
            int s;
            cs(k, c, s);
            sum += status(c, s) == st;
          },
          Kokkos::Sum<std::int64_t>(count));
      counts[std::size_t(st)] += count;
    }
    // Heated grains only: no heating (T = 0) and invalid heating (T = NaN) are left out.
    auto heated = [=](std::int64_t c, int s) {
      return status(c, s) != status_no_heating && status(c, s) != status_invalid_heating;
    };
    double lo = 1e300, hi = 0, in = 0, out = 0;
    Kokkos::parallel_reduce(
        "kosmos::dust::cli_t_min", HostRange(0, n * ns),
        [=](std::int64_t k, double& m) {
          std::int64_t c;
          int s;
          cs(k, c, s);
          if (heated(c, s)) m = std::min(m, double(temperature(c, s)));
        },
        Kokkos::Min<double>(lo));
    Kokkos::parallel_reduce(
        "kosmos::dust::cli_t_max", HostRange(0, n * ns),
        [=](std::int64_t k, double& m) {
          std::int64_t c;
          int s;
          cs(k, c, s);
          if (heated(c, s)) m = std::max(m, double(temperature(c, s)));
        },
        Kokkos::Max<double>(hi));
    Kokkos::parallel_reduce(
        "kosmos::dust::cli_absorbed", HostRange(0, n * ns),
        [=](std::int64_t k, double& sum) {
          std::int64_t c;
          int s;
          cs(k, c, s);
          if (heated(c, s)) sum += double(mass(c)) * number[s] * double(heat(c, s));
        },
        Kokkos::Sum<double>(in));
    Kokkos::parallel_reduce(
        "kosmos::dust::cli_emitted", HostRange(row, r1),
        [=](std::int64_t c, double& sum) {
          for (int l = 0; l < nl; ++l) sum += double(sed(c, l)) * width[l];
        },
        Kokkos::Sum<double>(out));
    if (!std::isfinite(out)) {  // count the culprits only when there are some
      std::int64_t bad = 0;
      Kokkos::parallel_reduce(
          "kosmos::dust::cli_nonfinite_sed", HostRange(row, r1),
          [=](std::int64_t c, std::int64_t& sum) {
            for (int l = 0; l < nl; ++l) sum += !std::isfinite(double(sed(c, l)));
          },
          Kokkos::Sum<std::int64_t>(bad));
      nonfinite_sed += bad;
    } else {
      emitted += out;
    }
    t_min = std::min(t_min, lo);
    t_max = std::max(t_max, hi);
    absorbed += in;
    const std::size_t first = std::size_t(c0), rows = std::size_t(n);
    if (h5_temperature) h5_temperature->write_rows("temperature", first, rows, &results.temperature(row, 0));
    if (h5_status) h5_status->write_rows<std::int32_t>("status", first, rows, &results.status(row, 0));
    if (h5_sed) h5_sed->write_rows("sed", first, rows, &results.sed(row, 0));
    if (h5_cells) {
      h5_cells->write_rows("intensity", first, rows, &cells.intensity(c0, 0));  // keep_all: row == c0
      h5_cells->write_rows("dust_mass", first, rows, &results.dust_mass(row));
    }
  };
  using Input = typename EmissionPipeline<T, Space>::Input;
  const auto seed = std::uint64_t(o.integer("seed"));
  if (generate) {
    pipeline.run(
        nc,
        [&](const Space& instance, std::int64_t c0, const Input& in) {
          synthetic_cells(instance, wavelength, in.intensity, in.dust_mass, seed, c0);
          if (cells.intensity.extent(0) > 0) {  // --write-cells
            const Kokkos::pair<std::int64_t, std::int64_t> range(c0, c0 + std::int64_t(in.dust_mass.extent(0)));
            Kokkos::deep_copy(instance, Kokkos::subview(cells.intensity, range, Kokkos::ALL), in.intensity);
          }
        },
        results, options, on_chunk);
  } else {
    pipeline.run(nc, EmissionPipeline<T, Space>::copy_cells_in(cells), results, options, on_chunk);
  }
  const auto t2 = clock::now();
  std::int64_t counted = 0;
  for (auto count : counts) counted += count;
  if (counted != nc * ns) throw std::runtime_error("kosmos dust: a solver status outside 0-5 (internal error)");
  for (auto& writer : h5) writer.second->commit();
  const auto t3 = clock::now();

  std::cout << std::setprecision(6) << "kosmos dust: " << nc << " cells x " << ns << " species x " << nl
            << " wavelengths, " << (sizeof(T) == 4 ? "float" : "double") << ", method " << method << ", on "
            << Space::name() << "\n"
            << "  time (s): grains " << seconds(t0, t1) << ", cells in + heating + temperatures + SED + out "
            << "(pipelined) " << seconds(t1, t2) << ", HDF5 commit " << seconds(t2, t3) << "\n"
            << "  temperature range: " << t_min << " - " << t_max << " K (heated grains)\n"
            << "  status:";
  for (int k = 0; k < temperature_status_count; ++k)
    std::cout << (k ? ", " : " ") << temperature_status_name(k) << ' ' << counts[std::size_t(k)];
  std::cout << "\n"
            << "  energy: emitted / absorbed = " << std::setprecision(9) << (absorbed > 0 ? emitted / absorbed : 0.0)
            << "\n";

  // Text outputs, each as a whole (keep_all: `results` is `cells`, one row per cell).
  if (text_output("temperatures")) {
    kosmos::io::write_atomically(o.str("temperatures"), [&](std::ostream& out) {
      out << "# kosmos dust: equilibrium temperatures (K), one line per cell, one column per species\n";
      for (std::size_t k = 0; k < n_comp; ++k) out << "# composition " << k << ": " << table_paths[k] << '\n';
      out << "# composition:radius_micron";
      for (int s = 0; s < ns; ++s) out << ' ' << composition[s] << ':' << sizes.radius_micron[s];
      out << '\n' << std::setprecision(sizeof(T) == 4 ? 8 : 17);
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
      out << '\n' << std::setprecision(sizeof(T) == 4 ? 8 : 17);
      for (std::int64_t c = 0; c < nc; ++c) {
        for (int l = 0; l < nl; ++l) out << (l ? " " : "") << results.sed(c, l);
        out << '\n';
      }
    });
  }
  if (text_output("write-cells")) {
    kosmos::io::write_atomically(o.str("write-cells"), [&](std::ostream& out) {
      out << "# kosmos dust cells: dust_mass I_1 ... I_" << nl << " (W m^-2 m^-1 sr^-1)\n"
          << std::setprecision(sizeof(T) == 4 ? 9 : 17);
      for (std::int64_t c = 0; c < nc; ++c) {
        out << results.dust_mass(c);
        for (int l = 0; l < nl; ++l) out << ' ' << cells.intensity(c, l);
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
  int exit_code = 0;
  auto report = [&](int status, const std::string& what) {
    const std::int64_t n = counts[std::size_t(status)];
    if (n == 0) return;
    std::cerr << "kosmos dust: error: " << n << " temperature solves " << what << "\n";
    exit_code = 1;
  };
  report(status_not_converged, "did not converge (raise --tolerance or check the grains)");
  report(status_invalid_heating, "had invalid (NaN or negative) heating: T = NaN");
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
      .option("beta", "B", "emissivity index of Q_abs ~ lambda^-B beyond the table's longest wavelength", "2")
      .option("chunk-cells", "N", "cells per chunk streamed through the device (3 chunks in flight)", "16384")
      .flag("allow-ceiling", "exit 0 (with a warning) when solves hit the 3000 K ceiling")
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
