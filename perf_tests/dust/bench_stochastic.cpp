// Stochastic heating (kosmos/dust/stochastic.hpp) on the paper's grain set: 81 graphite sizes x
// 968 wavelengths, the sizes below 0.05 micron (18 of them) computed stochastically with 128
// enthalpy bins, synthetic MMP83-based cells. The timed region is add_stochastic_emission alone
// (P(T) of every (cell, small size) and its emission into the SED); the equilibrium stages run
// once before. Counters: (cell, size) pairs per second.
//   BM_DustStochastic/<Space>/cells:N
#include <benchmark_utils.hpp>

#include <kosmos/dust/dust.hpp>

#include <string>

namespace {
using namespace kosmos::dust;

template <class Space>
void BM_DustStochastic(benchmark::State& state) {
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  using T = float;
  const std::int64_t nc = state.range(0);
  const auto table =
      read_draine_table(std::string(KOSMOS_DATA_DIR) + "/dust/draine_graphite_81.dat");
  const auto w = paper_wavelength_grid();
  const auto dw = bin_widths(w);
  const auto sizes = power_law_size_distribution(table.radius_micron, 2.24);
  const int nl = int(w.size()), ns = int(sizes.radius_micron.size());
  const auto in = upload_grain_inputs<typename Space::memory_space>(w, dw, sizes, [&](int s) {
    return absorption_cross_section(table, sizes.radius_micron[s], w);
  });
  std::vector<StochasticSpecies> small;
  for (int s = 0; s < ns; ++s)
    if (sizes.radius_micron[s] < 0.05)
      small.push_back({s, GrainMaterial::graphite, sizes.radius_micron[s]});
  Space space;
  Kokkos::View<T**, Kokkos::LayoutLeft, device> intensity("intensity", nc, nl),
      heat("heating", nc, ns), temperature("temperature", nc, ns), sed("sed", nc, nl);
  Kokkos::View<int**, Kokkos::LayoutLeft, device> eq_status("eq_status", nc, ns),
      status("status", nc, std::int64_t(small.size()));
  Kokkos::View<T*, device> mass("dust_mass", nc);
  synthetic_cells(space, in.wavelength, intensity, mass, 1989);
  const auto grains =
      prepare_grains<T>(space, in.wavelength, in.width, in.sigma, in.radius, in.number);
  dust_emission(space, grains, intensity, mass, heat, temperature, eq_status, sed);
  const auto model = prepare_stochastic(space, grains, small);
  kosmos_bench::fenced_loop(state, space, [&] {
    add_stochastic_emission(space, grains, model, intensity, temperature, mass, sed, status);
  });
  state.counters["pairs/s"] = kosmos_bench::rate(double(nc) * double(small.size()));
  int bad = 0;  // (sanity, outside the timing) every P(T) must be valid
  Kokkos::parallel_reduce(
      "kosmos::bench::stochastic_status",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                  nc * std::int64_t(small.size())),
      KOKKOS_LAMBDA(const std::int64_t i, int& b) {
        b += status(i % nc, i / nc) == stochastic_invalid_heating;
      },
      Kokkos::Sum<int>(bad));
  if (bad) state.SkipWithError("invalid stochastic heating status");
}

template <class Tag>
void register_space(Tag) {
  using Space = typename Tag::type;
  const bool gpu =
      !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
  auto* b = benchmark::RegisterBenchmark(
      (std::string("BM_DustStochastic/") + Space::name()).c_str(), &BM_DustStochastic<Space>);
  b->ArgName("cells")->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(gpu ? 5 : 2);
  for (std::int64_t n = gpu ? 256 : 16; n <= (gpu ? 65536 : 256); n *= 4) b->Arg(n);
}

const int registered = [] {
  kosmos_bench::for_each_parallel_space([](auto tag) { register_space(tag); });
  return 0;
}();
}  // namespace
