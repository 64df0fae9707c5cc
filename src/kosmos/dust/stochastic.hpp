// Stochastic heating of small grains: the temperature distribution P(T) of each (cell, grain size)
// by the transition-matrix method of Guhathakurta & Draine (1989, ApJ 345, 230), with the
// continuous-cooling approximation for downward transitions and their recursive steady-state
// solution, and the emission of P(T) in the SED (replacing the equilibrium emission of the
// selected sizes). Heat capacities: Draine & Li (2001, ApJ 551, 807) Eqs. 9-11.
//
// Method, per (cell c, selected species s), one Kokkos team each (impl/stochastic_kernel.hpp):
//  - M enthalpy bins, log-spaced in T between T_lo and T_hi around the equilibrium energy E_eq =
//    E(T_eq): E_lo = max(E(min_temperature), E_eq - w), E_hi = E_eq + w + eps_max, where eps_max
//    is the most energetic absorbed photon and w = width_factor sqrt(E_eq eps_max) (a bound on the
//    shot-noise width); tiny grains get the whole range from min_temperature, big grains a narrow
//    window around T_eq. Where that window spans less than 1 % in T the grain is in equilibrium:
//    P(T) is the delta at T_eq (split between the two bins around E_eq on a 1 % window), its
//    emission the equilibrium one.
//  - upward rates from the absorbed photon spectrum R_l = I_l sigma_l dlambda_l / eps_l, each
//    photon taking bin i to E_i + eps split linearly between the two nearest bins (so every
//    transition conserves energy in expectation, including photons smaller than a bin);
//  - downward: continuous cooling, A_{j-1,j} = L(Tm_j) / (E_j - E_{j-1}), Tm_j the temperature
//    of the bin's midpoint energy (E_{j-1} + E_j) / 2, at which bin j also emits (P(T) reports
//    Tm_j): the dwell time and emission of a grain cooling through the bin by the midpoint rule,
//    second order in the bin width (the bin's edge T_j would make them first order), with
//    L(T) = sum_l sigma dlambda B interpolated in a per-species ln L(ln T) table (2048 points);
//  - steady state by the recursion P_j = sum_{i<j} B_{ji} P_i / A_{j-1,j},
//    B_{ji} = sum_{f>=j} A_{fi}.
//  The construction conserves energy (sum_j P_j L(Tm_j) = absorbed, to the L table's accuracy)
//  unless photons would lift the grain above T_hi (capped at max_temperature): the status says so.
#pragma once

