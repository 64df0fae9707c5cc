// The path tracker end to end (kosmos/series/track.hpp): start solutions, tracking, end-point
// refinement and classification, deduplication, for every path of a total-degree homotopy, in
// one fixed precision (max_precision = precision: no raise, so N is what is measured).
// Names: BM_Track/<system>/N<N>/<Space>; counters: paths/s (the number that counts), paths,
// regular, at_infinity, failed (a run with failed paths is still timed, and says so).
//   cyclic5/6/7: 120, 720, 5040 paths (70, 156, 924 isolated solutions)
//   katsura6/8/10: 64, 256, 1024 paths
//   random10x2: a random dense quadratic system in 10 variables, 2^10 paths
// BM_TrackEscalated/cyclic7/N1to4/<Space>: the default options (double, then the failed and
// jumped paths re-tracked in double double and quad double); counter distinct: the solutions
// found (924 exist).
// On host spaces only the systems up to 256 paths run in double double and quad double, so the
// default OpenMP run stays short (KOSMOS_BENCH_TRACK_ALL=1: the whole grid there too, the CPU
// side of the GPU comparison); the GPU gets the whole grid.
#include <benchmark_utils.hpp>

#include <kosmos/series/example_systems.hpp>
#include <kosmos/series/track.hpp>

#include <cstdlib>
#include <string>

namespace {
using namespace kosmos::series;

// The warm-up's system (kernel load, scratch): 8 paths, not a second run of the timed system.
const NumericSystem& warm_up_system() {
  static const NumericSystem system = katsura_system(3);
  return system;
}

template <class Space, int N>
void bm_track(benchmark::State& state, const NumericSystem& system) {
  TrackOptions options;
  options.precision = options.max_precision = N;
  const Space space;
  TrackResult result;
  kosmos_bench::fenced_job(
      state, space, [&] { track(space, warm_up_system(), options); },
      [&] { result = track(space, system, options); });
  state.counters["paths"] = double(result.paths.size());
  state.counters["paths/s"] = kosmos_bench::rate(double(result.paths.size()));
  state.counters["regular"] = double(result.regular);
  state.counters["singular"] = double(result.singular);
  state.counters["at_infinity"] = double(result.at_infinity);
  state.counters["failed"] = double(result.failed);
  state.counters["distinct"] = double(result.solutions.size());
}

template <class Space>
void bm_track_escalated(benchmark::State& state, const NumericSystem& system) {
  const Space space;
  TrackResult result;
  kosmos_bench::fenced_job(
      state, space, [&] { track(space, warm_up_system(), TrackOptions{}); },
      [&] { result = track(space, system, TrackOptions{}); });
  state.counters["paths/s"] = kosmos_bench::rate(double(result.paths.size()));
  state.counters["distinct"] = double(result.solutions.size());
  state.counters["regular"] = double(result.regular);
  state.counters["failed"] = double(result.failed);
  state.counters["raised"] = double(result.raised);
  state.counters["passes"] = double(result.passes);
}

template <class Space, int N>
void register_precision(const std::string& space_name) {
  struct Case {
    std::string name;
    NumericSystem system;
    double paths;
  };
  const Case cases[] = {{"cyclic5", cyclic_system(5), 120},
                        {"cyclic6", cyclic_system(6), 720},
                        {"cyclic7", cyclic_system(7), 5040},
                        {"katsura6", katsura_system(6), 64},
                        {"katsura8", katsura_system(8), 256},
                        {"katsura10", katsura_system(10), 1024},
                        {"random10x2", random_dense_system(10, 2, 11), 1024}};
  const bool whole_grid =
      !kosmos::Impl::is_host_space<Space>() || std::getenv("KOSMOS_BENCH_TRACK_ALL") != nullptr;
  for (const Case& c : cases) {
    if (!whole_grid && N > 1 && c.paths > 256) continue;
    const NumericSystem system = c.system;
    benchmark::RegisterBenchmark(
        ("BM_Track/" + c.name + "/N" + std::to_string(N) + "/" + space_name).c_str(),
        [system](benchmark::State& state) { bm_track<Space, N>(state, system); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
}

struct Registrar {
  template <class Tag>
  void operator()(Tag) const {
    using Space = typename Tag::type;
    const std::string space_name = Space::name();
    register_precision<Space, 1>(space_name);
    register_precision<Space, 2>(space_name);
    register_precision<Space, 4>(space_name);
    const NumericSystem cyclic7 = cyclic_system(7);
    benchmark::RegisterBenchmark(
        ("BM_TrackEscalated/cyclic7/N1to4/" + space_name).c_str(),
        [cyclic7](benchmark::State& state) { bm_track_escalated<Space>(state, cyclic7); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
};

const bool registered = [] {
  kosmos_bench::for_each_parallel_space(Registrar{});
  return true;
}();
}  // namespace
