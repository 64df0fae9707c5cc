// Planet-planet scattering ensembles end to end (issue 24, item 4): S systems of three
// Jupiter-mass planets 2-3 mutual Hill radii apart (the recipe of
// unit_tests/nbody/data/make_scattering.py, drawn here in C++), copied to the space, integrated
// to T = 2000 (~320 inner orbits) with collision radii 0.0005 (stop) and ejection beyond 100,
// copied back and summarized (outcome fractions, median |dE/E|). Building the initial ensemble is
// not timed. Counters "systems/s" and "steps/s" (steps taken, summed over systems).
//  - BM_nbody_Scattering_MERCURIUS/<space>/systems:S: the hybrid at dt 0.05 (~126 steps per
//    inner orbit).
//  - BM_nbody_Scattering_IAS15/<space>/systems:S: IAS15 (epsilon 1e-9) on the same ensemble: what
//    crossing the encounters costs without the hybrid.
// KOSMOS_BENCH_INITIAL_ENSEMBLE=FILE writes the initial ensemble (kosmos text ensemble, untimed)
// for perf_tests/nbody/rebound_mercurius_scattering.c, REBOUND's one-core run of the same job.
#include <benchmark_utils.hpp>

#include <kosmos/nbody/nbody.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>

namespace {
using namespace kosmos::nbody;

constexpr double kDestination = 2000, kRadius = 0.0005, kEjection = 100;

// Body b of system s on the orbit (a, e, inc, f, omega, node) about a unit-mass star at rest at
// the origin (moved to the barycentric frame by the caller).
void place(HostEnsemble& ens, int s, int b, double m, double a, double e, double inc, double f,
           double omega, double node) {
  const double mu = 1 + m, r = a * (1 - e * e) / (1 + e * std::cos(f));
  const double h = std::sqrt(mu * a * (1 - e * e));
  const double px[2] = {r * std::cos(f), r * std::sin(f)};
  const double pv[2] = {-mu / h * std::sin(f), mu / h * (e + std::cos(f))};
  const double cw = std::cos(omega), sw = std::sin(omega), cn = std::cos(node),
               sn = std::sin(node), ci = std::cos(inc), si = std::sin(inc);
  const double R[3][2] = {{cn * cw - sn * sw * ci, -cn * sw - sn * cw * ci},
                          {sn * cw + cn * sw * ci, -sn * sw + cn * cw * ci},
                          {sw * si, cw * si}};
  ens.m(s, b) = m;
  for (int c = 0; c < 3; ++c) {
    ens.x(s, b, c) = R[c][0] * px[0] + R[c][1] * px[1];
    ens.v(s, b, c) = R[c][0] * pv[0] + R[c][1] * pv[1];
  }
}

HostEnsemble scattering_ensemble(int systems) {
  HostEnsemble ens(systems, 4);
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int s = 0; s < systems; ++s) {
    ens.m(s, 0) = 1;
    double a = 1;
    for (int b = 1; b <= 3; ++b) {
      const double m = 1e-3;
      if (b > 1) a += (2 + u(rng)) * std::cbrt(2 * m / 3) * a;
      const double e = 0.05 * u(rng), inc = 0.02 * u(rng);
      place(ens, s, b, m, a, e, inc, 2 * M_PI * u(rng), 2 * M_PI * u(rng), 2 * M_PI * u(rng));
    }
    double M = 0, p[3] = {0, 0, 0}, q[3] = {0, 0, 0};
    for (int b = 0; b < 4; ++b) {
      M += ens.m(s, b);
      for (int c = 0; c < 3; ++c) {
        q[c] += ens.m(s, b) * ens.x(s, b, c);
        p[c] += ens.m(s, b) * ens.v(s, b, c);
      }
    }
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 3; ++c) {
        ens.x(s, b, c) -= q[c] / M;
        ens.v(s, b, c) -= p[c] / M;
      }
  }
  return ens;
}

template <class Space>
void BM_Scattering(benchmark::State& state, Method method) {
  using Mem = typename Space::memory_space;
  const int systems = int(state.range(0));
  const HostEnsemble initial = scattering_ensemble(systems);
  if (const char* path = std::getenv("KOSMOS_BENCH_INITIAL_ENSEMBLE")) write_text(path, initial);
  IntegrateOptions o;
  o.integrator.method = method;
  o.integrator.dt = method == Method::mercurius ? 0.05 : 0.01;  // ias15: its first step
  o.integrator.epsilon = 1e-9;
  o.integrator.steps_per_launch = 1 << 30;
  for (int b = 0; b < 4; ++b) o.monitor.radius[b] = kRadius;
  o.monitor.ejection_distance = kEjection;
  o.monitor.energy_error_limit = 0;
  HostEnsemble final_state = initial;
  std::vector<double> e0, e1;
  long long steps = 0;
  auto job = [&](const HostEnsemble& start, double destination) {
    auto ens = clone<Mem>(start);
    Kokkos::View<double*, Mem> before("kosmos::bench::e0", start.n_systems()),
        after("kosmos::bench::e1", start.n_systems());
    energy(Space(), ens, before);
    steps = integrate(Space(), ens, destination, o).steps;
    energy(Space(), ens, after);
    final_state = clone<Kokkos::HostSpace>(ens);
    auto h0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), before);
    auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), after);
    e0.assign(h0.data(), h0.data() + h0.extent(0));
    e1.assign(h1.data(), h1.data() + h1.extent(0));
  };
  const HostEnsemble warm_up = scattering_ensemble(std::min(systems, 64));
  kosmos_bench::fenced_job(
      state, Space(), [&] { job(warm_up, 10); }, [&] { job(initial, kDestination); });
  int survived = 0, collided = 0, ejected = 0;
  std::vector<double> errors;
  for (int s = 0; s < systems; ++s) {
    survived += final_state.state(s) == state_active;
    collided += final_state.reason(s) == reason_collision;
    ejected += final_state.reason(s) == reason_ejection;
    errors.push_back(std::fabs((e1[std::size_t(s)] - e0[std::size_t(s)]) / e0[std::size_t(s)]));
  }
  std::sort(errors.begin(), errors.end());
  state.counters["systems/s"] = kosmos_bench::rate(systems);
  state.counters["steps/s"] = kosmos_bench::rate(double(steps));
  state.counters["survived"] = double(survived) / systems;
  state.counters["collision"] = double(collided) / systems;
  state.counters["ejection"] = double(ejected) / systems;
  state.counters["median_dE"] = errors[errors.size() / 2];
  state.counters["p90_dE"] = errors[std::size_t(0.9 * double(errors.size() - 1))];
}

const bool registered = [] {
  kosmos_bench::for_each_parallel_space([](auto tag) {
    using Space = typename decltype(tag)::type;
    for (const Method method : {Method::mercurius, Method::ias15}) {
      const std::string name = std::string("BM_nbody_Scattering_") +
                               (method == Method::mercurius ? "MERCURIUS/" : "IAS15/") +
                               Space::name();
      benchmark::RegisterBenchmark(name.c_str(),
                                   [method](benchmark::State& s) { BM_Scattering<Space>(s, method); })
          ->ArgNames({"systems"})
          ->Arg(1000)
          ->Arg(65536)
          ->UseManualTime()
          ->Iterations(1)
          ->Unit(benchmark::kSecond);
    }
  });
  return true;
}();
}  // namespace
