// Ford 2009 Table 2 rows: Kepler solutions/s (float, double; Danby and Markley) and chi^2
// systems/s (fused and separate layouts x single, double, mixed) for n_sys = 122880, n_pl = 4,
// n_obs = 256 (the first 256 HD 164922 observations), on every parallel backend of the build.
//   kosmos_kepler_benchmarks --benchmark_counters_tabular=true
// Parameters drawn from Table 2's distribution (P log-uniform 2 d - 10 yr, K log-uniform 1-500 m/s,
// e U[0, 0.99), omega, M0 U[0, 2pi)). Model validation is off (it is a separate reduction).
#include <benchmark_utils.hpp>

#include <kosmos/kepler/chi2.hpp>
#include <kosmos/kepler/evidence.hpp>
#include <kosmos/kepler/rv_data.hpp>
#include <kosmos/kepler/search.hpp>

#include <Kokkos_Random.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {
using namespace kosmos::kepler;

constexpr int kSystems = 122880, kPlanets = 4, kObs = 256;
constexpr std::int64_t kSolutions = std::int64_t(1) << 24;

template <class Space>
int iterations_for(int cuda, int host) {
#if defined(KOKKOS_ENABLE_CUDA)
  if (std::is_same<Space, Kokkos::Cuda>::value) return cuda;
#endif
  (void)cuda;
  return host;
}

template <class T, class Space>
void BM_KeplerSolve(benchmark::State& state, Solver solver) {
  Kokkos::View<T*, Space> M("M", kSolutions), e("e", kSolutions), E("E", kSolutions);
  Kokkos::View<std::uint8_t*, Space> status("status", kSolutions);
  Kokkos::Random_XorShift64_Pool<Space> pool(2009);
  Kokkos::fill_random(M, pool, T(0), T(6.283185307179586));
  Kokkos::fill_random(e, pool, T(0), T(0.99));
  SolverOptions options;
  options.solver = solver;
  Space space;
  kosmos_bench::fenced_loop(state, space, [&] { solve(space, M, e, E, status, options); });
  state.counters["solutions/s"] = kosmos_bench::rate(double(kSolutions));
}

// u in [0, 1) -> P = 2 d x (1826.25)^u, K = 500^u m/s (nvcc: kernels outside constructors).
template <class Space, class PView, class KView>
void log_uniform(const PView& P, const KView& K) {
  using Phase = typename PView::non_const_value_type;
  using Real = typename KView::non_const_value_type;
  Kokkos::parallel_for(
      "kosmos::kepler::bench::log_uniform", Kokkos::RangePolicy<Space>(0, int(P.extent(0))),
      KOKKOS_LAMBDA(const int s) {
        for (int j = 0; j < int(P.extent(1)); ++j) {
          P(s, j) = Phase(2) * kosmos::math::pow(Phase(1826.25), P(s, j));
          K(s, j) = kosmos::math::pow(Real(500), K(s, j));
        }
      });
}

template <class Precision, class Space>
struct Chi2Setup {
  Observations<Space> obs;
  Models<Precision, Space> models;
  Kokkos::View<double*, Space> chi2;
  Chi2Setup() : models(kSystems, kPlanets, 1), chi2("chi2", kSystems) {
    auto data = read_rv_file(KOSMOS_DATA_DIR "/rv/hd164922_radvel.txt");
    data.time.resize(kObs);
    data.velocity.resize(kObs);
    data.sigma.resize(kObs);
    obs = Observations<Space>(data.time, data.velocity, data.sigma, std::vector<int>(kObs, 0), 1,
                              data.mid_time());
    Kokkos::Random_XorShift64_Pool<Space> pool(1);
    using Phase = typename Precision::phase_type;
    using Real = typename Precision::real_type;
    Kokkos::fill_random(models.P, pool, Phase(0), Phase(1));  // u -> 2 (1826.25)^u below
    Kokkos::fill_random(models.K, pool, Real(0), Real(1));
    Kokkos::fill_random(models.e, pool, Real(0), Real(0.99));
    Kokkos::fill_random(models.omega, pool, Real(0), Real(6.283185307179586));
    Kokkos::fill_random(models.M0, pool, Real(0), Real(6.283185307179586));
    log_uniform<Space>(models.P, models.K);
    Kokkos::fence();
  }
};

