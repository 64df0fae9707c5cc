#include <kosmos/dust/photometry.hpp>

#include <kosmos/core/error.hpp>
#include <kosmos/core/io.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

namespace kosmos {
namespace dust {
namespace {
constexpr double light_speed = 299792458.0;

// Band name -> sedpy file name (data/filters/<file>.par).
const std::vector<std::pair<std::string, std::string>>& band_files() {
  static const std::vector<std::pair<std::string, std::string>> files = {
      {"IRAC1", "spitzer_irac_ch1"},
      {"IRAC2", "spitzer_irac_ch2"},
      {"IRAC3", "spitzer_irac_ch3"},
      {"IRAC4", "spitzer_irac_ch4"},
      {"MIPS24", "spitzer_mips_24"},
      {"MIPS70", "spitzer_mips_70"},
      {"MIPS160", "spitzer_mips_160"},
      {"WISE1", "wise_w1"},
      {"WISE2", "wise_w2"},
      {"WISE3", "wise_w3"},
      {"WISE4", "wise_w4"},
      {"PACS70", "herschel_pacs_70"},
      {"PACS100", "herschel_pacs_100"},
      {"PACS160", "herschel_pacs_160"},
      {"SPIRE250", "herschel_spire_250"},
      {"SPIRE350", "herschel_spire_350"},
      {"SPIRE500", "herschel_spire_500"},
      {"NIRCAM_F150W", "jwst_f150w"},
      {"NIRCAM_F200W", "jwst_f200w"},
      {"NIRCAM_F335M", "jwst_f335m"},
      {"NIRCAM_F444W", "jwst_f444w"},
      {"MIRI_F560W", "jwst_f560w"},
      {"MIRI_F770W", "jwst_f770w"},
      {"MIRI_F1000W", "jwst_f1000w"},
      {"MIRI_F1130W", "jwst_f1130w"},
      {"MIRI_F1280W", "jwst_f1280w"},
      {"MIRI_F1500W", "jwst_f1500w"},
      {"MIRI_F1800W", "jwst_f1800w"},
      {"MIRI_F2100W", "jwst_f2100w"},
      {"MIRI_F2550W", "jwst_f2550w"}};
  return files;
}
}  // namespace

Filter read_filter(const std::string& path, const std::string& name) {
  io::TextReader reader(path);
  io::Record r;
  Filter f;
  f.name = name;
  f.path = path;
  while (reader.next(r)) {
    if (r.fields.size() < 2) reader.fail(r.line_number, "expected 'wavelength_angstrom response'");
    const double w = reader.number(r, 0, "wavelength") * 1e-4;
    const double t = reader.number(r, 1, "response");
    if (!(w > 0) || (!f.wavelength_micron.empty() && !(w > f.wavelength_micron.back())))
      reader.fail(r.line_number, "wavelengths must be > 0 and increasing");
    f.wavelength_micron.push_back(w);
    f.response.push_back(std::max(t, 0.0));
  }
  double num = 0, den = 0;
  for (std::size_t k = 0; k + 1 < f.response.size(); ++k) {
    const double dw = f.wavelength_micron[k + 1] - f.wavelength_micron[k];
    const double w0 = f.wavelength_micron[k], w1 = f.wavelength_micron[k + 1];
    num += 0.5 * dw * (f.response[k] * w0 + f.response[k + 1] * w1);
    den += 0.5 * dw * (f.response[k] / w0 + f.response[k + 1] / w1);
  }
  if (!(num > 0)) throw file_error(path + ": the filter has no positive response");
  f.pivot_micron = std::sqrt(num / den);
  return f;
}

std::vector<std::string> known_bands() {
  std::vector<std::string> names;
  for (const auto& b : band_files()) names.push_back(b.first);
  return names;
}

Filter load_band(const std::string& name, const std::string& filter_dir) {
  std::string upper = name;
  for (auto& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& b : band_files())
    if (b.first == upper) return read_filter(filter_dir + "/" + b.second + ".par", b.first);
  std::string known;
  for (const auto& b : band_files()) known += (known.empty() ? "" : ", ") + b.first;
  kosmos::Impl::require(false, "kosmos::dust::load_band", "unknown band '", name,
                        "' (known: ", known, ")");
  return {};
}

Photometry::Photometry(std::vector<Filter> filters, const std::vector<double>& w,
                       const std::vector<double>& d)
    : filters_(std::move(filters)) {
  const char* where = "kosmos::dust::Photometry";
  kosmos::Impl::require(w.size() == d.size() && w.size() >= 2, where, w.size(), " wavelengths and ",
                        d.size(), " widths");
  for (const auto& f : filters_) {
    // The band's extent: where its response is positive.
    std::size_t first = 0, last = f.response.size() - 1;
    while (first < last && f.response[first] == 0) ++first;
    while (last > first && f.response[last] == 0) --last;
    const double band_lo = f.wavelength_micron[first], band_hi = f.wavelength_micron[last];
    kosmos::Impl::require(band_lo >= w.front() && band_hi <= w.back(), where, "band ", f.name, " (",
                          band_lo, "-", band_hi, " micron) reaches outside the wavelength grid (",
                          w.front(), "-", w.back(), " micron)");
    // R at the grid wavelengths, linear in the filter's table, 0 outside it.
    std::vector<double> r(w.size(), 0.0);
    double den = 0;
    for (std::size_t l = 0; l < w.size(); ++l) {
      const auto& fw = f.wavelength_micron;
      if (w[l] < fw.front() || w[l] > fw.back()) continue;
      const std::size_t k = std::min(
          std::size_t(std::upper_bound(fw.begin(), fw.end(), w[l]) - fw.begin()), fw.size() - 1);
      const double t = k == 0 ? 0.0 : (w[l] - fw[k - 1]) / (fw[k] - fw[k - 1]);
      r[l] = k == 0 ? f.response[0] : (1 - t) * f.response[k - 1] + t * f.response[k];
      den += r[l] * d[l] / w[l];
    }
    kosmos::Impl::require(den > 0, where, "band ", f.name,
                          " has no response on the wavelength grid (too coarse?)");
    std::size_t lo = 0, hi = w.size();
    while (lo < hi && r[lo] == 0) ++lo;
    while (hi > lo && r[hi - 1] == 0) --hi;
    // <L_nu> = (1/c) sum L_lambda R lambda dlambda / sum R dlambda / lambda (lambda in m in the
    // numerator, the micron of the denominator's ratio cancel with the numerator's dlambda).
    std::vector<double> weights;
    for (std::size_t l = lo; l < hi; ++l)
      weights.push_back(r[l] * (w[l] * 1e-6) * (d[l] * 1e-6) / light_speed / den);
    weights_.push_back(std::move(weights));
    first_.push_back(lo);
  }
}
}  // namespace dust
}  // namespace kosmos
