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
#include <kosmos/dust/impl/emission_nodes.hpp>
#include <kosmos/dust/impl/photon_search.hpp>
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
  // Kokkos::Cuda with the CUDA specializations: the P(T) recursion's rows finished by a warp
  // (CudaWarpBlockWalk) instead of one thread
  bool use_cuda_specialization = true;
  // > 0: the P(T) emission's photon occupation sums are evaluated at wavelengths at most this far
  // apart in ln lambda and interpolated between (a cubic in ln lambda of their logarithm,
  // impl/emission_nodes.hpp); 0: at every wavelength.
  double emission_node_spacing = 0;
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
  // (Q, S + 1): where the inverse of ln E(T) searches. Species q's range of ln E in S equal cells:
  // entry i is the last table point below cell i's lowest ln E (0 if none), so an energy in cell i
  // lies between points (q, i) and (q, i + 1) + 1: a few table points, not the whole table.
  Kokkos::View<int**, Kokkos::LayoutRight, device_type> enthalpy_search;
  // The recursion's photon searches (energies eps_k = k_B x_l ascending in k = L - 1 - l, of the
  // GrainModel the model was prepared with).
  Impl::PhotonSearch<device_type> photon_search;
  Kokkos::View<double*, device_type> inverse_photon_energy;  // (L): 1 / eps_k, J^-1
  // options.bins is the most bins of any species: the bin extent of P(T) outputs.
  StochasticOptions options;
  // The bins of each selected species (set_species_bins; refine_bins refines them per species),
  // and the species grouped by their bins: one launch a group, its team scratch sized for them
  // (group k: group_bins(k) bins, by_bins(group_first(k) .. group_first(k + 1) - 1)).
  Kokkos::View<int*, Kokkos::HostSpace> species_bins;  // (Q)
  Kokkos::View<int*, device_type> by_bins;             // (Q): q in ascending bins
  Kokkos::View<int*, Kokkos::HostSpace> group_first;   // (groups + 1)
  Kokkos::View<int*, Kokkos::HostSpace> group_bins;    // (groups)
  // Where each species' bins start in a cell's row of the emission's work space (Q + 1): the
  // prefix sums of species_bins, total_bins their sum.
  Kokkos::View<int*, device_type> bin_offset;
  int total_bins = 0;
  // Where the emission evaluates its sums, with options.emission_node_spacing > 0 (else empty).
  Impl::EmissionNodes<device_type> emission_nodes;
  KOKKOS_INLINE_FUNCTION int selected() const { return int(species.extent(0)); }
};

// Gives selected species q bins[q] enthalpy bins (each >= 8); the model's options.bins becomes the
// most of them. prepare_stochastic gives every species options.bins.
template <class ExecSpace>
void set_species_bins(const ExecSpace& space, StochasticModel<ExecSpace>& m,
                      const std::vector<int>& bins) {
  const char* where = "kosmos::dust::set_species_bins";
  const int nq = m.selected();
  kosmos::Impl::require(int(bins.size()) == nq, where, bins.size(), " bin counts for ", nq,
                        " selected species");
  for (int q = 0; q < nq; ++q)
    kosmos::Impl::require(bins[std::size_t(q)] >= 8, where, "bins[", q,
                          "] = ", bins[std::size_t(q)], " must be >= 8");
  std::vector<int> order(static_cast<std::size_t>(nq));
  for (int q = 0; q < nq; ++q) order[std::size_t(q)] = q;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return bins[std::size_t(a)] < bins[std::size_t(b)]; });
  m.species_bins = Kokkos::View<int*, Kokkos::HostSpace>("kosmos::dust::species_bins", nq);
  m.by_bins =
      decltype(m.by_bins)(Kokkos::view_alloc(space, std::string("kosmos::dust::by_bins")), nq);
  const auto by_bins = Kokkos::create_mirror_view(m.by_bins);
  std::vector<int> first, counts;
  for (int k = 0; k < nq; ++k) {
    const int q = order[std::size_t(k)];
    m.species_bins(q) = bins[std::size_t(q)];
    by_bins(k) = q;
    if (counts.empty() || bins[std::size_t(q)] != counts.back()) {
      first.push_back(k);
      counts.push_back(bins[std::size_t(q)]);
    }
  }
  first.push_back(nq);
  m.group_first = Kokkos::View<int*, Kokkos::HostSpace>("kosmos::dust::group_first", first.size());
  m.group_bins = Kokkos::View<int*, Kokkos::HostSpace>("kosmos::dust::group_bins", counts.size());
  for (std::size_t k = 0; k < first.size(); ++k) m.group_first(k) = first[k];
  for (std::size_t k = 0; k < counts.size(); ++k) m.group_bins(k) = counts[k];
  Kokkos::deep_copy(space, m.by_bins, by_bins);
  m.bin_offset = decltype(m.bin_offset)(
      Kokkos::view_alloc(space, std::string("kosmos::dust::bin_offset")), nq + 1);
  const auto bin_offset = Kokkos::create_mirror_view(m.bin_offset);
  bin_offset(0) = 0;
  for (int q = 0; q < nq; ++q) bin_offset(q + 1) = bin_offset(q) + bins[std::size_t(q)];
  m.total_bins = bin_offset(nq);
  Kokkos::deep_copy(space, m.bin_offset, bin_offset);
  space.fence();  // the host mirrors go out of scope
  if (nq > 0) m.options.bins = bins[std::size_t(order.back())];
}

