// Table 1 of Jonsson & Primack (2010): the dust temperature/SED calculation for 81 graphite sizes x
// 968 wavelengths (Lyman limit to 1000 micron) and 32 ... 524288 cells, per stage and in total,
// device resident, on every parallel space of the build (CUDA and the OpenMP baseline side by
// side).
//
// One benchmark per (space, precision, method, cells): the manual time is stages 2-4 (heating GEMM,
// temperatures, SED), fenced; stage 1 (prepare_grains, with the table method's 2000 x 81 x 968-term
// table) runs once per grain set, outside the timing, and its time is the prepare_s counter.
// Counters give each stage's seconds per iteration and the cell rate. Input validation
// (validate_cells) is included in the heating stage.
//   BM_DustTable1/<Space>/<float|double>/<newton|table>/cells:N
// The transfer pair, same problem and size (float, Newton): the cells resident on the device, or in
// pinned host memory and streamed through EmissionPipeline (chunked copies in and out overlapped
// with the kernels on several instances), as the paper's GPU column counts them:
//   BM_DustTransfers/<Space>/device_resident/cells:N
//   BM_DustTransfers/<Space>/host_pipelined/cells:N           (3 instances, chunks of 16384 cells)
// What limits the pipeline: the same with 1-4 instances and chunks of 16384 or 65536 cells, and the
// same chunked copies in and out on the instances without any kernel (bytes/s: the bus alone).
// host_wait_s: seconds per run the host spent waiting for chunks to finish (fences); the rest of
// the run it was queuing work (a host-bound pipeline waits little).
//   BM_DustTransfers/<Space>/host_pipelined/cells:N/instances:I/chunk_cells:K
//   BM_DustTransfers/<Space>/copies_only/cells:N/instances:I/chunk_cells:K
//
// End to end (issue #9 item 8): `kosmos dust` itself, through the CLI's own code (the command
// registered by src/cli/dust.cpp, compiled into this benchmark), on the default execution space:
// 131072 synthetic cells x 81 graphite sizes x 968 wavelengths, float, Newton -> temperatures,
// statuses and SEDs streamed through the device and written chunk by chunk to one .h5 file
// (grain preparation, pinned allocations, file creation and commit included), beside the same
// cells' kernels alone (stages 2-4, device resident); the ratio is the end-to-end overhead, and
// the tool's --timings line on stderr tells where it goes:
//   BM_DustEndToEnd/<Space>/cli_to_h5/cells:131072/chunk:K/writers:W (--chunk-cells K, chunk:0
//   for auto, --writer-threads W; auto and 4 are the defaults)
//   BM_DustEndToEnd/<Space>/kernels_only/cells:131072
// and the file system's floors: the same number of bytes written with plain fwrite (threads:0) or
// copied into a preallocated memory map of the file by 4 or 16 threads (no HDF5):
//   BM_DustEndToEnd/<Space>/write_floor/cells:131072/threads:T
#include "options.hpp"

#include <benchmark_utils.hpp>

#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/threads.hpp>

#include <kosmos/dust/dust.hpp>
#include <kosmos/dust/pipeline.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace {
using namespace kosmos::dust;

// The paper's problem: 81 graphite sizes (Laor & Draine 1993), 968 wavelengths, MRN-like sizes.
struct PaperGrains {
  std::vector<double> wavelength_micron, width_micron;
  SizeDistribution sizes;
  std::vector<std::vector<double>> sigma;  // (species, wavelength), m^2
};

const PaperGrains& paper_grains() {
  static const PaperGrains g = [] {
    PaperGrains d;
    const auto table = read_draine_table(std::string(KOSMOS_DATA_DIR) + "/dust/draine_graphite_81.dat");
    d.wavelength_micron = paper_wavelength_grid();
    d.width_micron = bin_widths(d.wavelength_micron);
    d.sizes = power_law_size_distribution(table.radius_micron, 2.24);
    for (const double radius : d.sizes.radius_micron)
      d.sigma.push_back(absorption_cross_section(table, radius, d.wavelength_micron));
    return d;
  }();
  return g;
}

// The paper's grains on Space's device, prepared once (the table, if any, is reused by every iteration).
template <class Space, class T>
struct PaperModel {
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  GrainModel<T, Space> grains;
  Kokkos::View<double*, device> wavelength;
  double prepare_seconds = 0;

