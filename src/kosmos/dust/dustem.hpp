// Readers for the data files of DustEM (Compiegne et al. 2011, A&A 525, A103), the dust emission
// code whose file formats most published dust models are distributed in: GRAIN_*.DAT (grain
// populations and their size distributions), LAMBDA.DAT with Q_*.DAT (absorption efficiencies),
// C_*.DAT (heat capacities) and MIX_*.DAT (per-size fractions, e.g. the PAH ionization fraction).
// Host code; the results feed absorption_cross_section, the size distributions and the stochastic
// heating (grain_log_enthalpy_table).
#pragma once

#include <kosmos/dust/grains.hpp>

#include <string>
#include <vector>

namespace kosmos {
namespace dust {

// One line of a GRAIN_*.DAT file: grain type (names the Q_, C_ and MIX_ files), number of sizes,
// keywords (logn, plaw, -ed, -cv, mix, ...), dust mass per H mass, bulk density (g cm^-3), the
// size range (cm) and the size distribution's parameters (cm where they are sizes):
//   logn: a0, sigma           dn/da ~ a^-1 exp(-(ln(a/a0))^2 / (2 sigma^2))
//   plaw: alpha               dn/da ~ a^alpha
//   -ed:  a_t, a_c, gamma     times exp(-((a - a_t)/a_c)^gamma) for a >= a_t
//   -cv:  a_u, zeta, eta      times (1 + |zeta| (a/a_u)^eta)^sign(zeta)
//   zda:  ZDA04's 15 coefficients (zda_dn_da below; populations built in code only)
struct DustemPopulation {
  std::string type, keywords;
  int sizes = 0;
  double mass_per_h_mass = 0, density_g_cm3 = 0, a_min_cm = 0, a_max_cm = 0;
  std::vector<double> parameters;
  bool has(const std::string& keyword) const;  // case-insensitive, e.g. has("mix")
};
struct DustemGrainFile {
  std::string path;
  double g0 = 1;  // the run's radiation field scale (not used by Kosmos)
  std::vector<DustemPopulation> populations;
};
DustemGrainFile read_dustem_grain_file(const std::string& path);

// Grains per H nucleus at DustEM's radii (micron, log-spaced from a_min to a_max): a dn/da of the
// population's shape times the trapezoid weight in ln a, normalized so that their mass is
// mass_per_h_mass x the proton mass, as DustEM does (DM_inout.f90).
SizeDistribution dustem_population_sizes(const DustemPopulation& population);

// The analytic size distribution of Zubko, Dwek & Arendt (2004, ApJS 152, 211), dn/da per micron
// per H nucleus at radius a (micron), from its 15 coefficients in ZDA04's order
// (A, c0, b0, a1, b1, m1, a2, b2, m2, a3, b3, m3, a4, b4, m4):
//   A 10^(c0 + b0 log a - b1 |log(a/a1)|^m1 - b2 |log(a/a2)|^m2 - b3 |a - a3|^m3 - b4 |a - a4|^m4).
// A population whose keywords contain "zda" (built in code, e.g. the zda04 model; DustEM's files
// have no such keyword) takes this shape with these coefficients as its parameters.
double zda_dn_da(const std::vector<double>& coefficients, double a_micron);
// Its dust mass per H mass over [a_min, a_max] at the population's density (the integral of the
// absolute distribution, to set mass_per_h_mass).
double zda_mass_per_h_mass(const DustemPopulation& population);

// Q_abs of a Q_*.DAT file on the wavelengths of LAMBDA.DAT (micron), as a DraineTable (radii and
// wavelengths ascending) for absorption_cross_section.
DraineTable read_dustem_optics(const std::string& q_path, const std::string& lambda_path);

// A C_*.DAT file: log10 of the heat capacity per unit volume (erg K^-1 cm^-3) at log10 T for
// each tabulated radius.
struct HeatCapacityTable {
  std::string path;
  std::vector<double> radius_micron, log10_temperature;
  std::vector<std::vector<double>> log10_capacity;  // [radius][temperature]
};
HeatCapacityTable read_dustem_heat_capacity(const std::string& path);

// A MIX_*.DAT file: one fraction in [0, 1] per size of its population (`sizes` of them).
std::vector<double> read_dustem_mix(const std::string& path, int sizes);

// Enthalpy E(T) = V int_0^T C dT (J) of a grain of the given radius, C interpolated linearly in
// (log a, log T) and integrated exactly over each power-law segment (below the table's lowest T
// its first segment's power law continues to 0 K, above its highest the last one).
double table_enthalpy(const HeatCapacityTable& table, double radius_micron, double temperature);
// The same at many temperatures.
std::vector<double> table_enthalpies(const HeatCapacityTable& table, double radius_micron,
                                     const std::vector<double>& temperature);
}  // namespace dust
}  // namespace kosmos
