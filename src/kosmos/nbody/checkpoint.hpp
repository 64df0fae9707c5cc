// Exact restarts: a run integrated in segments with checkpoints between them, and the checkpoint
// file that holds everything the run carries (ensemble with its time compensation, iteration
// budget, reference energies, merge and MEGNO state, the integrator's carried state) and every
// setting of the application. A run resumed from a checkpoint equals the uninterrupted run bit
// for bit, and neither the checkpoint interval nor steps_per_launch changes a trajectory:
// segments end where each system's step first reaches the segment's end
// (IntegrateOptions::pause_at), never with a shortened step; only the destination is landed on.
#pragma once

#include <kosmos/nbody/analysis.hpp>
#include <kosmos/nbody/integrate.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

namespace kosmos {
namespace nbody {

// What a run carries from one call of integrate() to the next.
struct RunState {
  std::vector<long long> iterations;         // steps per system so far (one iteration budget)
  std::vector<double> reference_energy;      // the energy each system's drift is measured from
  std::vector<double> energy_offset, radii;  // merging (IntegrationReport)
  std::vector<int> removed;
  std::vector<double> megno_state;
  std::vector<double> carried;  // the integrator's (IntegrationReport::carried)

  // The state into the options of the next call.
  void apply(IntegrateOptions& options) const {
    options.prior_iterations = iterations;
    options.reference_energy = reference_energy;
    options.energy_offset = energy_offset;
    options.removed = removed;
    options.radii = radii;
    options.megno_state = megno_state;
    options.carried = carried;
  }
  // The state of systems [first, first + count) of a run of n_systems (a rank's chunk, to
  // integrate as an ensemble of its own, systems_of).
  RunState systems(int first, int count, int n_systems) const {
    kosmos::Impl::require(first >= 0 && count >= 0 && first <= n_systems - count,
                          "kosmos::nbody::RunState::systems", "systems [", first, ", ",
                          first + count, ") are not within the run's ", n_systems);
    const auto part = [&](const auto& values) {
      std::decay_t<decltype(values)> out;
      if (values.empty() || n_systems == 0) return out;
      const std::size_t per = values.size() / std::size_t(n_systems);
      out.assign(values.begin() + std::ptrdiff_t(per * std::size_t(first)),
                 values.begin() + std::ptrdiff_t(per * std::size_t(first + count)));
      return out;
    };
    RunState r;
    r.iterations = part(iterations);
    r.reference_energy = part(reference_energy);
    r.energy_offset = part(energy_offset);
    r.radii = part(radii);
    r.removed = part(removed);
    r.megno_state = part(megno_state);
    r.carried = part(carried);
    return r;
  }
  // Appends the state of `other`'s systems after these (kept by calls with the same options).
  void append(const RunState& other) {
    const auto add = [](auto& to, const auto& from) {
      to.insert(to.end(), from.begin(), from.end());
    };
    add(iterations, other.iterations);
    add(reference_energy, other.reference_energy);
    add(energy_offset, other.energy_offset);
    add(radii, other.radii);
    add(removed, other.removed);
    add(megno_state, other.megno_state);
    add(carried, other.carried);
  }
  // The state a call ended with.
  void update(const IntegrationReport& report) {
    iterations = report.iterations;
    energy_offset = report.energy_offset;
    removed = report.removed;
    radii = report.radii;
    megno_state = report.megno_state;
    carried = report.carried;
  }
};

struct Checkpoint {
  HostEnsemble ensemble;  // with its user attributes and time_lo
  RunState state;
  std::map<std::string, std::string> settings;  // the application's, all of them
};

// Binary ensemble file (io.hpp) with the run state as further attribute columns (exact doubles,
// checksummed) and the settings as metadata. Atomic.
void write_checkpoint(const std::string& path, const Checkpoint& checkpoint);
// Reads a checkpoint; throws kosmos::file_error naming the file and the first of
// `required_settings` it lacks (or a damaged entry). A checkpoint in parts comes back whole.
Checkpoint read_checkpoint(const std::string& path,
                           const std::vector<std::string>& required_settings = {});

// A checkpoint in parts, for a run whose systems are integrated in parts at once (one per MPI
// rank, each writing only its own): `path` holds the run as it started (write_checkpoint_start:
// the ensemble, its state and the settings, with the number of parts and an id of the run), and
// checkpoint_part_path(path, k) what part k has integrated so far (write_checkpoint_part: its
// systems, each with its index in the ensemble, and their state). read_checkpoint(path) puts the
// parts of the same run over the start, so that the run goes on with any number of parts; a
// system in no part starts as it was at the start (its step count, merges and carried state
// fresh; MEGNO state and collision radii must be in the start).
std::string checkpoint_part_path(const std::string& path, int part);
void write_checkpoint_start(const std::string& path, const Checkpoint& start, int parts,
                            const std::string& run);
void write_checkpoint_part(const std::string& path, int part, const std::string& run,
                           const HostEnsemble& systems, const std::vector<int>& index,
                           const RunState& state);

struct SegmentOptions {
  // Segments end at origin + k interval (each system at its first step at or after it);
  // interval infinity: one segment.
  double origin = 0;
  double interval = std::numeric_limits<double>::infinity();
  std::string checkpoint;                       // written after every segment ("": none)
  std::map<std::string, std::string> settings;  // stored in every checkpoint
  // After every segment, before its checkpoint (e.g. follow a quantity, update settings).
  std::function<void(const IntegrationReport&, std::map<std::string, std::string>& settings)>
      after_segment;
};

// Integrates `ens` to `destination` in segments (SegmentOptions), carrying `state` from call to
// call (and returning it updated; an empty reference_energy is set to the energies at the
// start), writing a checkpoint after each segment. Stops early when the iteration budget runs
// out. Returns the last segment's report with launches, steps and seconds summed over segments.
template <class ExecSpace, class Force = Newtonian>
IntegrationReport integrate_segments(const ExecSpace& space,
                                     const Ensemble<typename ExecSpace::memory_space>& ens,
                                     double destination, IntegrateOptions options, RunState& state,
                                     const SegmentOptions& segments, const Force& force = Force()) {
  using Mem = typename ExecSpace::memory_space;
  kosmos::Impl::require(segments.interval > 0 && !std::isnan(segments.interval),
                        "kosmos::nbody::integrate_segments", "interval ", segments.interval,
                        " must be positive");
  kosmos::Impl::require(std::isfinite(segments.origin), "kosmos::nbody::integrate_segments",
                        "origin ", segments.origin, " is not finite");
  if (state.reference_energy.empty()) {
    validate(space, ens);
    Kokkos::View<double*, Mem> e0("kosmos::nbody::segments_e0", ens.n_systems());
    energy(space, ens, e0, force);
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e0);
    state.reference_energy.assign(h.data(), h.data() + h.extent(0));
  }
  auto settings = segments.settings;
  IntegrationReport total;
  const auto time = Kokkos::create_mirror_view(ens.time);
  const auto active = Kokkos::create_mirror_view(ens.state);
  for (;;) {
    // The next segment end after the earliest system still under way.
    Kokkos::deep_copy(space, time, ens.time);
    Kokkos::deep_copy(space, active, ens.state);
    space.fence();
    double earliest = destination;
    for (int s = 0; s < ens.n_systems(); ++s)
      if (active(s) == state_active && time(s) < earliest) earliest = time(s);
    double pause = destination;
    if (std::isfinite(segments.interval)) {
      pause = segments.origin + (std::floor((earliest - segments.origin) / segments.interval) + 1) *
                                    segments.interval;
      if (!(pause > earliest)) pause = std::nextafter(earliest, INFINITY);
    }
    options.pause_at = pause < destination ? pause : std::numeric_limits<double>::infinity();
    state.apply(options);
    const IntegrationReport rep = integrate(space, ens, destination, options, force);
    state.update(rep);
    const long long launches = total.launches + rep.launches, steps = total.steps + rep.steps;
    const double seconds = total.seconds + rep.seconds;
    total = rep;
    total.launches = launches;
    total.steps = steps;
    total.seconds = seconds;
    if (segments.after_segment) segments.after_segment(rep, settings);
    if (!segments.checkpoint.empty())
      write_checkpoint(segments.checkpoint,
                       Checkpoint{clone<Kokkos::HostSpace>(ens), state, settings});
    if (rep.unfinished > 0 || rep.paused == 0) break;
  }
  return total;
}

}  // namespace nbody
}  // namespace kosmos