  PaperModel(const Space& space, const SolverOptions& options) {
    const auto& gd = paper_grains();
    const auto in = upload_grain_inputs<typename Space::memory_space>(
        gd.wavelength_micron, gd.width_micron, gd.sizes, [&](int s) { return gd.sigma[std::size_t(s)]; });
    wavelength = in.wavelength;
    space.fence();
    const auto t0 = std::chrono::steady_clock::now();
    grains = prepare_grains<T>(space, in.wavelength, in.width, in.sigma, in.radius, in.number, options);
    space.fence();
    prepare_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
};

// nc synthetic cells (scaled MMP83 fields, seed 2010) on Space's device with room for their
// results, in the layout of dust_emission.
template <class Space, class T>
struct PaperCells {
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  using matrix = Kokkos::View<T**, Kokkos::LayoutLeft, device>;
  matrix intensity, heating, temperature, sed;
  Kokkos::View<int**, Kokkos::LayoutLeft, device> status;
  Kokkos::View<T*, device> dust_mass;

  PaperCells(const Space& space, const PaperModel<Space, T>& model, std::int64_t nc) {
    const int nl = model.grains.wavelengths(), ns = model.grains.species();
    intensity = matrix("intensity", nc, nl);
    heating = matrix("heating", nc, ns);
    temperature = matrix("temperature", nc, ns);
    sed = matrix("sed", nc, nl);
    status = decltype(status)("status", nc, ns);
    dust_mass = decltype(dust_mass)("dust_mass", nc);
    synthetic_cells(space, model.wavelength, intensity, dust_mass, 2010);
  }

  // Stages 2-4 on these cells (dust_emission with its input checks).
  void emit(const Space& space, const PaperModel<Space, T>& model, const SolverOptions& options,
            StageTimes* stages = nullptr) const {
    dust_emission(space, model.grains, intensity, dust_mass, heating, temperature, status, sed, options, true, stages);
  }
};

// Sanity, outside the timing: no solve may fail to converge.
template <class Space, class Status>
void require_converged(benchmark::State& state, const Space& space, const Status& status) {
  const std::int64_t nc = std::int64_t(status.extent(0)), ns = std::int64_t(status.extent(1));
  int failures = 0;
  Kokkos::parallel_reduce(
      "kosmos::bench::dust_status", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, nc * ns),
      KOKKOS_LAMBDA(const std::int64_t i, int& f) { f += status(i % nc, i / nc) == status_not_converged; },
      Kokkos::Sum<int>(failures));
  if (failures) state.SkipWithError("some temperature solves did not converge");
}

template <class Space, class T>
void BM_DustTable1(benchmark::State& state, TemperatureMethod method) {
  const std::int64_t nc = state.range(0);
  Space space;
  SolverOptions options;
  options.method = method;
  const PaperModel<Space, T> model(space, options);
  const PaperCells<Space, T> resident(space, model, nc);
  StageTimes sum, stages;
  kosmos_bench::fenced_loop(state, space, [&] {
    resident.emit(space, model, options, &stages);
    sum.heating += stages.heating;
    sum.temperature += stages.temperature;
    sum.sed += stages.sed;
  });
  const double n = double(state.iterations() + 1);  // fenced_loop's warm-up call included in the sums
  state.counters["prepare_s"] = model.prepare_seconds;
  state.counters["heating_s"] = sum.heating / n;
  state.counters["temperature_s"] = sum.temperature / n;
  state.counters["sed_s"] = sum.sed / n;
  state.counters["cells/s"] = kosmos_bench::rate(double(nc));
  require_converged(state, space, resident.status);
}

// Bytes a pipelined run moves across the bus: intensities and dust masses in; dust masses, SEDs,
// temperatures, heating and statuses out.
template <class T>
double pipeline_bytes(std::int64_t nc, int nl, int ns) {
  return double(nc) * ((2.0 * nl + 2.0 * ns + 2.0) * sizeof(T) + ns * sizeof(int));
}

enum class TransferMode { device_resident, host_pipelined, copies_only };

