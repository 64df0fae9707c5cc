// WHFast-class and IAS15-class throughput and accuracy (issue 11, items 3-4):
//  - BM_nbody_WHFast / BM_nbody_IAS15 /<space>/systems:S: S perturbed copies of the outer solar
//    system (Hairer, Lubich & Wanner 2006; positions scaled by 1 + 1e-6 u per copy), WHFast at
//    dt = 0.377 (21.9 days) with the order-11 corrector, IAS15 at epsilon = 1e-9, for 50 WHFast
//    steps of simulated time (18.85 time units) in one launch; counter "system-steps/s"
//    (systems x steps, IAS15 rejected steps included). Sizes: 1024 (runs on a small machine)
//    and the 131072. On every parallel space, plus Kokkos::Serial (one core: the
//    per-core rate to compare with REBOUND's ~2e6 system-steps/s for WHFast).
//  - BM_nbody_OuterSolarSystem_1e5yr/<integrator>: the full accuracy run, one system on
//    Kokkos::Serial over 1e5 yr (628318.5 time units); counters "dE/E" (final |dE/E|) and steps.
#include <benchmark_utils.hpp>

#include <kosmos/nbody/nbody.hpp>

#include <cmath>
#include <string>

namespace {
using namespace kosmos::nbody;

IntegrateOptions modern_options(Method method) {
  IntegrateOptions o;
  o.integrator.method = method;
  o.integrator.dt = method == Method::whfast ? 0.377 : 0.1;  // IAS15: the first step only
  o.integrator.corrector = 11;
  o.integrator.epsilon = 1e-9;
  o.integrator.steps_per_launch = 1 << 30;  // one launch
  return o;
}

template <class Space>
void BM_Throughput(benchmark::State& state, Method method) {
  const int n_sys = int(state.range(0));
  const auto init = outer_solar_system(n_sys, 1e-6, 1);
  auto initial = clone<typename Space::memory_space>(init);
  auto ens = clone<typename Space::memory_space>(init);
  const IntegrateOptions o = modern_options(method);
  const double duration = 50 * 0.377;
  Space space;
  IntegrationReport rep;
  kosmos_bench::fenced_loop(state, space, [&] {
    deep_copy(ens, initial);
    rep = integrate(space, ens, duration, o);
  });
  state.counters["systems"] = n_sys;
  state.counters["system-steps/s"] = kosmos_bench::rate(double(rep.steps));
  state.counters["reached"] = rep.reached_destination;
}

void BM_Accuracy(benchmark::State& state, Method method, int corrector) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const auto init = outer_solar_system(1);
  HostEnsemble ens(1, init.n_bodies());
  IntegrateOptions o = modern_options(method);
  o.integrator.corrector = corrector;
  Kokkos::View<double*, Kokkos::HostSpace> e0("e0", 1), e1("e1", 1);
  energy(Space(), init, e0);
  IntegrationReport rep;
  kosmos_bench::fenced_loop(state, Space(), [&] {
    deep_copy(ens, init);
    rep = integrate(Space(), ens, 1e5 * 2 * M_PI, o);
  });
  energy(Space(), ens, e1);
  state.counters["dE/E"] = std::fabs((e1(0) - e0(0)) / e0(0));
  state.counters["steps"] = double(rep.steps);
  state.counters["reached"] = rep.reached_destination;
}

template <class Space>
void register_throughput(const std::string& suffix) {
  // Host rows: 3 iterations (one varied by ~40% between runs of the one-core row).
  const int iters =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible ? 3
                                                                                              : 5;
  for (const Method method : {Method::whfast, Method::ias15}) {
    const std::string name =
        std::string("BM_nbody_") + (method == Method::whfast ? "WHFast/" : "IAS15/") + suffix;
    benchmark::RegisterBenchmark(name.c_str(),
                                 [method](benchmark::State& s) { BM_Throughput<Space>(s, method); })
        ->ArgName("systems")
        ->Arg(1024)
        ->Arg(131072)
        ->UseManualTime()
        ->Iterations(iters)
        ->Unit(benchmark::kMillisecond);
  }
}

const bool registered = [] {
  kosmos_bench::for_each_parallel_space([](auto tag) {
    using Space = typename decltype(tag)::type;
    register_throughput<Space>(Space::name());
  });
#if defined(KOKKOS_ENABLE_SERIAL)
  register_throughput<Kokkos::Serial>("Serial");  // one core
#endif
  benchmark::RegisterBenchmark("BM_nbody_OuterSolarSystem_1e5yr/whfast",
                               [](benchmark::State& s) { BM_Accuracy(s, Method::whfast, 0); })
      ->UseManualTime()
      ->Iterations(1)
      ->Unit(benchmark::kSecond);
  benchmark::RegisterBenchmark("BM_nbody_OuterSolarSystem_1e5yr/whfast_corrector11",
                               [](benchmark::State& s) { BM_Accuracy(s, Method::whfast, 11); })
      ->UseManualTime()
      ->Iterations(1)
      ->Unit(benchmark::kSecond);
  benchmark::RegisterBenchmark("BM_nbody_OuterSolarSystem_1e5yr/ias15",
                               [](benchmark::State& s) { BM_Accuracy(s, Method::ias15, 0); })
      ->UseManualTime()
      ->Iterations(1)
      ->Unit(benchmark::kSecond);
  return true;
}();
}  // namespace