template <class Precision, class Space>
void BM_Chi2(benchmark::State& state, Chi2Layout layout, bool generic) {
  Chi2Setup<Precision, Space> setup;
  Chi2Options options;
  options.layout = layout;
  options.validate = false;
  Space space;
  Chi2Evaluator<Precision, Space> evaluator(space, setup.obs, options);
  Kokkos::View<double*, Space> none;
  kosmos_bench::fenced_loop(state, space, [&] {
    if (generic)
      evaluator.evaluate_generic(setup.models, setup.chi2, none);
    else
      evaluator.evaluate(setup.models, setup.chi2, none);
  });
  state.counters["systems/s"] = kosmos_bench::rate(double(kSystems));
  state.counters["solutions/s"] = kosmos_bench::rate(double(kSystems) * kPlanets * kObs);
  state.SetLabel(evaluator.uses_cuda_specialization(kPlanets) && !generic ? "cuda specialization"
                                                                          : "kokkos");
}

// Survey: kSurveyStars synthetic stars, 2 planets each (P log-uniform 2-300 d, K 5-30 m/s,
// e U[0, 0.3)), 100 observations over 1000 d, one instrument, sigma 2 m/s; DE-MCMC from the
// true orbits with a fixed budget (kSurveyChains chains, 20 + 20 generations, thin 4).
constexpr int kSurveyStars = 1000, kSurveyChains = 32, kSurveyLoopStars = 20;

struct SurveySet {
  std::vector<RVData> stars;
  std::vector<StartModel> starts;
  SurveySet() {
    std::mt19937_64 rng(2026);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::normal_distribution<double> g(0.0, 1.0);
    for (int s = 0; s < kSurveyStars; ++s) {
      StartModel start;
      for (int j = 0; j < 2; ++j)
        start.orbits.push_back({2.0 * std::pow(150.0, u(rng)), 5 + 25 * u(rng), 0.3 * u(rng),
                                6.283185 * u(rng), 6.283185 * u(rng)});
      start.offsets = {0.0};
      start.jitters = {1.0};
      RVData d;
      d.path = "synthetic_" + std::to_string(s);
      d.instrument_names = {"A"};
      for (int k = 0; k < 100; ++k) d.time.push_back(2456000.0 + 1000 * u(rng));
      std::sort(d.time.begin(), d.time.end());
      for (double t : d.time) {
        double v = 0;
        for (const auto& o : start.orbits) v += radial_velocity(o, t, 2456500.0);
        d.velocity.push_back(v + std::sqrt(5.0) * g(rng));
        d.sigma.push_back(2.0);
        d.instrument.push_back(0);
      }
      for (auto& o : start.orbits)
        o.M0 = reduce_mean_anomaly(o.M0 + 6.283185307179586 * (d.mid_time() - 2456500.0) / o.P);
      stars.push_back(std::move(d));
      starts.push_back(std::move(start));
    }
  }
};

template <class Space>
SearchOptions survey_options() {
  SearchOptions o;
  o.planets = 2;
  o.chains = kSurveyChains;
  o.burn = 20;
  o.steps = 20;
  o.thin = 4;
  o.period_min = 1.0;
  o.period_max = 2000.0;
  o.host_space = !std::is_same<Space, Kokkos::DefaultExecutionSpace>::value;
  o.mixed_precision = false;
  return o;
}

// Only the sampler, started from the true orbits (survey_from): all stars' chains in the same
// launches (batched = true) or the same code one star at a time over the first kSurveyLoopStars
// stars (stars/s comparable between the two).
template <class Space>
void BM_SurveySamplerFromTrueOrbits(benchmark::State& state, bool batched) {
  static const SurveySet set;
  const auto options = survey_options<Space>();
  const int n = batched ? kSurveyStars : kSurveyLoopStars;
  const std::vector<RVData> stars(set.stars.begin(), set.stars.begin() + n);
  const std::vector<StartModel> starts(set.starts.begin(), set.starts.begin() + n);
  Space space;
  // One survey call (batched) or the loop of one-star calls; returns the summed stage split.
  auto run = [&](const SearchOptions& o) {
    SamplerTiming sum;
    auto add = [&](const SamplerTiming& t) {
      sum.likelihood += t.likelihood;
      sum.generation += t.generation;
      sum.transfers += t.transfers;
    };
    if (batched)
      add(survey_from(stars, starts, o).front().sampler_timing);
    else
      for (int s = 0; s < n; ++s)
        add(survey_from({stars[s]}, {starts[s]}, o).front().sampler_timing);
    return sum;
  };
  kosmos_bench::fenced_loop(state, space, [&] { run(options); });
  // The split of one more run with every stage fenced (SearchOptions::time_stages; the timed
  // runs above are not, a fence per stage would slow short launches), in milliseconds: the
  // batched ln L kernel, the work around it (proposals, priors, accept/reject, staging, keeping
  // samples), host <-> device copies, and the rest of the wall (per-star setup, the starting
  // scatter's host part, summaries).
  auto profiled = options;
  profiled.time_stages = true;
  space.fence();
  const auto start = std::chrono::steady_clock::now();
  const SamplerTiming split = run(profiled);
  space.fence();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  state.counters["lnL_ms"] = 1e3 * split.likelihood;
  state.counters["generation_ms"] = 1e3 * split.generation;
  state.counters["copies_ms"] = 1e3 * split.transfers;
  state.counters["rest_ms"] = 1e3 * (wall - split.likelihood - split.generation - split.transfers);
  state.counters["stars/s"] = kosmos_bench::rate(double(n));
  // chains x (40 generations + initial and curvature batches) models per star
  state.counters["models/s"] = kosmos_bench::rate(double(n) * kSurveyChains * 41);
}

