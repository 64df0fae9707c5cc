// Synthetic photometry of dust SEDs through instrument filter curves (data/filters: Spitzer IRAC
// and MIPS, WISE, Herschel PACS and SPIRE, JWST NIRCam and MIRI, from sedpy; README there). Host
// code: the weights are built once per wavelength grid and applied to each cell's SED row.
//
// A filter's response R(lambda) counts photons (detector signal per photon), so the band's
// mean flux density is the photon-weighted
//   <F_nu> = int F_nu R lambda^-1 dlambda / int R lambda^-1 dlambda
//          = (1/c) int F_lambda R lambda dlambda / int R lambda^-1 dlambda,
// (sedpy's and the AB convention). Instrument catalogues quote F_nu at a nominal wavelength for
// a reference spectrum (nu F_nu = const for IRAC and MIPS): a colour correction of a few per cent
// away from this mean for spectra unlike the reference.
#pragma once

#include <string>
#include <vector>

namespace kosmos {
namespace dust {

struct Filter {
  std::string name, path;
  std::vector<double> wavelength_micron, response;  // response >= 0 (negative values read as 0)
  double pivot_micron = 0;  // sqrt(int R lambda dlambda / int R lambda^-1 dlambda)
};

// A two-column file: wavelength in Angstrom, response; '#' comments.
Filter read_filter(const std::string& path, const std::string& name);
// Known band names (IRAC1-4, MIPS24/70/160, WISE1-4, PACS70/100/160, SPIRE250/350/500,
// NIRCAM_F150W/F200W/F335M/F444W, MIRI_F560W ... MIRI_F2550W) and their files in filter_dir.
std::vector<std::string> known_bands();
Filter load_band(const std::string& name, const std::string& filter_dir);

// Weights w_{b,l} on a wavelength grid (micron, bin widths in micron) such that
// <L_nu>_b = sum_l w_{b,l} L_lambda(l) for an SED L_lambda (per metre of wavelength): the
// photon-weighted mean of L_nu (per Hz) over the band. invalid_input when a band reaches outside
// the grid or has no response on it.
class Photometry {
 public:
  Photometry(std::vector<Filter> filters, const std::vector<double>& wavelength_micron,
             const std::vector<double>& width_micron);
  int bands() const { return int(filters_.size()); }
  const std::vector<Filter>& filters() const { return filters_; }
  // out[b] = <L_nu>_b times `scale` for one SED row of length L (any floating type).
  template <class T>
  void apply(const T* sed, double scale, double* out) const {
    for (std::size_t b = 0; b < filters_.size(); ++b) {
      double sum = 0;
      const auto& w = weights_[b];
      for (std::size_t l = first_[b]; l < first_[b] + w.size(); ++l)
        sum += w[l - first_[b]] * double(sed[l]);
      out[b] = scale * sum;
    }
  }

 private:
  std::vector<Filter> filters_;
  std::vector<std::vector<double>> weights_;  // nonzero range of each band
  std::vector<std::size_t> first_;
};

// Photometry units: Jy at a distance (flux density = L_nu / D^2, L per sr) or MJy/sr for a cell
// seen face-on with a projected area (surface brightness = L_nu / A).
constexpr double parsec_m = 3.0856775814913673e16;
inline double jansky_scale(double distance_pc) {
  return 1e26 / (distance_pc * parsec_m * distance_pc * parsec_m);
}
inline double mjy_per_sr_scale(double area_pc2) {
  return 1e20 / (area_pc2 * parsec_m * parsec_m);
}
}  // namespace dust
}  // namespace kosmos
