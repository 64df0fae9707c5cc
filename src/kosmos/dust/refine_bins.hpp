// Stochastic-heating bins refined per species (refine_bins): P(T) at doubling bin counts on
// representative cells until the band emissivities they give change by less than a tolerance.
#pragma once

#include <kosmos/dust/stochastic.hpp>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace kosmos {
namespace dust {

namespace Impl {
// scale_s sum over the wavelengths of [lo, hi) of emission_weight(l, s) occupation(x_l), the
// band's sigma dlambda B summed with a mean photon occupation (W sr^-1 per grain).
template <class T, class ExecSpace, class Occupation>
KOKKOS_INLINE_FUNCTION double band_power(const GrainModel<T, ExecSpace>& g, int s, double lo,
                                         double hi, const Occupation& occupation) {
  double sum = 0;
  for (int l = 0; l < g.wavelengths(); ++l) {
    const double lambda = constants::c2 / double(g.x(l));
    if (lambda >= lo && lambda < hi)
      sum += double(g.emission_weight(l, s)) * occupation(double(g.x(l)));
  }
  return double(g.scale(s)) * sum;
}

// power(c, q, b): band b's power of P(T) (sum_j P_j B(lambda, T_j)) of selected species q.
template <class T, class ExecSpace, class Probability, class Power, class Edges>
void band_powers(const ExecSpace& space, const GrainModel<T, ExecSpace>& g,
                 const StochasticModel<ExecSpace>& m, const Probability& probability,
                 const Probability& bin_temperature, const Edges& lo, const Edges& hi,
                 const Power& power) {
  const int nc = int(probability.extent(0)), nq = int(probability.extent(1)),
            nb = int(probability.extent(2)), nbands = int(lo.extent(0));
  const auto species = m.species;
  Kokkos::parallel_for(
      "kosmos::dust::stochastic_band_powers",
      Kokkos::RangePolicy<ExecSpace>(space, 0, nc * nq * nbands), KOKKOS_LAMBDA(const int k) {
        const int b = k % nbands, q = (k / nbands) % nq, c = k / (nbands * nq);
        power(c, q, b) = band_power(g, species(q), lo(b), hi(b), [&](const double x) {
          double e = 0;
          for (int j = 0; j < nb; ++j)
            e += probability(c, q, j) * planck_occupation(x / bin_temperature(c, q, j));
          return e;
        });
      });
}

// power(c, b): band b's power of the species not computed stochastically (mask 0), in
// equilibrium at temperature(c, s), weighted by their number per dust mass.
template <class T, class ExecSpace, class Temperature, class Mask, class Power, class Edges>
void equilibrium_band_powers(const ExecSpace& space, const GrainModel<T, ExecSpace>& g,
                             const Temperature& temperature, const Mask& stochastic,
                             const Edges& lo, const Edges& hi, const Power& power) {
  const int nc = int(power.extent(0)), nbands = int(power.extent(1)), ns = g.species();
  const auto number = g.number_per_mass;
  Kokkos::parallel_for(
      "kosmos::dust::equilibrium_band_powers",
      Kokkos::RangePolicy<ExecSpace>(space, 0, nc * nbands), KOKKOS_LAMBDA(const int k) {
        const int b = k % nbands, c = k / nbands;
        double sum = 0;
        for (int s = 0; s < ns; ++s) {
          const double t = double(temperature(c, s));
          if (stochastic(s) || !(t > 0)) continue;
          sum += double(number(s)) * band_power(g, s, lo(b), hi(b), [&](const double x) {
                   return planck_occupation(x / t);
                 });
        }
        power(c, b) = sum;
      });
}
}  // namespace Impl

// How refine_bins ended: the most bins of any species (the returned model's options.bins), each
// selected species' bins, the largest relative change of a band power at those bins (each species
// against half its bins), and whether that met the tolerance.
struct BinRefinement {
  int bins = 0;
  std::vector<int> species_bins;
  double change = 0;
  bool converged = false;
};

namespace Impl {
// The band powers (c, q, b) of the selected species at each refinement level, and the cells'
// changes at given per-species levels.
struct RefinementLevels {
  int cells, selected, bands;
  std::vector<double> number;              // (q): grains per dust mass
  std::vector<double> equilibrium_power;   // (c, b): the other species, weighted
  std::vector<std::vector<double>> power;  // [level](c, q, b)
  std::vector<std::vector<int>> status;    // [level](c, q): StochasticStatus

