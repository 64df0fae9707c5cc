// kosmos._kosmos.dust: grain models (stage 1) from cross-section arrays or Draine's tables, and
// stages 2-4 (heating, equilibrium temperatures, SEDs) on numpy arrays of cells.
#include "common.hpp"

#include <kosmos/dust/dust.hpp>
#include <kosmos/dust/dust_models.hpp>
#include <kosmos/dust/fields.hpp>
#include <kosmos/dust/grains.hpp>
#include <kosmos/dust/photometry.hpp>
#include <kosmos/dust/size_distribution.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>

namespace kosmos_python {
namespace {
namespace kd = kosmos::dust;

// A GrainModel<double> on the execution space, with the solver options of its stages 3-4.
class PyGrains : public Resource {
 public:
  // SI: wavelength, dlambda (L) in m, sigma (S, L) in m^2, radius (S) in m, number_per_mass (S).
  PyGrains(py::handle wavelength_in, py::handle dlambda_in, py::handle sigma_in,
           py::handle radius_in, py::handle number_in, const std::string& method,
           double tolerance) {
    const std::string where = "kosmos.dust.Grains";
    auto wavelength = as_array<double>(wavelength_in, where, "wavelength", 1);
    const py::ssize_t L = wavelength.shape(0);
    auto dlambda = as_array<double>(dlambda_in, where, "dlambda", 1, {L});
    auto radius = as_array<double>(radius_in, where, "radius", 1);
    const py::ssize_t S = radius.shape(0);
    auto sigma = as_array<double>(sigma_in, where, "sigma", 2, {S, L});
    auto number = as_array<double>(number_in, where, "number_per_mass", 1, {S});
    kosmos::Impl::require(method == "newton" || method == "table", where.c_str(), "method '",
                          method, "' is not newton or table");
    options_.method =
        method == "table" ? kd::TemperatureMethod::table : kd::TemperatureMethod::newton;
    options_.tolerance = tolerance;
    Bound<const double*> w(wavelength, true), dl(dlambda, true), r(radius, true), n(number, true);
    Bound<const double**> sg(sigma, true);
    g_ = kd::prepare_grains<double>(Space(), w.device, dl.device, sg.device, r.device, n.device,
                                    options_);
    Space().fence();
  }
  void release() override { g_ = kd::GrainModel<double, Space>(); }

  // Replaces in sed (C, L), as run() wrote it, the equilibrium emission of the selected species
  // by that of their P(T) (kd::add_stochastic_emission); status (C, Q) per selected species.
  void add_stochastic(py::handle intensity_in, py::handle T_in, py::handle mass_in,
                      py::handle sed_in, const std::vector<int>& species,
                      const std::vector<std::string>& materials,
                      const std::vector<double>& radius_micron, int bins,
                      double emission_node_spacing, py::handle status_in) {
    const std::string where = "kosmos.dust.Grains.sed";
    require_alive(where.c_str());
    const py::ssize_t L = wavelengths(), S = this->species(), Q = py::ssize_t(species.size());
    auto intensity = as_array<double>(intensity_in, where, "intensity", 2, {-1, L});
    const py::ssize_t C = intensity.shape(0);
    auto T = as_array<double>(T_in, where, "temperature", 2, {C, S});
    auto mass = as_array<double>(mass_in, where, "dust_mass", 1, {C});
    auto sed = as_array<double>(sed_in, where, "sed", 2, {C, L});
    auto status = as_array<int>(status_in, where, "stochastic_status", 2, {C, Q});
    const auto model =
        stochastic_model(where, species, materials, radius_micron, bins, emission_node_spacing);
    Bound<const double**> bI(intensity, true), bT(T, true);
    Bound<const double*> bm(mass, true);
    Bound<double**> bsed(sed, true);
    Bound<int**> bs(status, false);
    {
      py::gil_scoped_release unlocked;
      kd::add_stochastic_emission(Space(), g_, model, bI.device, bT.device, bm.device, bsed.device,
                                  bs.device);
      Space().fence();
    }
    bsed.to_host();
    bs.to_host();
  }
  // The heat capacities of a named model's species (its DustEM C_*.DAT tables, e.g. the PAHs'),
  // used for their P(T) in place of Draine & Li's (2001) for the material.
  void set_model(const kd::DustModel& model) {
    kosmos::Impl::require(int(model.population_of.size()) == species(), "kosmos.dust.Grains",
                          "the model has ", model.population_of.size(), " species, the grains ",
                          species());
    heat_capacity_.clear();
    for (std::size_t p : model.population_of)
      heat_capacity_.push_back(model.populations[p].heat_capacity);
  }
  int wavelengths() const { return g_.wavelengths(); }
  int species() const { return g_.species(); }

