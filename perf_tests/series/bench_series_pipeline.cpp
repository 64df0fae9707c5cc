// End to end versus kernels: the `kosmos series` pipeline itself (kosmos::series::evaluate_file,
// the function the command line tool calls: read the system, build the plan, copy to the device,
// evaluate, copy back, check, write) on p1 at degree 152 in deca double, against the evaluation
// alone on the same numbers already on the device.
//
//   BM_SeriesEndToEnd/p1/deg152/N10/h5/<DefaultSpace>    .h5 in, .h5 out
//   BM_SeriesEndToEnd/p1/deg152/N10/text/<DefaultSpace>  text in, text out (one iteration)
//   BM_SeriesEndToEnd/p1/deg152/N10/kernels/<Space>      evaluate() with inputs in place
//
// The pipeline runs on Kokkos' default execution space (as the tool does); the kernel-only case
// is registered for every parallel space. The input files are generated once per process (seed
// 1, as `kosmos series --generate p1 --degree 152 --precision 10`) in the temporary directory.
#include <benchmark_utils.hpp>

#include <kosmos/core/hdf5.hpp>
#include <kosmos/series/pipeline.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {
using namespace kosmos::series;

constexpr int kDegree = 152;
constexpr int kPrecision = 10;

struct Inputs {
  std::string text, h5;
  NumericSystem system;
};

const Inputs& inputs() {
  static const Inputs in = [] {
    Inputs r;
    const auto dir = std::filesystem::temp_directory_path();
    r.text = (dir / "kosmos_bench_series_p1_deg152.poly").string();
    r.h5 = (dir / "kosmos_bench_series_p1_deg152_N10.h5").string();
    const SystemText text = generate_system("p1", kDegree, false, 1);
    {
      std::ofstream out(r.text);
      write_system(out, text, "kosmos benchmark input");
    }
    r.system = to_numeric(text, kPrecision, r.text);
    if (kosmos::io::hdf5_enabled()) write_system_h5(r.h5, r.system, "kosmos benchmark input");
    return r;
  }();
  return in;
}

void bm_end_to_end(benchmark::State& state, bool hdf5) {
  if (hdf5 && !kosmos::io::hdf5_enabled()) {
    state.SkipWithError("built without HDF5");
    return;
  }
  FileEvaluation job;
  job.input = hdf5 ? inputs().h5 : inputs().text;
  job.output = (std::filesystem::temp_directory_path() /
                (hdf5 ? "kosmos_bench_series_values.h5" : "kosmos_bench_series_values.txt"))
                   .string();
  job.precision = kPrecision;
  std::ostringstream unused;
  Kokkos::DefaultExecutionSpace space;
  kosmos_bench::fenced_loop(state, space, [&] { evaluate_file(job, unused); });
  std::remove(job.output.c_str());
  state.counters["coefficients_in"] =
      double(inputs().system.polynomials[0].coefficients.size() / kPrecision);
}

template <class Space>
void bm_kernels(benchmark::State& state) {
  using V3 = Kokkos::View<double***, Kokkos::LayoutLeft, Space>;
  using Host3 =
      Kokkos::View<const double***, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
  const NumericSystem& sys = inputs().system;
  const auto& p = sys.polynomials[0];
  const std::size_t n1 = kDegree + 1, n = std::size_t(sys.num_variables),
                    M1 = p.structure.monomials.size() + 1;
  Space space;
  PolynomialEvaluator<kPrecision, false, Space> eval(space, p.structure, kDegree);
  V3 a("a", n1, M1, kPrecision), z("z", n1, n, kPrecision), grad("grad", n1, n, kPrecision);
  Kokkos::View<double**, Kokkos::LayoutLeft, Space> value("value", n1, kPrecision);
  Kokkos::deep_copy(a, Host3(p.coefficients.data(), n1, M1, kPrecision));
  Kokkos::deep_copy(z, Host3(sys.point.data(), n1, n, kPrecision));
  kosmos_bench::fenced_loop(state, space, [&] { eval.evaluate(space, a, z, value, grad); });
}

struct Registrar {
  template <class Tag>
  void operator()(Tag) const {
    using Space = typename Tag::type;
    benchmark::RegisterBenchmark(
        ("BM_SeriesEndToEnd/p1/deg152/N10/kernels/" + std::string(Space::name())).c_str(),
        [](benchmark::State& state) { bm_kernels<Space>(state); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.05);
  }
};

const bool registered = [] {
  const std::string space = Kokkos::DefaultExecutionSpace::name();
  benchmark::RegisterBenchmark(("BM_SeriesEndToEnd/p1/deg152/N10/h5/" + space).c_str(),
                               [](benchmark::State& state) { bm_end_to_end(state, true); })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->MinTime(0.05);
  benchmark::RegisterBenchmark(("BM_SeriesEndToEnd/p1/deg152/N10/text/" + space).c_str(),
                               [](benchmark::State& state) { bm_end_to_end(state, false); })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
  kosmos_bench::for_each_parallel_space(Registrar{});
  return true;
}();
}  // namespace
