// Stability of a whole RV posterior end to end (issue 24, item 6): a posterior file of D draws of
// a two-planet system like HD 164922 (b: 1201 d, c: 75.7 d, HD 164922's stellar mass in the
// derived columns of `kosmos rv --stellar-mass`) is read, turned into D systems (planets by
// period), integrated for `orbits` orbits of the inner planet with the largest eccentricity
// sampled 100 times, and written as the joined table (text). The timed region is all of that;
// writing the posterior file is not. Counter "draws/s".
//  - BM_nbody_StabilityPosterior_WHFast/<space>/draws:D/orbits:O: WHFast, Jacobi, dt = 1/20 of
//    the inner period, no MEGNO.
//  - BM_nbody_StabilityPosterior_WHFast_MEGNO/<space>/draws:D/orbits:O: the same with the
//    variational equations and MEGNO (synchronized every step); counter "median_megno".
//  - BM_nbody_StabilityPosterior_IAS15_MEGNO/<space>/draws:D/orbits:O: IAS15 (epsilon 1e-9) with
//    MEGNO; counter "median_megno".
// Sizes: 1024 draws x 100 orbits (a small machine), 1e4 draws x 1e3 orbits (16 CPU cores) and
// 1e5 draws (the GPU machine) x 1e4 orbits (WHFast, WHFast + MEGNO: the scale) or 1e3
// orbits (IAS15 + MEGNO); pick one with --benchmark_filter (e.g. 'WHFast_MEGNO/Cuda/draws:100000').
// KOSMOS_BENCH_INITIAL_ENSEMBLE=FILE writes the systems' initial state (kosmos text ensemble,
// untimed) for perf_tests/nbody/rebound_whfast_megno.c, REBOUND's one-core timing on them.
#include <benchmark_utils.hpp>

#include <kosmos/kepler/search.hpp>
#include <kosmos/nbody/nbody.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

namespace {
using namespace kosmos::nbody;

constexpr double inner_period_days = 75.74;

// D draws around the HD 164922 fit, labels as `kosmos rv` gives them (b the stronger, outer one).
std::string write_posterior(int draws) {
  const std::string path = "kosmos_bench_posterior_" + std::to_string(draws) + ".txt";
  std::ofstream out(path);
  out << "P_b K_b e_b omega_deg_b M0_deg_b msini_jup_b a_au_b P_c K_c e_c omega_deg_c M0_deg_c "
         "lnL\n";
  out.precision(17);
  std::mt19937_64 rng(24);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int d = 0; d < draws; ++d) {
    kosmos::kepler::Orbit b, c;
    b.P = 1201.1 + 2 * g(rng);
    b.K = 7.3 + 0.3 * g(rng);
    b.e = std::fabs(0.08 + 0.03 * g(rng));
    c.P = inner_period_days + 0.02 * g(rng);
    c.K = std::fabs(2.2 + 0.3 * g(rng));
    c.e = std::min(0.6, std::fabs(0.1 + 0.08 * g(rng)));
    const auto mass = kosmos::kepler::minimum_mass(b, 0.874);
    out << b.P << ' ' << b.K << ' ' << b.e << ' ' << 60 + 20 * g(rng) << ' '
        << 360 * (g(rng) + 3) / 6 << ' ' << mass.msini_jupiter << ' ' << mass.a_au << ' ' << c.P
        << ' ' << c.K << ' ' << c.e << ' ' << 130 + 40 * g(rng) << ' ' << 360 * (g(rng) + 3) / 6
        << ' ' << -100 << '\n';
  }
  return path;
}

enum class Variant { whfast, whfast_megno, ias15_megno };

template <class Space>
void BM_StabilityPosterior(benchmark::State& state, Variant variant) {
  const bool megno = variant != Variant::whfast;
  const int draws = int(state.range(0)), orbits = int(state.range(1));
  const std::string posterior_path = write_posterior(draws),
                    table = posterior_path + ".stability.txt";
  const double inner_period = inner_period_days / days_per_time_unit;
  IntegrateOptions o;
  o.integrator.method = variant == Variant::ias15_megno ? Method::ias15 : Method::whfast;
  o.integrator.dt = inner_period / 20;
  o.integrator.epsilon = 1e-9;
  o.integrator.steps_per_launch = 1 << 30;
  o.monitor.close_encounter_hill = 3;
  o.megno = megno;
  if (const char* initial = std::getenv("KOSMOS_BENCH_INITIAL_ENSEMBLE"))
    write_text(initial,
               ensemble_from_rv_posterior(read_rv_posterior(posterior_path), StabilitySetup()));
  StabilityRun run;
  auto job = [&](const std::string& path, double orbits_run) {
    const auto posterior = read_rv_posterior(path);
    run = run_stability(Space(), posterior, StabilitySetup(), o, orbits_run * inner_period);
    write_stability_table(path + ".stability.txt", posterior, run.systems, run.final_state,
                          run.outcomes);
  };
  const std::string warm_up_path = write_posterior(std::min(draws, 256));
  kosmos_bench::fenced_job(
      state, Space(), [&] { job(warm_up_path, std::min(orbits, 10)); },
      [&] { job(posterior_path, orbits); });
  for (const std::string& path : {warm_up_path, warm_up_path + ".stability.txt"})
    std::remove(path.c_str());
  state.counters["draws/s"] = kosmos_bench::rate(draws);
  const auto summary = summarize_stability(run.final_state, orbits * inner_period);
  state.counters["survived"] = summary.survived;
  state.counters["failures"] = summary.failures;
  if (megno) {
    auto y = run.outcomes.megno;
    std::sort(y.begin(), y.end());
    state.counters["median_megno"] = y.empty() ? NAN : y[y.size() / 2];
  }
  std::remove(posterior_path.c_str());
  std::remove(table.c_str());
}

const bool registered = [] {
  kosmos_bench::for_each_parallel_space([](auto tag) {
    using Space = typename decltype(tag)::type;
    for (const Variant variant : {Variant::whfast, Variant::whfast_megno, Variant::ias15_megno}) {
      const std::string name = std::string("BM_nbody_StabilityPosterior_") +
                               (variant == Variant::whfast         ? "WHFast/"
                                : variant == Variant::whfast_megno ? "WHFast_MEGNO/"
                                                                   : "IAS15_MEGNO/") +
                               Space::name();
      benchmark::RegisterBenchmark(
          name.c_str(),
          [variant](benchmark::State& s) { BM_StabilityPosterior<Space>(s, variant); })
          ->ArgNames({"draws", "orbits"})
          ->Args({1024, 100})
          // 16 CPU cores: a tenth of the draws and orbits (the whole job, ~40 min there, does
          // not fit a device call); its draw-orbits per second are the CPU's rate
          ->Args({10000, 1000})
          // IAS15 + MEGNO: ~10x the work per orbit
          ->Args({100000, variant == Variant::ias15_megno ? 1000 : 10000})
          ->UseManualTime()
          ->Iterations(1)
          ->Unit(benchmark::kSecond);
    }
  });
  return true;
}();
}  // namespace
