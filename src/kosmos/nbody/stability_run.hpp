// The stability workflow of an RV posterior on an execution space: one system per sample
// (systems_from_rv_posterior), integrated to the destination in segments between which the
// largest eccentricity is followed, optionally with MEGNO; the outcomes ready for
// write_stability_table.
#pragma once

#include <kosmos/nbody/analysis.hpp>
#include <kosmos/nbody/checkpoint.hpp>
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
// times (each system at its first step at or after them: the samples do not change the orbits).
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
  Kokkos::View<double*, Mem> max_e("kosmos::nbody::stability_max_e", n_sys);
  const bool jacobi = setup.frame == ElementFrame::jacobi;
  update_max_eccentricity(space, dev, max_e, jacobi);
  SegmentOptions segments;
  segments.interval = destination / eccentricity_samples;
  segments.after_segment = [&](const IntegrationReport&, std::map<std::string, std::string>&) {
    update_max_eccentricity(space, dev, max_e, jacobi);
  };
  RunState state;  // the energy check from the start, one iteration budget, MEGNO throughout
  run.report = integrate_segments(space, dev, destination, options, state, segments);
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