// The pipeline's traffic alone: each chunk's copies in and out (the same sizes, host rows and
// instances as EmissionPipeline), no kernel; an instance's chunk is fenced before its buffers are
// reused, as in the pipeline. Instances and buffers are made once, outside the timing.
template <class T, class Space>
class ChunkedCopies {
 public:
  ChunkedCopies(const Space& space, const PipelineOptions& po, int nl, int ns)
      : po_(po), instances_(space, po.instances) {
    auto alloc = [](const char* label) {
      return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label));
    };
    const std::int64_t n = po.chunk_cells;
    for (int i = 0; i < po.instances; ++i)
      buffers_.push_back({rows(alloc("kosmos::bench::copies_intensity"), n, nl),
                          rows(alloc("kosmos::bench::copies_sed"), n, nl),
                          rows(alloc("kosmos::bench::copies_temperature"), n, ns),
                          rows(alloc("kosmos::bench::copies_heating"), n, ns),
                          Kokkos::View<T*, device>(alloc("kosmos::bench::copies_mass"), n),
                          Kokkos::View<int**, Kokkos::LayoutRight, device>(
                              alloc("kosmos::bench::copies_status"), n, ns)});
  }

  void run(const HostCells<T>& cells) const {
    const std::int64_t nc = cells.cells(), chunk = po_.chunk_cells;
    for (std::int64_t c0 = 0, k = 0; c0 < nc; c0 += chunk, ++k) {
      const int i = int(k % po_.instances);
      const auto& instance = instances_[i];
      instance.fence();  // the instance's buffers are free again
      const std::int64_t n = std::min(chunk, nc - c0);
      const Kokkos::pair<std::int64_t, std::int64_t> range(c0, c0 + n), head(0, n);
      const Buffers& d = buffers_[std::size_t(i)];
      auto rows_of = [&](const auto& v, const auto& r) {
        return Kokkos::subview(v, r, Kokkos::ALL);
      };
      Kokkos::deep_copy(instance, rows_of(d.intensity, head), rows_of(cells.intensity, range));
      Kokkos::deep_copy(instance, Kokkos::subview(d.mass, head),
                        Kokkos::subview(cells.dust_mass, range));
      Kokkos::deep_copy(instance, Kokkos::subview(cells.dust_mass, range),
                        Kokkos::subview(d.mass, head));
      Kokkos::deep_copy(instance, rows_of(cells.sed, range), rows_of(d.sed, head));
      Kokkos::deep_copy(instance, rows_of(cells.temperature, range), rows_of(d.temperature, head));
      Kokkos::deep_copy(instance, rows_of(cells.heating, range), rows_of(d.heating, head));
      Kokkos::deep_copy(instance, rows_of(cells.status, range), rows_of(d.status, head));
    }
    for (int i = 0; i < po_.instances; ++i) instances_[i].fence();
  }

 private:
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  using rows = Kokkos::View<T**, Kokkos::LayoutRight, device>;
  struct Buffers {
    rows intensity, sed, temperature, heating;
    Kokkos::View<T*, device> mass;
    Kokkos::View<int**, Kokkos::LayoutRight, device> status;
  };
  PipelineOptions po_;
  kosmos::SpaceInstances<Space> instances_;
  std::vector<Buffers> buffers_;
};

