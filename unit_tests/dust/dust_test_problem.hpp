// Test problems for the dust suites, held on the host in double, and long-double references
// computed independently of the library's kernels.
#pragma once

#include <kosmos/dust/dust.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace dust_test {

using LD = long double;

struct Problem {
  std::vector<double> wavelength, width;         // m
  std::vector<double> radius, number_per_mass;   // m, per kg
  std::vector<std::vector<double>> sigma;        // [s][l], m^2
  std::vector<double> dust_mass;                 // kg
  std::vector<std::vector<double>> intensity;    // [c][l]
  int nl() const { return int(wavelength.size()); }
  int ns() const { return int(radius.size()); }
  int nc() const { return int(dust_mass.size()); }
};

inline std::string data_path(const std::string& name) { return std::string(KOSMOS_DATA_DIR) + "/" + name; }

// Draine graphite on a log grid of nl wavelengths (Lyman limit to 1000 micron), every
// `radius_stride`-th table radius, MRN-like n_s, nc synthetic MMP83-based cells.
inline Problem graphite_problem(int nl, int radius_stride, int nc, std::uint64_t seed = 11,
                                const char* table = "dust/draine_graphite_81.dat") {
  const auto t = kosmos::dust::read_draine_table(data_path(table));
  Problem p;
  const auto w_micron = kosmos::dust::log_wavelength_grid(0.0912, 1000.0, nl);
  const auto d_micron = kosmos::dust::bin_widths(w_micron);
  for (int l = 0; l < nl; ++l) {
    p.wavelength.push_back(w_micron[l] * 1e-6);
    p.width.push_back(d_micron[l] * 1e-6);
  }
  std::vector<double> radii;
  for (std::size_t i = 0; i < t.radius_micron.size(); i += radius_stride) radii.push_back(t.radius_micron[i]);
  const auto sd = kosmos::dust::power_law_size_distribution(radii, 2.24);
  for (std::size_t s = 0; s < radii.size(); ++s) {
    p.radius.push_back(radii[s] * 1e-6);
    p.number_per_mass.push_back(sd.number_per_mass[s]);
    p.sigma.push_back(kosmos::dust::absorption_cross_section(t, radii[s], w_micron));
  }
  for (int c = 0; c < nc; ++c) {
    const auto cell = kosmos::dust::synthetic_cell(seed, c);
    p.dust_mass.push_back(cell.dust_mass_kg);
    std::vector<double> row(nl);
    for (int l = 0; l < nl; ++l) row[l] = kosmos::dust::synthetic_intensity(cell, w_micron[l]);
    p.intensity.push_back(row);
  }
  return p;
}

// Planck function in long double (independent of kosmos::dust::planck_lambda).
inline LD planck(LD lambda, LD t) {
  const LD h = 6.62607015e-34L, c = 299792458.0L, k = 1.380649e-23L;
  return 2 * h * c * c / std::pow(lambda, LD(5)) / std::expm1(h * c / (k * lambda * t));
}

inline LD heating_ref(const Problem& p, int c, int s) {
  LD sum = 0;
  for (int l = 0; l < p.nl(); ++l) sum += LD(p.intensity[c][l]) * LD(p.sigma[s][l]) * LD(p.width[l]);
  return sum;
}

inline LD emission_ref(const Problem& p, int s, LD t) {
  LD sum = 0;
  for (int l = 0; l < p.nl(); ++l) sum += LD(p.sigma[s][l]) * LD(p.width[l]) * planck(p.wavelength[l], t);
  return sum;
}

// Bisection in ln T on [lo, hi] to relative 1e-13: the reference temperature.
inline double bisect_temperature(const Problem& p, int s, LD heating, double lo = 1.0, double hi = 5000.0) {
  LD a = std::log(LD(lo)), b = std::log(LD(hi));
  while (b - a > 1e-13L) {
    const LD m = 0.5L * (a + b);
    if (emission_ref(p, s, std::exp(m)) > heating) b = m; else a = m;
  }
  return double(std::exp(0.5L * (a + b)));
}