// The work space of add_stochastic_emission for cells() cells at a time: each (cell, selected
// species)'s P(T) as the emission reads it (impl/stochastic_emission.hpp), in the precision T, and
// with emission nodes ln S at each node. stochastic_emission_work makes one for a model;
// add_stochastic_emission refuses it once the model's bins or nodes change.
template <class T, class MemorySpace>
struct StochasticEmissionWork {
  Kokkos::View<T***, Kokkos::LayoutRight, MemorySpace> bins;      // (cell, bin_offset(q) + j, 3)
  Kokkos::View<int***, Kokkos::LayoutRight, MemorySpace> span;    // (cell, q, 2)
  Kokkos::View<T***, Kokkos::LayoutRight, MemorySpace> node_log;  // (cell, q, node)
  std::int64_t cells() const { return std::int64_t(bins.extent(0)); }
  // Cells [first, last) of this work space.
  StochasticEmissionWork rows(std::int64_t first, std::int64_t last) const {
    const auto r = Kokkos::make_pair(first, last);
    return {Kokkos::subview(bins, r, Kokkos::ALL, Kokkos::ALL),
            Kokkos::subview(span, r, Kokkos::ALL, Kokkos::ALL),
            Kokkos::subview(node_log, r, Kokkos::ALL, Kokkos::ALL)};
  }
};

// Cells whose emission work space of precision `value_bytes` fits in `bytes` (at least one).
template <class ExecSpace>
std::int64_t emission_batch_cells(const StochasticModel<ExecSpace>& m, std::size_t value_bytes,
                                  std::size_t bytes = std::size_t(256) << 20) {
  const std::size_t per_cell =
      (std::size_t(m.total_bins) * 3 + std::size_t(m.selected()) * m.emission_nodes.count()) *
          value_bytes +
      std::size_t(m.selected()) * 2 * sizeof(int);
  return std::max<std::int64_t>(1, std::int64_t(bytes / std::max<std::size_t>(per_cell, 1)));
}

template <class T, class ExecSpace>
StochasticEmissionWork<T, typename ExecSpace::memory_space> stochastic_emission_work(
    const ExecSpace& space, const StochasticModel<ExecSpace>& m, std::int64_t cells) {
  kosmos::Impl::require(cells >= 0, "kosmos::dust::stochastic_emission_work", "cells = ", cells);
  StochasticEmissionWork<T, typename ExecSpace::memory_space> work;
  work.bins = decltype(work.bins)(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                                     std::string("kosmos::dust::emission_bins")),
                                  std::size_t(cells), std::size_t(m.total_bins), 3);
  work.span = decltype(work.span)(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                                     std::string("kosmos::dust::emission_span")),
                                  std::size_t(cells), std::size_t(m.selected()), 2);
  work.node_log = decltype(work.node_log)(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                         std::string("kosmos::dust::emission_node_log")),
      std::size_t(cells), std::size_t(m.selected()), std::size_t(m.emission_nodes.count()));
  return work;
}
}  // namespace dust
}  // namespace kosmos

#include <kosmos/dust/impl/stochastic_emission.hpp>
#include <kosmos/dust/impl/stochastic_kernel.hpp>

