// The stochastic-heating kernel (see kosmos/dust/stochastic.hpp for the method): one team per
// (cell, selected species), the absorbed photon spectrum, the bins and P(T) in team scratch.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/core/validation.hpp>
#include <kosmos/dust/impl/photon_search.hpp>
#include <kosmos/dust/impl/stochastic_recursion.hpp>
#include <kosmos/dust/planck.hpp>
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS)
#include <kosmos/dust/stochastic_cuda.hpp>
#endif

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace kosmos {
namespace dust {
namespace Impl {

inline void check_stochastic_options(const StochasticOptions& o) {
  const char* where = "kosmos::dust::StochasticOptions";
  kosmos::Impl::require(o.bins >= 8, where, "bins = ", o.bins, " must be >= 8");
  kosmos::Impl::require(o.min_temperature > 0 && o.min_temperature < o.max_temperature &&
                            std::isfinite(o.max_temperature),
                        where, "temperature range [", o.min_temperature, ", ", o.max_temperature,
                        "] K is empty or not positive");
  kosmos::Impl::require(o.table_points >= 16, where, "table_points = ", o.table_points,
                        " must be >= 16");
  kosmos::Impl::require(o.width_factor > 0 && std::isfinite(o.width_factor), where,
                        "width_factor = ", o.width_factor);
  kosmos::Impl::require(o.energy_tolerance > 0, where, "energy_tolerance = ", o.energy_tolerance,
                        " must be > 0");
  kosmos::Impl::require(o.emission_node_spacing >= 0 && o.emission_node_spacing <= 1, where,
                        "emission_node_spacing = ", o.emission_node_spacing,
                        " must be in [0, 1] (ln lambda)");
}

// ln y(ln T) of one species (a row of log_enthalpy or log_cooling): linear interpolation clamped
// at the table's ends, and for the enthalpy (with its StochasticModel::enthalpy_search row) the
// inverse: a binary search of the table between the points that the search row gives ln E's cell.
// The kernel's bins stay in ln T where they can, which spares a logarithm and an exponential a bin.
template <class Row, class SearchRow>
struct LogTable {
  Row log_e;
  double log_t0, dlog_t;
  int points;
  SearchRow search;  // empty for a table that is not inverted

  KOKKOS_INLINE_FUNCTION double log_at(double log_t) const {
    double u = (log_t - log_t0) / dlog_t;
    u = u < 0 ? 0 : (u > points - 1 ? points - 1 : u);
    int k = int(u);
    if (k > points - 2) k = points - 2;
    return log_e(k) + (u - k) * (log_e(k + 1) - log_e(k));
  }
  KOKKOS_INLINE_FUNCTION double operator()(double t) const {
    return math::exp(log_at(math::log(t)));
  }
  KOKKOS_INLINE_FUNCTION double inverse(double e) const { return math::exp(log_inverse(e)); }
  // ln T of y = e: a binary search between the points that ln e's cell in the search row gives;
  // where they do not bracket it (rounding at a cell's edge), the whole table is searched (the
  // answer is the same: log_e(lo) < ln e <= log_e(lo + 1) holds for one lo only).
  KOKKOS_INLINE_FUNCTION double log_inverse(double e) const {
    const double y = math::log(e), y_first = log_e(0), y_last = log_e(points - 1);
    if (y <= y_first) return log_t0;
    if (y >= y_last) return log_t0 + (points - 1) * dlog_t;
    const int cells = int(search.extent(0)) - 1;
    const double u = (y - y_first) / (y_last - y_first) * cells;
    const int cell = u > 0 ? (u < cells - 1 ? int(u) : cells - 1) : 0;
    int lo = search(cell), hi = search(cell + 1) + 1;
    hi = hi > points - 1 ? points - 1 : hi;
    if (!(lo < hi && log_e(lo) < y && y <= log_e(hi))) {
      lo = 0;
      hi = points - 1;
    }
    while (hi - lo > 1) {  // log_e(lo) < y <= log_e(hi)
      const int mid = (lo + hi) / 2;
      (log_e(mid) < y ? lo : hi) = mid;
    }
    return log_t0 + (lo + (y - log_e(lo)) / (log_e(hi) - log_e(lo))) * dlog_t;
  }
};

// Output policies get P(T), the bin temperatures and the team scratch left after the kernel's own
// (scratch_bytes(bins) of it).

// Output policy of temperature_distributions: stores P(T) and the bin temperatures; a species of
// fewer bins than the outputs hold pads them with probability 0 at its top bin's temperature.
template <class Probability, class BinTemperature>
struct WriteDistribution {
  Probability probability;
  BinTemperature bin_temperature;
  static std::size_t scratch_bytes(int) { return 0; }
  template <class Member, class Scratch, class ScratchSpace>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team, int c, int q, int, int status, double,
                                         const Scratch& p, const Scratch& tb,
                                         const ScratchSpace&) const {
    const int nb = int(p.extent(0)), extent = int(probability.extent(2));
    const bool invalid = status == stochastic_invalid_heating;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, extent), [&](const int j) {
      probability(c, q, j) = invalid ? NAN : (j < nb ? p(j) : 0.0);
      bin_temperature(c, q, j) = tb(j < nb ? j : nb - 1);
    });
  }
};

