// One chunk's summary (status counts, temperature range, absorbed and emitted power), reduced on
// the chunk's execution-space instance so that it comes back with the chunk's rows and nothing
// blocks the host.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/dust/equilibrium.hpp>
#include <kosmos/dust/stochastic.hpp>

#include <cstdint>
#include <type_traits>

namespace kosmos {
namespace dust {
namespace Impl {

// A chunk's summary, reduced on the device: where each value sits in its row of doubles.
enum ChunkSummary : int {
  summary_status = 0,  // count of each TemperatureStatus
  summary_stochastic_status =
      summary_status + kosmos::dust::temperature_status_count,  // each StochasticStatus
  summary_t_min = summary_stochastic_status + kosmos::dust::stochastic_invalid_heating + 1,
  summary_t_max,          // over the heated grains (statuses other than no / invalid heating)
  summary_absorbed,       // sum over heated grains of m_c n_s L_h (W sr^-1)
  summary_emitted,        // sum of L_lambda dlambda over the chunk's SEDs
  summary_nonfinite_sed,  // SED values that are not finite
  summary_size
};

// (row, column) of the k-th element of a rank-2 View in memory order: consecutive k read
// consecutive addresses (coalesced on a GPU) in the pipeline's LayoutLeft results as in rows.
template <class View>
KOKKOS_INLINE_FUNCTION Kokkos::pair<std::int64_t, std::int64_t> memory_order(const View& v,
                                                                             std::int64_t k) {
  if constexpr (std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value)
    return {k % std::int64_t(v.extent(0)), k / std::int64_t(v.extent(0))};
  else
    return {k / std::int64_t(v.extent(1)), k % std::int64_t(v.extent(1))};
}

// Queues on `space` the reductions of one chunk's summary into out[0, summary_size) (device
// memory): nothing here blocks the host. status, temperature, heating: (n, S); sed (n, L);
// stochastic_status (n, Q), Q possibly 0; number (S) grains per unit dust mass; width (L) in m.
template <class Space, class Status, class Values, class Mass, class Vector, class Sed,
          class StochasticStatus>
void queue_chunk_summary(const Space& space, const Status& status, const Values& temperature,
                         const Values& heating, const Mass& mass, const Vector& number,
                         const Sed& sed, const Vector& width,
                         const StochasticStatus& stochastic_status, double* out) {
  using Range = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;
  using Result = Kokkos::View<double, typename Space::memory_space>;
  const std::int64_t n = std::int64_t(status.extent(0)), ns = std::int64_t(status.extent(1)),
                     nl = std::int64_t(sed.extent(1)),
                     nq = std::int64_t(stochastic_status.extent(1));
  auto per_grain = [&](const char* label, auto fn, auto reducer) {
    Kokkos::parallel_reduce(label, kosmos::Impl::non_blocking_policy(Range(space, 0, n * ns)), fn,
                            reducer);
  };
  for (int st = 0; st < temperature_status_count; ++st)
    per_grain(
        "kosmos::dust::stream_summary_status_counts",
        KOKKOS_LAMBDA(const std::int64_t k, double& sum) {
          const auto e = memory_order(status, k);
          sum += status(e.first, e.second) == st ? 1.0 : 0.0;
        },
        Kokkos::Sum<double, typename Space::memory_space>(Result(out + summary_status + st)));
  for (int st = 0; st <= stochastic_invalid_heating; ++st)
    Kokkos::parallel_reduce(
        "kosmos::dust::stream_summary_stochastic_status_counts",
        kosmos::Impl::non_blocking_policy(Range(space, 0, n * nq)),
        KOKKOS_LAMBDA(const std::int64_t k, double& sum) {
          const auto e = memory_order(stochastic_status, k);
          sum += stochastic_status(e.first, e.second) == st ? 1.0 : 0.0;
        },
        Kokkos::Sum<double, typename Space::memory_space>(
            Result(out + summary_stochastic_status + st)));
  // Heated grains only: no heating (T = 0) and invalid heating (T = NaN) are left out.
  per_grain(
      "kosmos::dust::stream_summary_t_min",
      KOKKOS_LAMBDA(const std::int64_t k, double& m) {
        const auto e = memory_order(status, k);
        const int st = status(e.first, e.second);
        if (st != status_no_heating && st != status_invalid_heating)
          m = kosmos::math::fmin(m, double(temperature(e.first, e.second)));
      },
      Kokkos::Min<double, typename Space::memory_space>(Result(out + summary_t_min)));
  per_grain(
      "kosmos::dust::stream_summary_t_max",
      KOKKOS_LAMBDA(const std::int64_t k, double& m) {
        const auto e = memory_order(status, k);
        const int st = status(e.first, e.second);
        if (st != status_no_heating && st != status_invalid_heating)
          m = kosmos::math::fmax(m, double(temperature(e.first, e.second)));
      },
      Kokkos::Max<double, typename Space::memory_space>(Result(out + summary_t_max)));
  per_grain(
      "kosmos::dust::stream_summary_absorbed",
      KOKKOS_LAMBDA(const std::int64_t k, double& sum) {
        const auto e = memory_order(status, k);
        const std::int64_t c = e.first;
        const int s = int(e.second), st = status(c, s);
        if (st != status_no_heating && st != status_invalid_heating)
          sum += double(mass(c)) * double(number(s)) * double(heating(c, s));
      },
      Kokkos::Sum<double, typename Space::memory_space>(Result(out + summary_absorbed)));
  Kokkos::parallel_reduce(
      "kosmos::dust::stream_summary_emitted",
      kosmos::Impl::non_blocking_policy(Range(space, 0, n * nl)),
      KOKKOS_LAMBDA(const std::int64_t k, double& sum) {
        const auto e = memory_order(sed, k);
        sum += double(sed(e.first, e.second)) * double(width(e.second));
      },
      Kokkos::Sum<double, typename Space::memory_space>(Result(out + summary_emitted)));
  Kokkos::parallel_reduce(
      "kosmos::dust::stream_summary_nonfinite_sed",
      kosmos::Impl::non_blocking_policy(Range(space, 0, n * nl)),
      KOKKOS_LAMBDA(const std::int64_t k, double& sum) {
        const auto e = memory_order(sed, k);
        sum += kosmos::math::isfinite(double(sed(e.first, e.second))) ? 0.0 : 1.0;
      },
      Kokkos::Sum<double, typename Space::memory_space>(Result(out + summary_nonfinite_sed)));
}

}  // namespace Impl
}  // namespace dust
}  // namespace kosmos
