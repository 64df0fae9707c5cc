// Stochastic heating (kosmos/dust/stochastic.hpp) on the paper's grain set: 81 graphite sizes x
// 968 wavelengths, the sizes below 0.05 micron (18 of them) computed stochastically with 128
// enthalpy bins, synthetic MMP83-based cells. The timed region is add_stochastic_emission alone
// (P(T) of every (cell, small size) and its emission into the SED); the equilibrium stages run
// once before. Counters: (cell, size) pairs per second.
//   BM_DustStochastic/<Space>/cells:N
//
// End to end with a standard model (issue 25 item 6): `kosmos dust --dust-model dl07` through the
// CLI's own code on the default execution space: N synthetic cells x 184 DL07 species (PAHs
// included) x 1208 wavelengths in float, P(T) for every grain below 0.05 micron (130 species) at
// the bins --bins auto converges to (band powers to 1 %), temperatures, SEDs and IRAC/MIPS/PACS
// photometry written to HDF5 (not the P(T) themselves: 2048 bins x 130 species per cell) (model
// loading, bin refinement and files included). Counter: grain P(T) per second (cells x stochastic
// species / time):
//   BM_DustDl07EndToEnd/<Space>/cli_to_h5/cells:N
#include "options.hpp"

#include <benchmark_utils.hpp>

#include <kosmos/core/hdf5.hpp>
#include <kosmos/dust/dust.hpp>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <filesystem>
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

constexpr double kDl07StochasticBelow = 0.05;  // micron
constexpr std::int64_t kWarmUpCells = 64;      // the warm-up run, not a second timed-size job

void BM_DustDl07EndToEnd(benchmark::State& state) {
  if (!kosmos::io::hdf5_enabled()) {
    state.SkipWithError("built without HDF5");
    return;
  }
  const auto& commands = kosmos::cli::command_registry();
  const auto dust = std::find_if(commands.begin(), commands.end(),
                                 [](const auto& c) { return std::string(c.name) == "dust"; });
  const auto model = load_dust_model("dl07", KOSMOS_DUST_DATA_DIR);
  const double stochastic =
      double(std::count_if(model.sizes.radius_micron.begin(), model.sizes.radius_micron.end(),
                           [](double a) { return a < kDl07StochasticBelow; }));
  const std::string out = (std::filesystem::temp_directory_path() /
                           ("kosmos_dust_dl07_bench_" + std::to_string(::getpid()) + ".h5"))
                              .string();
  int code = 0;
  auto job = [&](std::int64_t cells) {
    std::remove(out.c_str());
    code |= dust->run({"--dust-model",
                       "dl07",
                       "--generate",
                       std::to_string(cells),
                       "--precision",
                       "float",
                       "--stochastic-below",
                       std::to_string(kDl07StochasticBelow),
                       "--bins",
                       "auto",
                       "--temperatures",
                       out,
                       "--sed",
                       out,
                       "--bands",
                       "IRAC1,IRAC4,MIPS24,PACS160",
                       "--photometry",
                       out,
                       "--distance",
                       "1e6",
                       "--timings"});
  };
  kosmos_bench::fenced_job(
      state, Kokkos::DefaultExecutionSpace(), [&] { job(std::min(kWarmUpCells, state.range(0))); },
      [&] { job(state.range(0)); });
  std::remove(out.c_str());
  if (code != 0) state.SkipWithError("kosmos dust exited with an error");
  state.counters["grain_P(T)/s"] = kosmos_bench::rate(double(state.range(0)) * stochastic);
  state.counters["cells/s"] = kosmos_bench::rate(double(state.range(0)));
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
  const bool gpu =
      !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                  Kokkos::DefaultExecutionSpace::memory_space>::accessible;
  auto* b = benchmark::RegisterBenchmark(
      (std::string("BM_DustDl07EndToEnd/") + Kokkos::DefaultExecutionSpace::name() + "/cli_to_h5")
          .c_str(),
      BM_DustDl07EndToEnd);
  b->ArgName("cells")->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
  for (std::int64_t n :
       gpu ? std::vector<std::int64_t>{4096, 65536, 262144} : std::vector<std::int64_t>{8, 64, 1024})
    b->Arg(n);
  return 0;
}();
}  // namespace
