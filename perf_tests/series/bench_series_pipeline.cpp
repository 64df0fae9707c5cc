// End to end versus kernels: the `kosmos series` pipeline itself (kosmos::series::evaluate_file,
// the function the command line tool calls: read the system, build the plan, copy to the device,
// evaluate, copy back, check, write) on p1 at degree 152 in deca double, against the evaluation
// alone on the same numbers already on the device.
//
//   BM_SeriesEndToEnd/p1/deg<d>/N10/h5/<DefaultSpace>    .h5 in, .h5 out
//   BM_SeriesEndToEnd/p1/deg<d>/N10/text/<DefaultSpace>  text in, text out (one iteration)
//   BM_SeriesEndToEnd/p1/deg<d>/N10/kernels/<Space>      evaluate() with inputs in place
//
// for d = 152 (the target) and d = 8 (a quick check that also runs on a small CPU). The pipeline
// runs on Kokkos' default execution space (as the tool does); the kernel-only case is registered
// for every parallel space. The input files are generated once per process and degree (seed 1, as
// `kosmos series --generate p1 --degree <d> --precision 10`) in the temporary directory.
#include <benchmark_utils.hpp>

#include <kosmos/core/hdf5.hpp>
#include <kosmos/series/pipeline.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace {
using namespace kosmos::series;

constexpr int kPrecision = 10;

struct Inputs {
  std::string text, h5;
  NumericSystem system;
};

Inputs make_inputs(int degree) {
  Inputs r;
  const auto dir = std::filesystem::temp_directory_path();
  const std::string stem = "kosmos_bench_series_p1_deg" + std::to_string(degree);
  r.text = (dir / (stem + ".poly")).string();
  r.h5 = (dir / (stem + "_N10.h5")).string();
  const SystemText text = generate_system("p1", degree, false, 1);
  {
    std::ofstream out(r.text);
    write_system(out, text, "kosmos benchmark input");
  }
  r.system = to_numeric(text, kPrecision, r.text);
  if (kosmos::io::hdf5_enabled()) write_system_h5(r.h5, r.system, "kosmos benchmark input");
  return r;
}

const Inputs& inputs(int degree) {
  static std::map<int, Inputs> cache;
  auto found = cache.find(degree);
  if (found == cache.end()) found = cache.emplace(degree, make_inputs(degree)).first;
  return found->second;
}

void bm_end_to_end(benchmark::State& state, int degree, bool hdf5) {
  if (hdf5 && !kosmos::io::hdf5_enabled()) {
    state.SkipWithError("built without HDF5");
    return;
  }
  FileEvaluation job;
  const Inputs& in = inputs(degree);
  job.input = hdf5 ? in.h5 : in.text;
  job.output = (std::filesystem::temp_directory_path() /
                (hdf5 ? "kosmos_bench_series_values.h5" : "kosmos_bench_series_values.txt"))
                   .string();
  job.precision = kPrecision;
  std::ostringstream unused;
  Kokkos::DefaultExecutionSpace space;
  kosmos_bench::fenced_loop(state, space, [&] { evaluate_file(job, unused); });
  std::remove(job.output.c_str());
  state.counters["coefficients_in"] =
      double(in.system.polynomials[0].coefficients.size() / kPrecision);
}

template <class Space>
void bm_kernels(benchmark::State& state, int degree) {
  using V3 = Kokkos::View<double***, Kokkos::LayoutLeft, Space>;
  using Host3 =
      Kokkos::View<const double***, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
  const NumericSystem& sys = inputs(degree).system;
  const auto& p = sys.polynomials[0];
  const std::size_t n1 = std::size_t(degree) + 1, n = std::size_t(sys.num_variables),
                    M1 = p.structure.monomials.size() + 1;
  Space space;
  PolynomialEvaluator<kPrecision, false, Space> eval(space, p.structure, degree);
  V3 a("a", n1, M1, kPrecision), z("z", n1, n, kPrecision), grad("grad", n1, n, kPrecision);
  Kokkos::View<double**, Kokkos::LayoutLeft, Space> value("value", n1, kPrecision);
  Kokkos::deep_copy(a, Host3(p.coefficients.data(), n1, M1, kPrecision));
  Kokkos::deep_copy(z, Host3(sys.point.data(), n1, n, kPrecision));
  kosmos_bench::fenced_loop(state, space, [&] { eval.evaluate(space, a, z, value, grad); });
}

std::string name(int degree, const char* kind, const std::string& space) {
  return "BM_SeriesEndToEnd/p1/deg" + std::to_string(degree) + "/N10/" + kind + "/" + space;
}

struct Registrar {
  int degree;
  template <class Tag>
  void operator()(Tag) const {
    using Space = typename Tag::type;
    const int d = degree;
    benchmark::RegisterBenchmark(name(d, "kernels", Space::name()).c_str(),
                                 [d](benchmark::State& state) { bm_kernels<Space>(state, d); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.05);
  }
};

const bool registered = [] {
  const std::string space = Kokkos::DefaultExecutionSpace::name();
  for (const int d : {8, 152}) {
    benchmark::RegisterBenchmark(name(d, "h5", space).c_str(),
                                 [d](benchmark::State& state) { bm_end_to_end(state, d, true); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.05);
    benchmark::RegisterBenchmark(name(d, "text", space).c_str(),
                                 [d](benchmark::State& state) { bm_end_to_end(state, d, false); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
    kosmos_bench::for_each_parallel_space(Registrar{d});
  }
  return true;
}();
}  // namespace