template <class T, class Space>
struct Results {
  std::vector<T> heating, temperature, sed;  // column-major (cell fastest)
  std::vector<int> status;
  int nc = 0, ns = 0, nl = 0;
  T t(int c, int s) const { return temperature[c + std::size_t(nc) * s]; }
  int st(int c, int s) const { return status[c + std::size_t(nc) * s]; }
  T l_h(int c, int s) const { return heating[c + std::size_t(nc) * s]; }
  T f(int c, int l) const { return sed[c + std::size_t(nc) * l]; }
};

template <class T, class Space>
struct DeviceProblem {
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  Kokkos::View<double*, device> wavelength, width, radius, number;
  Kokkos::View<double**, Kokkos::LayoutLeft, device> sigma;
  Kokkos::View<T**, Kokkos::LayoutLeft, device> intensity;
  Kokkos::View<T*, device> dust_mass;

  explicit DeviceProblem(const Problem& p) {
    const int nl = p.nl(), ns = p.ns(), nc = p.nc();
    wavelength = decltype(wavelength)("wavelength", nl);
    width = decltype(width)("width", nl);
    radius = decltype(radius)("radius", ns);
    number = decltype(number)("number", ns);
    sigma = decltype(sigma)("sigma", ns, nl);
    intensity = decltype(intensity)("intensity", nc, nl);
    dust_mass = decltype(dust_mass)("dust_mass", nc);
    auto hw = Kokkos::create_mirror_view(wavelength);
    auto hd = Kokkos::create_mirror_view(width);
    auto hr = Kokkos::create_mirror_view(radius);
    auto hn = Kokkos::create_mirror_view(number);
    auto hs = Kokkos::create_mirror_view(sigma);
    auto hi = Kokkos::create_mirror_view(intensity);
    auto hm = Kokkos::create_mirror_view(dust_mass);
    for (int l = 0; l < nl; ++l) {
      hw(l) = p.wavelength[l];
      hd(l) = p.width[l];
    }
    for (int s = 0; s < ns; ++s) {
      hr(s) = p.radius[s];
      hn(s) = p.number_per_mass[s];
      for (int l = 0; l < nl; ++l) hs(s, l) = p.sigma[s][l];
    }
    for (int c = 0; c < nc; ++c) {
      hm(c) = T(p.dust_mass[c]);
      for (int l = 0; l < nl; ++l) hi(c, l) = T(p.intensity[c][l]);
    }
    Kokkos::deep_copy(wavelength, hw);
    Kokkos::deep_copy(width, hd);
    Kokkos::deep_copy(radius, hr);
    Kokkos::deep_copy(number, hn);
    Kokkos::deep_copy(sigma, hs);
    Kokkos::deep_copy(intensity, hi);
    Kokkos::deep_copy(dust_mass, hm);
  }

  kosmos::dust::GrainModel<T, Space> prepare(const kosmos::dust::SolverOptions& o) const {
    return kosmos::dust::prepare_grains<T>(Space(), wavelength, width, sigma, radius, number, o);
  }
};

template <class V>
std::vector<typename V::non_const_value_type> to_host(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<typename V::non_const_value_type>(h.data(), h.data() + h.span());
}

// All four stages on Space in precision T.
template <class T, class Space>
Results<T, Space> run(const Problem& p, const kosmos::dust::SolverOptions& o = kosmos::dust::SolverOptions()) {
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  DeviceProblem<T, Space> d(p);
  const auto g = d.prepare(o);
  const int nc = p.nc(), ns = p.ns(), nl = p.nl();
  Kokkos::View<T**, Kokkos::LayoutLeft, device> heating("heating", nc, ns), temperature("T", nc, ns),
      sed("sed", nc, nl);
  Kokkos::View<int**, Kokkos::LayoutLeft, device> status("status", nc, ns);
  kosmos::dust::dust_emission(Space(), g, d.intensity, d.dust_mass, heating, temperature, status, sed, o);
  Results<T, Space> r;
  r.nc = nc;
  r.ns = ns;
  r.nl = nl;
  r.heating = to_host(heating);
  r.temperature = to_host(temperature);
  r.sed = to_host(sed);
  r.status = to_host(status);
  return r;
}
}  // namespace dust_test