// The real survey job: n synthetic stars (argument), a third each with 2 planets, 1 planet and
// none (P log-uniform 3-300 d, the second planet's period >= 1.6 x the first's, K 6-30 m/s,
// e U[0, 0.3)), 100 observations over 1000 d, sigma 2 m/s plus 1 m/s jitter, from the data to
// the posteriors with the default settings (SearchOptions' defaults: 160 chains, 1000 + 1000
// generations, 150 DE generations, 8192 candidates per planet; the CLI's precision: mixed on a
// GPU, double on the host), the counts 0..2 compared per star, stellar mass 1 M_sun (m sin i).
// Counters: stars/s; recovered, the fraction of stars whose count is the injected one with every
// injected period within 2 % of a fitted median; converged, the fraction whose worst
// rank-normalized split R-hat is below 1.01. The device runs 1000 stars, the host 48 (a rate:
// stars/s compare across the two).
constexpr int kEndToEndStarsDevice = 1000, kEndToEndStarsHost = 48;
// The warm-up survey of the end-to-end benchmarks: a star of each planet count (0, 1, 2).
constexpr int kWarmUpStars = 3;

struct EndToEndSet {
  std::vector<RVData> stars;
  std::vector<std::vector<Orbit>> truths;
  explicit EndToEndSet(int n) {
    std::mt19937_64 rng(2027);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::normal_distribution<double> g(0.0, 1.0);
    const double epoch = 2457000.0;
    for (int s = 0; s < n; ++s) {
      std::vector<Orbit> orbits;
      double P = 3.0 * std::pow(100.0, u(rng));
      for (int j = 0; j < 2 - s % 3; ++j) {
        orbits.push_back({P, 6 + 24 * u(rng), 0.3 * u(rng), 6.283185 * u(rng), 6.283185 * u(rng)});
        P *= 1.6 + 3 * u(rng);
      }
      RVData d;
      d.path = "synthetic_" + std::to_string(s);
      d.instrument_names = {"A"};
      for (int k = 0; k < 100; ++k) d.time.push_back(epoch - 500 + 1000 * u(rng));
      std::sort(d.time.begin(), d.time.end());
      for (double t : d.time) {
        double v = 0;
        for (const auto& o : orbits) v += radial_velocity(o, t, epoch);
        d.velocity.push_back(v + std::sqrt(5.0) * g(rng));
        d.sigma.push_back(2.0);
        d.instrument.push_back(0);
      }
      stars.push_back(std::move(d));
      truths.push_back(std::move(orbits));
    }
  }
  // The right count, and each injected period within 2 % of a fitted median.
  bool recovered(std::size_t s, const SearchResult& r) const {
    if (r.planets != int(truths[s].size())) return false;
    for (const auto& o : truths[s]) {
      bool found = false;
      for (int j = 0; j < r.planets; ++j)
        found =
            found || std::fabs(r.get(std::string("P_") + "bcdefghi"[j]).median / o.P - 1) < 0.02;
      if (!found) return false;
    }
    return true;
  }
};

// The end-to-end benchmarks' settings: the defaults, counts 0..2, the CLI's precision.
template <class Space>
SearchOptions end_to_end_options() {
  SearchOptions options;
  options.planets = 2;
  options.min_planets = 0;
  options.stellar_mass = 1.0;
  options.host_space = !std::is_same<Space, Kokkos::DefaultExecutionSpace>::value;
  options.mixed_precision =
      !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
  return options;
}