  // Stages 2-4 of the cells intensity (C, L; either memory order, Fortran order used in place)
  // and dust_mass (C): heating (C, S) Fortran order, temperature and status (C, S), sed (C, L)
  // written in place (sed may be None: stages 2-3 only).
  void run(py::handle intensity_in, py::handle mass_in, py::handle heating_in, py::handle T_in,
           py::handle status_in, py::handle sed_in) {
    const std::string where = "kosmos.dust.Grains";
    require_alive(where.c_str());
    const py::ssize_t L = wavelengths(), S = species();
    const bool in_fortran =
        py::isinstance<py::array>(intensity_in) &&
        (py::reinterpret_borrow<py::array>(intensity_in).flags() & py::array::f_style);
    auto intensity = as_array<double>(intensity_in, where, "intensity", 2, {-1, L}, in_fortran);
    const py::ssize_t C = intensity.shape(0);
    auto heating = as_array<double>(heating_in, where, "heating", 2, {C, S}, true);
    auto T = as_array<double>(T_in, where, "temperature", 2, {C, S});
    auto status = as_array<int>(status_in, where, "status", 2, {C, S});
    Bound<double**, Kokkos::LayoutLeft> bh(heating, false);
    Bound<double**> bT(T, false);
    Bound<int**> bs(status, false);
    Kokkos::View<const double**, Kokkos::LayoutLeft, Memory> I;
    if (in_fortran) {
      I = Bound<const double**, Kokkos::LayoutLeft>(intensity, true).device;
    } else {  // the heating GEMM takes LayoutLeft intensities: one reordering copy
      Bound<const double**> rows(intensity, true);
      Kokkos::View<double**, Kokkos::LayoutLeft, Memory> columns("kosmos::python::intensity", C, L);
      Kokkos::deep_copy(columns, rows.device);
      I = columns;
    }
    const bool with_sed = !sed_in.is_none();
    auto mass =
        with_sed ? as_array<double>(mass_in, where, "dust_mass", 1, {C}) : py::array_t<double>(0);
    auto sed = with_sed ? as_array<double>(sed_in, where, "sed", 2, {C, L})
                        : py::array_t<double>(std::vector<py::ssize_t>{0, 0});
    Bound<const double*> bm(mass, true);
    Bound<double**> bsed(sed, false);
    py::gil_scoped_release unlocked;
    if (with_sed) {
      kd::dust_emission(Space(), g_, I, bm.device, bh.device, bT.device, bs.device, bsed.device,
                        options_);
    } else {  // the cells' checks need dust masses: any positive ones
      Kokkos::View<double*, Memory> unit_mass("kosmos::python::unit_mass", C);
      Kokkos::deep_copy(unit_mass, 1.0);
      kd::validate_cells(Space(), I, unit_mass, int(L));
      kd::heating(Space(), g_, I, bh.device);
      kd::equilibrium_temperatures(Space(), g_, bh.device, bT.device, bs.device, options_);
    }
    Space().fence();
    if (with_sed) bsed.to_host();
    Space().fence();
    bh.to_host();
    bT.to_host();
    bs.to_host();
  }

  // P(T) of the selected species (indices into the model, with material names and radii in
  // micron) in cells of intensity (C, L) at their equilibrium temperature (C, S): probability and
  // bin_temperature (C, Q, bins), status (C, Q), written in place.
  void distributions(py::handle intensity_in, py::handle T_in, const std::vector<int>& species,
                     const std::vector<std::string>& materials,
                     const std::vector<double>& radius_micron, int bins, py::handle probability_in,
                     py::handle bin_temperature_in, py::handle status_in) {
    const std::string where = "kosmos.dust.Grains.temperature_distributions";
    require_alive(where.c_str());
    const py::ssize_t L = wavelengths(), S = this->species(), Q = py::ssize_t(species.size());
    auto intensity = as_array<double>(intensity_in, where, "intensity", 2, {-1, L});
    const py::ssize_t C = intensity.shape(0);
    auto T = as_array<double>(T_in, where, "temperature", 2, {C, S});
    auto probability = as_array<double>(probability_in, where, "probability", 3, {C, Q, bins});
    auto bin_temperature =
        as_array<double>(bin_temperature_in, where, "bin_temperature", 3, {C, Q, bins});
    auto status = as_array<int>(status_in, where, "status", 2, {C, Q});
    const auto model = stochastic_model(where, species, materials, radius_micron, bins);
    Bound<const double**> bI(intensity, true), bT(T, true);
    Bound<double***> bp(probability, false), bbt(bin_temperature, false);
    Bound<int**> bs(status, false);
    {
      py::gil_scoped_release unlocked;
      kd::temperature_distributions(Space(), g_, model, bI.device, bT.device, bp.device, bbt.device,
                                    bs.device);
      Space().fence();
    }
    bp.to_host();
    bbt.to_host();
    bs.to_host();
  }

