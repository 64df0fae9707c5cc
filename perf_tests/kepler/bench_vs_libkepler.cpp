// Kosmos' host Kepler solve side by side with dfm/libkepler (built from a checkout given to CMake
// as KOSMOS_LIBKEPLER_DIR; nothing of it is copied here) on libkepler's benchmark problems: for
// each e in libkepler's grid (0.1, 0.3, 0.5, 0.7, 0.9) the mean anomalies M_m = 100 m / (n - 1)
// - 50, here with n = 2^20 so that one Kokkos launch amortizes (libkepler's benchmark: n = 1000).
// Rows per e: kosmos::kepler::solve (Markley, double; the vectorized host path) on Kokkos'
// default host space, libkepler's solve_simd with its Markley starter and third-order
// non-iterative refiner ("markley95dv"), and its scalar solve. Counters: ns per solve per core
// (the solve's wall x threads / n) and max_err, the largest |E - E_ref| over the grid, where E_ref
// is Newton's method on E - e sin E = M in long double from the solver's own answer (both solvers'
// E compared modulo 2 pi), so that equal accuracy can be checked next to the speed.
//   kosmos_kepler_vs_libkepler --benchmark_counters_tabular=true
// One core: OMP_NUM_THREADS=1 (libkepler is single-threaded); all cores: the Kosmos rows'
// ns/solve/core then count every thread.
#include <benchmark_utils.hpp>

#include <kosmos/kepler/solver.hpp>

#include <kepler/kepler.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace {
constexpr std::size_t kSolves = std::size_t(1) << 20;
constexpr double kEccentricities[5] = {0.1, 0.3, 0.5, 0.7, 0.9};

std::vector<double> mean_anomalies() {
  std::vector<double> M(kSolves);
  for (std::size_t m = 0; m < kSolves; ++m) M[m] = 100.0 * double(m) / double(kSolves - 1) - 50.0;
  return M;
}

// max |E - E_ref| with E_ref from two long-double Newton steps started at E (each E first
// brought to the branch of M: E_ref - e sin E_ref = M exactly in long double).
double max_error(const std::vector<double>& M, double e, const double* E) {
  const long double two_pi = 6.283185307179586476925286766559L;
  long double worst = 0;
  for (std::size_t i = 0; i < M.size(); ++i) {
    const long double m = M[i];
    long double x = E[i];
    // the branch of M: E - e sin E - M is a multiple of 2 pi plus the error
    x -= two_pi * std::round(double((x - e * std::sin(x) - m) / two_pi));
    const long double start = x;
    for (int k = 0; k < 3; ++k) x -= (x - e * sinl(x) - m) / (1 - e * cosl(x));
    worst = std::max(worst, std::fabs(start - x));
  }
  return double(worst);
}

void report(benchmark::State& state, int threads, double max_err) {
  // (solves per core x 1e-9 per second) inverted: nanoseconds per solve per core
  state.counters["ns/solve/core"] = benchmark::Counter(
      1e-9 * double(kSolves) / double(threads),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["max_err"] = max_err;
}

void BM_KosmosMarkley(benchmark::State& state, double e) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const auto M_host = mean_anomalies();
  Kokkos::View<double*, Space> M("M", kSolves), ecc("e", kSolves), E("E", kSolves),
      s("sinE", kSolves), c("cosE", kSolves), none;
  Kokkos::View<std::uint8_t*, Space> status("status", kSolves);
  for (std::size_t i = 0; i < kSolves; ++i) M(i) = M_host[i];
  Kokkos::deep_copy(ecc, e);
  Space space;
  kosmos_bench::fenced_loop(state, space,
                            [&] { kosmos::kepler::solve(space, M, ecc, E, s, c, none, status); });
  report(state, space.concurrency(), max_error(M_host, e, E.data()));
}

template <bool simd>
void BM_Libkepler(benchmark::State& state, double e) {
  using Starter = kepler::starters::markley<double>;
  using Refiner = kepler::refiners::non_iterative<3, double>;
  const auto M = mean_anomalies();
  std::vector<double> E(kSolves), s(kSolves), c(kSolves);
  const Refiner refiner;
  auto run = [&] {
    if (simd)
      kepler::solver::solve_simd<Starter, Refiner>(e, kSolves, M.data(), E.data(), s.data(),
                                                   c.data(), refiner);
    else
      kepler::solver::solve<Starter, Refiner>(e, kSolves, M.data(), E.data(), s.data(), c.data(),
                                              refiner);
    benchmark::DoNotOptimize(E.data());
  };
  Kokkos::DefaultHostExecutionSpace space;
  kosmos_bench::fenced_loop(state, space, run);
  report(state, 1, max_error(M, e, E.data()));
}

template <class Fn>
void add(const std::string& name, Fn fn) {
  benchmark::RegisterBenchmark(name.c_str(), fn)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(20);
}

const bool registered = [] {
  for (const double e : kEccentricities) {
    const std::string tag = "/e=" + std::to_string(e).substr(0, 3);
    add("BM_KosmosMarkley<double>" + tag, [e](benchmark::State& s) { BM_KosmosMarkley(s, e); });
    add("BM_Libkepler<markley95dv,simd>" + tag,
        [e](benchmark::State& s) { BM_Libkepler<true>(s, e); });
    add("BM_Libkepler<markley95d,scalar>" + tag,
        [e](benchmark::State& s) { BM_Libkepler<false>(s, e); });
  }
  return true;
}();
}  // namespace