void end_to_end_counters(benchmark::State& state, const EndToEndSet& set,
                         const std::vector<SearchResult>& results) {
  int recovered = 0, converged = 0, extended = 0, extended_to_last = 0;
  for (std::size_t s = 0; s < results.size(); ++s) {
    recovered += set.recovered(s, results[s]) ? 1 : 0;
    converged += results[s].max_rhat < 1.01 ? 1 : 0;
    extended += results[s].extensions > 0 ? 1 : 0;
    extended_to_last += results[s].extensions == SearchOptions().max_extensions ? 1 : 0;
  }
  const double n = double(results.size());
  state.counters["stars/s"] = kosmos_bench::rate(double(set.stars.size()));
  state.counters["recovered"] = double(recovered) / n;
  state.counters["converged"] = double(converged) / n;
  // The fractions of stars that needed an extension round, and the last one.
  state.counters["extended"] = double(extended) / n;
  state.counters["extended_to_last"] = double(extended_to_last) / n;
}

// Where survey()'s wall went (its SamplerTiming): the shared optimization, then the one sampling
// run of every star (of it the kept rows' copies and the convergence checks) and the stars'
// summaries (on host threads while unconverged stars sample on: not additive).
// survey_evidence's results carry no such split.
void survey_stage_counters(benchmark::State& state, const std::vector<SearchResult>& results) {
  const SamplerTiming& timing = results.front().sampler_timing;
  state.counters["optimization_s"] = timing.optimization;
  state.counters["sampling_s"] = timing.total;
  state.counters["kept_rows_s"] = timing.kept_rows;
  state.counters["convergence_s"] = timing.convergence;
  state.counters["summaries_s"] = timing.summaries;
}

template <class Space>
void BM_SurveyEndToEnd(benchmark::State& state) {
  const EndToEndSet set(int(state.range(0)));
  const SearchOptions options = end_to_end_options<Space>();
  std::vector<SearchResult> results;
  Space space;
  const EndToEndSet warm_up(kWarmUpStars);
  kosmos_bench::fenced_job(
      state, space, [&] { survey(warm_up.stars, options); },
      [&] { results = survey(set.stars, options); });
  end_to_end_counters(state, set, results);
  survey_stage_counters(state, results);
}

// The same job with each star's count chosen by evidence (survey_evidence, `kosmos rv --batch
// --evidence --temperatures 16`): every star's counts by importance sampling, which decides the
// stars it can (they sample only their count, as BM_SurveyEndToEnd), the others ladder the counts
// it could not estimate (16 temperatures x that sampler each), then if still open every count.
// decided_by_importance: the fraction of stars it decided; decided_with_ladders: those decided by
// its estimates with the first ladders; *_s: the
// survey's wall per stage (EvidenceResult::survey_stages). The device runs as many stars as
// BM_SurveyEndToEnd, the host 3. KOSMOS_BENCH_IMPORTANCE_DRAWS and KOSMOS_BENCH_LADDER_CHAINS set
// EvidenceOptions::importance_draws and ladder_chains.
constexpr int kEvidenceTemperatures = 16, kEvidenceStarsHost = 3;

template <class Space>
void BM_SurveyEvidenceEndToEnd(benchmark::State& state) {
  const EndToEndSet set(int(state.range(0)));
  const SearchOptions options = end_to_end_options<Space>();
  EvidenceOptions ev;
  ev.temperatures = kEvidenceTemperatures;
  if (const char* draws = std::getenv("KOSMOS_BENCH_IMPORTANCE_DRAWS"))
    ev.importance_draws = std::atoi(draws);
  if (const char* chains = std::getenv("KOSMOS_BENCH_LADDER_CHAINS"))
    ev.ladder_chains = std::atoi(chains);
  std::vector<ModelSelection> selections;
  Space space;
  const EndToEndSet warm_up(kWarmUpStars);
  kosmos_bench::fenced_job(
      state, space, [&] { survey_evidence(warm_up.stars, options, ev); },
      [&] { selections = survey_evidence(set.stars, options, ev); });
  std::vector<SearchResult> results;
  int decided = 0, mixed = 0;
  for (auto& selection : selections) {
    decided += selection.evidence.decided_by == "importance" ? 1 : 0;
    mixed += selection.evidence.decided_by.rfind("importance and ladder", 0) == 0 ? 1 : 0;
    results.push_back(std::move(selection.posterior));
  }
  end_to_end_counters(state, set, results);
  state.counters["decided_by_importance"] = double(decided) / double(selections.size());
  state.counters["decided_with_ladders"] = double(mixed) / double(selections.size());
  state.counters["importance_draws"] = ev.importance_draws;
  state.counters["ladder_chains"] = ev.ladder_chains;
  const EvidenceResult::StageSeconds& stages = selections.front().evidence.survey_stages;
  state.counters["optimization_s"] = stages.optimization;
  state.counters["importance_s"] = stages.importance;
  state.counters["ladders_s"] = stages.ladders;
  state.counters["posteriors_s"] = stages.posteriors;
  state.counters["summaries_s"] = stages.summaries;
}