#include <kosmos/dust/dustem.hpp>
#include <kosmos/dust/equilibrium.hpp>
#include <kosmos/dust/size_distribution.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kosmos {
namespace dust {

// Per (cell, selected species) status of the stochastic calculation.
enum StochasticStatus : int {
  // |emitted / absorbed - 1| <= energy_tolerance
  stochastic_ok = 0,
  // nothing absorbed: P(T) is the lowest bin, the SED is left as it was
  stochastic_no_heating = 1,
  // energy lost above the top bin (T_hi capped at max_temperature) or too few bins; P(T) and
  // its emission are still returned
  stochastic_energy_imbalance = 2,
  // absorbed power NaN, infinite or negative: P(T) NaN, the SED is left as it was
  stochastic_invalid_heating = 3
};

struct StochasticOptions {
  int bins = 128;                   // enthalpy bins per (cell, species)
  double min_temperature = 3.0;     // K: the lowest bin (the equilibrium solver's floor)
  double max_temperature = 3000.0;  // K: top of the enthalpy table and of the bins
  int table_points = 2048;    // ln E(ln T) and ln L(ln T) table points per species, log-spaced in T
  double width_factor = 4.0;  // bins reach w = width_factor sqrt(E_eq eps_max) below and above E_eq
  double energy_tolerance = 1e-2;  // stochastic_energy_imbalance above this relative mismatch
  // float on Kokkos::Cuda with the CUDA specializations: the P(T) emission's plain sums with
  // __expf and __fdividef, as the equilibrium SED (EquilibriumOptions::fast_exp)
  bool fast_exp = true;
};

// One grain species computed stochastically: its index in the GrainModel, material and radius;
// heat capacities from `heat_capacity` where given (e.g. a DustEM C_*.DAT: PAHs), else Draine & Li
// (2001) for the material.
struct StochasticSpecies {
  int index;
  GrainMaterial material;
  double radius_micron;
  std::shared_ptr<const HeatCapacityTable> heat_capacity = nullptr;
};

// Host: Draine & Li (2001) enthalpy E(T) (J, from 0 K) and heat capacity dE/dT (J/K) per atom
// (multiply by N - 2 for a grain of N atoms), and the number of atoms of a grain.
double enthalpy_per_atom(GrainMaterial material, double temperature);
double heat_capacity_per_atom(GrainMaterial material, double temperature);
double grain_atoms(GrainMaterial material, double radius_micron);
// ln E_grain(T_k) at options.table_points temperatures log-spaced over [min, max]_temperature.
std::vector<double> grain_log_enthalpy_table(GrainMaterial material, double radius_micron,
                                             const StochasticOptions& options);
// The same from a heat capacity table (table_enthalpy).
std::vector<double> grain_log_enthalpy_table(const HeatCapacityTable& table, double radius_micron,
                                             const StochasticOptions& options);

template <class ExecSpace>
struct StochasticModel {
  using device_type = Kokkos::Device<ExecSpace, typename ExecSpace::memory_space>;
  Kokkos::View<int*, device_type> species;  // (Q): GrainModel species index
  Kokkos::View<double**, Kokkos::LayoutRight, device_type> log_enthalpy;  // (Q, K): ln E(T_k), J
  Kokkos::View<double**, Kokkos::LayoutRight, device_type>
      log_cooling;  // (Q, K): ln L(T_k), W sr^-1
  // Where the recursion's photon searches start: photon_start(c) is the first photon k (energies
  // eps_k = k_B x_l ascending in k = L - 1 - l, of the GrainModel the model was prepared with)
  // with ln eps_k >= photon_log_first + c / photon_cells_per_log.
  Kokkos::View<int*, device_type> photon_start;
  double photon_log_first = 0, photon_cells_per_log = 1;
  StochasticOptions options;
  KOKKOS_INLINE_FUNCTION int selected() const { return int(species.extent(0)); }
};
}  // namespace dust
}  // namespace kosmos

#include <kosmos/dust/impl/stochastic_kernel.hpp>

