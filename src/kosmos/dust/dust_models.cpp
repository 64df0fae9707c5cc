#include <kosmos/dust/dust_models.hpp>

#include <kosmos/core/error.hpp>
#include <kosmos/core/io.hpp>

#include <cmath>
#include <map>

namespace kosmos {
namespace dust {
namespace {
using Parameters = std::map<std::string, double>;

std::string join(const std::string& dir, const std::string& file) {
  return dir.empty() || file.find('/') != std::string::npos ? file : dir + "/" + file;
}

// Carbonaceous grain types (PAHs, graphite, amorphous carbon) take graphite's bulk properties.
GrainMaterial material_of(const std::string& type) {
  for (const char* silicate : {"Sil", "Ol", "Py"})
    if (type.find(silicate) != std::string::npos) return GrainMaterial::silicate;
  return GrainMaterial::graphite;
}

// Every population of a GRAIN_*.DAT file with its Q_, C_ and MIX_ files from `dir`; q_pah in
// (0, 1) rescales the PAH populations to that mass fraction (q_pah < 0: the file's).
DustModel from_populations(const std::string& name, const DustemGrainFile& file,
                           const std::string& dir, double q_pah) {
  const std::string& grain_path = file.path;
  const std::string lambda = join(dir, "LAMBDA.DAT");
  DustModel m;
  m.name = name;
  std::map<std::string, std::size_t> first_of_type;  // populations of one type share their tables
  std::vector<SizeDistribution> per_h;
  for (const auto& p : file.populations) {
    DustPopulation pop;
    pop.type = p.type;
    pop.material = material_of(p.type);
    pop.density_g_cm3 = p.density_g_cm3;
    pop.pah = p.type.find("PAH") != std::string::npos;
    const auto seen = first_of_type.find(p.type);
    if (seen != first_of_type.end()) {
      pop.optics = m.populations[seen->second].optics;
      pop.heat_capacity = m.populations[seen->second].heat_capacity;
    } else {
      pop.optics = read_dustem_optics(join(dir, "Q_" + p.type + ".DAT"), lambda);
      pop.heat_capacity = std::make_shared<const HeatCapacityTable>(
          read_dustem_heat_capacity(join(dir, "C_" + p.type + ".DAT")));
      first_of_type[p.type] = m.populations.size();
    }
    auto sizes = dustem_population_sizes(p);
    if (p.has("mix")) {
      const auto fraction = read_dustem_mix(join(dir, "MIX_" + p.type + ".DAT"), p.sizes);
      for (std::size_t j = 0; j < fraction.size(); ++j) sizes.number_per_mass[j] *= fraction[j];
    }
    per_h.push_back(sizes);
    m.populations.push_back(std::move(pop));
  }
  // Mass per H of the PAHs and of the rest (g).
  double pah = 0, rest = 0;
  std::vector<double> mass(per_h.size(), 0.0);
  for (std::size_t k = 0; k < per_h.size(); ++k) {
    for (std::size_t j = 0; j < per_h[k].radius_micron.size(); ++j) {
      const double a = per_h[k].radius_micron[j] * 1e-4;
      mass[k] += per_h[k].number_per_mass[j] * 4.0 / 3.0 * M_PI * a * a * a *
                 m.populations[k].density_g_cm3;
    }
    (m.populations[k].pah ? pah : rest) += mass[k];
  }
  if (q_pah >= 0) {
    kosmos::Impl::require(pah > 0, "kosmos::dust::load_dust_model", name, ": qpah given but ",
                          grain_path, " has no PAH population");
    const double scale = q_pah / (1 - q_pah) * rest / pah;
    for (std::size_t k = 0; k < per_h.size(); ++k)
      if (m.populations[k].pah)
        for (auto& n : per_h[k].number_per_mass) n *= scale;
    pah *= scale;
  }
  m.dust_mass_per_h_g = pah + rest;
  m.pah_mass_fraction = pah / (pah + rest);
  const double per_kg = 1e-3 * m.dust_mass_per_h_g;
  for (std::size_t k = 0; k < per_h.size(); ++k)
    for (std::size_t j = 0; j < per_h[k].radius_micron.size(); ++j) {
      if (!(per_h[k].number_per_mass[j] > 0)) continue;  // beyond an exponential cut-off: no grains
      m.sizes.radius_micron.push_back(per_h[k].radius_micron[j]);
      m.sizes.number_per_mass.push_back(per_h[k].number_per_mass[j] / per_kg);
      m.population_of.push_back(k);
    }
  return m;
}

DustModel from_grain_file(const std::string& name, const std::string& grain_path,
                          const std::string& dir, double q_pah) {
  return from_populations(name, read_dustem_grain_file(grain_path), dir, q_pah);
}

double take(Parameters& p, const std::string& key, double fallback) {
  const auto it = p.find(key);
  if (it == p.end()) return fallback;
  const double v = it->second;
  p.erase(it);
  return v;
}

void reject_unknown(const std::string& spec, const Parameters& p, const std::string& allowed) {
  for (const auto& unknown : p)
    kosmos::Impl::require(false, "kosmos::dust::load_dust_model", spec, ": no parameter '",
                          unknown.first, "' (", allowed, ")");
}

DustModel load_dl07(const std::string& spec, Parameters p, const std::string& dir) {
  const bool given = p.count("qpah") != 0;  // any given value is checked, -1 too
  const double q = take(p, "qpah", 0);
  kosmos::Impl::require(!given || (q > 0 && q < 100), "kosmos::dust::load_dust_model", spec,
                        ": qpah = ", q, " must be a percentage in (0, 100)");
  reject_unknown(spec, p, "dl07 takes only qpah, in per cent");
  return from_grain_file(spec, join(dir, "GRAIN_DL07.DAT"), dir, given ? q / 100 : -1);
}

// THEMIS's diffuse-ISM mix as DustEM distributes it (GRAIN_J13.DAT): the a-C(:H) power law with
// its exponential cut-off (CM20, plaw-ed) and log-normal, and the two a-Sil/Fe log-normals.
DustModel load_themis(const std::string& spec, Parameters p, const std::string& dir) {
  reject_unknown(spec, p, "themis takes none");
  return from_grain_file(spec, join(dir, "GRAIN_J13.DAT"), dir, -1);
}

// Zubko, Dwek & Arendt (2004) BARE-GR-S: PAHs, graphite and silicate with their analytic size
// distributions (ZDA04's fit coefficients, as SKIRT's Zubko*GrainSizeDistribution transcribe them),
// absolute per H, on Draine's optical and heat-capacity tables as DustEM distributes them (the DL07
// PAH cross sections, Q_Gra, Q_aSil), the PAHs half neutral and half ionized at every size.
DustemPopulation zda_population(const char* type, int sizes, double density, double a_max_micron,
                                std::vector<double> coefficients) {
  DustemPopulation p;
  p.type = type;
  p.keywords = "zda";
  p.sizes = sizes;
  p.density_g_cm3 = density;
  p.a_min_cm = 3.5e-4 * 1e-4;  // 3.5 A for every component
  p.a_max_cm = a_max_micron * 1e-4;
  p.parameters = std::move(coefficients);
  p.mass_per_h_mass = zda_mass_per_h_mass(p);
  return p;
}

DustModel load_zda04(const std::string& spec, Parameters p, const std::string& dir) {
  reject_unknown(spec, p, "zda04 takes none");
  DustemGrainFile f;
  f.path = "zda04 (built in)";
  auto pah0 = zda_population("PAH0_DL07", 20, 2.24, 5e-3,
                             {2.227433e-7, -8.02895, -3.45764, 1.0, 1183.96, -8.20551, 1, 0, 0,
                              -5.29496e-3, 1e24, 12.0146, 1, 0, 0});
  pah0.mass_per_h_mass *= 0.5;
  auto pah1 = pah0;
  pah1.type = "PAH1_DL07";
  f.populations = {pah0, pah1,
                   zda_population("Gra", 60, 2.24, 0.33,
                                  {1.905816e-7, -9.86, -5.02082, 0.415861, 5.81215e-3, 4.63229, 1,
                                   0, 0, 0.160344, 1125.02, 3.69897, 0.160501, 1126.02, 3.69967}),
                   zda_population("aSil", 60, 3.5, 0.37,
                                  {1.471288e-7, -8.47091, -3.68708, 7.64943e-3, 2.37316e-5, 22.5489,
                                   1, 0, 0, 0.480229, 2961.28, 12.1717, 1, 0, 0})};
  return from_populations(spec, f, dir, -1);
}

DustModel load_dustem(const std::string& spec, const std::string& file, const std::string& dir) {
  kosmos::Impl::require(!file.empty(), "kosmos::dust::load_dust_model", spec,
                        ": give the GRAIN file, e.g. dustem:GRAIN_DL07.DAT");
  return from_grain_file(spec, join(dir, file), dir, -1);
}

// A registered model: its names (the first is the one listed; the others are aliases), usage,
// one-line description and loader.
struct Registered {
  std::vector<std::string> names;
  const char* usage;
  const char* description;
  DustModel (*load)(const std::string& spec, Parameters p, const std::string& dir);
};

const std::vector<Registered>& registry() {
  static const std::vector<Registered> models = {
      {{"dl07"},
       "dl07[:qpah=P]",
       "Draine & Li (2007) Milky Way: PAHs (neutral + ionized), graphite, silicate (DustEM files)",
       load_dl07},
      {{"themis", "j13"},
       "themis (alias j13)",
       "THEMIS diffuse ISM (Jones et al. 2013, 2017; Koehler et al. 2014): a-C(:H), a-Sil/Fe "
       "(DustEM's GRAIN_J13)",
       load_themis},
      {{"zda04", "zubko04", "bare-gr-s"},
       "zda04 (aliases zubko04, bare-gr-s)",
       "Zubko, Dwek & Arendt (2004) BARE-GR-S: PAHs, graphite, silicate (ZDA04 size "
       "distributions on DustEM's Draine tables)",
       load_zda04},
  };
  return models;
}
}  // namespace

std::vector<std::pair<std::string, std::string>> dust_model_names() {
  std::vector<std::pair<std::string, std::string>> names;
  for (const auto& m : registry()) names.emplace_back(m.usage, m.description);
  names.emplace_back(
      "dustem:FILE",
      "any DustEM GRAIN_*.DAT file with its Q_, C_ and MIX_ files in the data folder");
  return names;
}

DustModel load_dust_model(const std::string& spec, const std::string& data_dir) {
  const char* where = "kosmos::dust::load_dust_model";
  const std::size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const std::string rest = colon == std::string::npos ? std::string() : spec.substr(colon + 1);
  if (name == "dustem") return load_dustem(spec, rest, data_dir);
  Parameters parameters;
  std::size_t start = 0;
  while (start < rest.size()) {
    const std::size_t comma = std::min(rest.find(',', start), rest.size());
    const std::string item = rest.substr(start, comma - start);
    const std::size_t eq = item.find('=');
    double v = 0;
    kosmos::Impl::require(eq != std::string::npos && io::parse_double(item.substr(eq + 1), v),
                          where, spec, ": parameter '", item, "' is not key=number");
    parameters[item.substr(0, eq)] = v;
    start = comma + 1;
  }
  for (const auto& m : registry())
    for (const auto& n : m.names)
      if (n == name) return m.load(spec, parameters, data_dir);
  std::string known;
  for (const auto& m : dust_model_names()) known += (known.empty() ? "" : ", ") + m.first;
  kosmos::Impl::require(false, where, "unknown dust model '", name, "' (known: ", known, ")");
  return {};
}
}  // namespace dust
}  // namespace kosmos
