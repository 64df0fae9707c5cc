// The emission of P(T) (see add_stochastic_emission in kosmos/dust/stochastic.hpp): the P(T)
// kernel writes each (cell, species)'s bins as the emission reads them (WriteEmissionBins), then
// either one team per (cell, wavelength tile) adds every species' change to the SED in species
// order, or, with emission nodes (StochasticOptions::emission_node_spacing), one team per (cell,
// species) sums at the nodes and a thread per (cell, wavelength) interpolates between them and adds
// the species' changes in species order.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/dust/impl/emission_nodes.hpp>
#include <kosmos/dust/planck.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace kosmos {
namespace dust {
namespace Impl {

// Whether a (cell, species) of this stochastic status has P(T) bins for the emission: statuses
// no_heating and invalid_heating have none, and their cells keep their equilibrium SED.
KOKKOS_INLINE_FUNCTION constexpr bool has_emission_bins(int status) {
  return status != stochastic_no_heating && status != stochastic_invalid_heating;
}

// The bins of one (cell, species) for the emission: P_j, ln P_j (an empty bin: far below every
// other term) and 1 / T_j in T, and the span [first, last] of the bins whose P_j is not zero in T
// (an equilibrium grain has two; a narrow P(T) underflows float a few dozen bins from its peak).
// bins (cell, bin_offset(q) + j, 3), span (cell, q, 2), cells from first_cell. Nothing is written
// for statuses no_heating and invalid_heating: the emission skips them.
template <class T, class Bins, class Span, class Offsets>
struct WriteEmissionBins {
  Bins bins;
  Span span;
  Offsets bin_offset;
  std::int64_t first_cell;
  static std::size_t scratch_bytes(int) { return 0; }
  template <class Member, class Scratch, class ScratchSpace>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team, int c, int q, int, int status, double,
                                         const Scratch& p, const Scratch& tb,
                                         const ScratchSpace&) const {
    const int nb = int(p.extent(0)), offset = bin_offset(q);
    const std::int64_t row = c - first_cell;
    if (!has_emission_bins(status)) return;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nb), [&](const int j) {
      bins(row, offset + j, 0) = T(p(j));
      bins(row, offset + j, 1) = p(j) > 0 ? T(math::log(p(j))) : T(-1e6);
      bins(row, offset + j, 2) = T(1 / tb(j));
    });
    // The first and last bins of P > 0 in T, in one team reduction.
    Kokkos::MinMaxScalar<int> occupied;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, nb),
        [&](const int j, Kokkos::MinMaxScalar<int>& bounds) {
          if (T(p(j)) > T(0)) {
            bounds.min_val = j < bounds.min_val ? j : bounds.min_val;
            bounds.max_val = j > bounds.max_val ? j : bounds.max_val;
          }
        },
        Kokkos::MinMax<int>(occupied));
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      span(row, q, 0) = occupied.min_val > occupied.max_val ? nb : occupied.min_val;
      span(row, q, 1) = occupied.min_val > occupied.max_val ? -1 : occupied.max_val;
    });
  }
};

// One (cell, species)'s bins [first, last] as WriteEmissionBins wrote them (P_j, ln P_j, 1 / T_j),
// copied to the team's scratch: every thread of a team reads every term's bin.
template <class T>
struct SpeciesBins {
  const T* b;
  int first;
  KOKKOS_FORCEINLINE_FUNCTION T p(int j) const { return b[3 * (j - first)]; }
  KOKKOS_FORCEINLINE_FUNCTION T log_p(int j) const { return b[3 * (j - first) + 1]; }
  KOKKOS_FORCEINLINE_FUNCTION T inverse_t(int j) const { return b[3 * (j - first) + 2]; }
};