 private:
  // The P(T) tables (kd::prepare_stochastic) of the species computed stochastically.
  kd::StochasticModel<Space> stochastic_model(const std::string& where,
                                              const std::vector<int>& species,
                                              const std::vector<std::string>& materials,
                                              const std::vector<double>& radius_micron,
                                              int bins, double emission_node_spacing = 0) const {
    const auto selected = stochastic_species(where, species, materials, radius_micron);
    kd::StochasticOptions options;
    options.bins = bins;
    options.emission_node_spacing = emission_node_spacing;
    py::gil_scoped_release unlocked;
    return kd::prepare_stochastic(Space(), g_, selected, options);
  }

  // The species computed stochastically: heat capacities of the named model where set.
  std::vector<kd::StochasticSpecies> stochastic_species(
      const std::string& where, const std::vector<int>& species,
      const std::vector<std::string>& materials, const std::vector<double>& radius_micron) const {
    kosmos::Impl::require(
        materials.size() == species.size() && radius_micron.size() == species.size(), where.c_str(),
        "species, materials and radius_micron differ in length (", species.size(), ", ",
        materials.size(), ", ", radius_micron.size(), ")");
    std::vector<kd::StochasticSpecies> selected;
    for (std::size_t q = 0; q < species.size(); ++q) {
      kosmos::Impl::require(species[q] >= 0 && species[q] < this->species(), where.c_str(),
                            "species[", q, "] = ", species[q], " is outside [0, ", this->species(),
                            ")");
      selected.push_back(
          {species[q], kd::parse_grain_material(materials[q]), radius_micron[q],
           heat_capacity_.empty() ? nullptr : heat_capacity_[std::size_t(species[q])]});
    }
    return selected;
  }

