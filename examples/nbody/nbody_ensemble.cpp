// Integrates an ensemble of Section 5.1 planetary systems (Dindar et al. 2013) on the default
// Kokkos device with three integrators and prints each one's energy error: the library calls a
// user program makes (generate or read, copy to the device, integrate, diagnose, copy back).
#include <kosmos/nbody/nbody.hpp>

#include <cmath>
#include <cstdio>
#include <initializer_list>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  using namespace kosmos::nbody;
  using Space = Kokkos::DefaultExecutionSpace;
  const auto initial = generate_planetary_ensemble(256, 4, 1e-3, 0.4, /*seed=*/1);
  for (const Method method : {Method::hermite_adaptive, Method::rkck_adaptive, Method::mvs}) {
    auto ens = clone<Space::memory_space>(initial);
    Kokkos::View<double*, Space::memory_space> e0("e0", ens.n_systems()), e1("e1", ens.n_systems());
    energy(Space(), ens, e0);
    IntegrateOptions options;
    options.integrator.method = method;
    options.integrator.dt = method == Method::mvs ? 1e-2 : 1e-3;
    options.monitor.close_encounter_hill = 1.0;  // stop systems whose planets meet
    const auto report = integrate(Space(), ens, 20.0, options);
    energy(Space(), ens, e1);
    double worst = 0;
    Kokkos::parallel_reduce(
        "example::max_energy_error", Kokkos::RangePolicy<Space>(0, ens.n_systems()),
        KOKKOS_LAMBDA(const int s, double& m) {
          const double err = kosmos::math::fabs((e1(s) - e0(s)) / e0(s));
          if (err > m) m = err;
        },
        Kokkos::Max<double>(worst));
    std::printf("%-16s %d systems at t = 20 (%d stopped), %lld steps in %.3f s, max |dE/E| = %.2e\n",
                method_name(method), report.reached_destination, report.stopped, report.steps, report.seconds,
                worst);
  }
  return 0;
}