// Copies (cell row, species q)'s bins [first, last] from the work space to `staged` and waits for
// the team: SpeciesBins over them.
template <class T, class Member, class Staged, class Bins, class Offsets>
KOKKOS_INLINE_FUNCTION SpeciesBins<T> stage_species_bins(const Member& team, const Staged& staged,
                                                         const Bins& bins,
                                                         const Offsets& bin_offset,
                                                         std::int64_t row, int q, int first,
                                                         int last) {
  Kokkos::parallel_for(
      Kokkos::TeamThreadRange(team, last >= first ? 3 * (last - first + 1) : 0),
      [&](const int t) { staged(t) = bins(row, bin_offset(q) + first + t / 3, t % 3); });
  team.team_barrier();
  return SpeciesBins<T>{staged.data(), first};
}

// S = sum_j P_j n(x / T_j), n the photon occupation, over one (cell, species)'s bins, at photon
// energies x: the bins x wavelengths terms are most of the emission's arithmetic, so they are
// evaluated in the model's precision T (as emission_sed does). Where their sum is too small for T
// to hold every term (the Wien tail in float: hot bins of tiny P_j), the wavelength is summed again
// with each term relative to its largest, P_j n(u_j) = e^M e^(ln P_j - u_j - M) / (1 - e^-u_j),
// M = max_j (ln P_j - u_j), and e^M applied in double. Each thread takes wavelengths_per_thread
// neighbouring energies: their terms are independent chains (the special functions' latency
// overlaps), and neighbours start at nearly the same warm bin.
template <class T, class Exp>
struct BinOccupationSums {
  static constexpr int wavelengths_per_thread = 2;
  // Above this a sum of P_j n(u_j) with sum_j P_j = 1 over up to 4096 bins (the tool's --bins
  // limit) has lost under T's resolution to terms that underflowed or were cut off.
  static constexpr T safe_sum = std::is_same<T, float>::value ? T(1e-28) : T(1e-280);
  Exp exp_op;

  // sum_j P_j n(x_l / T_j) over [first, last] by the shifted terms (see above), in double.
  KOKKOS_INLINE_FUNCTION double shifted_sum(T xl, const SpeciesBins<T>& b, int first,
                                            int last) const {
    if (first > last) return 0;  // every P_j underflowed T
    // ln P_j <= 0: a bin whose u_j exceeds the cutoff past the hottest bin's term can neither be
    // the largest term nor count, and such bins are the coldest (a prefix).
    const T hottest = b.log_p(last) - xl * b.inverse_t(last);
    const T xs[1] = {xl}, bound[1] = {Impl::occupation_cutoff<T>() - hottest};
    int warm[1];
    first_below(xs, b, first, last, bound, warm);
    first = warm[0];
    T largest = b.log_p(first) - xl * b.inverse_t(first);
    for (int j = first + 1; j <= last; ++j)
      largest = math::fmax(largest, b.log_p(j) - xl * b.inverse_t(j));
    T sum = 0;
    for (int j = first; j <= last; ++j) {
      const T u = xl * b.inverse_t(j), exponent = b.log_p(j) - u - largest;
      if (exponent > -Impl::occupation_cutoff<T>())
        sum += exp_op(exponent) * exp_op.reciprocal(one_minus_exp_negative(u, exp_op));
    }
    return math::exp(double(largest)) * double(sum);
  }

  // For each n, the first j in [first, last + 1) with u_j = xs[n] / T_j <= bound[n]: 1 / T_j
  // falls with j, so the bins above the bound are a prefix. The N searches run in lockstep and
  // without branches (the same number of steps for all).
  template <int N>
  KOKKOS_INLINE_FUNCTION static void first_below(const T (&xs)[N], const SpeciesBins<T>& b,
                                                 int first, int last, const T (&bound)[N],
                                                 int (&j)[N]) {
    int length = last + 1 - first;
    KOSMOS_DEVICE_UNROLL
    for (int n = 0; n < N; ++n) j[n] = first;
    if (length <= 0) return;
    while (length > 1) {
      const int half = length / 2;
      KOSMOS_DEVICE_UNROLL
      for (int n = 0; n < N; ++n) j[n] += xs[n] * b.inverse_t(j[n] + half) > bound[n] ? half : 0;
      length -= half;
    }
    KOSMOS_DEVICE_UNROLL
    for (int n = 0; n < N; ++n) j[n] += xs[n] * b.inverse_t(j[n]) > bound[n] ? 1 : 0;
  }

