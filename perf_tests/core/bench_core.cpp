// Machine ceilings the module benchmarks are compared with: device memory bandwidth (a large
// copy, bytes read + written), double-precision GEMM through Kokkos Kernels, and a large HDF5
// output's rows written through the memory map and committed to disk.
#include <benchmark_utils.hpp>
#include <kosmos/core/hdf5.hpp>

#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Random.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace {
void BM_DeviceCopyBandwidth(benchmark::State& state) {
  const std::size_t n = std::size_t(state.range(0));
  Kokkos::View<double*> src("src", n), dst("dst", n);
  Kokkos::deep_copy(src, 1.0);
  Kokkos::DefaultExecutionSpace space;
  kosmos_bench::fenced_loop(state, space, [&] {
    Kokkos::parallel_for(
        "kosmos::bench::copy", Kokkos::RangePolicy<>(space, 0, n),
        KOKKOS_LAMBDA(const std::size_t i) { dst(i) = src(i); });
  });
  state.counters["GB/s"] = benchmark::Counter(2.0 * n * sizeof(double) / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DeviceCopyBandwidth)->Arg(1 << 27)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_Dgemm(benchmark::State& state) {
  const int n = int(state.range(0));
  Kokkos::View<double**, Kokkos::LayoutLeft> a("A", n, n), b("B", n, n), c("C", n, n);
  Kokkos::Random_XorShift64_Pool<> pool(5);
  Kokkos::fill_random(a, pool, -1.0, 1.0);
  Kokkos::fill_random(b, pool, -1.0, 1.0);
  Kokkos::DefaultExecutionSpace space;
  kosmos_bench::fenced_loop(state, space, [&] { KokkosBlas::gemm("N", "N", 1.0, a, b, 0.0, c); });
  state.counters["FLOP/s"] = kosmos_bench::rate(2.0 * n * n * double(n));
}
BENCHMARK(BM_Dgemm)->Arg(2048)->UseManualTime()->Unit(benchmark::kMillisecond);

// A float dataset of range(0) rows of 1208 values (a dust SED of that many cells) written in
// chunks of 748 rows through RowWrites::concurrent, the chunks arriving evenly over range(1)
// milliseconds as a pipeline hands them over, then committed (fsync, rename). The time is the
// whole; commit_s is what the job waits for after its last chunk.
void BM_H5RowsCommitted(benchmark::State& state) {
  if (!kosmos::io::hdf5_enabled()) {
    state.SkipWithError("built without HDF5");
    return;
  }
  const std::size_t rows = std::size_t(state.range(0)), width = 1208, chunk = 748;
  const std::chrono::duration<double> pace(double(state.range(1)) / 1e3);
  const std::string path = (std::filesystem::temp_directory_path() / "kosmos_bench_rows.h5").string();
  std::vector<float> values(chunk * width, 1.0f);
  double commit_seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    kosmos::io::H5Writer writer(path);
    writer.create<float>("sed", {rows, width}, kosmos::io::H5Writer::RowWrites::concurrent);
    const std::size_t chunks = (rows + chunk - 1) / chunk;
    for (std::size_t c = 0; c < chunks; ++c) {
      writer.write_rows<float>("sed", c * chunk, std::min(chunk, rows - c * chunk), values.data());
      std::this_thread::sleep_until(start + pace * (double(c + 1) / double(chunks)));
    }
    const auto committing = std::chrono::steady_clock::now();
    writer.commit();
    const auto stop = std::chrono::steady_clock::now();
    commit_seconds += std::chrono::duration<double>(stop - committing).count();
    state.SetIterationTime(std::chrono::duration<double>(stop - start).count());
  }
  std::remove(path.c_str());
  state.counters["commit_s"] = benchmark::Counter(commit_seconds, benchmark::Counter::kAvgIterations);
  state.counters["GB"] = double(rows * width * sizeof(float)) / 1e9;
}
BENCHMARK(BM_H5RowsCommitted)
    ->Args({262144, 0})
    ->Args({262144, 5000})
    ->Iterations(3)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
}  // namespace