template <class Fn>
auto* add(const std::string& name, Fn fn, int iterations) {
  return benchmark::RegisterBenchmark(name.c_str(), fn)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(iterations);
}

const bool registered = [] {
  kosmos_bench::for_each_parallel_space([](auto tag) {
    using Space = typename decltype(tag)::type;
    const std::string sp = std::string("/") + Space::name();
    const int solve_iters = iterations_for<Space>(50, 5);
    add(
        "BM_KeplerSolve<float,Danby>" + sp,
        [](benchmark::State& s) { BM_KeplerSolve<float, Space>(s, Solver::Danby); }, solve_iters);
    add(
        "BM_KeplerSolve<float,Markley>" + sp,
        [](benchmark::State& s) { BM_KeplerSolve<float, Space>(s, Solver::Markley); }, solve_iters);
    add(
        "BM_KeplerSolve<double,Danby>" + sp,
        [](benchmark::State& s) { BM_KeplerSolve<double, Space>(s, Solver::Danby); }, solve_iters);
    add(
        "BM_KeplerSolve<double,Markley>" + sp,
        [](benchmark::State& s) { BM_KeplerSolve<double, Space>(s, Solver::Markley); },
        solve_iters);
    // One chi^2 pass is 1.26e8 Kepler solutions: a few iterations on CPUs.
    const int chi_iters = iterations_for<Space>(20, 2);
    add(
        "BM_Chi2<fused,single>" + sp,
        [](benchmark::State& s) { BM_Chi2<Single, Space>(s, Chi2Layout::fused, false); },
        chi_iters);
    add(
        "BM_Chi2<fused,double>" + sp,
        [](benchmark::State& s) { BM_Chi2<Double, Space>(s, Chi2Layout::fused, false); },
        chi_iters);
    add(
        "BM_Chi2<fused,mixed>" + sp,
        [](benchmark::State& s) { BM_Chi2<Mixed, Space>(s, Chi2Layout::fused, false); }, chi_iters);
    add(
        "BM_Chi2<separate,single>" + sp,
        [](benchmark::State& s) { BM_Chi2<Single, Space>(s, Chi2Layout::separate, false); },
        chi_iters);
    add(
        "BM_Chi2<separate,double>" + sp,
        [](benchmark::State& s) { BM_Chi2<Double, Space>(s, Chi2Layout::separate, false); },
        chi_iters);
    add(
        "BM_Chi2<separate,mixed>" + sp,
        [](benchmark::State& s) { BM_Chi2<Mixed, Space>(s, Chi2Layout::separate, false); },
        chi_iters);
    // The survey runs where the search does: Kokkos' default space or the default host space.
    if (std::is_same<Space, Kokkos::DefaultExecutionSpace>::value ||
        std::is_same<Space, Kokkos::DefaultHostExecutionSpace>::value) {
      add(
          "BM_SurveySamplerFromTrueOrbits<batched>" + sp,
          [](benchmark::State& s) { BM_SurveySamplerFromTrueOrbits<Space>(s, true); },
          iterations_for<Space>(3, 1));
      add(
          "BM_SurveySamplerFromTrueOrbits<one_star_loop>" + sp,
          [](benchmark::State& s) { BM_SurveySamplerFromTrueOrbits<Space>(s, false); }, 1);
      add(
          "BM_SurveyEndToEnd" + sp, [](benchmark::State& s) { BM_SurveyEndToEnd<Space>(s); }, 1)
          ->Arg(iterations_for<Space>(kEndToEndStarsDevice, kEndToEndStarsHost));
      add(
          "BM_SurveyEvidenceEndToEnd<T16,screened>" + sp,
          [](benchmark::State& s) { BM_SurveyEvidenceEndToEnd<Space>(s); }, 1)
          ->Arg(iterations_for<Space>(kEndToEndStarsDevice, kEvidenceStarsHost));
    }
#if defined(KOKKOS_ENABLE_CUDA)
    if (std::is_same<Space,
                     Kokkos::Cuda>::value)  // the generic Kokkos kernel next to the specialization
      add(
          "BM_Chi2<fused,mixed_generic>" + sp,
          [](benchmark::State& s) { BM_Chi2<Mixed, Space>(s, Chi2Layout::fused, true); },
          chi_iters);
#endif
  });
  return true;
}();
}  // namespace
