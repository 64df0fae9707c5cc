// A plane-parallel dust slab lit on both faces by the interstellar radiation field (MMP83 x U),
// with dust self-absorption, iterated to convergence through kosmos::dust::EmissionStream, the
// library's batch API for radiative-transfer codes: each iteration hands the layers' mean
// intensities to the stream and gets their temperatures and SEDs back.
//
// Transfer (absorption only, no scattering): N layers of equal dust column; in optical depth t_l
// at each wavelength the layer-averaged mean intensity of layer i is
//   J_i = (I0 / 2) [E3(a_i) - E3(b_i) + E3(T - b_i) - E3(T - a_i)] / dt_i + sum_k Lambda_ik S_k,
// with [a_i, b_i] the layer, T the slab's total depth, S_k = L_lambda,k / (m_k kappa) the layer's
// source function and Lambda_ik the exact layer average of (1/2) E1 over a layer of constant S.
// These operators conserve energy exactly, so at convergence the infrared escaping both faces
// equals the starlight the slab absorbs: the example prints that ratio.
//   kosmos_example_dust_slab [U] [tau_V]   (default U = 100, tau_V = 30)
#include <kosmos/dust/dust.hpp>
#include <kosmos/dust/stream.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {
// Exponential integrals E1, E2, E3 (x >= 0): E1 by its series below 1 and its continued fraction
// above (Lentz), then E_{n+1}(x) = (e^-x - x E_n(x)) / n.
double expint1(double x) {
  if (x <= 1) {
    double sum = 0, term = 1;
    for (int k = 1; k < 40; ++k) {
      term *= -x / k;
      sum -= term / k;
    }
    return -0.57721566490153286 - std::log(x) + sum;
  }
  double b = x + 1, c = 1e300, d = 1 / b, h = d;
  for (int i = 1; i < 200; ++i) {
    const double a = -double(i) * i;
    b += 2;
    d = 1 / (a * d + b);
    c = b + a / c;
    const double del = c * d;
    h *= del;
    if (std::fabs(del - 1) < 1e-16) break;
  }
  return h * std::exp(-x);
}
double expint3(double x) {
  if (x <= 0) return 0.5;
  if (x > 700) return 0.0;
  const double e2 = std::exp(-x) - x * expint1(x);
  return 0.5 * (std::exp(-x) - x * e2);
}
}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  using namespace kosmos::dust;
  using Space = Kokkos::DefaultExecutionSpace;
  const double u = argc > 1 ? std::atof(argv[1]) : 100.0,
               tau_v = argc > 2 ? std::atof(argv[2]) : 30.0;
  if (!(u > 0) || !(tau_v > 0)) {
    std::fprintf(stderr, "usage: kosmos_example_dust_slab [U > 0] [tau_V > 0]\n");
    return 2;
  }
  const std::string data = KOSMOS_DATA_DIR;

  // Grains: MRN graphite and silicate on the Draine tables' radii, per kg of dust.
  const std::vector<GrainMaterial> materials = {GrainMaterial::graphite, GrainMaterial::silicate};
  const std::vector<DraineTable> tables = {
      read_draine_table(data + "/dust/draine_graphite_81.dat"),
      read_draine_table(data + "/dust/draine_suvsilicate_81.dat")};
  std::vector<SizeDistribution> per_h;
  for (std::size_t k = 0; k < 2; ++k)
    per_h.push_back(binned_size_distribution(SizeDistributionModel::mrn, materials[k],
                                             tables[k].radius_micron));
  normalize_to_dust_mass(per_h, materials);
  SizeDistribution sizes;
  std::vector<int> composition;
  for (int k = 0; k < 2; ++k)
    for (std::size_t i = 0; i < per_h[std::size_t(k)].radius_micron.size(); ++i) {
      sizes.radius_micron.push_back(per_h[std::size_t(k)].radius_micron[i]);
      sizes.number_per_mass.push_back(per_h[std::size_t(k)].number_per_mass[i]);
      composition.push_back(k);
    }
  const auto w = log_wavelength_grid(0.0912, 3000.0, 180);  // micron
  const auto dw = bin_widths(w);
  const int nl = int(w.size()), ns = int(sizes.radius_micron.size()), nc = 24;
  std::vector<std::vector<double>> sigma(static_cast<std::size_t>(ns));
  for (int s = 0; s < ns; ++s)
    sigma[std::size_t(s)] = absorption_cross_section(
        tables[std::size_t(composition[std::size_t(s)])], sizes.radius_micron[std::size_t(s)], w);
  const auto inputs = upload_grain_inputs<Space::memory_space>(
      w, dw, sizes, [&](int s) { return sigma[std::size_t(s)]; });

  // kappa (m^2 per kg of dust) and the layers' dust columns (kg m^-2) for tau_V over nc layers.
  std::vector<double> kappa(std::size_t(nl), 0.0);
  for (int l = 0; l < nl; ++l)
    for (int s = 0; s < ns; ++s)
      kappa[std::size_t(l)] +=
          sizes.number_per_mass[std::size_t(s)] * sigma[std::size_t(s)][std::size_t(l)];
  const int l_v = int(std::lower_bound(w.begin(), w.end(), 0.55) - w.begin());
  const double column = tau_v / kappa[std::size_t(l_v)] / nc;  // per layer

  // Transfer operators per wavelength: layer edges in optical depth, the external field's layer
  // averages, and Lambda (nc x nc).
  std::vector<double> external(std::size_t(nc) * nl), lambda(std::size_t(nl) * nc * nc);
  for (int l = 0; l < nl; ++l) {
    const double dt = column * kappa[std::size_t(l)], total = dt * nc;
    const double i0 = u * mmp83_mean_intensity(w[std::size_t(l)]);  // isotropic: I = J outside
    for (int i = 0; i < nc; ++i) {
      const double a = i * dt, b = a + dt;
      external[std::size_t(i) * nl + std::size_t(l)] =
          0.5 * i0 * (expint3(a) - expint3(b) + expint3(total - b) - expint3(total - a)) / dt;
      for (int k = 0; k < nc; ++k) {
        double v;
        if (k == i) {
          v = 1 - (1 - 2 * expint3(dt)) / (2 * dt);
        } else {
          const double gap = std::abs(k - i) * dt;  // from the near edge of one to the other
          v = (expint3(gap - dt) - 2 * expint3(gap) + expint3(gap + dt)) / (2 * dt);
        }
        lambda[(std::size_t(l) * nc + std::size_t(i)) * nc + std::size_t(k)] = v;
      }
    }
  }

  // The stream: equilibrium temperatures to 1e-10 in energy (so that the iteration's changes are
  // the transfer's, not the solver's), no CMB (the slab's field is the transfer's own).
  StreamOptions options;
  options.solver.tolerance = 1e-10;
  options.cmb_temperature = 0;
  options.pipeline.chunk_cells = 8;
  const auto grains = prepare_grains<double>(Space(), inputs.wavelength, inputs.width, inputs.sigma,
                                             inputs.radius, inputs.number, options.solver);
  EmissionStream<double, Space> stream(Space(), grains, inputs, options);
  HostCells<double> cells(nc, nl, ns);
  std::vector<double> sed(std::size_t(nc) * nl, 0.0), temperature(std::size_t(nc) * ns, 0.0);
  for (int c = 0; c < nc; ++c) cells.dust_mass(c) = column;

  std::printf("slab: U = %g, tau_V = %g in %d layers; %d grain species x %d wavelengths\n", u,
              tau_v, nc, ns, nl);
  double change = 1;
  int iteration = 0;
  for (; iteration < 100 && change > 1e-7; ++iteration) {
    for (int c = 0; c < nc; ++c)
      for (int l = 0; l < nl; ++l) {
        double j = external[std::size_t(c) * nl + std::size_t(l)];
        const double* row = &lambda[(std::size_t(l) * nc + std::size_t(c)) * nc];
        for (int k = 0; k < nc; ++k)
          j +=
              row[k] * sed[std::size_t(k) * nl + std::size_t(l)] / (column * kappa[std::size_t(l)]);
        cells.intensity(c, l) = j;
      }
    change = 0;
    const auto summary = stream.run(cells, [&](const StreamRows<double>& rows) {
      for (std::int64_t k = 0; k < rows.cells; ++k) {
        const std::size_t c = std::size_t(rows.first_cell + k);
        for (int l = 0; l < nl; ++l) sed[c * nl + std::size_t(l)] = rows.sed(k, l);
        for (int s = 0; s < ns; ++s) {
          double& t = temperature[c * ns + std::size_t(s)];
          change = std::max(change, std::fabs(rows.temperature(k, s) / t - 1));
          t = rows.temperature(k, s);
        }
      }
    });
    if (summary.status_counts[status_converged] != std::int64_t(nc) * ns) {
      std::fprintf(stderr, "not every temperature solve converged\n");
      return 1;
    }
    std::printf("iteration %2d: largest relative temperature change %.3e\n", iteration + 1, change);
  }

  // Energy: starlight absorbed, 2 pi I0 (1 - 2 E3(T)), against the infrared escaping both faces,
  // 2 pi sum_k S_k [E3(a_k) - E3(b_k) + E3(T - b_k) - E3(T - a_k)], both per m^2 of slab.
  double absorbed = 0, escaped = 0;
  for (int l = 0; l < nl; ++l) {
    const double dt = column * kappa[std::size_t(l)], total = dt * nc,
                 lam = dw[std::size_t(l)] * 1e-6;
    absorbed += 2 * kosmos::math::pi<double>() * u * mmp83_mean_intensity(w[std::size_t(l)]) *
                (1 - 2 * expint3(total)) * lam;
    for (int k = 0; k < nc; ++k) {
      const double a = k * dt, b = a + dt,
                   source =
                       sed[std::size_t(k) * nl + std::size_t(l)] / (column * kappa[std::size_t(l)]);
      escaped += 2 * kosmos::math::pi<double>() * source *
                 (expint3(a) - expint3(b) + expint3(total - b) - expint3(total - a)) * lam;
    }
  }
  auto species_near = [&](int comp, double a_micron) {
    int best = -1;
    for (int s = 0; s < ns; ++s)
      if (composition[std::size_t(s)] == comp &&
          (best < 0 || std::fabs(std::log(sizes.radius_micron[std::size_t(s)] / a_micron)) <
                           std::fabs(std::log(sizes.radius_micron[std::size_t(best)] / a_micron))))
        best = s;
    return best;
  };
  const int small_c = species_near(0, 0.01), big_si = species_near(1, 0.1);
  std::printf("%6s %14s %14s\n", "layer", "T(C 0.01um)", "T(Si 0.1um)");
  for (int c = 0; c < nc; c += 4)
    std::printf("%6d %14.3f %14.3f\n", c, temperature[std::size_t(c) * ns + std::size_t(small_c)],
                temperature[std::size_t(c) * ns + std::size_t(big_si)]);
  const double ratio = escaped / absorbed;
  std::printf("infrared escaping / starlight absorbed = %.6f\n", ratio);
  if (change > 1e-7 || !(std::fabs(ratio - 1) < 1e-3)) {
    std::printf("not converged\n");
    return 1;
  }
  std::printf("converged in %d iterations\n", iteration);
  return 0;
}
