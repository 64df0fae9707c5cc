// Grain materials and standard interstellar size distributions: MRN (Mathis, Rumpl & Nordsieck
// 1977, with the Draine & Lee 1984 per-H normalization) and Weingartner & Draine (2001, ApJ 548,
// 296; "WD01") Milky Way R_V = 3.1, case A, b_C = 6.0e-5. Host code; the per-size weights feed
// prepare_grains (number of grains per unit dust mass).
#pragma once

#include <kosmos/dust/grains.hpp>

#include <string>
#include <vector>

namespace kosmos {
namespace dust {

enum class GrainMaterial { graphite, silicate };

struct MaterialProperties {
  const char* name;
  double density_g_cm3;  // bulk density (WD01 and Draine & Li 2001: 2.24 graphite, 3.5 silicate)
  double atom_mass_amu;  // mean mass per atom: C (12.011) or MgFeSiO4 (172.24 / 7)
};
const MaterialProperties& material_properties(GrainMaterial material);
// "graphite" or "silicate"; invalid_input naming the value otherwise.
GrainMaterial parse_grain_material(const std::string& name);

enum class SizeDistributionModel { mrn, wd01 };
// "mrn" or "wd01"; invalid_input naming the value otherwise.
SizeDistributionModel parse_size_distribution_model(const std::string& name);

// WD01 Eqs. 2-6 parameters of one composition (Table 1 of WD01; a in micron). For graphite the
// log-normal very small grain term of Eqs. 2-3 adds b_C carbon atoms per H (a_0 = 3.5 and 30
// Angstrom, 75 % / 25 %, sigma = 0.4); for silicate b_C is 0.
struct Wd01Parameters {
  double alpha, beta, a_t, a_c, c, b_c;
};
// Milky Way R_V = 3.1, case A, b_C = 6.0e-5 (the first R_V = 3.1 row of WD01 Table 1):
//   graphite: alpha_g = -1.54, beta_g = -0.165, a_t,g = 0.0107, a_c,g = 0.428, C_g = 9.99e-12;
//   silicate: alpha_s = -2.21, beta_s = 0.300,  a_t,s = 0.164,  a_c,s = 0.1,   C_s = 1.00e-13.
Wd01Parameters wd01_milky_way_31(GrainMaterial material);

// The radius range of a model in micron: MRN 0.005-0.25; WD01 from 3.5 Angstrom (their a_min) to
// 10 micron (the exponential cut-offs make the rest negligible).
void model_radius_range(SizeDistributionModel model, double& a_min_micron, double& a_max_micron);

// (1 / n_H) dn/da in grains per micron per H nucleus at radius a (micron); 0 outside the range.
// MRN: A a^-3.5 with A = 10^-25.13 (graphite) / 10^-25.11 (silicate) cm^2.5 (Draine & Lee 1984).
double size_distribution_per_h(SizeDistributionModel model, GrainMaterial material,
                               double a_micron);
double wd01_per_h(const Wd01Parameters& p, GrainMaterial material, double a_micron);

// Dust mass per H nucleus (g) of a composition: the integral of (4 pi / 3) a^3 rho dn/da over
// the whole range (e.g. WD01 R_V = 3.1 graphite + silicate: ~2.0e-26 g per H).
double dust_mass_per_h(SizeDistributionModel model, GrainMaterial material);

// The model on a radius grid (micron, strictly increasing, >= 2 points): each grid radius stands
// for the bin between the geometric midpoints to its neighbours, the first bin extended down to
// the model's a_min and the last up to its a_max, and carries the bin's MASS (so grains smaller
// than the smallest tabulated radius, e.g. WD01's 3.5-10 Angstrom grains, are represented by it
// with their mass); the grid must reach within a factor 3 of both ends of the model's range
// (invalid_input otherwise). Radii whose bin holds no grains are left out. number_per_mass is
// returned per H nucleus (grains per H), see normalize_to_dust_mass.
SizeDistribution binned_size_distribution(SizeDistributionModel model, GrainMaterial material,
                                          const std::vector<double>& radius_micron);

// Mass normalization across compositions: divides every composition's grains per H by the total
// dust mass per H of all of them (kg), so number_per_mass is per kg of dust and each composition
// keeps the model's own mass fraction. Returns the total dust mass per H in g.
double normalize_to_dust_mass(std::vector<SizeDistribution>& per_h,
                              const std::vector<GrainMaterial>& materials);

// Mass of one grain (g) of radius a (micron).
double grain_mass_g(GrainMaterial material, double a_micron);
}  // namespace dust
}  // namespace kosmos
