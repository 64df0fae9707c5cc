// Table 1 of Jonsson & Primack (2010): the dust temperature/SED calculation for 81 graphite sizes x
// 968 wavelengths (Lyman limit to 1000 micron) and 32 ... 524288 cells, per stage and in total,
// device resident, on every parallel space of the build (CUDA and the OpenMP baseline side by side).
//
// One benchmark per (space, precision, method, cells): the manual time is stages 1-4 (prepare_grains,
// heating GEMM, temperatures, SED), fenced; counters give each stage's seconds per iteration and
// the cell rate. Input validation (validate_cells) is included in the heating stage; the table
// method's table build (2000 x 81 x 968 Planck terms) is in prepare_s.
//   BM_DustTable1/<Space>/<float|double>/<newton|table>/cells:N
//   BM_DustTable1/Cuda/float/newton/with_transfer/cells:N   (+ host->device intensities and
//                                                            device->host SEDs, as the paper's GPU column)
#include <benchmark_utils.hpp>

#include <kosmos/dust/dust.hpp>

#include <chrono>
#include <string>

namespace {
using namespace kosmos::dust;

struct GrainData {
  std::vector<double> wavelength, width, radius, number;  // SI
  std::vector<std::vector<double>> sigma;
};

// The paper's problem: 81 graphite sizes (Laor & Draine 1993), 968 wavelengths, MRN-like sizes.
const GrainData& paper_grains() {
  static const GrainData g = [] {
    GrainData d;
    const auto table = read_draine_table(std::string(KOSMOS_DATA_DIR) + "/dust/draine_graphite_81.dat");
    const auto w = paper_wavelength_grid();
    const auto dw = bin_widths(w);
    for (std::size_t l = 0; l < w.size(); ++l) {
      d.wavelength.push_back(w[l] * 1e-6);
      d.width.push_back(dw[l] * 1e-6);
    }
    const auto sizes = power_law_size_distribution(table.radius_micron, 2.24);
    for (std::size_t s = 0; s < sizes.radius_micron.size(); ++s) {
      d.radius.push_back(sizes.radius_micron[s] * 1e-6);
      d.number.push_back(sizes.number_per_mass[s]);
      d.sigma.push_back(absorption_cross_section(table, sizes.radius_micron[s], w));
    }
    return d;
  }();
  return g;
}

template <class V>
void upload(const V& view, const std::vector<double>& values) {
  auto h = Kokkos::create_mirror_view(view);
  for (std::size_t i = 0; i < values.size(); ++i) h(i) = values[i];
  Kokkos::deep_copy(view, h);
}

// with_transfer: the paper's "GPU" column also counts copying the intensities in and the SEDs out;
// then intensity starts in (unpinned) host memory and the SED ends there.
template <class Space, class T>
void BM_DustTable1(benchmark::State& state, TemperatureMethod method, bool with_transfer) {
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  const auto& gd = paper_grains();
  const std::int64_t nc = state.range(0);
  const int nl = int(gd.wavelength.size()), ns = int(gd.radius.size());
  Kokkos::View<double*, device> wavelength("wavelength", nl), width("width", nl), radius("radius", ns),
      number("number", ns);
  Kokkos::View<double**, Kokkos::LayoutLeft, device> sigma("sigma", ns, nl);
  upload(wavelength, gd.wavelength);
  upload(width, gd.width);
  upload(radius, gd.radius);
  upload(number, gd.number);
  {
    auto h = Kokkos::create_mirror_view(sigma);
    for (int s = 0; s < ns; ++s)
      for (int l = 0; l < nl; ++l) h(s, l) = gd.sigma[s][l];
    Kokkos::deep_copy(sigma, h);
  }
  Kokkos::View<T**, Kokkos::LayoutLeft, device> intensity("intensity", nc, nl), heat("heating", nc, ns),
      temperature("temperature", nc, ns), sed("sed", nc, nl);
  Kokkos::View<int**, Kokkos::LayoutLeft, device> status("status", nc, ns);
  Kokkos::View<T*, device> mass("dust_mass", nc);
  Space space;
  synthetic_cells(space, wavelength, intensity, mass, 2010);
  auto host_intensity = Kokkos::create_mirror(intensity);  // real copies even on host spaces
  auto host_sed = Kokkos::create_mirror(sed);
  if (with_transfer) Kokkos::deep_copy(host_intensity, intensity);
  SolverOptions options;
  options.method = method;

  using clock = std::chrono::steady_clock;
  double t_prepare = 0, t_heating = 0, t_temperature = 0, t_sed = 0, t_transfer = 0;
  auto seconds = [](clock::time_point a, clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  auto body = [&](bool record) {
    const auto tin = clock::now();
    if (with_transfer) {
      Kokkos::deep_copy(space, intensity, host_intensity);
      space.fence();
    }
    const auto t0 = clock::now();
    const auto grains = prepare_grains<T>(space, wavelength, width, sigma, radius, number, options);
    space.fence();
    const auto t1 = clock::now();
    StageTimes stages;
    dust_emission(space, grains, intensity, mass, heat, temperature, status, sed, options, true, &stages);
    const auto t4 = clock::now();
    if (with_transfer) {
      Kokkos::deep_copy(space, host_sed, sed);
      space.fence();
    }
    const auto tout = clock::now();
    if (record) {
      t_transfer += seconds(tin, t0) + seconds(t4, tout);
      t_prepare += seconds(t0, t1);
      t_heating += stages.heating;
      t_temperature += stages.temperature;
      t_sed += stages.sed;
    }
    return seconds(tin, tout);
  };
  body(false);  // warm-up
  for (auto _ : state) {
    space.fence();
    state.SetIterationTime(body(true));
  }
  const double n = double(state.iterations());
  state.counters["prepare_s"] = t_prepare / n;
  state.counters["heating_s"] = t_heating / n;
  state.counters["temperature_s"] = t_temperature / n;
  state.counters["sed_s"] = t_sed / n;
  if (with_transfer) state.counters["transfer_s"] = t_transfer / n;
  state.counters["cells/s"] = kosmos_bench::rate(double(nc));
  // Sanity: no cell may fail to converge (read back a reduction, outside the timing).
  int failures = 0;
  Kokkos::parallel_reduce(
      "kosmos::bench::dust_status", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, nc * ns),
      KOKKOS_LAMBDA(const std::int64_t i, int& f) { f += status(i % nc, i / nc) == status_not_converged; },
      Kokkos::Sum<int>(failures));
  if (failures) state.SkipWithError("some temperature solves did not converge");
}

template <class Space>
bool on_device() {
  return !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
}

template <class Tag>
void register_space(Tag) {
  using Space = typename Tag::type;
  const std::string space_name = Space::name();
  const bool gpu = on_device<Space>();
  // OpenMP stops at 32768 cells for Newton and 16384 for the table (per-cell rates extrapolate: the
  // work is linear in cells; 524288 cells would take ~40 s per run on 16 cores); the GPU covers the
  // paper's full range.
  const std::int64_t max_cells = gpu ? 524288 : 32768;
  auto add = [&](const std::string& precision, const std::string& method_name, TemperatureMethod method,
                 auto fn, std::int64_t lo, std::int64_t hi, bool transfer = false) {
    auto* b = benchmark::RegisterBenchmark(
        ("BM_DustTable1/" + space_name + "/" + precision + "/" + method_name + (transfer ? "/with_transfer" : "")).c_str(),
        [fn, method, transfer](benchmark::State& st) { fn(st, method, transfer); });
    b->ArgName("cells")->UseManualTime()->Unit(benchmark::kMillisecond);
    for (std::int64_t n = lo; n <= hi; n *= 2) b->Arg(n);
    b->Iterations(gpu ? 5 : 2);
  };
  add("float", "newton", TemperatureMethod::newton, &BM_DustTable1<Space, float>, 32, max_cells);
  add("float", "table", TemperatureMethod::table, &BM_DustTable1<Space, float>, gpu ? 32 : 1024,
      gpu ? max_cells : 16384);
  add("double", "newton", TemperatureMethod::newton, &BM_DustTable1<Space, double>, gpu ? 4096 : 1024,
      gpu ? 524288 : 4096);
  if (gpu) add("float", "newton", TemperatureMethod::newton, &BM_DustTable1<Space, float>, 32, max_cells, true);
}

const int registered = [] {
  kosmos_bench::for_each_parallel_space([](auto tag) { register_space(tag); });
  return 0;
}();
}  // namespace