// Two output policies from one solve (P(T) written out and added to the SED): both only read P(T)
// and the bin temperatures.
template <class First, class Second>
struct BothOutputs {
  First first;
  Second second;
  static std::size_t scratch_bytes(int nb) {
    return First::scratch_bytes(nb) > Second::scratch_bytes(nb) ? First::scratch_bytes(nb)
                                                                : Second::scratch_bytes(nb);
  }
  template <class Member, class Scratch, class ScratchSpace>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team, int c, int q, int s, int status,
                                         double t_eq, const Scratch& p, const Scratch& tb,
                                         const ScratchSpace& scratch) const {
    first(team, c, q, s, status, t_eq, p, tb, scratch);
    second(team, c, q, s, status, t_eq, p, tb, scratch);
  }
};

// Walk: finishes a block's rows (SerialBlockWalk, or CudaWarpBlockWalk on Kokkos::Cuda).
template <class T, class ExecSpace, class Intensity, class Temperature, class Status, class Output,
          class Walk>
struct StochasticFunctor {
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename team_policy::member_type;
  using scratch_view = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  // Bin indices in 16 bits: with 1208 wavelengths, 512 bins then fit the fast scratch.
  using index_view = Kokkos::View<std::int16_t*, typename ExecSpace::scratch_memory_space,
                                  Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  // The species of one launch: by_bins' entries of one bin count.
  struct BinGroup {
    int bins;
    Kokkos::View<int*, typename StochasticModel<ExecSpace>::device_type> selected;
  };

  GrainModel<T, ExecSpace> g;
  StochasticModel<ExecSpace> m;
  Intensity intensity;
  Temperature temperature;
  Status status;
  Output output;
  Walk walk;
  double log_t0, dlog_t;
  int level;  // team scratch level: 0, or 1 (global memory) where level 0 is too small
  std::int64_t first_cell;  // the league's cells start here
  BinGroup group;           // the league's species: each cell's, of these bins

  // The photon energies are read from the model (x), not kept in scratch: with 1208 wavelengths
  // and 512 bins the rest fits the fast (level 0) scratch, which Kokkos' CUDA caps at 40 KiB.
  static std::size_t scratch_bytes(int nl, int nb) {
    return 2 * scratch_view::shmem_size(nl + 1) + 4 * scratch_view::shmem_size(nb) +
           Block::scratch_bytes(nb) + Output::scratch_bytes(nb);
  }

  // The recursion solves Block::rows bins at a time: each row's sum over the bins below the block
  // runs in Block::row_parts contiguous parts in parallel (and the pairs inside the block go to
  // the tile), then the walk finishes the block's rows in order. Two barriers a block instead of
  // a team reduction a bin.
  using Block = RecursionBlock<scratch_view, index_view>;

  using PhotonEnergies = Impl::PhotonEnergies<typename GrainModel<T, ExecSpace>::vector_type>;