  kd::GrainModel<double, Space> g_;
  kd::SolverOptions options_;
  std::vector<std::shared_ptr<const kd::HeatCapacityTable>> heat_capacity_;  // per species or none
};

const char* material_name(kd::GrainMaterial material) {
  return material == kd::GrainMaterial::silicate ? "silicate" : "graphite";
}

// The folder of the DustEM files or filter curves: given, else the environment variable, else
// the source tree's (as the tool's defaults).
std::string data_folder(const std::string& given, const char* variable, const char* built_in) {
  if (!given.empty()) return given;
  if (const char* env = std::getenv(variable)) return env;
  return built_in;
}

kd::DustModel load_dust_model(const std::string& spec, const std::string& data_dir) {
  return kd::load_dust_model(
      spec, data_folder(data_dir, "KOSMOS_DUST_DATA", KOSMOS_PYTHON_DUST_DATA_DIR));
}

// (S, L) absorption cross sections in m^2 of the model's species on a wavelength grid (micron).
py::array_t<double> model_cross_sections(const kd::DustModel& model,
                                         const std::vector<double>& wavelength_micron,
                                         double beta) {
  const auto& sizes = model.sizes;
  py::array_t<double> out(
      {py::ssize_t(sizes.radius_micron.size()), py::ssize_t(wavelength_micron.size())});
  double* o = out.mutable_data();
  for (std::size_t s = 0; s < sizes.radius_micron.size(); ++s)
    for (double v : kd::absorption_cross_section(model.populations[model.population_of[s]].optics,
                                                 sizes.radius_micron[s], wavelength_micron, beta))
      *o++ = v;
  return out;
}

py::list model_populations(const kd::DustModel& model) {
  py::list out;
  for (const auto& p : model.populations)
    out.append(py::dict(py::arg("type") = p.type, py::arg("material") = material_name(p.material),
                        py::arg("density_g_cm3") = p.density_g_cm3, py::arg("pah") = p.pah));
  return out;
}

py::dict filter_dict(const kd::Filter& f) {
  return py::dict(
      py::arg("name") = f.name, py::arg("path") = f.path,
      py::arg("wavelength_micron") =
          py::array_t<double>(py::ssize_t(f.wavelength_micron.size()), f.wavelength_micron.data()),
      py::arg("response") = py::array_t<double>(py::ssize_t(f.response.size()), f.response.data()),
      py::arg("pivot_micron") = f.pivot_micron);
}

// A band by name (kd::known_bands) from the filter folder, or a filter file (a path).
kd::Filter filter_of(const std::string& band, const std::string& filter_dir) {
  const auto known = kd::known_bands();
  std::string upper = band;
  for (auto& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (std::find(known.begin(), known.end(), upper) != known.end())
    return kd::load_band(
        band, data_folder(filter_dir, "KOSMOS_FILTER_DATA", KOSMOS_PYTHON_FILTER_DATA_DIR));
  if (band.find('/') != std::string::npos || band.find('.') != std::string::npos)
    return kd::read_filter(band, band);
  return kd::load_band(band, data_folder(filter_dir, "KOSMOS_FILTER_DATA",
                                         KOSMOS_PYTHON_FILTER_DATA_DIR));  // names the known ones
}

// out (C, B) = the photon-weighted band means <L_nu> x scale of sed (C, L), L_lambda per m, on
// the grid wavelength_micron with bin widths width_micron (kd::Photometry).
void photometry(py::handle wavelength_in, py::handle width_in, py::handle sed_in,
                const std::vector<std::string>& bands, const std::string& filter_dir, double scale,
                py::handle out_in) {
  const std::string where = "kosmos.dust.photometry";
  auto wavelength = as_array<double>(wavelength_in, where, "wavelength_micron", 1);
  const py::ssize_t L = wavelength.shape(0);
  auto width = as_array<double>(width_in, where, "width_micron", 1, {L});
  auto sed = as_array<double>(sed_in, where, "sed", 2, {-1, L});
  const py::ssize_t C = sed.shape(0), B = py::ssize_t(bands.size());
  auto out = as_array<double>(out_in, where, "out", 2, {C, B});
  std::vector<kd::Filter> filters;
  for (const auto& band : bands) filters.push_back(filter_of(band, filter_dir));
  const kd::Photometry phot(std::move(filters), {wavelength.data(), wavelength.data() + L},
                            {width.data(), width.data() + L});
  for (py::ssize_t c = 0; c < C; ++c) phot.apply(sed.data(c, 0), scale, out.mutable_data(c, 0));
}

py::dict read_draine_table(const std::string& path) {
  const auto t = kd::read_draine_table(path);
  py::array_t<double> q(
      {py::ssize_t(t.radius_micron.size()), py::ssize_t(t.wavelength_micron.size())});
  double* o = q.mutable_data();
  for (const auto& row : t.q_abs)
    for (double v : row) *o++ = v;
  return py::dict(py::arg("radius_micron") = t.radius_micron,
                  py::arg("wavelength_micron") = t.wavelength_micron, py::arg("q_abs") = q);
}

// (S, L) sigma_abs in m^2 of one table's grains of the given radii on the wavelength grid.
py::array_t<double> cross_sections(const std::string& path,
                                   const std::vector<double>& radius_micron,
                                   const std::vector<double>& wavelength_micron, double beta) {
  const auto t = kd::read_draine_table(path);
  py::array_t<double> out(
      {py::ssize_t(radius_micron.size()), py::ssize_t(wavelength_micron.size())});
  double* o = out.mutable_data();
  for (double a : radius_micron)
    for (double s : kd::absorption_cross_section(t, a, wavelength_micron, beta)) *o++ = s;
  return out;
}

py::dict size_distribution(const std::string& model, const std::string& material,
                           const std::vector<double>& radius_micron) {
  const auto d = kd::binned_size_distribution(kd::parse_size_distribution_model(model),
                                              kd::parse_grain_material(material), radius_micron);
  return py::dict(py::arg("radius_micron") = d.radius_micron,
                  py::arg("number_per_h") = d.number_per_mass);
}

py::array_t<double> mmp83(py::handle lambda_in) {
  auto lambda = as_array<double>(lambda_in, "kosmos.dust.mmp83", "wavelength_micron", 1);
  py::array_t<double> out(lambda.shape(0));
  for (py::ssize_t i = 0; i < lambda.shape(0); ++i)
    out.mutable_at(i) = kd::mmp83_mean_intensity(lambda.at(i));
  return out;
}
}  // namespace

void bind_dust(py::module_& parent) {
  auto m = parent.def_submodule("dust", "kosmos::dust (Jonsson & Primack 2010)");
  py::class_<PyGrains>(m, "Grains")
      .def(py::init<py::handle, py::handle, py::handle, py::handle, py::handle, const std::string&,
                    double>(),
           py::arg("wavelength"), py::arg("dlambda"), py::arg("sigma"), py::arg("radius"),
           py::arg("number_per_mass"), py::arg("method"), py::arg("tolerance"))
      .def_property_readonly("wavelengths", &PyGrains::wavelengths)
      .def_property_readonly("species", &PyGrains::species)
      .def("run", &PyGrains::run, py::arg("intensity"), py::arg("dust_mass"), py::arg("heating"),
           py::arg("temperature"), py::arg("status"), py::arg("sed"))
      .def("set_model", &PyGrains::set_model, py::arg("model"))
      .def("add_stochastic", &PyGrains::add_stochastic, py::arg("intensity"),
           py::arg("temperature"), py::arg("dust_mass"), py::arg("sed"), py::arg("species"),
           py::arg("materials"), py::arg("radius_micron"), py::arg("bins"),
           py::arg("emission_node_spacing"), py::arg("status"))
      .def("distributions", &PyGrains::distributions, py::arg("intensity"), py::arg("temperature"),
           py::arg("species"), py::arg("materials"), py::arg("radius_micron"), py::arg("bins"),
           py::arg("probability"), py::arg("bin_temperature"), py::arg("status"));
  py::class_<kd::DustModel>(m, "DustModel")
      .def_readonly("name", &kd::DustModel::name)
      .def_readonly("dust_mass_per_h_g", &kd::DustModel::dust_mass_per_h_g)
      .def_readonly("pah_mass_fraction", &kd::DustModel::pah_mass_fraction)
      .def_property_readonly("populations", &model_populations)
      .def_property_readonly("population_of",
                             [](const kd::DustModel& d) {
                               std::vector<int> p(d.population_of.begin(), d.population_of.end());
                               return py::array_t<int>(py::ssize_t(p.size()), p.data());
                             })
      .def_property_readonly("radius_micron",
                             [](const kd::DustModel& d) {
                               const auto& r = d.sizes.radius_micron;
                               return py::array_t<double>(py::ssize_t(r.size()), r.data());
                             })
      .def_property_readonly("number_per_kg",
                             [](const kd::DustModel& d) {
                               const auto& n = d.sizes.number_per_mass;
                               return py::array_t<double>(py::ssize_t(n.size()), n.data());
                             })
      .def("cross_sections", &model_cross_sections, py::arg("wavelength_micron"), py::arg("beta"));
  m.def("load_dust_model", &load_dust_model, py::arg("spec"), py::arg("data_dir"));
  m.def("dust_model_names", &kd::dust_model_names);
  m.def("known_bands", &kd::known_bands);
  m.def(
      "filter",
      [](const std::string& band, const std::string& dir) {
        return filter_dict(filter_of(band, dir));
      },
      py::arg("band"), py::arg("filter_dir"));
  m.def("photometry", &photometry, py::arg("wavelength_micron"), py::arg("width_micron"),
        py::arg("sed"), py::arg("bands"), py::arg("filter_dir"), py::arg("scale"), py::arg("out"));
  m.attr("parsec_m") = kd::parsec_m;
  m.def("stochastic_status_name", [](int status) {
    static const char* names[] = {"ok", "no_heating", "energy_imbalance", "invalid_heating"};
    kosmos::Impl::require(status >= 0 && status <= 3, "kosmos.dust.stochastic_status_name",
                          "status ", status, " is outside [0, 3]");
    return std::string(names[status]);
  });
  m.def("read_draine_table", &read_draine_table, py::arg("path"));
  m.def("cross_sections", &cross_sections, py::arg("path"), py::arg("radius_micron"),
        py::arg("wavelength_micron"), py::arg("beta"));
  m.def("log_wavelength_grid", &kd::log_wavelength_grid, py::arg("lo_micron"), py::arg("hi_micron"),
        py::arg("n"));
  m.def("bin_widths", &kd::bin_widths, py::arg("wavelength"));
  m.def("size_distribution", &size_distribution, py::arg("model"), py::arg("material"),
        py::arg("radius_micron"));
  m.def(
      "grain_mass_g",
      [](const std::string& material, double a) {
        return kd::grain_mass_g(kd::parse_grain_material(material), a);
      },
      py::arg("material"), py::arg("a_micron"));
  m.def("mmp83", &mmp83, py::arg("wavelength_micron"));
  m.def(
      "planck", [](double lambda, double T) { return kd::planck_lambda(lambda, T); },
      py::arg("wavelength"), py::arg("temperature"));
  m.def("status_name", &kd::temperature_status_name);
}
}  // namespace kosmos_python