namespace kosmos {
namespace dust {

namespace Impl {
// StochasticModel::enthalpy_search from the host's ln E table (Q, K): four cells a table interval.
template <class DeviceType, class ExecSpace, class HostTable>
Kokkos::View<int**, Kokkos::LayoutRight, DeviceType> enthalpy_search_table(const ExecSpace& space,
                                                                           const HostTable& log_e) {
  const int nq = int(log_e.extent(0)), nk = int(log_e.extent(1)), cells = 4 * (nk - 1);
  Kokkos::View<int**, Kokkos::LayoutRight, DeviceType> search(
      Kokkos::view_alloc(space, std::string("kosmos::dust::enthalpy_search")), nq, cells + 1);
  const auto h = Kokkos::create_mirror_view(search);
  for (int q = 0; q < nq; ++q) {
    const double first = log_e(q, 0), last = log_e(q, nk - 1);
    int lo = 0;
    for (int i = 0; i <= cells; ++i) {
      const double y = first + (last - first) * i / cells;
      while (lo + 1 <= nk - 2 && log_e(q, lo + 1) < y) ++lo;
      h(q, i) = lo;
    }
  }
  Kokkos::deep_copy(space, search, h);
  return search;
}
}  // namespace Impl

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
  m.enthalpy_search = Impl::enthalpy_search_table<typename StochasticModel<ExecSpace>::device_type>(
      space, h_enthalpy);
  m.log_cooling = decltype(m.log_cooling)(
      Kokkos::view_alloc(space, std::string("kosmos::dust::log_cooling")), nq, nk);
  Impl::build_cooling_table(space, grains, m);
  m.photon_search =
      Impl::build_photon_search<typename StochasticModel<ExecSpace>::device_type>(space, grains.x);
  m.inverse_photon_energy = decltype(m.inverse_photon_energy)(
      Kokkos::view_alloc(space, std::string("kosmos::dust::inverse_photon_energy")),
      grains.wavelengths());
  {
    const Impl::PhotonEnergies<typename GrainModel<T, ExecSpace>::vector_type> eps{
        grains.x, grains.wavelengths()};
    auto inverse = m.inverse_photon_energy;
    Kokkos::parallel_for(
        "kosmos::dust::inverse_photon_energy",
        Kokkos::RangePolicy<ExecSpace>(space, 0, grains.wavelengths()),
        KOKKOS_LAMBDA(const int k) { inverse(k) = 1 / eps(k); });
  }
  set_species_bins(space, m, std::vector<int>(std::size_t(nq), options.bins));
  if (options.emission_node_spacing > 0)
    m.emission_nodes = Impl::make_emission_nodes<typename StochasticModel<ExecSpace>::device_type>(
        space, grains.x, options.emission_node_spacing);
  space.fence();
  return m;
}

namespace Impl {
// The output policy that stores P(T) in probability and bin_temperature (C, Q, M), checked.
template <class ExecSpace, class Probability, class BinTemperature>
WriteDistribution<Probability, BinTemperature> distribution_output(
    const char* where, std::size_t cells, const StochasticModel<ExecSpace>& m,
    const Probability& probability, const BinTemperature& bin_temperature) {
  static_assert(Probability::rank == 3 && BinTemperature::rank == 3,
                "kosmos::dust: probability and bin_temperature are (cell, species, bin)");
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, typename Probability::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecSpace, typename BinTemperature::memory_space>::accessible,
      "kosmos::dust: probability and bin_temperature must be accessible from the execution space");
  const std::size_t dims[3] = {cells, std::size_t(m.selected()), std::size_t(m.options.bins)};
  for (int d = 0; d < 3; ++d) {
    kosmos::Impl::require_extent(where, "probability", probability, d, dims[d]);
    kosmos::Impl::require_extent(where, "bin_temperature", bin_temperature, d, dims[d]);
  }
  return {probability, bin_temperature};
}
}  // namespace Impl

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
  const char* where = "kosmos::dust::temperature_distributions";
  Impl::run_stochastic(
      space, g, m, intensity, temperature, status,
      Impl::distribution_output(where, intensity.extent(0), m, probability, bin_temperature),
      where);
}