  KOKKOS_FORCEINLINE_FUNCTION static T smallest(const T (&xl)[wavelengths_per_thread]) {
    T least = xl[0];
    for (int i = 1; i < wavelengths_per_thread; ++i) least = math::fmin(least, xl[i]);
    return least;
  }

  // S at the photon energies xl, in double: the plain sums in T, the shifted ones where those are
  // too small for T.
  KOKKOS_INLINE_FUNCTION void operator()(const T (&xl)[wavelengths_per_thread],
                                         const SpeciesBins<T>& b, int first, int last,
                                         double (&emitted)[wavelengths_per_thread]) const {
    constexpr int per = wavelengths_per_thread;
    // warm[i]: wavelength i's first bin below the cutoff; up to `series`, every wavelength's u_j
    // is at least the series limit: those terms are e^u - 1 and its reciprocal alone, a cold one
    // (j < warm[i]) weighted by 0 instead of branched around (it adds +0, so the sums are those
    // of the branching loop). One lockstep search.
    T xs[per + 1], bound[per + 1];
    int warm[per + 1];
    KOSMOS_DEVICE_UNROLL
    for (int i = 0; i < per; ++i) {
      xs[i] = xl[i];
      bound[i] = Impl::occupation_cutoff<T>();
    }
    xs[per] = smallest(xl);
    bound[per] = Impl::occupation_series_limit<T>();
    first_below(xs, b, first, last, bound, warm);
    int from = last + 1;
    KOSMOS_DEVICE_UNROLL
    for (int i = 0; i < per; ++i) from = warm[i] < from ? warm[i] : from;
    const int series = warm[per] > from ? warm[per] : from;
    T sum[per];
    for (int i = 0; i < per; ++i) sum[i] = 0;
    for (int j = from; j < series; ++j) {
      const T weight = b.p(j), inverse_t = b.inverse_t(j);
      for (int i = 0; i < per; ++i)
        sum[i] += (j >= warm[i] ? weight : T(0)) *
                  planck_occupation_between_limits(xl[i] * inverse_t, exp_op);
    }
    for (int j = series; j <= last; ++j) {
      const T weight = b.p(j), inverse_t = b.inverse_t(j);
      for (int i = 0; i < per; ++i)
        if (j >= warm[i])  // u <= the cutoff from warm[i] on
          sum[i] += weight * planck_occupation_below_cutoff(xl[i] * inverse_t, exp_op);
    }
    KOSMOS_DEVICE_UNROLL
    for (int i = 0; i < per; ++i)
      emitted[i] = sum[i] > safe_sum ? double(sum[i]) : shifted_sum(xl[i], b, first, last);
  }
};

// Species s's change of wavelength l's SED, m_c w_{s,l} (S - n(x_l / T_eq)): its P(T) emission S
// for its equilibrium one, w the GrainModel's SED weight n_s sigma 2hc^2 / lambda^5.
template <class T, class Exp>
KOKKOS_INLINE_FUNCTION double species_sed_change(double mass, T weight, T xl, double inverse_t_eq,
                                                 double emitted, const Exp& exp_op) {
  const double equilibrium = double(planck_occupation(T(double(xl) * inverse_t_eq), exp_op));
  return double(T(mass * double(weight) * (emitted - equilibrium)));
}

// sed(c, l) += species_sed_change for every selected species s in order (in double), S summed at
// every wavelength: one team per (cell, wavelength tile) stages each species' bins in scratch and
// its threads sum wavelengths_per_thread wavelengths each. Cells with status no_heating or
// invalid_heating keep their SED.
template <class T, class ExecSpace, class Temperature, class Mass, class Sed, class Status,
          class Bins, class Span, class Exp>
struct EmissionFunctor {
  static_assert(std::is_same<typename Bins::array_layout, Kokkos::LayoutRight>::value,
                "kosmos::dust: the emission's bins are LayoutRight (cell, bin, 3)");
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Sums = BinOccupationSums<T, Exp>;
  static constexpr int wavelengths_per_thread = Sums::wavelengths_per_thread;

