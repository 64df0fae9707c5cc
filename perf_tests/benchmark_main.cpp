// The one benchmark main: initializes Kokkos and records where the numbers were taken (Kokkos
// version, backend, device, threads) in the benchmark context, so every JSON file says it.
#include <kosmos/core/configuration.hpp>

#include <Kokkos_Core.hpp>
#include <benchmark/benchmark.h>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  for (const auto& [key, value] : kosmos::current_configuration().entries())
    benchmark::AddCustomContext("kosmos_" + key, value);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