namespace kosmos {
namespace dust {

// Builds the per-species enthalpy tables (host, Draine & Li 2001) and cooling tables L(T) =
// sum_l sigma dlambda B(lambda_l, T) (a kernel over the GrainModel's emission weights).
template <class T, class ExecSpace>
StochasticModel<ExecSpace> prepare_stochastic(
    const ExecSpace& space, const GrainModel<T, ExecSpace>& grains,
    const std::vector<StochasticSpecies>& species,
    const StochasticOptions& options = StochasticOptions()) {
  const char* where = "kosmos::dust::prepare_stochastic";
  Impl::check_stochastic_options(options);
  StochasticModel<ExecSpace> m;
  m.options = options;
  const int nq = int(species.size()), nk = options.table_points;
  m.species = decltype(m.species)(
      Kokkos::view_alloc(space, std::string("kosmos::dust::stochastic_species")), nq);
  m.log_enthalpy = decltype(m.log_enthalpy)(
      Kokkos::view_alloc(space, std::string("kosmos::dust::log_enthalpy")), nq, nk);
  auto h_species = Kokkos::create_mirror_view(m.species);
  auto h_enthalpy = Kokkos::create_mirror_view(m.log_enthalpy);
  for (int q = 0; q < nq; ++q) {
    const auto& sp = species[std::size_t(q)];
    kosmos::Impl::require(sp.index >= 0 && sp.index < grains.species(), where, "species[", q,
                          "].index = ", sp.index, " is not a species of the GrainModel (0..",
                          grains.species() - 1, ")");
    kosmos::Impl::require(sp.radius_micron > 0 && std::isfinite(sp.radius_micron), where,
                          "species[", q, "].radius_micron = ", sp.radius_micron);
    h_species(q) = sp.index;
    const auto table = sp.heat_capacity
                           ? grain_log_enthalpy_table(*sp.heat_capacity, sp.radius_micron, options)
                           : grain_log_enthalpy_table(sp.material, sp.radius_micron, options);
    for (int k = 0; k < nk; ++k) h_enthalpy(q, k) = table[std::size_t(k)];
  }
  Kokkos::deep_copy(space, m.species, h_species);
  Kokkos::deep_copy(space, m.log_enthalpy, h_enthalpy);
  m.log_cooling = decltype(m.log_cooling)(
      Kokkos::view_alloc(space, std::string("kosmos::dust::log_cooling")), nq, nk);
  Impl::build_cooling_table(space, grains, m);
  Impl::build_photon_start(space, grains, m);
  space.fence();
  return m;
}

// P(T) of every (cell, selected species): probability (C, Q, M) sums to 1 over the bins at
// bin_temperature (C, Q, M) in K; status (C, Q) a StochasticStatus. intensity (C, L) is the cells'
// mean intensity, temperature (C, S) their equilibrium temperatures (equilibrium_temperatures),
// which centre the bins of big grains.
template <class T, class ExecSpace, class Intensity, class Temperature, class Probability,
          class BinTemperature, class Status>
void temperature_distributions(const ExecSpace& space, const GrainModel<T, ExecSpace>& g,
                               const StochasticModel<ExecSpace>& m, const Intensity& intensity,
                               const Temperature& temperature, const Probability& probability,
                               const BinTemperature& bin_temperature, const Status& status) {
  static_assert(Probability::rank == 3 && BinTemperature::rank == 3,
                "kosmos::dust::temperature_distributions: probability and bin_temperature are "
                "(cell, species, bin)");
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, typename Probability::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecSpace, typename BinTemperature::memory_space>::accessible,
      "kosmos::dust::temperature_distributions: the Views must be accessible from the execution "
      "space");
  const char* where = "kosmos::dust::temperature_distributions";
  const std::size_t nc = intensity.extent(0), nq = std::size_t(m.selected()),
                    nb = std::size_t(m.options.bins);
  const std::size_t dims[3] = {nc, nq, nb};
  for (int d = 0; d < 3; ++d) {
    kosmos::Impl::require_extent(where, "probability", probability, d, dims[d]);
    kosmos::Impl::require_extent(where, "bin_temperature", bin_temperature, d, dims[d]);
  }
  Impl::run_stochastic(
      space, g, m, intensity, temperature, status,
      Impl::WriteDistribution<Probability, BinTemperature>{probability, bin_temperature}, where);
}

// Replaces, in sed (C, L) as emission_sed wrote it, the equilibrium emission of each selected
// species by the emission of its P(T): sed(c, l) += m_c n_s sigma_{s,l} (sum_j P_j B(lambda_l, T_j)
// - B(lambda_l, T_eq)). Cells with status no_heating or invalid_heating keep their SED.
// The species' changes go through `changes` (B, Q, L) of the precision T, B >= 1 cells at a time,
// and are added to the SED in species order (in double), so that the SED is the same, bit for
// bit, however the device schedules the (cell, species) teams; emission_batch_cells says how many
// cells fit in a given number of bytes. The overload without it allocates one of up to 128 MiB.
template <class T, class ExecSpace, class Intensity, class Temperature, class Mass, class Sed,
          class Status, class Changes>
void add_stochastic_emission(const ExecSpace& space, const GrainModel<T, ExecSpace>& g,
                             const StochasticModel<ExecSpace>& m, const Intensity& intensity,
                             const Temperature& temperature, const Mass& dust_mass, const Sed& sed,
                             const Status& status, const Changes& changes) {
  static_assert(
      Mass::rank == 1 && Sed::rank == 2,
      "kosmos::dust::add_stochastic_emission: dust_mass (cell) and sed (cell, wavelength)");
  static_assert(
      std::is_same<typename Sed::value_type, T>::value,
      "kosmos::dust::add_stochastic_emission: sed must hold the GrainModel's precision T");
  static_assert(Changes::rank == 3 && std::is_same<typename Changes::value_type, T>::value,
                "kosmos::dust::add_stochastic_emission: changes are (cell, selected species, "
                "wavelength) of the GrainModel's precision T");
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, typename Mass::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecSpace, typename Sed::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecSpace, typename Changes::memory_space>::accessible,
      "kosmos::dust::add_stochastic_emission: the Views must be accessible from the "
      "execution space");
  const char* where = "kosmos::dust::add_stochastic_emission";
  const std::size_t nc = intensity.extent(0), nq = std::size_t(m.selected());
  kosmos::Impl::require_extent(where, "dust_mass", dust_mass, 0, nc);
  kosmos::Impl::require_extent(where, "sed", sed, 0, nc);
  kosmos::Impl::require_extent(where, "sed", sed, 1, std::size_t(g.wavelengths()));
  kosmos::Impl::require_extent(where, "changes", changes, 1, nq);
  kosmos::Impl::require_extent(where, "changes", changes, 2, std::size_t(g.wavelengths()));
  const std::int64_t batch = std::int64_t(changes.extent(0));
  kosmos::Impl::require(batch > 0 || nc == 0 || nq == 0, where, "changes hold no cell");
  const auto run = [&](const auto exp_op) {
    using Emission = Impl::AddEmission<T, ExecSpace, Mass, Changes, std::decay_t<decltype(exp_op)>>;
    for (std::int64_t first = 0; first < std::int64_t(nc) && nq > 0; first += batch) {
      const std::int64_t cells = std::min<std::int64_t>(batch, std::int64_t(nc) - first);
      Impl::run_stochastic(space, g, m, intensity, temperature, status,
                           Emission{g.sed_weight, g.x, dust_mass, changes, first, exp_op}, where,
                           first, cells);
      Impl::add_changes_in_species_order(space, changes, sed, first, cells);
    }
  };
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value && std::is_same<T, float>::value) {
    if (m.options.fast_exp) return run(Impl::CudaFastExp());
  }