  typename GrainModel<T, ExecSpace>::sed_matrix_type sed_weight;
  typename GrainModel<T, ExecSpace>::vector_type x;
  Kokkos::View<const int*, typename StochasticModel<ExecSpace>::device_type> species, bin_offset;
  Temperature temperature;
  Mass dust_mass;
  Sed sed;
  Status status;
  Bins bins;
  Span span;
  Sums sums;
  std::int64_t first_cell;
  int tiles, tile_width;  // a cell's wavelengths in `tiles` teams of tile_width
  int max_bins;           // the most bins a species has
  int level;              // team scratch level: 0, or 1 (global memory) where level 0 is too small

  using bins_scratch = Kokkos::View<T*, typename ExecSpace::scratch_memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using totals_scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                                      Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  // A species' bins, and the tile's SED in double while the species are added in order.
  static std::size_t scratch_bytes(int tile_width, int max_bins) {
    return bins_scratch::shmem_size(3 * max_bins) + totals_scratch::shmem_size(tile_width);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    constexpr int per = wavelengths_per_thread;
    const std::int64_t row = team.league_rank() / tiles, c = first_cell + row;
    const int nl = int(x.extent(0)), l0 = (team.league_rank() % tiles) * tile_width;
    const int l_end = l0 + tile_width < nl ? l0 + tile_width : nl, width = l_end - l0;
    const int nq = int(species.extent(0));
    const double mass = double(dust_mass(c));
    const bins_scratch staged(team.team_scratch(level), 3 * max_bins);
    const totals_scratch totals(team.team_scratch(level), tile_width);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, width),
                         [&](const int t) { totals(t) = double(sed(c, l0 + t)); });
    for (int q = 0; q < nq; ++q) {
      if (!has_emission_bins(status(c, q))) continue;
      const int s = species(q), first = span(row, q, 0), last = span(row, q, 1);
      team.team_barrier();  // the previous species' terms have read `staged`
      const auto b = stage_species_bins<T>(team, staged, bins, bin_offset, row, q, first, last);
      const double inverse_t_eq = 1 / double(temperature(c, s));
      Kokkos::parallel_for(
          Kokkos::TeamThreadRange(team, (width + per - 1) / per), [&](const int k) {
            int l[per];
            T xl[per];
            for (int i = 0; i < per; ++i) {
              l[i] =
                  l0 + k * per + i < l_end ? l0 + k * per + i : l_end - 1;  // a repeat past the end
              xl[i] = x(l[i]);
            }
            double emitted[per];
            sums(xl, b, first, last, emitted);
            KOSMOS_DEVICE_UNROLL
            for (int i = 0; i < per; ++i)
              if (l0 + k * per + i < l_end)
                totals(l[i] - l0) += species_sed_change(mass, sed_weight(s, l[i]), xl[i],
                                                        inverse_t_eq, emitted[i], sums.exp_op);
          });
    }
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, width), [&](const int t) {
      sed(c, l0 + t) = typename Sed::value_type(totals(t));
    });
  }
};

// node_log's value for an S that underflowed to 0.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION constexpr T node_log_empty() {
  return -std::numeric_limits<T>::max();
}

// With emission nodes (StochasticOptions::emission_node_spacing), first ln S of every (cell,
// species) at every node: one team per (cell, selected species) stages its bins once and its
// threads sum wavelengths_per_thread nodes each. node_log (cell, q, node) in T. Nothing is
// written for a (cell, species) without emission bins.
template <class T, class ExecSpace, class Status, class Bins, class Span, class NodeLog, class Exp>
struct NodeSumsFunctor {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using device_type = typename StochasticModel<ExecSpace>::device_type;
  using Sums = BinOccupationSums<T, Exp>;
  using bins_scratch = Kokkos::View<T*, typename ExecSpace::scratch_memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  typename GrainModel<T, ExecSpace>::vector_type x;
  Kokkos::View<const int*, device_type> bin_offset;
  Status status;
  Bins bins;
  Span span;
  NodeLog node_log;
  Sums sums;
  EmissionNodes<device_type> nodes;
  std::int64_t first_cell;
  int max_bins, level;

