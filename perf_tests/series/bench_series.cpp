// The layout of Verschelde (2021), Tables 3-7: evaluate and differentiate p1, p2, p3 at power
// series truncated at degree d in N-fold double precision, on OpenMP and CUDA side by side.
//
// Names: BM_Series/<p1|p2|p3>/deg<d>/N<N>/<Space> (real) and BM_SeriesComplex/... (complex
// coefficients and point, the paper's complex timings). Counters (per evaluation, milliseconds):
// conv_ms (all convolution layers), add_ms (scalings and all addition layers), sum_ms, and the
// manual time is the wall time of the whole evaluation (staging, convolutions, additions, copy of
// value and gradient; fenced). "paper_FLOP/s" is the paper-equivalent rate of Section 6.2:
//   ops = convolutions (d+1)^2 mul(N) + (convolutions d (d+1) + additions (d+1)) add(N)
// with the paper's counts mul(10) = 3089, add(10) = 397 and, for other N, the same model scaled
// as mul(N) = 3089 (N/10)^3, add(N) = 397 (N/10)^2 (N = 2 gives 25 and 16, close to the usual
// double-double counts 23 and 20), and mul(1) = add(1) = 1. A complex product counts as
// 4 mul + 2 add, a complex sum as 2 add.
//
// The full grid is 3 x 9 x 7 x 2 per space. On OpenMP, cases above 2e10 paper-equivalent operations
// (about a third of a second or more per evaluation on 16 cores) are not registered: see perf_tests/RESULTS.md.
#include <benchmark_utils.hpp>

#include <kosmos/series/evaluate.hpp>

#include <cmath>
#include <random>
#include <string>
#include <type_traits>

namespace {
using namespace kosmos::series;

template <class Space>
constexpr bool kosmos_bench_is_device() {
#if defined(KOKKOS_ENABLE_CUDA)
  return std::is_same<Space, Kokkos::Cuda>::value;
#else
  return false;
#endif
}

double mul_ops(int N) { return N == 1 ? 1.0 : 3089.0 * std::pow(N / 10.0, 3); }
double add_ops(int N) { return N == 1 ? 1.0 : 397.0 * std::pow(N / 10.0, 2); }

const EvaluationPlan& plan_of(const std::string& name) {
  static const EvaluationPlan p1 = make_plan(make_p1()), p2 = make_plan(make_p2()), p3 = make_plan(make_p3());
  return name == "p1" ? p1 : (name == "p2" ? p2 : p3);
}

double paper_ops(const std::string& name, int d, int N, bool complex) {
  const auto& plan = plan_of(name);
  const double c = double(plan.num_convolutions()), a = double(plan.num_additions());
  const double mul = complex ? 4 * mul_ops(N) + 2 * add_ops(N) : mul_ops(N), add = (complex ? 2 : 1) * add_ops(N);
  return c * (d + 1.0) * (d + 1.0) * mul + (c * d * (d + 1.0) + a * (d + 1.0)) * add;
}

template <class Space, int N, bool Complex>
void bm_series(benchmark::State& state, const std::string& name, int d) {
  constexpr int L = Complex ? 2 * N : N;
  using V3 = Kokkos::View<double***, Kokkos::LayoutLeft, Space>;
  using V2 = Kokkos::View<double**, Kokkos::LayoutLeft, Space>;
  const Polynomial p = make_test_polynomial(name);
  Space space;
  PolynomialEvaluator<N, Complex, Space> eval(space, p, d);
  const int M = int(p.monomials.size()), n = p.num_variables;
  V3 a("a", d + 1, M + 1, L), z("z", d + 1, n, L), grad("grad", d + 1, n, L);
  V2 value("value", d + 1, L);
  {
    auto ha = Kokkos::create_mirror_view(a);
    auto hz = Kokkos::create_mirror_view(z);
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int l = 0; l < L; ++l) {
      const double scale = std::ldexp(1.0, -53 * (l % N));
      for (int s = 0; s <= M; ++s)
        for (int k = 0; k <= d; ++k) ha(k, s, l) = u(rng) * scale;
      for (int s = 0; s < n; ++s)
        for (int k = 0; k <= d; ++k) hz(k, s, l) = u(rng) * scale;
    }
    Kokkos::deep_copy(a, ha);
    Kokkos::deep_copy(z, hz);
  }
  double conv = 0, add = 0;
  long calls = 0;
  kosmos_bench::fenced_loop(state, space, [&] {
    StageTimes t;
    eval.evaluate(space, a, z, value, grad, &t);
    if (calls++ > 0) {  // the first call is fenced_loop's warm-up
      conv += t.convolution;
      add += t.addition;
    }
  });
  const double iters = double(calls > 1 ? calls - 1 : 1);
  state.counters["conv_ms"] = 1e3 * conv / iters;
  state.counters["add_ms"] = 1e3 * add / iters;
  state.counters["sum_ms"] = 1e3 * (conv + add) / iters;
  state.counters["convolutions"] = double(eval.plan().num_convolutions());
  state.counters["additions"] = double(eval.plan().num_additions());
  state.counters["paper_FLOP/s"] = kosmos_bench::rate(paper_ops(name, d, N, Complex));
  state.counters["cuda_kernels"] = eval.uses_cuda_specialization() ? 1 : 0;
}

template <class Space, int N, bool Complex>
void register_precision(const std::string& space_name) {
  for (const std::string name : {"p1", "p2", "p3"})
    for (const int d : {0, 8, 15, 31, 63, 95, 127, 152, 191}) {
      const bool host = !kosmos_bench_is_device<Space>();
      if (host && paper_ops(name, d, N, Complex) > 2e10) continue;
      benchmark::RegisterBenchmark((std::string(Complex ? "BM_SeriesComplex/" : "BM_Series/") + name + "/deg" +
                                    std::to_string(d) + "/N" + std::to_string(N) + "/" + space_name)
                                       .c_str(),
                                   [name, d](benchmark::State& state) { bm_series<Space, N, Complex>(state, name, d); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.05);
    }
}

template <class Space, bool Complex>
void register_all_precisions(const std::string& space_name) {
  register_precision<Space, 1, Complex>(space_name);
  register_precision<Space, 2, Complex>(space_name);
  register_precision<Space, 3, Complex>(space_name);
  register_precision<Space, 4, Complex>(space_name);
  register_precision<Space, 5, Complex>(space_name);
  register_precision<Space, 8, Complex>(space_name);
  register_precision<Space, 10, Complex>(space_name);
}

struct Registrar {
  template <class Tag>
  void operator()(Tag) const {
    using Space = typename Tag::type;
    const std::string space_name = Space::name();
    register_all_precisions<Space, false>(space_name);
    register_all_precisions<Space, true>(space_name);
  }
};

const bool registered = [] {
  kosmos_bench::for_each_parallel_space(Registrar{});
  return true;
}();
}  // namespace