#endif
  run(LibraryExp());
}

// Cells whose (selected species, wavelength) changes of precision `value_bytes` fit in `bytes`
// (at least one).
inline std::int64_t emission_batch_cells(int selected, int wavelengths, std::size_t value_bytes,
                                         std::size_t bytes = std::size_t(128) << 20) {
  const std::size_t per_cell =
      std::size_t(std::max(selected, 1)) * std::size_t(std::max(wavelengths, 1)) * value_bytes;
  return std::max<std::int64_t>(1, std::int64_t(bytes / per_cell));
}

template <class T, class ExecSpace, class Intensity, class Temperature, class Mass, class Sed,
          class Status>
void add_stochastic_emission(const ExecSpace& space, const GrainModel<T, ExecSpace>& g,
                             const StochasticModel<ExecSpace>& m, const Intensity& intensity,
                             const Temperature& temperature, const Mass& dust_mass, const Sed& sed,
                             const Status& status) {
  const std::int64_t nc = std::int64_t(intensity.extent(0));
  const std::int64_t batch =
      std::min(nc, emission_batch_cells(m.selected(), g.wavelengths(), sizeof(T)));
  const Kokkos::View<T***, Kokkos::LayoutRight, typename ExecSpace::memory_space> changes(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                         std::string("kosmos::dust::stochastic_emission_changes")),
      std::size_t(batch), std::size_t(m.selected()), std::size_t(g.wavelengths()));
  add_stochastic_emission(space, g, m, intensity, temperature, dust_mass, sed, status, changes);
}

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

// How refine_bins ended: the bins of the returned model, the largest relative change of a band
// power in the last doubling, and whether that met the tolerance.
struct BinRefinement {
  int bins = 0;
  double change = 0;
  bool converged = false;
};