  static std::size_t scratch_bytes(int max_bins) { return bins_scratch::shmem_size(3 * max_bins); }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    constexpr int per = Sums::wavelengths_per_thread;
    const int nq = int(node_log.extent(1)), count = nodes.count();
    const std::int64_t row = team.league_rank() / nq;
    const int q = team.league_rank() % nq;
    if (!has_emission_bins(status(first_cell + row, q))) return;
    const int first = span(row, q, 0), last = span(row, q, 1);
    const auto b = stage_species_bins<T>(team, bins_scratch(team.team_scratch(level), 3 * max_bins),
                                         bins, bin_offset, row, q, first, last);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (count + per - 1) / per), [&](const int k) {
      T xl[per];
      for (int i = 0; i < per; ++i)
        xl[i] = x(nodes.wavelength(k * per + i < count ? k * per + i : count - 1));
      double emitted[per];
      sums(xl, b, first, last, emitted);
      KOSMOS_DEVICE_UNROLL
      for (int i = 0; i < per; ++i)
        if (k * per + i < count)
          node_log(row, q, k * per + i) =
              emitted[i] > 0 ? T(math::log(emitted[i])) : node_log_empty<T>();
    });
  }
};

// Then sed(c, l) += species_sed_change for every selected species in order (in double), S at a
// node its own, elsewhere exp of the stencil's cubic in ln lambda of ln S (0 where S underflowed at
// a stencil node: S decreases with x, the Wien tail of every bin). A thread a (cell, wavelength),
// wavelengths fastest.
template <class T, class ExecSpace, class Temperature, class Mass, class Sed, class Status,
          class NodeLog, class Exp>
struct NodeEmissionFunctor {
  using device_type = typename StochasticModel<ExecSpace>::device_type;
  typename GrainModel<T, ExecSpace>::sed_matrix_type sed_weight;
  typename GrainModel<T, ExecSpace>::vector_type x;
  Kokkos::View<const int*, device_type> species;
  Temperature temperature;
  Mass dust_mass;
  Sed sed;
  Status status;
  NodeLog node_log;
  Exp exp_op;
  EmissionNodes<device_type> nodes;
  std::int64_t first_cell;

  KOKKOS_INLINE_FUNCTION double interpolated(std::int64_t row, int q, int l, int stencil) const {
    const int at = nodes.node_at(l);
    if (at >= 0) {
      const T log_s = node_log(row, q, at);
      return log_s > node_log_empty<T>() ? math::exp(double(log_s)) : 0.0;
    }
    const int from = nodes.stencil(l);
    double log_s = 0;
    for (int i = 0; i < stencil; ++i) {
      const T node = node_log(row, q, from + i);
      if (!(node > node_log_empty<T>())) return 0;
      log_s += nodes.weight(l, i) * double(node);
    }
    return math::exp(log_s);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    const int nl = int(x.extent(0)), nq = int(species.extent(0));
    const std::int64_t row = i / nl, c = first_cell + row;
    const int l = int(i % nl);
    const int stencil =
        nodes.count() < emission_stencil_size ? nodes.count() : emission_stencil_size;
    const double mass = double(dust_mass(c));
    const T xl = x(l);
    double total = double(sed(c, l));
    for (int q = 0; q < nq; ++q) {
      if (!has_emission_bins(status(c, q))) continue;
      const int s = species(q);
      total += species_sed_change(mass, sed_weight(s, l), xl, 1 / double(temperature(c, s)),
                                  interpolated(row, q, l, stencil), exp_op);
    }
    sed(c, l) = typename Sed::value_type(total);
  }
};

// Queues the emission of cells [first_cell, first_cell + cells) from bins and span (rows from
// first_cell) into sed; with emission nodes, through node_log (rows from first_cell).
template <class T, class ExecSpace, class Temperature, class Mass, class Sed, class Status,
          class Bins, class Span, class NodeLog, class Exp>