  // D(i, j) = U(E_{j-1} - E_i) - U(E_j - E_i), U(x) = sum_k R_k max(0, eps_k - x): the flow from
  // bin i into bins >= j times the bin width (photons above b = a + width lift the grain past
  // E_j, those in [a, b) are split linearly between E_{j-1} and E_j). ka and kb are the first
  // photons at or above a and b; the flow takes the cumulative rate and power below them (and
  // the total rate), read once a source into registers: the tile's stores in between could alias
  // the scratch, so the compiler would read them again for every row.
  struct CumulativeAt {
    double rate, power;
  };
  KOKKOS_INLINE_FUNCTION static double flow(double total_rate, const CumulativeAt& below_a,
                                            const CumulativeAt& below_b, double a, double width) {
    const double rate_between = below_b.rate - below_a.rate,
                 power_between = below_b.power - below_a.power;
    return (total_rate - below_b.rate) * width + (power_between - a * rate_between);
  }

  // The lowest bin i with E_{j-1} - E_i <= eps_reach: bins below lie more than the largest
  // photon below E_{j-1}, so no flow reaches row j.
  KOKKOS_INLINE_FUNCTION static int lowest_source(const scratch_view& eb, int j, double eps_reach) {
    int lowest = 0, top = j - 1;
    while (lowest < top) {
      const int mid = lowest + (top - lowest) / 2;
      if (eb(j - 1) - eb(mid) > eps_reach)
        lowest = mid + 1;
      else
        top = mid;
    }
    return lowest;
  }