// The transfer pair (float, Newton): device-resident cells, or cells in pinned host memory streamed
// through EmissionPipeline with their temperatures, statuses and SEDs copied back, or only the
// pipeline's copies. The scans take instances and chunk_cells from the benchmark's arguments 2-3.
template <class Space>
void BM_DustTransfers(benchmark::State& state, TransferMode mode, bool scan) {
  using T = float;
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  const std::int64_t nc = state.range(0);
  PipelineOptions po;
  if (scan) {
    po.instances = int(state.range(1));
    po.chunk_cells = state.range(2);
  }
  Space space;
  const SolverOptions options;
  const PaperModel<Space, T> model(space, options);
  const int nl = model.grains.wavelengths(), ns = model.grains.species();
  const PaperCells<Space, T> resident(space, model, nc);
  if (mode == TransferMode::device_resident) {
    kosmos_bench::fenced_loop(state, space, [&] { resident.emit(space, model, options); });
    require_converged(state, space, resident.status);
    state.counters["bytes/s"] = kosmos_bench::rate(pipeline_bytes<T>(nc, nl, ns));
  } else {
    // The same cells, row-major in pinned host memory.
    HostCells<T> cells(nc, nl, ns);
    Kokkos::View<T**, Kokkos::LayoutRight, device> rows("rows", nc, nl);
    space.fence();
    Kokkos::deep_copy(rows, resident.intensity);  // a layout change on the device
    Kokkos::deep_copy(cells.intensity, rows);
    Kokkos::deep_copy(cells.dust_mass, resident.dust_mass);
    if (mode == TransferMode::copies_only) {
      const ChunkedCopies<T, Space> copies(space, po, nl, ns);
      kosmos_bench::fenced_loop(state, space, [&] { copies.run(cells); });
    } else {
      EmissionPipeline<T, Space> pipeline(space, model.grains, po);
      double wait = 0;
      kosmos_bench::fenced_loop(state, space, [&] {
        pipeline.run(cells, options);
        wait += pipeline.device_wait_seconds();
      });
      state.counters["host_wait_s"] =
          wait / double(state.iterations() + 1);  // with fenced_loop's warm-up
      int failures = 0;
      for (std::int64_t c = 0; c < nc; ++c)
        for (int s = 0; s < ns; ++s) failures += cells.status(c, s) == status_not_converged;
      if (failures) state.SkipWithError("some temperature solves did not converge");
    }
    state.counters["bytes/s"] = kosmos_bench::rate(pipeline_bytes<T>(nc, nl, ns));
  }
  state.counters["cells/s"] = kosmos_bench::rate(double(nc));
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
  auto add = [&](const std::string& precision, const std::string& method_name, TemperatureMethod method, auto fn,
                 std::int64_t lo, std::int64_t hi) {
    auto* b = benchmark::RegisterBenchmark(("BM_DustTable1/" + space_name + "/" + precision + "/" + method_name).c_str(),
                                           [fn, method](benchmark::State& st) { fn(st, method); });
    b->ArgName("cells")->UseManualTime()->Unit(benchmark::kMillisecond);
    for (std::int64_t n = lo; n <= hi; n *= 2) b->Arg(n);
    b->Iterations(gpu ? 5 : 2);
  };
  add("float", "newton", TemperatureMethod::newton, &BM_DustTable1<Space, float>, 32, max_cells);
  add("float", "table", TemperatureMethod::table, &BM_DustTable1<Space, float>, gpu ? 32 : 1024,
      gpu ? max_cells : 16384);
  add("double", "newton", TemperatureMethod::newton, &BM_DustTable1<Space, double>, gpu ? 4096 : 1024,
      gpu ? 524288 : 4096);
  // The transfer pair at the paper's largest size on the GPU (8192 cells on OpenMP).
  const std::int64_t transfer_cells = gpu ? 524288 : 8192;
  for (const auto mode : {TransferMode::device_resident, TransferMode::host_pipelined}) {
    const std::string name =
        mode == TransferMode::device_resident ? "/device_resident" : "/host_pipelined";
    auto* b = benchmark::RegisterBenchmark(
        ("BM_DustTransfers/" + space_name + name).c_str(),
        [mode](benchmark::State& st) { BM_DustTransfers<Space>(st, mode, false); });
    b->ArgName("cells")->Arg(transfer_cells)->UseManualTime()->Unit(benchmark::kMillisecond);
    b->Iterations(gpu ? 5 : 2);
  }
  // What limits the pipeline. Host spaces run every "instance" on the one space: one small case.
  for (const auto mode : {TransferMode::host_pipelined, TransferMode::copies_only}) {
    const std::string name =
        mode == TransferMode::host_pipelined ? "/host_pipelined" : "/copies_only";
    auto* b = benchmark::RegisterBenchmark(
        ("BM_DustTransfers/" + space_name + name).c_str(),
        [mode](benchmark::State& st) { BM_DustTransfers<Space>(st, mode, true); });
    b->ArgNames({"cells", "instances", "chunk_cells"})
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    if (gpu) {
      for (const std::int64_t chunk : {16384, 65536})
        for (std::int64_t instances = 1; instances <= 4; ++instances)
          b->Args({transfer_cells, instances, chunk});
    } else {
      b->Args({transfer_cells, 2, 4096});
    }
    b->Iterations(gpu ? 5 : 2);
  }
}

// A new file for every run: truncating the last run's file would wait for the file system to
// write its 0.5 GB back first, which no single run of the tool pays.
std::string end_to_end_output(int run) {
  return (std::filesystem::temp_directory_path() /
          ("kosmos_dust_bench_" + std::to_string(::getpid()) + "_" + std::to_string(run) + ".h5"))
      .string();
}

void BM_DustEndToEndCli(benchmark::State& state) {
  if (!kosmos::io::hdf5_enabled()) {
    state.SkipWithError("built without HDF5");
    return;
  }
  const auto& commands = kosmos::cli::command_registry();
  const auto dust =
      std::find_if(commands.begin(), commands.end(), [](const auto& c) { return std::string(c.name) == "dust"; });
  int code = 0, runs = 0;
  kosmos_bench::fenced_loop(state, Kokkos::DefaultExecutionSpace(), [&] {
    const std::string out = end_to_end_output(runs++);
    code |= dust->run({"--cross-sections", std::string(KOSMOS_DATA_DIR) + "/dust/draine_graphite_81.dat",
                       "--generate", std::to_string(state.range(0)), "--chunk-cells",
                       state.range(1) == 0 ? std::string("auto") : std::to_string(state.range(1)),
                       "--writer-threads", std::to_string(state.range(2)),
                       "--precision", "float", "--method", "newton", "--t-cmb", "0", "--wavelengths", "paper",
                       "--temperatures", out,
                       "--status", out, "--sed", out, "--timings"});
  });
  for (int run = 0; run < runs; ++run) std::remove(end_to_end_output(run).c_str());
  if (code != 0) state.SkipWithError("kosmos dust exited with an error");
  state.counters["cells/s"] = kosmos_bench::rate(double(state.range(0)));
}