namespace Impl {
// No output besides the emission's bins.
struct NoOutput {};
template <class Output>
Output with_output(NoOutput, const Output& output) {
  return output;
}
template <class Also, class Output>
BothOutputs<Also, Output> with_output(const Also& also, const Output& output) {
  return {also, output};
}

// add_stochastic_emission, its P(T) also given to the output policy `also` (or NoOutput).
template <class T, class ExecSpace, class Intensity, class Temperature, class Mass, class Sed,
          class Status, class WorkSpace, class Also>
void add_stochastic_emission(const char* where, const ExecSpace& space,
                             const GrainModel<T, ExecSpace>& g, const StochasticModel<ExecSpace>& m,
                             const Intensity& intensity, const Temperature& temperature,
                             const Mass& dust_mass, const Sed& sed, const Status& status,
                             const StochasticEmissionWork<T, WorkSpace>& work, const Also& also) {
  static_assert(
      Mass::rank == 1 && Sed::rank == 2,
      "kosmos::dust::add_stochastic_emission: dust_mass (cell) and sed (cell, wavelength)");
  static_assert(
      std::is_same<typename Sed::value_type, T>::value,
      "kosmos::dust::add_stochastic_emission: sed must hold the GrainModel's precision T");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename Mass::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Sed::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, WorkSpace>::accessible,
                "kosmos::dust::add_stochastic_emission: the Views must be accessible from the "
                "execution space");
  const std::size_t nc = intensity.extent(0), nq = std::size_t(m.selected());
  kosmos::Impl::require_extent(where, "dust_mass", dust_mass, 0, nc);
  kosmos::Impl::require_extent(where, "sed", sed, 0, nc);
  kosmos::Impl::require_extent(where, "sed", sed, 1, std::size_t(g.wavelengths()));
  kosmos::Impl::require(
      work.bins.extent(1) == std::size_t(m.total_bins) && work.bins.extent(2) == 3 &&
          work.span.extent(0) == work.bins.extent(0) && work.span.extent(1) == nq &&
          work.span.extent(2) == 2 && work.node_log.extent(0) == work.bins.extent(0) &&
          work.node_log.extent(1) == nq &&
          work.node_log.extent(2) == std::size_t(m.emission_nodes.count()),
      where, "the work space was not made for this model's ", m.total_bins, " bins, ", nq,
      " species and ", m.emission_nodes.count(), " emission nodes (stochastic_emission_work)");
  const std::int64_t batch = work.cells();
  kosmos::Impl::require(batch > 0 || nc == 0 || nq == 0, where, "the work space holds no cell");
  const auto run = [&](const auto exp_op) {
    for (std::int64_t first = 0; first < std::int64_t(nc) && nq > 0; first += batch) {
      const std::int64_t cells = std::min<std::int64_t>(batch, std::int64_t(nc) - first);
      const WriteEmissionBins<T, decltype(work.bins), decltype(work.span), decltype(m.bin_offset)>
          bins{work.bins, work.span, m.bin_offset, first};
      run_stochastic(space, g, m, intensity, temperature, status, with_output(also, bins), where,
                     first, cells);
      run_stochastic_emission(space, g, m, temperature, dust_mass, sed, status, work.bins,
                              work.span, work.node_log, exp_op, first, cells);
    }
  };
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value && std::is_same<T, float>::value) {
    if (m.options.fast_exp) return run(CudaFastExp());
  }
#endif
  run(LibraryExp());
}

}  // namespace Impl

// Replaces, in sed (C, L) as emission_sed wrote it, the equilibrium emission of each selected
// species by the emission of its P(T): sed(c, l) += m_c n_s sigma_{s,l} (sum_j P_j B(lambda_l, T_j)
// - B(lambda_l, T_eq)). Cells with status no_heating or invalid_heating keep their SED.
// P(T) goes through `work` (stochastic_emission_work), work.cells() cells at a time; the species'
// changes are added to the SED in species order (in double), so that the SED is the same, bit for
// bit, however the device schedules the (cell, species) teams. emission_batch_cells says how many
// cells fit in a given number of bytes; the overload without work allocates one of up to 256 MiB.
template <class T, class ExecSpace, class Intensity, class Temperature, class Mass, class Sed,
          class Status, class WorkSpace>
void add_stochastic_emission(const ExecSpace& space, const GrainModel<T, ExecSpace>& g,
                             const StochasticModel<ExecSpace>& m, const Intensity& intensity,
                             const Temperature& temperature, const Mass& dust_mass, const Sed& sed,
                             const Status& status,
                             const StochasticEmissionWork<T, WorkSpace>& work) {
  Impl::add_stochastic_emission("kosmos::dust::add_stochastic_emission", space, g, m, intensity,
                                temperature, dust_mass, sed, status, work, Impl::NoOutput());
}

// The same, and P(T) stored as temperature_distributions stores it, from the same solve.
template <class T, class ExecSpace, class Intensity, class Temperature, class Mass, class Sed,
          class Status, class WorkSpace, class Probability, class BinTemperature>
void add_stochastic_emission(const ExecSpace& space, const GrainModel<T, ExecSpace>& g,
                             const StochasticModel<ExecSpace>& m, const Intensity& intensity,
                             const Temperature& temperature, const Mass& dust_mass, const Sed& sed,
                             const Status& status, const StochasticEmissionWork<T, WorkSpace>& work,
                             const Probability& probability,
                             const BinTemperature& bin_temperature) {
  const char* where = "kosmos::dust::add_stochastic_emission";
  Impl::add_stochastic_emission(
      where, space, g, m, intensity, temperature, dust_mass, sed, status, work,
      Impl::distribution_output(where, intensity.extent(0), m, probability, bin_temperature));
}

template <class T, class ExecSpace, class Intensity, class Temperature, class Mass, class Sed,
          class Status>
void add_stochastic_emission(const ExecSpace& space, const GrainModel<T, ExecSpace>& g,
                             const StochasticModel<ExecSpace>& m, const Intensity& intensity,
                             const Temperature& temperature, const Mass& dust_mass, const Sed& sed,
                             const Status& status) {
  const std::int64_t nc = std::int64_t(intensity.extent(0));
  add_stochastic_emission(
      space, g, m, intensity, temperature, dust_mass, sed, status,
      stochastic_emission_work<T>(space, m, std::min(nc, emission_batch_cells(m, sizeof(T)))));
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

#include <kosmos/dust/refine_bins.hpp>