  // Steady state P_j = sum_{i<j} P_i D(i, j) / L_j, bins above 0 (p(0) = 1 on entry), with P kept
  // finite by factors of 1e-200 where it rises steeply (big grains).
  KOKKOS_INLINE_FUNCTION void solve_recursion(const member& team, const PhotonEnergies& eps,
                                              const scratch_view& ncum, const scratch_view& wcum,
                                              const scratch_view& eb, const scratch_view& cool,
                                              const scratch_view& p, double eps_reach,
                                              const Block& w) const {
    constexpr int per = Block::rows_per_item;
    const int nb = int(p.extent(0)), nl = g.wavelengths();
    const auto& search = m.photon_search;
    // Every row's lowest source once (the items of a row's parts share it).
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 1, nb), [&](const int j) {
      w.first_source(j) = std::int16_t(lowest_source(eb, j, eps_reach));
    });
    team.team_barrier();
    for (int j0 = 1; j0 < nb; j0 += Block::rows) {
      const int rows = nb - j0 < Block::rows ? nb - j0 : Block::rows;
      const int groups = (rows + per - 1) / per;
      Kokkos::parallel_for(
          Kokkos::TeamThreadRange(team, groups * Block::row_parts), [&](const int item) {
            const int r0 = item / Block::row_parts * per, part = item % Block::row_parts;
            const int j = j0 + r0, n_rows = rows - r0 < per ? rows - r0 : per;
            int lowest[per];
            for (int m = 0; m < per; ++m) lowest[m] = m < n_rows ? w.first_source(j + m) : j + m;
            // The sources of the item's rows: [lowest of row j, j + n_rows - 1).
            const int span = j + n_rows - 1 - lowest[0],
                      begin = lowest[0] + span * part / Block::row_parts,
                      end = lowest[0] + span * (part + 1) / Block::row_parts;
            double edge[per + 1];  // E_{j-1+m}: row j + m's lower edge for m < per
            for (int m = 0; m <= per; ++m) edge[m] = eb(j - 1 + m < nb ? j - 1 + m : nb - 1);
            double sum[per];
            for (int m = 0; m < per; ++m) sum[m] = 0;
            const double total_rate = ncum(nl);
            for (int i = end - 1; i >= begin; --i) {
              const double e_i = eb(i), p_i = p(i);
              double gap[per + 1];
              CumulativeAt below[per + 1];  // at the first photons at or above the gaps
              for (int m = 0; m <= per; ++m) {
                gap[m] = edge[m] - e_i;
                const int k = search.first_at_least(gap[m], eps, nl);
                below[m] = CumulativeAt{ncum(k), wcum(k)};
              }
              for (int m = 0; m < per; ++m) {
                if (m >= n_rows || i >= j + m || i < lowest[m]) continue;
                const double d =
                    flow(total_rate, below[m], below[m + 1], gap[m], edge[m + 1] - edge[m]);
                if (i >= j0)
                  w.pair(i - j0, r0 + m) = d;
                else
                  sum[m] += p_i * d;
              }
            }
            for (int m = 0; m < n_rows; ++m) w.part(part, r0 + m) = sum[m];
          });
      team.team_barrier();
      const int rescales = walk(team, w, p, cool, j0, rows);
      if (rescales > 0) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, j0), [&](const int i) {
          for (int n = 0; n < rescales; ++n) p(i) *= 1e-200;
        });
        team.team_barrier();
      }
    }
  }

  // The cumulative absorbed photon rate and power over the photon energies eps ascending, in
  // parts_n contiguous parts, one a thread: each part's totals (in `totals`, 2 x parts_n), their
  // offsets in order, then each part's cumulative sums. Three barriers, where a team scan takes
  // several a team's width of photons. Returns the largest photon that changes the rate sum, and
  // the largest that changes either sum (where a count is below the rate sum's resolution, its
  // power may still show): no flow reaches farther.
  struct Reach {
    double rate, either;
  };
  KOKKOS_INLINE_FUNCTION Reach cumulative_spectrum(const member& team, int c, int s,
                                                   const PhotonEnergies& eps,
                                                   const scratch_view& ncum,
                                                   const scratch_view& wcum,
                                                   const scratch_view& totals) const {
    const int nl = g.wavelengths();
    const int capacity = int(totals.extent(0)) / 2,
              parts_n = team.team_size() < capacity ? team.team_size() : capacity;
    const auto part_begin = [&](const int part) { return int(std::int64_t(nl) * part / parts_n); };
    // Neighbouring threads read neighbouring wavelengths (one memory transaction a warp), then sum
    // their parts from scratch.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nl), [&](const int k) {
      const int l = nl - 1 - k;
      const double power = double(intensity(c, l)) * double(g.sigma_dlambda(l, s));
      ncum(k + 1) = power * m.inverse_photon_energy(k);  // a product, not a division
      wcum(k + 1) = power;
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, parts_n), [&](const int part) {
      double rate = 0, power_sum = 0;
      for (int k = part_begin(part); k < part_begin(part + 1); ++k) {
        rate += ncum(k + 1);
        power_sum += wcum(k + 1);
      }
      totals(2 * part) = rate;
      totals(2 * part + 1) = power_sum;
    });
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      double rate = 0, power = 0;
      for (int part = 0; part < parts_n; ++part) {
        const double part_rate = totals(2 * part), part_power = totals(2 * part + 1);
        totals(2 * part) = rate;
        totals(2 * part + 1) = power;
        rate += part_rate;
        power += part_power;
      }
      ncum(0) = 0;
      wcum(0) = 0;
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, parts_n), [&](const int part) {
      double rate = totals(2 * part), power = totals(2 * part + 1);
      // The photons ascend: the last that changes a sum is the largest.
      int top_rate = -1, top_either = -1;
      for (int k = part_begin(part); k < part_begin(part + 1); ++k) {
        const double next_rate = rate + ncum(k + 1), next_power = power + wcum(k + 1);
        if (next_rate > rate) top_rate = k;
        if (next_rate > rate || next_power > power) top_either = k;
        ncum(k + 1) = rate = next_rate;
        wcum(k + 1) = power = next_power;
      }
      totals(2 * part) = top_rate;  // -1: none in this part
      totals(2 * part + 1) = top_either;
    });
    team.team_barrier();
    // The parts ascend: the highest part with such a photon holds the largest. The answer goes
    // to every thread through totals (0 and 1), before the team's next barrier frees it.
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      int rate = -1, either = -1;
      for (int part = parts_n - 1; part >= 0 && (rate < 0 || either < 0); --part) {
        if (rate < 0) rate = int(totals(2 * part));
        if (either < 0) either = int(totals(2 * part + 1));
      }
      totals(0) = rate < 0 ? 0 : eps(rate);
      totals(1) = either < 0 ? 0 : eps(either);
    });
    team.team_barrier();
    return Reach{totals(0), totals(1)};
  }

  // Energy a grain in bin j has: the floor E_0 for j = 0, else the midpoint of [E_{j-1}, E_j].
  KOKKOS_INLINE_FUNCTION static double bin_energy(const scratch_view& edges, int j) {
    return j == 0 ? edges(0) : 0.5 * (edges(j - 1) + edges(j));
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int ng = int(group.selected.extent(0)), nl = g.wavelengths(), nb = group.bins;
    const int c = int(first_cell) + team.league_rank() / ng,
              q = group.selected(team.league_rank() % ng), s = m.species(q);
    const PhotonEnergies eps{g.x, nl};
    scratch_view ncum(team.team_scratch(level), nl + 1), wcum(team.team_scratch(level), nl + 1),
        tb(team.team_scratch(level), nb), eb(team.team_scratch(level), nb),
        p(team.team_scratch(level), nb), cool(team.team_scratch(level), nb);
    const scratch_view tile(team.team_scratch(level), Block::tile_size),
        parts(team.team_scratch(level), Block::parts_size);
    const index_view first_source(team.team_scratch(level), nb);
    const Reach reach =
        cumulative_spectrum(team, c, s, eps, ncum, wcum, tile);  // tile: free until the recursion
    const double eps_max = reach.rate, eps_reach = reach.either;
    const double absorbed = wcum(nl);
    const double t_eq = double(temperature(c, s));
    using row = decltype(Kokkos::subview(m.log_enthalpy, 0, Kokkos::ALL));
    using search_row = decltype(Kokkos::subview(m.enthalpy_search, 0, Kokkos::ALL));
    const int nk = int(m.log_enthalpy.extent(1));
    const LogTable<row, search_row> enthalpy{Kokkos::subview(m.log_enthalpy, q, Kokkos::ALL),
                                             log_t0, dlog_t, nk,
                                             Kokkos::subview(m.enthalpy_search, q, Kokkos::ALL)};
    const LogTable<row, search_row> cooling{Kokkos::subview(m.log_cooling, q, Kokkos::ALL), log_t0,
                                            dlog_t, nk, search_row()};
    int state = stochastic_ok;
    // Zero heating before T_eq: the equilibrium stage may report T_eq = 0 (or its floor) for it.
    if (!(absorbed >= 0) || !math::isfinite(absorbed))
      state = stochastic_invalid_heating;
    else if (absorbed == 0 || eps_max == 0)
      state = stochastic_no_heating;
    else if (!(t_eq > 0))
      state = stochastic_invalid_heating;

    // The bins: log-spaced temperatures over [T_lo, T_hi] (every thread computes the same bounds).
    double t_lo = m.options.min_temperature, t_hi = 2 * t_lo, e_eq = 0;
    // A grain whose fluctuations stay within 1 % in T (big grains) is in equilibrium: P(T) is
    // the delta at T_eq, on bins spanning 1 % around it. (The transition matrix on such a window
    // would move energy in bins far larger than its photons, and that discreteness alone would
    // spread P(T) over the window, out of its bottom bin: a false energy surplus.)
    bool equilibrium = false;
    if (state == stochastic_ok) {
      const double e_floor = enthalpy(t_lo);
      e_eq = enthalpy(t_eq);
      const double w = m.options.width_factor * math::sqrt(e_eq * eps_max);
      t_lo = e_eq - w > e_floor ? enthalpy.inverse(e_eq - w) : t_lo;
      t_hi = enthalpy.inverse(e_eq + w + eps_max);
      equilibrium = t_hi < t_lo * 1.01;
      // The 1 % span inside [min, max]_temperature, so that the bin energies increase.
      if (equilibrium) {
        t_hi = math::fmin(m.options.max_temperature, t_eq * 1.005);
        t_lo = math::fmax(m.options.min_temperature, t_hi / 1.01);
        t_hi = math::fmax(t_hi, t_lo * 1.01);
      }
    }
    // Bin edges E_j at log-spaced temperatures. Bin 0 is the floor E_0; bin j >= 1 holds the
    // grain while it cools through [E_{j-1}, E_j]: its dwell time (width / L) and its emission are
    // taken at the midpoint energy (tb: that temperature), a midpoint rule, second order in the
    // width. (At the top edge both are first order, and the Wien tail magnifies that bias in the
    // near infrared.) Photons still lift the grain from E_j, so every transition conserves energy.
    const double ratio = math::log(t_hi / t_lo) / (nb - 1), log_t_lo = math::log(t_lo);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nb), [&](const int j) {
      eb(j) = math::exp(enthalpy.log_at(log_t_lo + ratio * j));
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nb), [&](const int j) {
      const double log_tb = j == 0 ? log_t_lo : enthalpy.log_inverse(bin_energy(eb, j));
      tb(j) = j == 0 ? t_lo : math::exp(log_tb);
      cool(j) = math::exp(cooling.log_at(log_tb));
      p(j) = j == 0 ? 1.0 : 0.0;
    });
    team.team_barrier();

    if (state == stochastic_ok && equilibrium) {
      // The delta at T_eq: its energy split linearly between the two bins around E_eq.
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        p(0) = 0;
        int j = 0;
        while (j + 2 < nb && bin_energy(eb, j + 1) <= e_eq) ++j;
        const double e_j = bin_energy(eb, j), e_next = bin_energy(eb, j + 1);
        const double upper = math::fmin(1.0, math::fmax(0.0, (e_eq - e_j) / (e_next - e_j)));
        p(j) = 1 - upper;
        p(j + 1) = upper;
      });
      team.team_barrier();
    } else if (state == stochastic_ok) {
      solve_recursion(team, eps, ncum, wcum, eb, cool, p, eps_reach,
                      Block{tile, parts, first_source});
    }
    if (state == stochastic_ok) {
      using NormAndEmitted = kosmos::Impl::Sums<2>;
      NormAndEmitted sums;
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(team, nb),
          [&](const int j, NormAndEmitted& sum) {
            sum.value[0] += p(j);
            sum.value[1] += p(j) * cool(j);
          },
          Kokkos::Sum<NormAndEmitted>(sums));
      team.team_barrier();
      const double norm = sums.value[0], emitted = sums.value[1];
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nb), [&](const int j) { p(j) /= norm; });
      team.team_barrier();
      if (!(math::fabs(emitted / norm / absorbed - 1) <= m.options.energy_tolerance))
        state = stochastic_energy_imbalance;
    }
    output(team, c, q, s, state, t_eq, p, tb, team.team_scratch(level));
    Kokkos::single(Kokkos::PerTeam(team), [&]() { status(c, q) = state; });
  }
};