  // The cells where species q's P(T) at `level` bins loses energy (too few bins, or the top).
  int imbalanced(int level, int q) const {
    int count = 0;
    for (int c = 0; c < cells; ++c)
      count +=
          status[std::size_t(level)][std::size_t(c) * std::size_t(selected) + std::size_t(q)] ==
          stochastic_energy_imbalance;
    return count;
  }

  double at(int level, int c, int q, int b) const {
    return power[std::size_t(level)]
                [(std::size_t(c) * std::size_t(selected) + std::size_t(q)) * std::size_t(bands) +
                 std::size_t(b)];
  }
  // number_q |P_q(level_q) - P_q(level_q - 1)|: species q's change in cell c, band b.
  double moved(const std::vector<int>& level, int c, int q, int b) const {
    const int k = level[std::size_t(q)];
    return number[std::size_t(q)] * std::fabs(at(k, c, q, b) - at(k - 1, c, q, b));
  }
  // The largest relative change over cells and bands at the species' levels (bands holding less
  // than 1e-3 of the cell's power in all bands count relative to that), and where it is.
  std::pair<double, std::pair<int, int>> worst_change(const std::vector<int>& level) const {
    std::pair<double, std::pair<int, int>> worst{0.0, {0, 0}};
    for (int c = 0; c < cells; ++c) {
      std::vector<double> now(static_cast<std::size_t>(bands)),
          moved_sum(static_cast<std::size_t>(bands), 0.0);
      double total = 0;
      for (int b = 0; b < bands; ++b) {
        now[std::size_t(b)] =
            equilibrium_power[std::size_t(c) * std::size_t(bands) + std::size_t(b)];
        for (int q = 0; q < selected; ++q) {
          now[std::size_t(b)] += number[std::size_t(q)] * at(level[std::size_t(q)], c, q, b);
          moved_sum[std::size_t(b)] += moved(level, c, q, b);
        }
        total += now[std::size_t(b)];
      }
      for (int b = 0; b < bands; ++b) {
        const double ref = std::max(now[std::size_t(b)], 1e-3 * total);
        if (ref > 0 && moved_sum[std::size_t(b)] / ref > worst.first)
          worst = {moved_sum[std::size_t(b)] / ref, {c, b}};
      }
    }
    return worst;
  }
};
}  // namespace Impl

// P(T) bins refined per species by doubling, until the band emissivities of every cell change by
// less than `tolerance`: per band [lo, hi) (micron), the power of all grains weighted by their
// number per dust mass (the others in equilibrium at `temperature`), the changes of the selected
// species, each against half its bins, summed in absolute value (bands holding less than 1e-3 of
// the cell's power in all bands count relative to that sum). Every species starts at
// 2 x options.bins (its change against options.bins), doubled while its P(T) loses more energy
// than options.energy_tolerance in more cells at these bins than at twice as many; while a band
// changes by `tolerance` or more,
// the species that moves the worst band most doubles its bins (up to max_bins). Species whose
// P(T) converges early (big grains, narrow P(T)) keep few bins; the ones that carry a band's power
// get more. One set of bins for all the cells given (refine on a representative set, e.g. the
// hottest and the faintest cells). Returns the model at those bins (set_species_bins), for
// temperature_distributions or add_stochastic_emission.
template <class T, class ExecSpace, class Intensity, class Temperature>
StochasticModel<ExecSpace> refine_bins(const ExecSpace& space, const GrainModel<T, ExecSpace>& g,
                                       const std::vector<StochasticSpecies>& species,
                                       const Intensity& intensity, const Temperature& temperature,
                                       const StochasticOptions& options,
                                       const std::vector<std::pair<double, double>>& bands_micron,
                                       double tolerance = 0.01, int max_bins = 4096,
                                       BinRefinement* report = nullptr) {
  const char* where = "kosmos::dust::refine_bins";
  kosmos::Impl::require(tolerance > 0 && !bands_micron.empty() && max_bins >= options.bins, where,
                        "tolerance = ", tolerance, ", ", bands_micron.size(),
                        " bands and max_bins = ", max_bins, " (>= bins = ", options.bins, ")");
  using device = Kokkos::Device<ExecSpace, typename ExecSpace::memory_space>;
  const int nc = int(intensity.extent(0)), nq = int(species.size()),
            nbands = int(bands_micron.size());
  Kokkos::View<double*, device> lo("kosmos::dust::band_lo", nbands),
      hi("kosmos::dust::band_hi", nbands);
  auto lo_h = Kokkos::create_mirror_view(lo);
  auto hi_h = Kokkos::create_mirror_view(hi);
  for (int b = 0; b < nbands; ++b) {
    kosmos::Impl::require(bands_micron[std::size_t(b)].first < bands_micron[std::size_t(b)].second,
                          where, "band ", b, " is empty");
    lo_h(b) = bands_micron[std::size_t(b)].first * 1e-6;
    hi_h(b) = bands_micron[std::size_t(b)].second * 1e-6;
  }
  Kokkos::deep_copy(lo, lo_h);
  Kokkos::deep_copy(hi, hi_h);
  Kokkos::View<double***, Kokkos::LayoutRight, device> power("kosmos::dust::band_power", nc, nq,
                                                             nbands);
  Kokkos::View<int**, Kokkos::LayoutRight, device> status("kosmos::dust::refine_status", nc, nq);
  Impl::RefinementLevels levels{nc, nq, nbands, std::vector<double>(std::size_t(nq)), {}, {}, {}};
  {
    const auto n = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.number_per_mass);
    Kokkos::View<int*, device> stochastic("kosmos::dust::refine_stochastic", g.species());
    const auto stochastic_h = Kokkos::create_mirror_view(stochastic);
    for (int q = 0; q < nq; ++q) {
      levels.number[std::size_t(q)] = double(n(species[std::size_t(q)].index));
      stochastic_h(species[std::size_t(q)].index) = 1;
    }
    Kokkos::deep_copy(stochastic, stochastic_h);
    Kokkos::View<double**, Kokkos::LayoutRight, device> eq("kosmos::dust::refine_equilibrium", nc,
                                                           nbands);
    Impl::equilibrium_band_powers(space, g, temperature, stochastic, lo, hi, eq);
    const auto eq_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), eq);
    levels.equilibrium_power.assign(eq_h.data(), eq_h.data() + eq_h.span());
  }
  // The enthalpy and cooling tables do not depend on the bins: built once. Level k is every
  // species at options.bins x 2^k, computed when a species first needs it.
  auto m = prepare_stochastic(space, g, species, options);
  const auto compute_up_to = [&](int level) {
    while (int(levels.power.size()) <= level) {
      const int nb = options.bins << levels.power.size();
      set_species_bins(space, m, std::vector<int>(std::size_t(nq), nb));
      Kokkos::View<double***, Kokkos::LayoutRight, device> p("kosmos::dust::refine_p", nc, nq, nb),
          t("kosmos::dust::refine_t", nc, nq, nb);
      temperature_distributions(space, g, m, intensity, temperature, p, t, status);
      Impl::band_powers(space, g, m, p, t, lo, hi, power);
      const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), power);
      levels.power.emplace_back(h.data(), h.data() + h.span());
      const auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), status);
      levels.status.emplace_back(s.data(), s.data() + s.span());
    }
  };
  int top_level = 0;
  while ((options.bins << (top_level + 1)) <= max_bins) ++top_level;
  BinRefinement r;
  std::vector<int> level(static_cast<std::size_t>(nq), std::min(1, top_level));
  compute_up_to(std::min(1, top_level));
  // A species that loses energy at its bins in some cell doubles them while that helps (the
  // energy lost above max_temperature does not go with more bins).
  for (int q = 0; q < nq; ++q)
    while (level[std::size_t(q)] < top_level && levels.imbalanced(level[std::size_t(q)], q) > 0) {
      compute_up_to(level[std::size_t(q)] + 1);
      if (levels.imbalanced(level[std::size_t(q)] + 1, q) >=
          levels.imbalanced(level[std::size_t(q)], q))
        break;
      ++level[std::size_t(q)];
    }
  while (top_level > 0 && nq > 0) {
    const auto worst = levels.worst_change(level);
    r.change = worst.first;
    r.converged = r.change < tolerance;
    if (r.converged) break;
    // The species that moves the worst band most, among those that can still double.
    int refine = -1;
    for (int q = 0; q < nq; ++q)
      if (level[std::size_t(q)] < top_level &&
          (refine < 0 || levels.moved(level, worst.second.first, q, worst.second.second) >
                             levels.moved(level, worst.second.first, refine, worst.second.second)))
        refine = q;
    if (refine < 0) break;
    compute_up_to(++level[std::size_t(refine)]);
  }
  r.species_bins.resize(std::size_t(nq));
  for (int q = 0; q < nq; ++q)
    r.species_bins[std::size_t(q)] = options.bins << level[std::size_t(q)];
  set_species_bins(space, m, r.species_bins);
  r.bins = m.options.bins;
  if (report) *report = r;
  return m;
}

