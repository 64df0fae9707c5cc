// Host-side grain and problem data for the dust module: Draine's optical-property tables, size
// distributions, wavelength grids, cell files and the paper's benchmark problem.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kosmos {
namespace dust {

// One of B. T. Draine's tables (e.g. data/dust/draine_graphite_81.dat): radii and wavelengths in
// micron (both ascending here; the file lists wavelengths descending), Q_abs[radius][wavelength].
struct DraineTable {
  std::string path;
  std::vector<double> radius_micron;
  std::vector<double> wavelength_micron;
  std::vector<std::vector<double>> q_abs;
};

// Parses a Draine table; file_error with file and line for anything malformed.
DraineTable read_draine_table(const std::string& path);

// Longest wavelength absorption_cross_section accepts (1 cm), extrapolating beyond the table.
constexpr double max_extrapolated_wavelength_micron = 1e4;
// Default far-infrared/mm emissivity index of that extrapolation.
constexpr double default_emissivity_index = 2.0;

// sigma_abs = pi a^2 Q_abs(a, lambda) in m^2 for each wavelength (micron), Q_abs interpolated
// linearly in (log a, log lambda) between the table's points. Beyond the table's longest
// wavelength lambda_end (up to 1 cm): Q_abs(a, lambda) = Q_abs(a, lambda_end) (lambda/lambda_end)^-beta
// (beta >= 0). invalid_input for radii outside the table, wavelengths below it or above 1 cm.
std::vector<double> absorption_cross_section(const DraineTable& table, double radius_micron,
                                             const std::vector<double>& wavelength_micron,
                                             double beta = default_emissivity_index);

// n logarithmically spaced wavelengths (micron) from lo to hi inclusive.
std::vector<double> log_wavelength_grid(double lo_micron, double hi_micron, int n);
// Bin widths of a strictly increasing grid: half the distance between the neighbours
// (one-sided at the ends), so the bins tile [lambda_0, lambda_{L-1}].
std::vector<double> bin_widths(const std::vector<double>& wavelength);
// Reads a wavelength grid: one wavelength in micron per line (strictly increasing), optional second
// column the bin width in micron (all lines or none). Widths from bin_widths when absent.
void read_wavelength_grid(const std::string& path, std::vector<double>& wavelength_micron,
                          std::vector<double>& width_micron);

// Grain species: radius and number of grains per unit dust mass.
struct SizeDistribution {
  std::vector<double> radius_micron;
  std::vector<double> number_per_mass;
};
// File: lines `radius_micron number_per_unit_dust_mass`, both > 0.
SizeDistribution read_size_distribution(const std::string& path);
// Power law dn/da ~ a^exponent exp(-a / a_cut) on the given radii (log-spaced bins, widths from the
// neighbours), normalized to one kg of dust of bulk density rho (g cm^-3). Every bin gets n > 0.
SizeDistribution power_law_size_distribution(const std::vector<double>& radius_micron, double density_g_cm3,
                                             double exponent = -3.5, double a_cut_micron = 0.25);

// Cells file: one line per cell, `dust_mass I_1 ... I_L` with I on the wavelength grid
// (W m^-2 m^-1 sr^-1). intensity is row-major (cell, wavelength).
void read_cells(const std::string& path, std::size_t n_wavelengths, std::vector<double>& dust_mass,
                std::vector<double>& intensity);

// The paper's benchmark grid: 968 wavelengths log-spaced from the Lyman limit (0.0912 micron) to
// 1000 micron.
inline std::vector<double> paper_wavelength_grid() { return log_wavelength_grid(0.0912, 1000.0, 968); }
// The CLI's default: the paper's grid continued at its log spacing to 1 cm (1208 wavelengths), so
// that cold dust emits its whole spectrum on the grid (cut at 1000 micron it comes out too hot:
// README); Q_abs beyond the tables' 1000 micron as absorption_cross_section extrapolates.
inline std::vector<double> default_wavelength_grid() { return log_wavelength_grid(0.0912, 1e4, 1208); }
}  // namespace dust
}  // namespace kosmos