// log_cooling(q, k) = ln L(T_k), L = sum_l sigma dlambda B(lambda_l, T) in W sr^-1: the equilibrium
// solver's emission sum (GrainModel's scaled weights times their scale), in double. A team a table
// point: the Planck occupations at T_k are every species', so the team writes them to scratch once
// and its threads take a species' sum each, in wavelength order.
template <class T, class ExecSpace>
void build_cooling_table(const ExecSpace& space, const GrainModel<T, ExecSpace>& g,
                         const StochasticModel<ExecSpace>& m) {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using occupations = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const int nq = m.selected(), nk = m.options.table_points, nl = g.wavelengths();
  const double log_t0 = std::log(m.options.min_temperature);
  const double dlog_t = (std::log(m.options.max_temperature) - log_t0) / (nk - 1);
  const std::size_t scratch = occupations::shmem_size(nl);
  const int level = scratch <= std::size_t(policy::scratch_size_max(0)) ? 0 : 1;
  const int team_size = kosmos::Impl::is_host_space<ExecSpace>() ? 1 : 64;
  auto table = m.log_cooling;
  auto species = m.species;
  auto w = g.emission_weight;
  auto x = g.x;
  auto scale = g.scale;
  Kokkos::parallel_for(
      "kosmos::dust::stochastic_cooling_table",
      policy(space, nk, team_size).set_scratch_size(level, Kokkos::PerTeam(scratch)),
      KOKKOS_LAMBDA(const typename policy::member_type& team) {
        const int k = team.league_rank();
        const double inv_t = math::exp(-(log_t0 + k * dlog_t));
        const occupations occupation(team.team_scratch(level), nl);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nl), [&](const int l) {
          occupation(l) = planck_occupation(double(x(l)) * inv_t);
        });
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nq), [&](const int q) {
          const int s = species(q);
          double sum = 0;
          for (int l = 0; l < nl; ++l) sum += double(w(l, s)) * occupation(l);
          table(q, k) = math::log(sum * double(scale(s)));
        });
      });
}

