// Named standard dust models, loaded from DustEM-format data files (dustem.hpp): every species'
// radius, number per unit dust mass, optical table and heat capacity table, ready for
// upload_grain_inputs and the stochastic heating. Host code.
//
//   dl07[:qpah=PERCENT]  Draine & Li (2007, ApJ 657, 810) Milky Way model as DustEM distributes it
//                        (GRAIN_DL07.DAT): neutral and ionized PAHs (log-normal, 3.1-12 A, the
//                        ionized fraction per size from MIX_PAH1_DL07.DAT), graphite (a second
//                        log-normal and the WD01 power law) and astronomical silicate. qpah sets
//                        the PAH mass fraction by scaling the two PAH populations (default: the
//                        file's 4.73 %; DL07 refit the larger grains for each q_PAH, Kosmos keeps
//                        them).
//   themis (alias j13)   THEMIS, the diffuse-ISM dust of Jones et al. (2013, 2017) as DustEM
//                        distributes it (GRAIN_J13.DAT): a-C(:H) nano-grains (power law a^-5 with
//                        an exponential cut-off above 10 nm, CM20), larger a-C(:H) and the two
//                        a-Sil/Fe silicates (pyroxene and olivine types with metallic Fe
//                        inclusions; log-normals), M_dust/M_H = 7.43e-3.
//   zda04 (aliases      Zubko, Dwek & Arendt (2004, ApJS 152, 211) BARE-GR-S: PAHs (3.5-50 A, half
//   zubko04, bare-gr-s) neutral, half ionized), graphite (to 0.33 micron) and silicate (to 0.37
//                        micron) with ZDA04's analytic size distributions (zda_dn_da), on the
//                        DustEM Draine tables of dl07 (Q_/C_PAH0_DL07, PAH1_DL07, Gra, aSil).
//   dustem:FILE          any GRAIN_*.DAT in the data folder (or a path) whose Q_, C_ and MIX_ files
//                        are there too.
#pragma once

#include <kosmos/dust/dustem.hpp>
#include <kosmos/dust/size_distribution.hpp>

#include <memory>
#include <string>
#include <vector>

namespace kosmos {
namespace dust {

struct DustPopulation {
  std::string type;        // DustEM grain type, e.g. PAH0_DL07
  GrainMaterial material;  // carbonaceous (graphite) or silicate: sublimation and bulk properties
  double density_g_cm3;
  DraineTable optics;
  std::shared_ptr<const HeatCapacityTable> heat_capacity;
  bool pah;  // counted in the PAH mass fraction
};

struct DustModel {
  std::string name;
  std::vector<DustPopulation> populations;
  SizeDistribution sizes;                  // every species: radius, grains per kg of dust
  std::vector<std::size_t> population_of;  // per species
  double dust_mass_per_h_g = 0;            // total dust mass per H nucleus
  double pah_mass_fraction = 0;            // q_PAH
};

// "name[:key=value[,key=value]]" (see the table above); data_dir holds the DustEM files.
// invalid_input for an unknown model or parameter, file_error for missing or malformed files.
DustModel load_dust_model(const std::string& spec, const std::string& data_dir);
// The registered model names with a one-line description each.
std::vector<std::pair<std::string, std::string>> dust_model_names();
}  // namespace dust
}  // namespace kosmos