// Band edges (micron) in which the bins of a run are refined by default: the near- and
// mid-infrared where the emission of stochastically heated grains is (3-6, 6-12, 12-25, 25-60).
inline std::vector<std::pair<double, double>> default_refinement_bands() {
  return {{3.0, 6.0}, {6.0, 12.0}, {12.0, 25.0}, {25.0, 60.0}};
}

// refine_bins for a set of representative cells given by their mean intensity (C, L; e.g. the
// brightest and a sample of a run's cells): their heating and equilibrium temperatures are solved
// here (solver), then the bins are doubled from options.bins up to max_bins until no band power
// in `bands` changes by more than `tolerance`.
template <class T, class ExecSpace, class Intensity>
StochasticModel<ExecSpace> refine_bins_for_cells(
    const ExecSpace& space, const GrainModel<T, ExecSpace>& g,
    const std::vector<StochasticSpecies>& species, const Intensity& intensity,
    const SolverOptions& solver, const StochasticOptions& options, double tolerance = 0.01,
    int max_bins = 2048, BinRefinement* report = nullptr,
    const std::vector<std::pair<double, double>>& bands = default_refinement_bands()) {
  using device = Kokkos::Device<ExecSpace, typename ExecSpace::memory_space>;
  const std::size_t nc = intensity.extent(0), ns = std::size_t(g.species());
  Kokkos::View<T**, Kokkos::LayoutLeft, device> heat("kosmos::dust::refine_heating", nc, ns),
      t_eq("kosmos::dust::refine_t_eq", nc, ns);
  Kokkos::View<int**, Kokkos::LayoutLeft, device> status("kosmos::dust::refine_eq_status", nc, ns);
  heating(space, g, intensity, heat);
  equilibrium_temperatures(space, g, heat, t_eq, status, solver);
  return refine_bins(space, g, species, intensity, t_eq, options, bands, tolerance, max_bins,
                     report);
}
}  // namespace dust
}  // namespace kosmos