template <class T, class ExecSpace, class Intensity, class Temperature, class Status, class Output>
void run_stochastic(const ExecSpace& space, const GrainModel<T, ExecSpace>& g,
                    const StochasticModel<ExecSpace>& m, const Intensity& intensity,
                    const Temperature& temperature, const Status& status, const Output& output,
                    const char* where, std::int64_t first_cell = 0, std::int64_t cells = -1) {
  static_assert(Intensity::rank == 2 && Temperature::rank == 2 && Status::rank == 2,
                "kosmos::dust: stochastic heating needs intensity (cell, wavelength), temperature "
                "(cell, species) "
                "and status (cell, selected species)");
  static_assert(std::is_same<typename Status::value_type, int>::value,
                "kosmos::dust: status must hold int");
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, typename Intensity::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecSpace, typename Temperature::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecSpace, typename Status::memory_space>::accessible,
      "kosmos::dust: the stochastic-heating Views must be accessible from the execution space");
  const std::size_t nc = intensity.extent(0), nq = std::size_t(m.selected());
  kosmos::Impl::require_extent(where, "intensity", intensity, 1, std::size_t(g.wavelengths()));
  kosmos::Impl::require_extent(where, "temperature", temperature, 0, nc);
  kosmos::Impl::require_extent(where, "temperature", temperature, 1, std::size_t(g.species()));
  kosmos::Impl::require_extent(where, "status", status, 0, nc);
  kosmos::Impl::require_extent(where, "status", status, 1, nq);
  kosmos::Impl::require(m.log_enthalpy.extent(0) == nq && m.photon_search.start.extent(0) > 0 &&
                            m.species_bins.extent(0) == nq,
                        where, "the StochasticModel is not prepared (prepare_stochastic)");
  if (cells < 0) cells = std::int64_t(nc) - first_cell;
  if (cells <= 0 || nq == 0) return;
  kosmos::Impl::require(std::size_t(cells) * nq <= std::size_t(std::numeric_limits<int>::max()),
                        where, cells, " cells x ", nq,
                        " species exceed the league size; pass fewer cells per call");
  const StochasticOptions& o = m.options;
  const double log_t0 = std::log(o.min_temperature);
  const double dlog_t = (std::log(o.max_temperature) - log_t0) / (o.table_points - 1);
  // GPUs: 64 threads a team (32 or 128, and one warp's 32 vector lanes, were slower).
  const int team_size = kosmos::Impl::is_host_space<ExecSpace>() ? 1 : 64;
  kosmos::Impl::ScopedRegion region("kosmos::dust::stochastic_heating");
  const auto launch = [&](const auto walk) {
    using functor =
        StochasticFunctor<T, ExecSpace, Intensity, Temperature, Status, Output, decltype(walk)>;
    for (std::size_t k = 0; k < m.group_bins.extent(0); ++k) {
      const typename functor::BinGroup group{
          m.group_bins(k),
          Kokkos::subview(m.by_bins, std::make_pair(m.group_first(k), m.group_first(k + 1)))};
      const std::size_t scratch = functor::scratch_bytes(g.wavelengths(), group.bins);
      // Spectra and bins beyond the fast (level 0) team scratch go to level 1, in global memory:
      // 512-2048 bins on any backend.
      const int level =
          scratch <= std::size_t(Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0)) ? 0 : 1;
      const int scratch_max = Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(level);
      kosmos::Impl::require(scratch <= std::size_t(scratch_max), where, "the photon spectrum and ",
                            group.bins, " bins need ", scratch,
                            " bytes of team scratch, more than the ", scratch_max,
                            " available (use fewer wavelengths or bins)");
      // non_blocking_policy: the pipeline queues this per chunk on several instances.
      Kokkos::parallel_for(
          "kosmos::dust::stochastic_heating",
          kosmos::Impl::non_blocking_policy(
              Kokkos::TeamPolicy<ExecSpace>(
                  space, int(std::size_t(cells) * group.selected.extent(0)), team_size))
              .set_scratch_size(level, Kokkos::PerTeam(scratch)),
          functor{g, m, intensity, temperature, status, output, walk, log_t0, dlog_t, level,
                  first_cell, group});
    }
  };
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (o.use_cuda_specialization) return launch(CudaWarpBlockWalk());
  }
#endif
  launch(SerialBlockWalk());
}
}  // namespace Impl
}  // namespace dust
}  // namespace kosmos