// P(T) bins refined by doubling: P(T) of every (cell, selected species) at options.bins, then 2x,
// 4x, ... up to max_bins, until the band emissivities of every cell change by less than
// `tolerance` relative to the previous doubling: per band [lo, hi) (micron), the power of all
// grains weighted by their number per dust mass (the others in equilibrium at `temperature`), the
// changes of the selected species summed in absolute value (bands holding less than 1e-3 of the
// cell's power in all bands count relative to that sum). One bin count for all the cells given
// (refine on a representative set, e.g. the hottest and the faintest cells). Returns the model at
// the final bins, for temperature_distributions or add_stochastic_emission.
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
  std::vector<double> previous, number(static_cast<std::size_t>(nq));
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> equilibrium_power;
  {
    const auto n = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.number_per_mass);
    Kokkos::View<int*, device> stochastic("kosmos::dust::refine_stochastic", g.species());
    const auto stochastic_h = Kokkos::create_mirror_view(stochastic);
    for (int q = 0; q < nq; ++q) {
      number[std::size_t(q)] = double(n(species[std::size_t(q)].index));
      stochastic_h(species[std::size_t(q)].index) = 1;
    }
    Kokkos::deep_copy(stochastic, stochastic_h);
    Kokkos::View<double**, Kokkos::LayoutRight, device> eq("kosmos::dust::refine_equilibrium",
                                                           nc, nbands);
    Impl::equilibrium_band_powers(space, g, temperature, stochastic, lo, hi, eq);
    equilibrium_power = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), eq);
  }
  // The enthalpy and cooling tables do not depend on the bins: built once, the bins set per pass.
  auto m = prepare_stochastic(space, g, species, options);
  BinRefinement r;
  while (true) {
    const int nb = m.options.bins;
    Kokkos::View<double***, Kokkos::LayoutRight, device> p("kosmos::dust::refine_p", nc, nq, nb),
        t("kosmos::dust::refine_t", nc, nq, nb);
    temperature_distributions(space, g, m, intensity, temperature, p, t, status);
    Impl::band_powers(space, g, m, p, t, lo, hi, power);
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), power);
    const std::vector<double> now(h.data(), h.data() + h.span());
    if (!previous.empty()) {
      // Per cell and band, the change of the dust's emissivity: grains weighted by their number,
      // the stochastic ones' changes summed without cancellation between species.
      r.change = 0;
      for (int c = 0; c < nc; ++c) {
        std::vector<double> power_then(static_cast<std::size_t>(nbands)),
            moved(static_cast<std::size_t>(nbands), 0.0);
        double total = 0;
        for (int b = 0; b < nbands; ++b) {
          power_then[std::size_t(b)] = equilibrium_power(c, b);
          total += equilibrium_power(c, b);
        }
        for (int q = 0; q < nq; ++q)
          for (int b = 0; b < nbands; ++b) {
            const std::size_t k =
                (std::size_t(c) * std::size_t(nq) + std::size_t(q)) * std::size_t(nbands) +
                std::size_t(b);
            power_then[std::size_t(b)] += number[std::size_t(q)] * previous[k];
            moved[std::size_t(b)] += number[std::size_t(q)] * std::fabs(now[k] - previous[k]);
            total += number[std::size_t(q)] * previous[k];
          }
        for (int b = 0; b < nbands; ++b) {
          const double ref = std::max(power_then[std::size_t(b)], 1e-3 * total);
          if (ref > 0) r.change = std::max(r.change, moved[std::size_t(b)] / ref);
        }
      }
      r.converged = r.change < tolerance;
    }
    r.bins = nb;
    if (r.converged || 2 * nb > max_bins) {
      if (report) *report = r;
      return m;
    }
    previous = now;
    m.options.bins = 2 * nb;
  }
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

template <class T, class ExecSpace, class Intensity, class Temperature, class Probability,
          class BinTemperature, class Status>
void temperature_distributions(const GrainModel<T, ExecSpace>& g,
                               const StochasticModel<ExecSpace>& m, const Intensity& intensity,
                               const Temperature& temperature, const Probability& probability,
                               const BinTemperature& bin_temperature, const Status& status) {
  temperature_distributions(ExecSpace(), g, m, intensity, temperature, probability, bin_temperature,
                            status);
}
template <class T, class ExecSpace, class Intensity, class Temperature, class Mass, class Sed,
          class Status>
void add_stochastic_emission(const GrainModel<T, ExecSpace>& g, const StochasticModel<ExecSpace>& m,
                             const Intensity& intensity, const Temperature& temperature,
                             const Mass& dust_mass, const Sed& sed, const Status& status) {
  add_stochastic_emission(ExecSpace(), g, m, intensity, temperature, dust_mass, sed, status);
}
template <class T, class ExecSpace>
StochasticModel<ExecSpace> prepare_stochastic(
    const GrainModel<T, ExecSpace>& grains, const std::vector<StochasticSpecies>& species,
    const StochasticOptions& options = StochasticOptions()) {
  return prepare_stochastic(ExecSpace(), grains, species, options);
}
}  // namespace dust
}  // namespace kosmos
