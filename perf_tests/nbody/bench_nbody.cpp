// Swarm-NG's benchmarks (Dindar et al. 2013, Section 5.3) on every parallel space:
//  - Table 3: the Section 5.1 ensemble, n = 3, 4, 5, 6, 10 bodies, fixed-step Hermite
//    (dt = 1e-3) for 1 time unit; 131072 systems on CUDA, fewer on OpenMP (the counters are
//    rates, so CUDA and OpenMP compare directly); in the register (system-per-thread) and the
//    team (body pairs in scratch) work models.
//  - Table 4: pair interactions per second (one interaction = one pair force + jerk evaluation;
//    Hermite evaluates every pair twice per step).
//  - MVS (dt = 1e-2, 10 time units) and RKCK (fixed dt = 1e-3, 1 time unit) on n = 3 and 6.
//  - One ensemble-wide force evaluation: the CUDA specialization and the generic Kokkos path.
//  - CallOverhead: one step of the Table 3 ensemble, a call's cost apart from its steps.
#include <benchmark_utils.hpp>

#include <kosmos/nbody/nbody.hpp>

#include <string>

namespace {
using namespace kosmos::nbody;

template <class Space>
constexpr bool on_gpu() {
  return !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
}

// Systems for a case: the paper's 131072 on the GPU; on CPUs fewer (rates stay comparable).
template <class Space>
int systems_for(int n_bodies) {
  if (on_gpu<Space>()) return 131072;
  return n_bodies <= 5 ? 8192 : 2048;
}

template <class Space>
void BM_Integrate(benchmark::State& state, Method method, double dt, double duration,
                  IntegratorConfig::WorkModel model = IntegratorConfig::WorkModel::automatic) {
  const int n = int(state.range(0));
  const int n_sys = systems_for<Space>(n);
  const auto init = generate_planetary_ensemble(n_sys, n, 1e-3, 0.4, 1);
  auto initial = clone<typename Space::memory_space>(init);
  auto ens = clone<typename Space::memory_space>(init);
  IntegrateOptions opt;
  opt.integrator.method = method;
  opt.integrator.dt = dt;
  opt.integrator.steps_per_launch = 1 << 20;  // one launch (Swarm-NG: many steps per launch)
  opt.integrator.work_model = model;
  Space space;
  IntegrationReport rep;
  kosmos_bench::fenced_loop(state, space, [&] {
    deep_copy(ens, initial);
    rep = integrate(space, ens, duration, opt);
  });
  const double steps = double(rep.steps);  // summed over systems
  const double evals = method == Method::hermite ? 2 : method == Method::rkck ? 6 : 1;
  const double pairs = n * (n - 1) / 2.0;
  state.counters["systems"] = n_sys;
  state.counters["systems/s"] = kosmos_bench::rate(n_sys);
  state.counters["steps/s"] = kosmos_bench::rate(steps);
  state.counters["pairs/s"] = kosmos_bench::rate(steps * evals * pairs);
  state.counters["reached"] = rep.reached_destination;
}

template <class Space>
void BM_AccJerk(benchmark::State& state, bool specialized) {
  using Mem = typename Space::memory_space;
  const int n = int(state.range(0));
  const int n_sys = on_gpu<Space>() ? 131072 : 16384;
  auto ens = clone<Mem>(generate_planetary_ensemble(n_sys, n, 1e-3, 0.4, 1));
  typename Ensemble<Mem>::BodyView acc("acc", ens.pos.extent(0), ens.pos.extent(1), ens.pos.extent(2));
  typename Ensemble<Mem>::BodyView jerk("jerk", ens.pos.extent(0), ens.pos.extent(1), ens.pos.extent(2));
  Space space;
  kosmos_bench::fenced_loop(state, space, [&] {
    if (specialized)
      compute_acc_jerk(space, ens, acc, jerk);
    else
      compute_acc_jerk_generic(space, ens, acc, jerk);
  });
  state.counters["pairs/s"] = kosmos_bench::rate(double(n_sys) * n * (n - 1) / 2.0);
}

const bool registered = [] {
  kosmos_bench::for_each_parallel_space([](auto tag) {
    using Space = typename decltype(tag)::type;
    const std::string name = Space::name();
    const int iters = on_gpu<Space>() ? 5 : 2;
    using WM = IntegratorConfig::WorkModel;
    // Table 3 in both work models: "registers" (system per thread; on CUDA the hand-tuned kernel,
    // n <= 8) and "team" (the generic body-pair-in-scratch kernel, any n).
    benchmark::RegisterBenchmark(("BM_nbody_Table3_Hermite_registers/" + name).c_str(),
                                 [](benchmark::State& s) {
                                   BM_Integrate<Space>(s, Method::hermite, 1e-3, 1.0, WM::system_per_thread);
                                 })
        ->ArgName("n")->Arg(3)->Arg(4)->Arg(5)->Arg(6)->Arg(7)->Arg(8)
        ->UseManualTime()->Iterations(iters)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_nbody_Table3_Hermite_team/" + name).c_str(),
                                 [](benchmark::State& s) { BM_Integrate<Space>(s, Method::hermite, 1e-3, 1.0, WM::team); })
        ->ArgName("n")->Arg(3)->Arg(4)->Arg(5)->Arg(6)->Arg(7)->Arg(8)->Arg(10)
        ->UseManualTime()->Iterations(iters)->Unit(benchmark::kMillisecond);
    // One step of the Table 3 ensemble: what a call of integrate() costs besides its steps
    // (validation, energy guard, carried state, summary).
    benchmark::RegisterBenchmark(("BM_nbody_CallOverhead_Hermite_registers/" + name).c_str(),
                                 [](benchmark::State& s) {
                                   BM_Integrate<Space>(s, Method::hermite, 1e-3, 1e-3, WM::system_per_thread);
                                 })
        ->ArgName("n")->Arg(3)
        ->UseManualTime()->Iterations(iters)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_nbody_MVS/" + name).c_str(),
                                 [](benchmark::State& s) { BM_Integrate<Space>(s, Method::mvs, 1e-2, 10.0); })
        ->ArgName("n")->Arg(3)->Arg(6)
        ->UseManualTime()->Iterations(iters)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_nbody_RKCK/" + name).c_str(),
                                 [](benchmark::State& s) { BM_Integrate<Space>(s, Method::rkck, 1e-3, 1.0); })
        ->ArgName("n")->Arg(3)->Arg(6)
        ->UseManualTime()->Iterations(iters)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_nbody_AccJerk/" + name).c_str(),
                                 [](benchmark::State& s) { BM_AccJerk<Space>(s, true); })
        ->ArgName("n")->Arg(3)->Arg(10)->Arg(32)
        ->UseManualTime()->MinTime(0.2)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_nbody_AccJerkGeneric/" + name).c_str(),
                                 [](benchmark::State& s) { BM_AccJerk<Space>(s, false); })
        ->ArgName("n")->Arg(3)->Arg(10)->Arg(32)
        ->UseManualTime()->MinTime(0.2)->Unit(benchmark::kMicrosecond);
  });
  return true;
}();
}  // namespace
