// Helpers shared by the benchmarks: device-fenced timing so each iteration measures finished work.
#pragma once

#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

#include <chrono>

namespace kosmos_bench {

// Runs `body` once per benchmark iteration with a fence before and after, and reports the
// wall time of the fenced region as the iteration's manual time (use ->UseManualTime()).
// `warm_up` runs once before (first-touch, kernel load, scratch allocation): for a whole job, a
// small instance of it, so the warm-up does not cost a second job.
template <class Space, class WarmUp, class Body>
void fenced_job(benchmark::State& state, const Space& space, WarmUp&& warm_up, Body&& body) {
  warm_up();
  space.fence();
  for (auto _ : state) {
    space.fence();
    const auto start = std::chrono::steady_clock::now();
    body();
    space.fence();
    const auto stop = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(stop - start).count());
  }
}

// fenced_job with the body itself as the warm-up.
template <class Space, class Body>
void fenced_loop(benchmark::State& state, const Space& space, Body&& body) {
  fenced_job(state, space, body, body);
}

// A rate counter: `count` items per iteration, reported per second.
inline benchmark::Counter rate(double count) {
  return benchmark::Counter(count, benchmark::Counter::kIsIterationInvariantRate);
}
// Type tag for an execution space (no instance is created before Kokkos is initialized).
template <class Space>
struct SpaceTag {
  using type = Space;
};

// Calls register_one(SpaceTag<Space>{}) for each parallel backend this build enables, so one
// binary benchmarks CUDA and the OpenMP baseline side by side (a CUDA build enables both).
template <class Registrar>
void for_each_parallel_space(Registrar&& register_one) {
#if defined(KOKKOS_ENABLE_OPENMP)
  register_one(SpaceTag<Kokkos::OpenMP>{});
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  register_one(SpaceTag<Kokkos::Cuda>{});
#endif
#if !defined(KOKKOS_ENABLE_OPENMP) && !defined(KOKKOS_ENABLE_CUDA)
  register_one(SpaceTag<Kokkos::DefaultExecutionSpace>{});
#endif
}
}  // namespace kosmos_bench