// The file system's floors under cli_to_h5: as many bytes as its file holds (per cell a float SED,
// a float temperature and an int32 status per species) written to a new file in the same
// directory, no HDF5, no compute: threads 0 in 64 MB fwrite calls (one write() stream), threads
// N > 0 preallocated, memory-mapped and copied in by N threads on the process' CPUs (as the CLI's
// writers do).
void BM_DustEndToEndWriteFloor(benchmark::State& state) {
  const auto& grains = paper_grains();
  const std::size_t cells = std::size_t(state.range(0)), threads = std::size_t(state.range(1)),
                    bytes = cells * (grains.wavelength_micron.size() + 2 * grains.sizes.radius_micron.size()) * 4;
  const std::size_t block = std::size_t(64) << 20;
  const std::vector<char> source(threads > 0 ? bytes : block, 1);
  int runs = 0;
  bool failed = false;
  kosmos_bench::fenced_loop(state, Kokkos::DefaultHostExecutionSpace(), [&] {
    const std::string path = end_to_end_output(runs++);
    if (threads == 0) {
      std::FILE* f = std::fopen(path.c_str(), "wb");
      if (f == nullptr) {
        failed = true;
        return;
      }
      for (std::size_t done = 0; done < bytes; done += block)
        failed |= std::fwrite(source.data(), 1, std::min(block, bytes - done), f) == 0;
      failed |= std::fclose(f) != 0;
      return;
    }
    const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR, 0644);
    void* map = MAP_FAILED;
    if (fd >= 0 && ::fallocate(fd, 0, 0, off_t(bytes)) == 0)
      map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
      failed = true;
      if (fd >= 0) ::close(fd);
      return;
    }
    const std::size_t share = (bytes / threads + 4095) / 4096 * 4096;
    std::vector<std::thread> copies;
    for (std::size_t t = 0; t < threads; ++t)
      copies.push_back(kosmos::Impl::start_helper_thread([&, t] {
        const std::size_t begin = std::min(bytes, t * share), end = std::min(bytes, begin + share);
        std::memcpy(static_cast<char*>(map) + begin, source.data() + begin, end - begin);
      }));
    for (auto& copy : copies) copy.join();
    failed |= ::munmap(map, bytes) != 0;
    failed |= ::close(fd) != 0;
  });
  for (int run = 0; run < runs; ++run) std::remove(end_to_end_output(run).c_str());
  if (failed) state.SkipWithError("writing the temporary file failed");
  state.counters["GB/s"] = kosmos_bench::rate(double(bytes) * 1e-9);
}

void register_end_to_end() {
  using Space = Kokkos::DefaultExecutionSpace;
  const std::string space = Space::name();
  const std::int64_t cells = on_device<Space>() ? 131072 : 4096;  // 4096 on a host backend: seconds per run
  // The CLI's defaults (chunk:0 is --chunk-cells auto: 1043 cells with 4 writers), chunks of
  // 512-4096 cells with the default 4 writer threads, and 1, 2 and 8 writers with auto chunks: the
  // pinned result ring (3 + writers chunks) is allocated per run.
  benchmark::RegisterBenchmark(("BM_DustEndToEnd/" + space + "/cli_to_h5").c_str(), BM_DustEndToEndCli)
      ->ArgNames({"cells", "chunk", "writers"})
      ->Args({cells, 0, 4})
      ->Args({cells, 512, 4})
      ->Args({cells, 2048, 4})
      ->Args({cells, 4096, 4})
      ->Args({cells, 0, 1})
      ->Args({cells, 0, 2})
      ->Args({cells, 0, 8})
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(3);
  benchmark::RegisterBenchmark(("BM_DustEndToEnd/" + space + "/write_floor").c_str(), BM_DustEndToEndWriteFloor)
      ->ArgNames({"cells", "threads"})
      ->Args({cells, 0})
      ->Args({cells, 4})
      ->Args({cells, 16})
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(3);
  benchmark::RegisterBenchmark(("BM_DustEndToEnd/" + space + "/kernels_only").c_str(),
                               [](benchmark::State& st) {
                                 BM_DustTransfers<Space>(st, TransferMode::device_resident, false);
                               })
      ->ArgName("cells")
      ->Arg(cells)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(3);
}

const int registered = [] {
  kosmos_bench::for_each_parallel_space([](auto tag) { register_space(tag); });
  register_end_to_end();
  return 0;
}();
}  // namespace