void run_stochastic_emission(const ExecSpace& space, const GrainModel<T, ExecSpace>& g,
                             const StochasticModel<ExecSpace>& m, const Temperature& temperature,
                             const Mass& dust_mass, const Sed& sed, const Status& status,
                             const Bins& bins, const Span& span, const NodeLog& node_log,
                             const Exp& exp_op, std::int64_t first_cell, std::int64_t cells) {
  const int nl = g.wavelengths(), nq = m.selected();
  const bool host = kosmos::Impl::is_host_space<ExecSpace>();
  int max_bins = 0;
  for (std::size_t k = 0; k < m.group_bins.extent(0); ++k)
    max_bins = m.group_bins(k) > max_bins ? m.group_bins(k) : max_bins;
  const auto scratch_level = [](std::size_t bytes) {
    return bytes <= std::size_t(Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0)) ? 0 : 1;
  };
  const BinOccupationSums<T, Exp> sums{exp_op};
  constexpr int gpu_team_size = 64;
  const int team_size = host ? 1 : gpu_team_size;
  if (m.emission_nodes.count() > 0) {
    using sums_functor = NodeSumsFunctor<T, ExecSpace, Status, Bins, Span, NodeLog, Exp>;
    kosmos::Impl::require(
        std::size_t(cells) * std::size_t(nq) <= std::size_t(std::numeric_limits<int>::max()),
        "kosmos::dust::add_stochastic_emission", cells,
        " cells exceed the league size; pass fewer cells per call");
    const std::size_t scratch = sums_functor::scratch_bytes(max_bins);
    const int level = scratch_level(scratch);
    Kokkos::parallel_for("kosmos::dust::stochastic_emission_nodes",
                         kosmos::Impl::non_blocking_policy(
                             Kokkos::TeamPolicy<ExecSpace>(space, int(cells * nq), team_size)
                                 .set_scratch_size(level, Kokkos::PerTeam(scratch))),
                         sums_functor{g.x, m.bin_offset, status, bins, span, node_log, sums,
                                      m.emission_nodes, first_cell, max_bins, level});
    Kokkos::parallel_for(
        "kosmos::dust::stochastic_emission",
        kosmos::Impl::non_blocking_policy(
            Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, cells * nl)),
        NodeEmissionFunctor<T, ExecSpace, Temperature, Mass, Sed, Status, NodeLog, Exp>{
            g.sed_weight, g.x, m.species, temperature, dust_mass, sed, status, node_log, exp_op,
            m.emission_nodes, first_cell});
    return;
  }
  using functor = EmissionFunctor<T, ExecSpace, Temperature, Mass, Sed, Status, Bins, Span, Exp>;
  // GPUs: a team of 64 threads per 128 wavelengths, so that a chunk's cells fill the device; the
  // host: a team (one thread) per cell.
  const int tile_width = host ? nl : team_size * functor::wavelengths_per_thread;
  const int tiles = (nl + tile_width - 1) / tile_width;
  kosmos::Impl::require(
      std::size_t(cells) * std::size_t(tiles) <= std::size_t(std::numeric_limits<int>::max()),
      "kosmos::dust::add_stochastic_emission", cells,
      " cells exceed the league size; pass fewer cells per call");
  const std::size_t scratch = functor::scratch_bytes(tile_width, max_bins);
  const int level = scratch_level(scratch);
  Kokkos::parallel_for(
      "kosmos::dust::stochastic_emission",
      kosmos::Impl::non_blocking_policy(
          Kokkos::TeamPolicy<ExecSpace>(space, int(cells * tiles), team_size)
              .set_scratch_size(level, Kokkos::PerTeam(scratch))),
      functor{g.sed_weight, g.x, m.species, m.bin_offset, temperature, dust_mass, sed, status, bins,
              span, sums, first_cell, tiles, tile_width, max_bins, level});
}
}  // namespace Impl
}  // namespace dust
}  // namespace kosmos
