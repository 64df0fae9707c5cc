// Newton's method on power series (kosmos/series/newton.hpp) on the cyclic n-roots system in a
// Newton homotopy H(x, t) = F(x) - (1 - t / 1024) F(x0), x0 random: x(0) = x0 is a regular start.
//   F_k = sum_{i=0}^{n-1} prod_{j=0}^{k-1} x_{(i+j) mod n}, k = 1 .. n-1;  F_n = x_0 ... x_{n-1} -
//   1
// Names: BM_SeriesNewton/cyclic<n>/deg<d>/N<N>/<Space>. The manual time is one whole solve
// (ceil(log2(d + 1)) steps at degrees 1, 3, 7, ..., d plus the refinement step at degree d that
// confirms convergence from this exact start, then one more evaluation, LU and substitution at
// the result for its residual, condition and error estimate; stages fenced). Counters: steps,
// steps/s; eval_ms and solve_ms (per solve, summed over the steps, the diagnostic pass excluded:
// evaluation of H and its Jacobian vs LU + forward substitution); step_ms = (eval_ms + solve_ms) /
// steps; eval_share = eval_ms / (eval_ms + solve_ms); ratio = min over the variables of
// |x_{d-1}| / |x_d| (PHCpack's estimate of the series' radius).
//
// On host spaces only the cases up to about 6e7 (d + 1)^2 N^3 convolution units run (degree 8
// for every N, 31 and 63 for small N), so the default OpenMP run stays short; the GPU gets the
// whole grid d = 8, 31, 63, 152 and N = 2, 4, 8, 10.
#include <benchmark_utils.hpp>

#include <kosmos/series/newton.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <type_traits>

namespace {
using namespace kosmos::series;

std::vector<Polynomial> cyclic(int n) {
  std::vector<Polynomial> system;
  for (int k = 1; k <= n; ++k) {
    Polynomial p;
    p.num_variables = n;
    for (int i = 0; i < (k < n ? n : 1); ++i) {
      Monomial m;
      for (int j = 0; j < k; ++j) m.variables.push_back((i + j) % n);
      p.monomials.push_back(m);
    }
    system.push_back(p);
  }
  return system;
}

// The path parameter is t / 1024: from this start the series in t itself has a radius of ~7e-4
// (counter "ratio": the smallest |x_{d-1}| / |x_d|), so its coefficients grow ~1400^k and leave
// double's range before degree 152; in t / 1024 the radius is ~0.7 at every degree.
constexpr double kPathScale = 1.0 / 1024;

template <class Space>
constexpr bool is_device() {
#if defined(KOKKOS_ENABLE_CUDA)
  return std::is_same<Space, Kokkos::Cuda>::value;
#else
  return false;
#endif
}

template <class Space, int N>
void bm_newton(benchmark::State& state, int n, int d) {
  using Series = Kokkos::View<double***, Kokkos::LayoutLeft, Space>;
  const auto system = cyclic(n);
  Space space;
  SeriesNewton<N, false, Space> newton(space, system, d);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  std::vector<double> x0(static_cast<std::size_t>(n));
  for (auto& v : x0) v = rng() % 2 ? u(rng) : -u(rng);
  std::vector<Series> coefficients;
  for (int k = 0; k < n; ++k) {
    const auto& p = system[std::size_t(k)];
    Series a("a", std::size_t(d) + 1, p.monomials.size() + 1, N);
    auto h = Kokkos::create_mirror_view(a);
    // F_k = sum of the products + c; the constant series of H_k is c - (1 - t / 1024) F_k(x0)
    double products = 0;
    for (std::size_t s = 0; s < p.monomials.size(); ++s) {
      h(0, s + 1, 0) = 1.0;
      double product = 1.0;
      for (const int v : p.monomials[s].variables) product *= x0[std::size_t(v)];
      products += product;
    }
    const double c = k + 1 < n ? 0.0 : -1.0;
    h(0, 0, 0) = -products;
    if (d >= 1) h(1, 0, 0) = kPathScale * (products + c);
    Kokkos::deep_copy(a, h);
    coefficients.push_back(a);
  }
  Series start("start", std::size_t(d) + 1, std::size_t(n), N),
      x("x", std::size_t(d) + 1, std::size_t(n), N);
  auto hs = Kokkos::create_mirror_view(start);
  for (int j = 0; j < n; ++j) hs(0, j, 0) = x0[std::size_t(j)];
  Kokkos::deep_copy(start, hs);
  double eval = 0, solve = 0;
  long calls = 0;
  std::size_t steps = 0;
  double radius = 0;
  NewtonOptions timed;
  timed.timed = true;
  kosmos_bench::fenced_loop(state, space, [&] {
    Kokkos::deep_copy(space, x, start);
    const NewtonResult r = newton.solve(space, coefficients, x, timed);
    if (r.status != NewtonStatus::success) state.SkipWithError(to_string(r.status));
    steps = r.steps.size();
    radius = r.coefficient_ratio.empty()
                 ? 0
                 : *std::min_element(r.coefficient_ratio.begin(), r.coefficient_ratio.end());
    if (calls++ == 0) return;  // fenced_loop's warm-up
    for (const auto& step : r.steps) {
      eval += step.evaluation_seconds;
      solve += step.solve_seconds;
    }
  });
  const double iters = double(calls > 1 ? calls - 1 : 1);
  state.counters["steps"] = double(steps);
  state.counters["ratio"] = radius;
  state.counters["steps/s"] = kosmos_bench::rate(double(steps));
  state.counters["step_ms"] = 1e3 * (eval + solve) / iters / double(steps);
  state.counters["eval_ms"] = 1e3 * eval / iters;
  state.counters["solve_ms"] = 1e3 * solve / iters;
  state.counters["eval_share"] = eval + solve > 0 ? eval / (eval + solve) : 0;
}

template <class Space, int N>
void register_precision(const std::string& space_name) {
  const int n = 8;
  std::int64_t convolutions = 0;
  for (const auto& p : cyclic(n)) convolutions += make_plan(p).num_convolutions();
  for (const int d : {8, 31, 63, 152}) {
    if (!is_device<Space>() && double(convolutions) * (d + 1.0) * (d + 1.0) * N * N * N > 6e7)
      continue;
    benchmark::RegisterBenchmark(
        ("BM_SeriesNewton/cyclic" + std::to_string(n) + "/deg" + std::to_string(d) + "/N" +
         std::to_string(N) + "/" + space_name)
            .c_str(),
        [n, d](benchmark::State& state) { bm_newton<Space, N>(state, n, d); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.05);
  }
}

struct Registrar {
  template <class Tag>
  void operator()(Tag) const {
    using Space = typename Tag::type;
    const std::string space_name = Space::name();
    register_precision<Space, 2>(space_name);
    register_precision<Space, 4>(space_name);
    register_precision<Space, 8>(space_name);
    register_precision<Space, 10>(space_name);
  }
};

const bool registered = [] {
  kosmos_bench::for_each_parallel_space(Registrar{});
  return true;
}();
}  // namespace
