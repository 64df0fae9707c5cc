// Graphite grains in the interstellar radiation field (MMP83) scaled by U = 1, 100, 10^4: the four
// stages of Jonsson & Primack (2010) through the kosmos::dust API, printing the equilibrium
// temperatures of a few grain sizes and where each cell's SED peaks.
//   kosmos_example_dust_isrf [draine_table]   (default: the bundled graphite table)
#include <kosmos/dust/dust.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <string>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  using namespace kosmos::dust;
  using Space = Kokkos::DefaultExecutionSpace;
  const std::string path =
      argc > 1 ? argv[1] : std::string(KOSMOS_DATA_DIR) + "/dust/draine_graphite_81.dat";
  const auto table = read_draine_table(path);
  const auto w = paper_wavelength_grid();  // micron
  const auto dw = bin_widths(w);
  const auto sizes = power_law_size_distribution(table.radius_micron, 2.24);  // per kg of dust
  const int nl = int(w.size()), ns = int(sizes.radius_micron.size());
  const double strength[] = {1.0, 100.0, 1e4};
  const int nc = 3;

  // Grains on the device (SI units), then the cells: intensities and dust mass per cell.
  const auto in = upload_grain_inputs<Space::memory_space>(w, dw, sizes, [&](int s) {
    return absorption_cross_section(table, sizes.radius_micron[s], w);
  });
  Kokkos::View<double**, Kokkos::LayoutLeft> intensity("intensity", nc, nl);
  Kokkos::View<double*> mass("mass", nc);
  auto hi = Kokkos::create_mirror_view(intensity);
  auto hm = Kokkos::create_mirror_view(mass);
  for (int c = 0; c < nc; ++c) {
    for (int l = 0; l < nl; ++l) hi(c, l) = strength[c] * mmp83_mean_intensity(w[l]);
    hm(c) = 1.0;  // 1 kg of dust per cell
  }
  Kokkos::deep_copy(intensity, hi);
  Kokkos::deep_copy(mass, hm);

  // Stage 1 once per grain set; stages 2-4 per batch of cells.
  SolverOptions options;
  const auto grains = prepare_grains<double>(Space(), in.wavelength, in.width, in.sigma, in.radius,
                                             in.number, options);
  Kokkos::View<double**, Kokkos::LayoutLeft> heat("heating", nc, ns), temperature("T", nc, ns),
      sed("sed", nc, nl);
  Kokkos::View<int**, Kokkos::LayoutLeft> status("status", nc, ns);
  dust_emission(Space(), grains, intensity, mass, heat, temperature, status, sed, options);

  auto ht = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), temperature);
  auto hsed = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sed);
  auto nearest = [&](double a_micron) {  // species closest to a_micron (log distance)
    int best = 0;
    for (int s = 1; s < ns; ++s)
      if (std::fabs(std::log(sizes.radius_micron[s] / a_micron)) <
          std::fabs(std::log(sizes.radius_micron[best] / a_micron)))
        best = s;
    return best;
  };
  const int s1 = nearest(0.01), s2 = nearest(0.1), s3 = nearest(1.0);
  std::printf("%s: %d sizes x %d wavelengths\n", path.c_str(), ns, nl);
  std::printf("%8s %12s %12s %12s %16s\n", "U", "T(0.01um)", "T(0.1um)", "T(1um)", "SED peak (um)");
  for (int c = 0; c < nc; ++c) {
    int peak = 0;
    for (int l = 0; l < nl; ++l)
      if (w[l] * hsed(c, l) > w[peak] * hsed(c, peak)) peak = l;  // peak of lambda L_lambda
    std::printf("%8g %12.3f %12.3f %12.3f %16.1f\n", strength[c], ht(c, s1), ht(c, s2), ht(c, s3),
                w[peak]);
  }
  return 0;
}
