// Machine ceilings the module benchmarks are compared with: device memory bandwidth (a large
// copy, bytes read + written) and double-precision GEMM through Kokkos Kernels.
#include <benchmark_utils.hpp>

#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Random.hpp>

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
}  // namespace
