// The stability workflow of an RV posterior on an execution space: one system per sample
// (systems_from_rv_posterior), integrated to the destination in segments between which the
// largest eccentricity is followed, optionally with MEGNO; the outcomes ready for
// write_stability_table.
#pragma once

#include <kosmos/nbody/analysis.hpp>
#include <kosmos/nbody/integrate.hpp>
#include <kosmos/nbody/stability.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace kosmos {
namespace nbody {

struct StabilityRun {
  PosteriorSystems systems;
  HostEnsemble final_state;
  StabilityOutcomes outcomes;  // max_eccentricity; megno and lyapunov_time when options.megno
  IntegrationReport report;    // of the last segment (iterations, megno: the whole run)
};

// Integrates the systems of `posterior` to `destination` (time units of 1/k days) with
// `options` (its energy check measured from the start; with options.megno, MEGNO runs through
// the segments). The largest eccentricity is sampled at `eccentricity_samples` evenly spaced
// times, for fixed-step integrators whole multiples of dt (no landing step between segments).
template <class ExecSpace>
StabilityRun run_stability(const ExecSpace& space, const RVPosterior& posterior,
                           const StabilitySetup& setup, IntegrateOptions options,
                           double destination, int eccentricity_samples = 100) {
  using Mem = typename ExecSpace::memory_space;
  kosmos::Impl::require(eccentricity_samples >= 1, "kosmos::nbody::run_stability",
                        "eccentricity_samples = ", eccentricity_samples, " < 1");
  kosmos::Impl::require(destination > 0 && std::isfinite(destination),
                        "kosmos::nbody::run_stability", "destination ", destination,
                        " must be positive and finite");
  StabilityRun run;
  run.systems = systems_from_rv_posterior(posterior, setup);
  const int n_sys = run.systems.ensemble.n_systems();
  auto dev = clone<Mem>(run.systems.ensemble);
  validate(space, dev);
  Kokkos::View<double*, Mem> e0("kosmos::nbody::stability_e0", n_sys),
      max_e("kosmos::nbody::stability_max_e", n_sys);
  energy(space, dev, e0);
  const auto e0_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e0);
  options.reference_energy.assign(e0_host.data(), e0_host.data() + n_sys);
  const bool jacobi = setup.frame == ElementFrame::jacobi;
  update_max_eccentricity(space, dev, max_e, jacobi);
  const Method method = options.integrator.method;
  const bool fixed_step = method != Method::hermite_adaptive && method != Method::rkck_adaptive &&
                          method != Method::ias15;
  double spacing = destination / eccentricity_samples;
  if (fixed_step)
    spacing = std::max(1.0, std::floor(spacing / options.integrator.dt)) * options.integrator.dt;
  for (double t = 0; t < destination;) {
    const double end = std::min(destination, t + spacing);
    run.report = integrate(space, dev, end, options);
    options.prior_iterations = run.report.iterations;  // one iteration budget
    options.megno_state = run.report.megno_state;
    update_max_eccentricity(space, dev, max_e, jacobi);
    t = end;
    if (run.report.unfinished > 0) break;
  }
  run.final_state = clone<Kokkos::HostSpace>(dev);
  const auto max_e_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), max_e);
  run.outcomes.max_eccentricity.assign(max_e_host.data(), max_e_host.data() + n_sys);
  run.outcomes.megno = run.report.megno;
  for (double l : run.report.lyapunov)
    run.outcomes.lyapunov_time.push_back(l > 0 ? 1 / l : INFINITY);
  return run;
}

}  // namespace nbody
}  // namespace kosmos
