// The generic integration driver (Algorithm 1 of Dindar et al. 2013): a propagator advances each
// system one step, a monitor checks stop conditions and logs, many steps run per kernel launch,
// and the driver relaunches until every system reached the destination time, stopped, or used up
// its iteration budget.
#pragma once

#include <kosmos/nbody/analysis.hpp>
#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/gravity.hpp>
#include <kosmos/nbody/integrators/hermite.hpp>
#include <kosmos/nbody/impl/modern_launch.hpp>
#include <kosmos/nbody/impl/monitor.hpp>
#include <kosmos/nbody/impl/specialization.hpp>
#include <kosmos/nbody/integrators/mvs.hpp>
#include <kosmos/nbody/integrators/rkck.hpp>
#include <kosmos/nbody/integrators/verlet.hpp>
#include <kosmos/nbody/impl/team_context.hpp>
#include <kosmos/nbody/impl/whfast_variational.hpp>

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace kosmos {
namespace nbody {

enum class Method {
  hermite,
  hermite_adaptive,
  rkck,
  rkck_adaptive,
  mvs,
  verlet,
  whfast,
  ias15,
  mercurius
};

// "hermite", "hermite_adaptive", "rkck", "rkck_adaptive", "mvs", "verlet", "whfast", "ias15",
// "mercurius".
Method method_from_name(const std::string& name);
const char* method_name(Method method);

struct IntegratorConfig {
  Method method = Method::hermite;
  double dt = 1e-3;          // fixed step (and the first step of adaptive Runge-Kutta)
  double tau = 1.7e-2;       // adaptive Hermite step-size scale (eq. 5)
  double tolerance = 1e-12;  // rkck_adaptive: error tolerance (RKCKPropagator); mercurius: of the
                             // Bulirsch-Stoer sub-steps through encounters (MercuriusParams)
  double changeover_hill = 3;  // mercurius: changeover radius in Hill radii (REBOUND's r_crit_hill)
  int corrector = 0;         // whfast: symplectic corrector order 0 (none), 3, 5, 7 or 11 (Jacobi only)
  WHCoordinates coordinates = WHCoordinates::jacobi;  // whfast: jacobi, DH or WHDS
  double epsilon = 1e-9;     // ias15: step control as REBOUND's (PRS23 rule; dt: the first step)
  int steps_per_launch = 1000;           // propagator steps per kernel launch
  long long max_iterations = 1LL << 40;  // per system and call of integrate()
  int systems_per_team = 0;              // 0: automatic (1 on CPUs, up to 16 on GPUs)
  int team_size = 0;                     // 0: automatic
  // automatic: the team work model, except Hermite runs without monitors, logs or a user force
  // law on Kokkos::Cuda with n <= max_auto_register_bodies, which go to the hand-tuned
  // system-per-thread kernel (faster than the team kernel at every n it supports, measured).
  // team: always the generic team kernel (body-pair work model in team scratch).
  // system_per_thread: the register Hermite (Hermite methods only, no monitors or logs).
  enum class WorkModel { automatic, team, system_per_thread } work_model = WorkModel::automatic;
};

// One logged snapshot: a system at a time, with the event that caused it (reason_none: interval).
struct LogRecord {
  int system = 0;
  double time = 0;
  int event = reason_none;
  std::vector<double> mass, pos, vel;  // n, 3n, 3n
};

// Largest n that the automatic work model sends to the register Hermite (2..8 allowed explicitly).
constexpr int max_auto_register_bodies = 8;

struct IntegrateOptions {
  IntegratorConfig integrator;
  MonitorConfig monitor;
  // Steps each system took in earlier calls, counted against max_iterations (a run split into
  // checkpoint segments keeps one budget); empty: none.
  std::vector<long long> prior_iterations;
  // Energy each system's drift is measured against (MonitorConfig::energy_error_limit); empty:
  // the energy at the start of this call (plus energy_offset, when merging).
  std::vector<double> reference_energy;
  // Merging (MonitorConfig::on_collision = merge), the state of earlier calls, as returned in
  // IntegrationReport: per system the energy merges took out, the bits of the removed bodies, and
  // the n collision radii; empty: nothing merged yet, the radii of MonitorConfig::radius.
  std::vector<double> energy_offset;
  std::vector<int> removed;
  std::vector<double> radii;
  // MEGNO (ias15, whfast with Jacobi coordinates): the first-order variational equations of
  // Newtonian gravity integrated with the bodies (a deviation dx, dv of every body; whfast: the
  // tangent map of its splitting, whfast_variational.hpp), MEGNO <Y> and the Lyapunov estimate per system in
  // the report, as REBOUND computes them. megno_state: an earlier call's
  // IntegrationReport::megno_state, to go on (per system its 6n deviation values, then
  // megno_state_sums sums); empty: per system a deviation of random direction (megno_seed and the
  // system's index plus megno_first_system) and unit length, the sums starting at the system's
  // time. megno_first_system: the index of this ensemble's first system in a larger one it was
  // cut from (a rank's chunk), so that every system gets the same deviation wherever it runs.
  bool megno = false;
  unsigned long long megno_seed = 1;
  long long megno_first_system = 0;
  std::vector<double> megno_state;
  // An intermediate stop (a checkpoint or sampling time): each system stops after the first step
  // that ends at or after pause_at, without shortening a step to land on it, so that where a run
  // is split does not change its trajectory (steps land only on the destination). Infinity: none.
  double pause_at = std::numeric_limits<double>::infinity();
  // The integrator's state carried from an earlier call (IntegrationReport::carried of the call
  // that left the ensemble as it is now): with it, splitting a run into calls (and checkpoints)
  // leaves every step as in one call. Opaque; per system a key of its state and settings: a
  // system changed since, other settings or another integrator start afresh. Empty: none.
  std::vector<double> carried;
  std::function<void(const LogRecord&)> on_log;  // called on the host after each launch, in order
  std::function<void(double fraction_done)> on_progress;  // after each launch
};

struct IntegrationReport {
  int systems = 0;
  int reached_destination = 0;  // active systems at the destination time
  int stopped = 0;              // inactive (a monitor condition)
  int disabled = 0;             // disabled (bad input or numerical failure)
  int unfinished = 0;           // active, short of the destination (iteration budget used up)
  int paused = 0;  // active, at or past IntegrateOptions::pause_at (not at the destination)
  long long launches = 0;
  long long steps = 0;  // propagator steps taken, summed over systems (rejected ones included)
  double seconds = 0;
  std::vector<long long> iterations;  // steps per system, prior_iterations included
  // Merging only (else empty), carried over from IntegrateOptions: per system the energy before
  // minus after its merges (add it to the energy to measure the integrator's error, as REBOUND's
  // energy_offset), the bits of its removed bodies (bit b: body b merged into another; it has
  // mass 0 and velocity 0 and stays where it was), and its n collision radii (n_systems x n).
  std::vector<double> energy_offset;
  std::vector<int> removed;
  std::vector<double> radii;
  // MEGNO runs only (else empty): per system <Y> (0 before the first step), REBOUND's Lyapunov
  // estimate (the least-squares slope of <Y> against time, reb_simulation_lyapunov; 0 before two
  // steps) and the state to pass back in IntegrateOptions::megno_state.
  std::vector<double> megno, lyapunov, megno_state;
  // The integrator's carried state at the end of the call: pass it in IntegrateOptions::carried
  // to continue exactly (empty for integrators that carry nothing).
  std::vector<double> carried;
};

// Values per system in IntegrateOptions::megno_state after the 6n deviation values.
constexpr int megno_state_sums = Impl::megno_sums;

namespace Impl {

// The MEGNO state at the start of a call: options' earlier state, or a random unit deviation.
template <class ExecSpace>
MegnoState<typename ExecSpace::memory_space> make_megno_state(
    const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
    const IntegrateOptions& options) {
  using Mem = typename ExecSpace::memory_space;
  const int n_sys = ens.n_systems(), width = 6 * ens.n_bodies();
  MegnoState<Mem> st{
      Kokkos::View<double**, Kokkos::LayoutRight, Mem>("kosmos::nbody::megno_delta", n_sys, width),
      Kokkos::View<double**, Kokkos::LayoutRight, Mem>("kosmos::nbody::megno_sums", n_sys, megno_sums)};
  const std::size_t per_system = std::size_t(width + megno_sums);
  kosmos::Impl::require(options.megno_state.empty() || options.megno_state.size() == per_system * n_sys,
                        "kosmos::nbody::integrate", "megno_state has ", options.megno_state.size(),
                        " values, expected ", per_system * n_sys, " (", n_sys, " systems x (6 x ",
                        ens.n_bodies(), " + ", int(megno_sums), "))");
  const auto delta = Kokkos::create_mirror_view(st.delta);
  const auto sums = Kokkos::create_mirror_view(st.sums);
  const auto time = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ens.time);
  for (int s = 0; s < n_sys; ++s) {
    if (!options.megno_state.empty()) {
      const double* from = options.megno_state.data() + per_system * std::size_t(s);
      for (int k = 0; k < width; ++k) delta(s, k) = from[k];
      for (int k = 0; k < megno_sums; ++k) sums(s, k) = from[width + k];
      continue;
    }
    std::mt19937_64 rng(
        options.megno_seed ^
        (0x9E3779B97F4A7C15ULL * (unsigned long long)(s + 1 + options.megno_first_system)));
    std::normal_distribution<double> normal(0.0, 1.0);
    double norm2 = 0;
    for (int k = 0; k < width; ++k) {
      delta(s, k) = normal(rng);
      norm2 += delta(s, k) * delta(s, k);
    }
    for (int k = 0; k < width; ++k) delta(s, k) /= std::sqrt(norm2);
    for (int k = 0; k < megno_sums; ++k) sums(s, k) = 0;
    sums(s, megno_initial_t) = time(s);
  }
  Kokkos::deep_copy(space, st.delta, delta);
  Kokkos::deep_copy(space, st.sums, sums);
  return st;
}

// What the integrator of `options` carries between launches for systems of n bodies, and the tag
// of the settings its values depend on.
inline CarriedLayout carried_layout(const IntegrateOptions& options, int n) {
  const IntegratorConfig& cfg = options.integrator;
  CarriedLayout layout;
  switch (cfg.method) {
    case Method::hermite:
    case Method::hermite_adaptive:
      layout.width = hermite_carried_width(n);
      break;
    case Method::mvs:
      layout.width = MVSPropagator::carried_per_body * n;
      break;
    case Method::whfast:
      layout.width = whfast_carried_width(n, options.megno);
      break;
    case Method::ias15:
      layout.width = ias15_carried_width((options.megno ? 6 : 3) * n);
      break;
    case Method::mercurius:
      layout.width = mercurius_carried_width(n);
      break;
    case Method::rkck:
    case Method::rkck_adaptive:
    case Method::verlet:
      layout.width = 0;
      break;
  }
  StateHash tag;
  tag.mix(std::uint64_t(cfg.method));
  tag.mix(cfg.dt);
  tag.mix(cfg.tau);
  tag.mix(cfg.tolerance);
  tag.mix(std::uint64_t(cfg.corrector));
  tag.mix(std::uint64_t(cfg.coordinates));
  tag.mix(cfg.epsilon);
  tag.mix(cfg.changeover_hill);
  tag.mix(std::uint64_t(options.megno));
  layout.tag = tag.h;
  return layout;
}

// Per system in IntegrateOptions::carried / IntegrationReport::carried: the key's two 32-bit
// halves, then the values.
constexpr int carried_key_words = 2;
// Those vectors as (system, carried_key_words + width) views of host memory. Packing and unpacking
// run as kernels on the call's space (a vector is tens of MB for 1e5 systems).
using CarriedRows = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// The carried state of a call: options' values when they have this layout, else none (every
// system starts afresh).
template <class ExecSpace>
CarriedState<typename ExecSpace::memory_space> make_carried_state(const ExecSpace& space, int n_sys,
                                                                  const CarriedLayout& layout,
                                                                  const IntegrateOptions& options) {
  using Mem = typename ExecSpace::memory_space;
  CarriedState<Mem> st;
  st.tag = layout.tag;
  if (layout.width == 0) return st;
  st.values = Kokkos::View<double**, Kokkos::LayoutLeft, Mem>("kosmos::nbody::carried", n_sys,
                                                              layout.width);
  st.key = Kokkos::View<std::uint64_t*, Mem>("kosmos::nbody::carried_key", n_sys);
  const int width = layout.width, row = carried_key_words + width;
  if (options.carried.size() != std::size_t(row) * std::size_t(n_sys)) return st;
  // read only (a non-const view: create_mirror_view_and_copy's mirror type in every version)
  const CarriedRows given(const_cast<double*>(options.carried.data()), n_sys, row);
  const auto rows = Kokkos::create_mirror_view_and_copy(Mem(), given);
  const auto values = st.values;
  const auto key = st.key;
  Kokkos::parallel_for(
      "kosmos::nbody::carried_unpack", Kokkos::RangePolicy<ExecSpace>(space, 0, n_sys),
      KOKKOS_LAMBDA(const int s) {
        key(s) = (std::uint64_t(rows(s, 0)) << 32) | std::uint64_t(rows(s, 1));
        for (int k = 0; k < width; ++k) values(s, k) = rows(s, carried_key_words + k);
      });
  space.fence();  // `rows` may be the caller's memory
  return st;
}

template <class ExecSpace>
void report_carried_state(const ExecSpace& space,
                          const CarriedState<typename ExecSpace::memory_space>& st,
                          IntegrationReport& report) {
  if (!st.on()) return;
  const int n_sys = int(st.values.extent(0)), width = int(st.values.extent(1));
  const int row = carried_key_words + width;
  report.carried.resize(std::size_t(n_sys) * std::size_t(row));
  const CarriedRows out(report.carried.data(), n_sys, row);
  const auto rows = Kokkos::create_mirror_view(typename ExecSpace::memory_space(), out);
  const auto values = st.values;
  const auto key = st.key;
  Kokkos::parallel_for(
      "kosmos::nbody::carried_pack", Kokkos::RangePolicy<ExecSpace>(space, 0, n_sys),
      KOKKOS_LAMBDA(const int s) {
        rows(s, 0) = double(key(s) >> 32);
        rows(s, 1) = double(key(s) & 0xffffffffULL);
        for (int k = 0; k < width; ++k) rows(s, carried_key_words + k) = values(s, k);
      });
  Kokkos::deep_copy(space, out, rows);
  space.fence();
}

// MEGNO, the Lyapunov estimate and the state into the report.
template <class ExecSpace>
void report_megno_state(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
                        const MegnoState<typename ExecSpace::memory_space>& st, IntegrationReport& report) {
  const auto delta = Kokkos::create_mirror_view(st.delta);
  const auto sums = Kokkos::create_mirror_view(st.sums);
  Kokkos::deep_copy(space, delta, st.delta);
  Kokkos::deep_copy(space, sums, st.sums);
  const auto time = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ens.time);
  space.fence();
  for (int s = 0; s < ens.n_systems(); ++s) {
    const double elapsed = time(s) - sums(s, megno_initial_t);
    report.megno.push_back(elapsed > 0 ? sums(s, megno_Yss) / elapsed : 0.0);
    report.lyapunov.push_back(sums(s, megno_var_t) > 0 ? sums(s, megno_cov_Yt) / sums(s, megno_var_t) : 0.0);
    for (std::size_t k = 0; k < delta.extent(1); ++k) report.megno_state.push_back(delta(s, k));
    for (int k = 0; k < megno_sums; ++k) report.megno_state.push_back(sums(s, k));
  }
}

// The merge state at the start of a call: options' earlier state, or none and MonitorConfig's
// radii.
template <class ExecSpace>
MergeState<typename ExecSpace::memory_space> make_merge_state(const ExecSpace& space, int n_sys,
                                                              int n,
                                                              const IntegrateOptions& options) {
  using Mem = typename ExecSpace::memory_space;
  MergeState<Mem> st{
      Kokkos::View<double*, Mem>("kosmos::nbody::energy_offset", n_sys),
      Kokkos::View<int*, Mem>("kosmos::nbody::removed", n_sys),
      Kokkos::View<double**, Kokkos::LayoutRight, Mem>("kosmos::nbody::radii", n_sys, n)};
  const auto require_size = [&](const char* name, std::size_t size, std::size_t expected) {
    kosmos::Impl::require(size == 0 || size == expected, "kosmos::nbody::integrate", name, " has ",
                          size, " values, expected ", expected, " (", n_sys, " systems x ", n,
                          " bodies for radii)");
  };
  require_size("energy_offset", options.energy_offset.size(), std::size_t(n_sys));
  require_size("removed", options.removed.size(), std::size_t(n_sys));
  require_size("radii", options.radii.size(), std::size_t(n_sys) * n);
  const auto offset = Kokkos::create_mirror_view(st.energy_offset);
  const auto removed = Kokkos::create_mirror_view(st.removed);
  const auto radii = Kokkos::create_mirror_view(st.radii);
  for (int s = 0; s < n_sys; ++s) {
    offset(s) = options.energy_offset.empty() ? 0.0 : options.energy_offset[std::size_t(s)];
    removed(s) = options.removed.empty() ? 0 : options.removed[std::size_t(s)];
    for (int b = 0; b < n; ++b) {
      const double r =
          options.radii.empty() ? options.monitor.radius[b] : options.radii[std::size_t(s) * n + b];
      kosmos::Impl::require(r >= 0 && std::isfinite(r), "kosmos::nbody::integrate",
                            "collision radius ", r, " of body ", b, " in system ", s,
                            " must be >= 0 and finite");
      radii(s, b) = r;
    }
  }
  Kokkos::deep_copy(space, st.energy_offset, offset);
  Kokkos::deep_copy(space, st.removed, removed);
  Kokkos::deep_copy(space, st.radii, radii);
  return st;
}

// Copies the merge state into the report.
template <class ExecSpace>
void report_merge_state(const ExecSpace& space,
                        const MergeState<typename ExecSpace::memory_space>& st,
                        IntegrationReport& report) {
  const auto offset = Kokkos::create_mirror_view(st.energy_offset);
  const auto removed = Kokkos::create_mirror_view(st.removed);
  const auto radii = Kokkos::create_mirror_view(st.radii);
  Kokkos::deep_copy(space, offset, st.energy_offset);
  Kokkos::deep_copy(space, removed, st.removed);
  Kokkos::deep_copy(space, radii, st.radii);
  space.fence();
  report.energy_offset.assign(offset.data(), offset.data() + offset.extent(0));
  report.removed.assign(removed.data(), removed.data() + removed.extent(0));
  report.radii.assign(radii.data(), radii.data() + radii.size());
}

template <class ExecSpace, class Prop, class Force>
struct IntegrateKernel {
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using memory_space = typename ExecSpace::memory_space;
  using scratch_space = typename ExecSpace::scratch_memory_space;

  Ensemble<memory_space> ens;
  Prop prop;
  Force force;
  MonitorConfig monitor;
  bool merging = false;  // monitor.merging(): collisions merge (merge state below)
  MergeState<memory_space> merge;
  Layout L;
  int S = 1, level = 0, steps = 1, slots = 0;
  double destination = 0;
  double pause = 0;  // systems stop after the first step that reaches it (no landing step)
  CarriedState<memory_space> carried;
  long long max_iterations = 0;
  Kokkos::View<long long*, memory_space> iterations;
  Kokkos::View<double**, Kokkos::LayoutRight, memory_space> log;  // (system * slots + k, 3 + 7n)
  Kokkos::View<int*, memory_space> log_count;

  static std::size_t scratch_bytes(const Layout& L, int S) {
    return std::size_t(S) * L.total * sizeof(double) + std::size_t(S) * n_flags * sizeof(int) + 64;
  }

  template <class Ctx>
  KOKKOS_INLINE_FUNCTION void write_log(const Ctx& ctx, int s, int sys, int event) const {
    const int k = ctx.flag(s, fl_logs);
    if (k >= slots) return;
    const int row = sys * slots + k;
    log(row, 0) = sys;
    log(row, 1) = ctx.sc(s, sc_time);
    log(row, 2) = event;
    for (int i = 0; i < L.n; ++i) log(row, 3 + i) = ctx.at(s, L.m + i);
    for (int i = 0; i < 3 * L.n; ++i) {
      log(row, 3 + L.n + i) = ctx.at(s, L.x + i);
      log(row, 3 + 4 * L.n + i) = ctx.at(s, L.v + i);
    }
    ctx.flag(s, fl_logs) = k + 1;
    log_count(sys) = k + 1;
  }

  // Merges touching bodies of system s (slot) / sys (index) when merging (flagging fl_merged and
  // logging a collision event), then stops it with its event when a monitor condition holds.
  template <class Ctx>
  KOKKOS_INLINE_FUNCTION void merge_or_stop(const Ctx& ctx, int s, int sys) const {
    const double* radius = monitor.radius;
    if (merging) {
      double* radii = &merge.radii(sys, 0);
      int removed = ctx.flag(s, fl_removed);
      const double lost = merge_collisions(ctx, s, radii, removed);
      if (removed != ctx.flag(s, fl_removed)) {
        ctx.flag(s, fl_removed) = removed;
        ctx.flag(s, fl_merged) = 1;
        merge.energy_offset(sys) += lost;
        if (monitor.log_events && slots > 0) write_log(ctx, s, sys, reason_collision);
      }
      radius = radii;
    }
    const int event = check_stop(ctx, s, monitor, radius, ctx.flag(s, fl_removed));
    if (event == reason_none) return;
    ctx.flag(s, fl_state) = state_inactive;
    ctx.flag(s, fl_reason) = event;
    if (monitor.log_events && slots > 0) write_log(ctx, s, sys, event);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    Kokkos::View<double*, scratch_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> ws(team.team_scratch(level),
                                                                                   S * L.total);
    Kokkos::View<int*, scratch_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> fl(team.team_scratch(level),
                                                                                S * n_flags);
    const TeamContext<member_type> ctx{team, L, S, ws.data(), fl.data(), destination,
                                       TeamContext<member_type>::log2_if_power_of_two(S)};
    const int first = team.league_rank() * S;
    const int n_sys = ens.n_systems();
    const int n = L.n;
    // Load.
    ctx.for_all(S, 1, [&](int s, int) {
      const int sys = first + s;
      const bool valid = sys < n_sys;
      ctx.flag(s, fl_valid) = valid;
      ctx.flag(s, fl_state) = valid ? ens.state(sys) : int(state_disabled);
      ctx.flag(s, fl_reason) = valid ? ens.reason(sys) : int(reason_none);
      ctx.flag(s, fl_live) = valid && ens.state(sys) == state_active;
      ctx.flag(s, fl_paused) = 0;
      ctx.flag(s, fl_logs) = 0;
      ctx.flag(s, fl_fail) = 0;
      ctx.flag(s, fl_accept) = 0;
      ctx.flag(s, fl_merged) = 0;
      ctx.flag(s, fl_removed) = valid && merging ? merge.removed(sys) : 0;
      if (!valid) return;
      const double t = ens.time(sys);
      ctx.sc(s, sc_time) = t;
      ctx.sc(s, sc_time_lo) = ens.time_lo(sys);
      ctx.sc(s, sc_next_dt) = ens.step(sys);
      ctx.sc(s, sc_iter) = double(iterations(sys));
      ctx.sc(s, sc_log_index) = monitor.log_interval > 0 ? math::floor(t / monitor.log_interval) : 0.0;
      log_count(sys) = 0;
    });
    ctx.for_all(S, 7 * n, [&](int s, int k) {
      const int sys = first + s;
      if (sys >= n_sys) return;
      if (k < 3 * n) {
        ctx.at(s, L.x + k) = ens.x(sys, k / 3, k % 3);
      } else if (k < 6 * n) {
        ctx.at(s, L.v + k - 3 * n) = ens.v(sys, (k - 3 * n) / 3, k % 3);
      } else {
        ctx.at(s, L.m + k - 6 * n) = ens.m(sys, k - 6 * n);
      }
    });
    // Conditions that hold before the first step (bodies that already overlap) stop the system
    // too (or merge its bodies, before the first force evaluation).
    ctx.for_all(S, 1, [&](int s, int) {
      ctx.flag(s, fl_carried) = 0;
      if (!ctx.flag(s, fl_valid)) return;
      const int sys = first + s;
      ctx.flag(s, fl_carried) =
          carried.valid(sys, ctx.sc(s, sc_time), ctx.sc(s, sc_time_lo), n,
                        [&](int b, int c) { return slot_state(ctx, s, b, c); });
      if (ctx.flag(s, fl_live)) merge_or_stop(ctx, s, sys);
      ctx.flag(s, fl_merged) = 0;  // prop.init below computes the forces of the merged state
    });
    prop.init(ctx, force);
    constexpr int carried_per_body = Prop::carried_per_body;
    if (carried_per_body > 0)
      ctx.for_all(S, carried_per_body * n, [&](int s, int k) {
        if (ctx.flag(s, fl_carried)) ctx.at(s, L.a + k) = carried.at(first + s, k);
      });
    for (int it = 0; it < steps; ++it) {
      ctx.for_all(S, 1, [&](int s, int) {
        bool live = ctx.flag(s, fl_valid) && ctx.flag(s, fl_state) == state_active &&
                    !ctx.flag(s, fl_paused) &&
                    time_left(destination, ctx.sc(s, sc_time), ctx.sc(s, sc_time_lo)) > 0 &&
                    time_left(pause, ctx.sc(s, sc_time), ctx.sc(s, sc_time_lo)) > 0 &&
                    ctx.sc(s, sc_iter) < double(max_iterations);
        if (live) {
          double dt = prop.proposed_dt(ctx, s);
          const double left = time_left(destination, ctx.sc(s, sc_time), ctx.sc(s, sc_time_lo));
          if (dt > left || left - dt < 1e-9 * dt)
            dt = left;  // land on the destination, no sliver step
          if (!(dt > 0) || !math::isfinite(dt)) {
            ctx.flag(s, fl_state) = state_disabled;
            ctx.flag(s, fl_reason) = reason_bad_step;
            live = false;
          }
          ctx.sc(s, sc_dt) = dt;
        }
        ctx.flag(s, fl_live) = live;
        ctx.flag(s, fl_accept) = 0;
      });
      if (!ctx.any_live()) break;
      prop.advance(ctx, force);
      ctx.for_live(1, [&](int s, int) {
        const int sys = first + s;
        ctx.sc(s, sc_iter) += 1;
        int fail = ctx.flag(s, fl_fail);
        if (!fail) {
          for (int k = 0; k < 3 * n; ++k)
            if (!math::isfinite(ctx.at(s, L.x + k)) || !math::isfinite(ctx.at(s, L.v + k))) fail = reason_nonfinite;
        }
        if (fail) {
          ctx.flag(s, fl_state) = state_disabled;
          ctx.flag(s, fl_reason) = fail;
          if (monitor.log_events && slots > 0) write_log(ctx, s, sys, fail);
          return;
        }
        if (!ctx.flag(s, fl_accept)) return;
        merge_or_stop(ctx, s, sys);
        if (monitor.log_interval > 0 && slots > 0) {
          const double k = math::floor(ctx.sc(s, sc_time) / monitor.log_interval);
          if (k > ctx.sc(s, sc_log_index)) {
            write_log(ctx, s, sys, reason_none);
            ctx.sc(s, sc_log_index) = k;
          }
        }
        // Room for the next step's records: an event, an interval log (and a merge).
        if (slots > 0 && ctx.flag(s, fl_logs) + (merging ? 3 : 2) > slots)
          ctx.flag(s, fl_paused) = 1;
      });
      if (merging) refresh_merged(ctx, force);
    }
    // Store (masses change only by merging).
    ctx.for_all(S, (merging ? 7 : 6) * n, [&](int s, int k) {
      const int sys = first + s;
      if (sys >= n_sys) return;
      if (k < 3 * n)
        ens.x(sys, k / 3, k % 3) = ctx.at(s, L.x + k);
      else if (k < 6 * n)
        ens.v(sys, (k - 3 * n) / 3, k % 3) = ctx.at(s, L.v + k - 3 * n);
      else
        ens.m(sys, k - 6 * n) = ctx.at(s, L.m + k - 6 * n);
    });
    ctx.for_all(S, 1, [&](int s, int) {
      const int sys = first + s;
      if (sys >= n_sys) return;
      ens.time(sys) = ctx.sc(s, sc_time);
      ens.time_lo(sys) = ctx.sc(s, sc_time_lo);
      ens.step(sys) = ctx.sc(s, sc_next_dt);
      ens.state(sys) = ctx.flag(s, fl_state);
      ens.reason(sys) = ctx.flag(s, fl_reason);
      iterations(sys) = (long long)(ctx.sc(s, sc_iter));
      if (merging) merge.removed(sys) = ctx.flag(s, fl_removed);
      carried.seal(sys, ctx.sc(s, sc_time), ctx.sc(s, sc_time_lo), n,
                   [&](int b, int c) { return slot_state(ctx, s, b, c); });
    });
    if (carried_per_body > 0 && carried.on())
      ctx.for_all(S, carried_per_body * n, [&](int s, int k) {
        if (first + s < n_sys) carried.at(first + s, k) = ctx.at(s, L.a + k);
      });
  }

  // Body b of slot s: c = 0..2 position, 3..5 velocity, 6 mass (the key of impl/carried.hpp).
  template <class Ctx>
  KOKKOS_INLINE_FUNCTION double slot_state(const Ctx& ctx, int s, int b, int c) const {
    return ctx.at(s, c < 3 ? L.x + 3 * b + c : c < 6 ? L.v + 3 * b + c - 3 : L.m + b);
  }

  // The propagator's forces (and whatever init() derives from them) of the systems whose bodies
  // merged in this step are stale: recompute them for those systems only.
  template <class Ctx>
  KOKKOS_INLINE_FUNCTION void refresh_merged(const Ctx& ctx, const Force& f) const {
    bool any = false;
    for (int s = 0; s < S; ++s) any = any || ctx.flag(s, fl_merged);
    // Every thread reads the flags before any thread clears them: a thread that saw them cleared
    // would skip prop.init's barriers and leave the team waiting on the GPU.
    ctx.barrier();
    if (!any) return;
    ctx.for_all(S, 1, [&](int s, int) {
      ctx.flag(s, fl_live) = ctx.flag(s, fl_merged);  // recomputed at the start of the next step
      ctx.flag(s, fl_merged) = 0;
    });
    prop.init(ctx, f);
  }
};

template <class ExecSpace>
constexpr bool is_gpu_space() {
#if defined(KOKKOS_ENABLE_CUDA)
  return std::is_same<ExecSpace, Kokkos::Cuda>::value;
#else
  return false;
#endif
}

template <class ExecSpace>
int summarize(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
              const Kokkos::View<long long*, typename ExecSpace::memory_space>& iterations, double destination,
              long long max_iterations, const IntegrateOptions& options, IntegrationReport& report);

// The per-system step counters of one call, starting from options.prior_iterations.
template <class ExecSpace>
Kokkos::View<long long*, typename ExecSpace::memory_space> make_iterations(const ExecSpace& space, int n_sys,
                                                                          const IntegrateOptions& options) {
  Kokkos::View<long long*, typename ExecSpace::memory_space> iterations("kosmos::nbody::iterations", n_sys);
  const auto& prior = options.prior_iterations;
  if (!prior.empty()) {
    kosmos::Impl::require(prior.size() == std::size_t(n_sys), "kosmos::nbody::integrate", "prior_iterations has ",
                          prior.size(), " values for ", n_sys, " systems");
    const auto host = Kokkos::create_mirror_view(iterations);
    for (int s = 0; s < n_sys; ++s) {
      kosmos::Impl::require(prior[std::size_t(s)] >= 0, "kosmos::nbody::integrate", "prior_iterations[", s,
                            "] = ", prior[std::size_t(s)], " < 0");
      host(s) = prior[std::size_t(s)];
    }
    Kokkos::deep_copy(space, iterations, host);
  }
  return iterations;
}

template <class ExecSpace, class Prop, class Force>
IntegrationReport run_driver(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
                             double destination, const Prop& prop, const Force& force,
                             const IntegrateOptions& options) {
  using Kernel = IntegrateKernel<ExecSpace, Prop, Force>;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  const auto start = std::chrono::steady_clock::now();
  const IntegratorConfig& cfg = options.integrator;
  const int n_sys = ens.n_systems(), n = ens.n_bodies();
  IntegrationReport report;
  report.systems = n_sys;

  Kernel kernel;
  kernel.ens = ens;
  kernel.prop = prop;
  kernel.force = force;
  kernel.monitor = options.monitor;
  kernel.merging = options.monitor.merging();
  if (kernel.merging) kernel.merge = make_merge_state(space, n_sys, n, options);
  kernel.L = Layout::make(n, Prop::extra_per_body, Prop::extra_fixed);
  kernel.destination = destination;
  kernel.pause = std::fmin(options.pause_at, destination);
  kernel.carried = make_carried_state(space, n_sys, carried_layout(options, n), options);
  kernel.max_iterations = cfg.max_iterations;
  kernel.steps = cfg.steps_per_launch;
  const bool logging = options.on_log && (options.monitor.log_interval > 0 || options.monitor.log_events);
  kernel.slots = logging ? options.monitor.log_slots_per_launch : 0;
  kernel.iterations = make_iterations(space, n_sys, options);
  const EnergyGuard<ExecSpace, Force> guard(space, ens, options.monitor.energy_error_limit,
                                            options.reference_energy, force,
                                            kernel.merge.energy_offset);
  kernel.log_count = Kokkos::View<int*, typename ExecSpace::memory_space>("kosmos::nbody::log_count", n_sys);
  kernel.log = Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space>(
      "kosmos::nbody::log", std::size_t(n_sys) * kernel.slots, 3 + 7 * n);

  // Systems per team and team size.
  int S = cfg.systems_per_team;
  if (S <= 0) S = is_gpu_space<ExecSpace>() ? 16 : 1;
  int level = 0;
  const std::size_t max0 = std::size_t(Policy::scratch_size_max(0));
  while (S > 1 && Kernel::scratch_bytes(kernel.L, S) > max0) --S;
  if (Kernel::scratch_bytes(kernel.L, S) > max0) level = 1;
  const std::size_t bytes = Kernel::scratch_bytes(kernel.L, S);
  kosmos::Impl::require(bytes <= std::size_t(Policy::scratch_size_max(level)), "kosmos::nbody::integrate",
                "team scratch of ", bytes, " bytes for ", n, " bodies exceeds scratch_size_max(", level,
                ") = ", Policy::scratch_size_max(level));
  kernel.S = S;
  kernel.level = level;
  int team_size = cfg.team_size;
  if (team_size <= 0) {
    if (is_gpu_space<ExecSpace>()) {
      const int items = S * (3 * n > kernel.L.pairs ? 3 * n : kernel.L.pairs);
      team_size = ((items + 31) / 32) * 32;
      if (team_size > 256) team_size = 256;
    } else {
      team_size = 1;
    }
  }
  const int league = (n_sys + S - 1) / S;
  const auto log_host = Kokkos::create_mirror_view(kernel.log);
  const auto count_host = Kokkos::create_mirror_view(kernel.log_count);

  while (n_sys > 0) {
    Policy policy(space, league, team_size);
    policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
    Kokkos::parallel_for("kosmos::nbody::integrate", policy, kernel);
    ++report.launches;
    if (kernel.slots > 0) {
      Kokkos::deep_copy(space, count_host, kernel.log_count);
      Kokkos::deep_copy(space, log_host, kernel.log);
      space.fence();
      LogRecord rec;
      for (int sys = 0; sys < n_sys; ++sys)
        for (int k = 0; k < count_host(sys); ++k) {
          const std::size_t row = std::size_t(sys) * kernel.slots + k;
          rec.system = int(log_host(row, 0));
          rec.time = log_host(row, 1);
          rec.event = int(log_host(row, 2));
          rec.mass.assign(&log_host(row, 3), &log_host(row, 3) + n);
          rec.pos.assign(&log_host(row, 3 + n), &log_host(row, 3 + n) + 3 * n);
          rec.vel.assign(&log_host(row, 3 + 4 * n), &log_host(row, 3 + 4 * n) + 3 * n);
          options.on_log(rec);
        }
    }
    guard.check();
    if (summarize(space, ens, kernel.iterations, destination, cfg.max_iterations, options, report) == 0) break;
  }
  if (kernel.merging) report_merge_state(space, kernel.merge, report);
  report_carried_state(space, kernel.carried, report);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

// After a launch: fills the report's counts and steps, calls on_progress, and returns how many
// systems still have work (active, short of the destination, iterations left).
template <class ExecSpace>
int summarize(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
              const Kokkos::View<long long*, typename ExecSpace::memory_space>& iterations, double destination,
              long long max_iterations, const IntegrateOptions& options, IntegrationReport& report) {
  const int n_sys = ens.n_systems();
  const auto state_host = Kokkos::create_mirror_view(ens.state);
  const auto time_host = Kokkos::create_mirror_view(ens.time);
  const auto time_lo_host = Kokkos::create_mirror_view(ens.time_lo);
  const auto iter_host = Kokkos::create_mirror_view(iterations);
  Kokkos::deep_copy(space, state_host, ens.state);
  Kokkos::deep_copy(space, time_host, ens.time);
  Kokkos::deep_copy(space, time_lo_host, ens.time_lo);
  Kokkos::deep_copy(space, iter_host, iterations);
  space.fence();
  int pending = 0;
  report.steps = 0;
  report.iterations.assign(iter_host.data(), iter_host.data() + n_sys);
  report.disabled = report.stopped = report.reached_destination = report.unfinished =
      report.paused = 0;
  for (int sys = 0; sys < n_sys; ++sys) {
    report.steps += iter_host(sys) - (options.prior_iterations.empty() ? 0 : options.prior_iterations[sys]);
    if (state_host(sys) == state_disabled) {
      ++report.disabled;
    } else if (state_host(sys) == state_inactive) {
      ++report.stopped;
    } else if (!(time_left(destination, time_host(sys), time_lo_host(sys)) > 0)) {
      ++report.reached_destination;
    } else if (!(time_left(options.pause_at, time_host(sys), time_lo_host(sys)) > 0)) {
      ++report.paused;
    } else {
      ++report.unfinished;
      if (iter_host(sys) < max_iterations) ++pending;
    }
  }
  if (options.on_progress)
    options.on_progress(n_sys ? double(n_sys - report.unfinished - report.paused) / n_sys : 1.0);
  return pending;
}

// The system-per-thread Hermite driver (see integrators/hermite.hpp): the hand-tuned CUDA kernel on
// Kokkos::Cuda, a Kokkos RangePolicy kernel elsewhere.
template <int N, class ExecSpace>
void launch_hermite_system(
    const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
    const Kokkos::View<long long*, typename ExecSpace::memory_space>& iterations,
    const HermiteSystemParams& params,
    const CarriedState<typename ExecSpace::memory_space>& carried) {
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
  if constexpr (HasCudaSpecialization<ExecSpace>::value) {
    cuda_hermite_launch<N>(space, ens, iterations, params, carried);
    return;
  }
#endif
  HermiteSystemKernel<N, typename ExecSpace::memory_space> kernel{ens, iterations, params, carried};
  Kokkos::parallel_for("kosmos::nbody::integrate_hermite_system",
                       Kokkos::RangePolicy<ExecSpace>(space, 0, ens.n_systems()), kernel);
}

// Relaunches a system-per-thread kernel (`launch(iterations, carried)`, one launch; Newtonian
// gravity) until every system reached the destination, stopped, or used up its iteration budget,
// with the energy-sanity check after each launch (energy_offset: what merges took, when merging).
template <class ExecSpace, class Launch>
IntegrationReport run_system_per_thread(
    const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
    double destination, const IntegrateOptions& options, const Launch& launch,
    const Kokkos::View<double*, typename ExecSpace::memory_space>& energy_offset = {}) {
  const auto start = std::chrono::steady_clock::now();
  IntegrationReport report;
  report.systems = ens.n_systems();
  const auto iterations = make_iterations(space, ens.n_systems(), options);
  const auto carried =
      make_carried_state(space, ens.n_systems(), carried_layout(options, ens.n_bodies()), options);
  const EnergyGuard<ExecSpace, Newtonian> guard(space, ens, options.monitor.energy_error_limit,
                                                options.reference_energy, Newtonian(),
                                                energy_offset);
  while (ens.n_systems() > 0) {
    launch(iterations, carried);
    ++report.launches;
    guard.check();
    if (summarize(space, ens, iterations, destination, options.integrator.max_iterations, options, report) == 0) break;
  }
  report_carried_state(space, carried, report);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

template <class ExecSpace>
IntegrationReport run_hermite_system(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
                                     double destination, const HermiteSystemParams& base,
                                     const IntegrateOptions& options) {
  const int n = ens.n_bodies();
  HermiteSystemParams params = base;
  params.destination = destination;
  params.pause = std::fmin(options.pause_at, destination);
  params.steps = options.integrator.steps_per_launch;
  params.max_iterations = options.integrator.max_iterations;
  using Iterations = Kokkos::View<long long*, typename ExecSpace::memory_space>;
  using Carried = CarriedState<typename ExecSpace::memory_space>;
  return run_system_per_thread(
      space, ens, destination, options, [&](const Iterations& iterations, const Carried& carried) {
        with_body_count(n, [&](auto nb) {
          launch_hermite_system<decltype(nb)::value>(space, ens, iterations, params, carried);
        });
      });
}

// run_system_per_thread with the MEGNO state (variational equations):
// `launch(iterations, carried, megno)`.
template <class ExecSpace, class Launch>
IntegrationReport run_with_megno(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
                                 double destination, const IntegrateOptions& options, const Launch& launch) {
  const auto megno = make_megno_state(space, ens, options);
  using Iterations = Kokkos::View<long long*, typename ExecSpace::memory_space>;
  using Carried = CarriedState<typename ExecSpace::memory_space>;
  auto report = run_system_per_thread(
      space, ens, destination, options,
      [&](const Iterations& iterations, const Carried& carried) { launch(iterations, carried, megno); });
  report_megno_state(space, ens, megno, report);
  return report;
}

// WHFast-class (integrators/whfast.hpp), IAS15-class (integrators/ias15.hpp) and MERCURIUS-class
// (integrators/mercurius.hpp) integration: Newtonian
// gravity, 2 to 8 bodies, the stop conditions of options.monitor, no logs (check_options).
template <class ExecSpace>
IntegrationReport run_modern(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
                             double destination, const IntegrateOptions& options) {
  const IntegratorConfig& cfg = options.integrator;
  const MonitorConfig& mon = options.monitor;
  SystemMonitor monitor;
  monitor.config = mon;
  monitor.on = mon.any_stop_condition();
  const int n = ens.n_bodies();
  using Iterations = Kokkos::View<long long*, typename ExecSpace::memory_space>;
  using Carried = CarriedState<typename ExecSpace::memory_space>;
  const double pause = std::fmin(options.pause_at, destination);
  // The settings every system-per-thread integrator's parameters share.
  const auto common = [&](auto& p) {
    p.destination = destination;
    p.pause = pause;
    p.dt = cfg.dt;
    p.steps = cfg.steps_per_launch;
    p.max_iterations = cfg.max_iterations;
    p.monitor = monitor;
  };
  if (cfg.method == Method::mercurius) {
    MercuriusParams p;
    common(p);
    p.hill_factor = cfg.changeover_hill;
    p.tolerance = cfg.tolerance;
    return run_system_per_thread(space, ens, destination, options,
                                 [&](const Iterations& iterations, const Carried& carried) {
                                   with_body_count(n, [&](auto nb) {
                                     launch_mercurius_system<decltype(nb)::value>(
                                         space, ens, iterations, p, carried);
                                   });
                                 });
  }
  if (cfg.method == Method::whfast) {
    WHFastParams p;
    common(p);
    p.corrector = cfg.corrector;
    p.coordinates = cfg.coordinates;
    if (options.megno)
      return run_with_megno(
          space, ens, destination, options,
          [&](const Iterations& iterations, const Carried& carried, const auto& megno) {
            with_body_count(n, [&](auto nb) {
              launch_whfast_megno<decltype(nb)::value>(space, ens, iterations, p, megno, carried);
            });
          });
    return run_system_per_thread(space, ens, destination, options,
                                 [&](const Iterations& iterations, const Carried& carried) {
                                   with_body_count(n, [&](auto nb) {
                                     launch_whfast_system<decltype(nb)::value>(
                                         space, ens, iterations, p, carried);
                                   });
                                 });
  }
  IAS15Params p;
  common(p);
  p.step_factor = std::pow(5040 * cfg.epsilon, 1.0 / 7);
  p.k = IAS15Constants::make();
  if (options.megno)
    return run_with_megno(space, ens, destination, options,
                          [&](const Iterations& iterations, const Carried& carried, const auto& megno) {
                            with_body_count(n, [&](auto nb) {
                              launch_ias15_megno<decltype(nb)::value>(space, ens, iterations, p, megno, carried);
                            });
                          });
  MergeState<typename ExecSpace::memory_space> merge;
  if (mon.merging()) merge = make_merge_state(space, ens.n_systems(), n, options);
  auto report = run_system_per_thread(
      space, ens, destination, options,
      [&](const Iterations& iterations, const Carried& carried) {
        with_body_count(n, [&](auto nb) {
          launch_ias15_system<decltype(nb)::value>(space, ens, iterations, p, merge, carried);
        });
      },
      merge.energy_offset);
  if (mon.merging()) report_merge_state(space, merge, report);
  return report;
}
}  // namespace Impl

namespace Impl {
// Hermite with Newtonian gravity, at most 8 bodies, no stop conditions and no logs: what the
// system-per-thread Hermite kernels integrate.
template <class Force>
bool plain_hermite(const IntegrateOptions& options, int n_bodies) {
  const Method m = options.integrator.method;
  return (m == Method::hermite || m == Method::hermite_adaptive) &&
         std::is_same<Force, Newtonian>::value && !options.monitor.any_stop_condition() &&
         !options.on_log && n_bodies >= system_kernel_min_bodies &&
         n_bodies <= system_kernel_max_bodies;
}
}  // namespace Impl

// Throws kosmos::invalid_input naming the first setting of `options` that cannot integrate
// systems of `n_bodies` bodies under the force law Force. integrate() calls it before any work;
// callers may call it earlier (e.g. before creating output files).
template <class Force = Newtonian>
void check_options(const IntegrateOptions& options, int n_bodies) {
  const IntegratorConfig& cfg = options.integrator;
  const MonitorConfig& mon = options.monitor;
  const char* name = method_name(cfg.method);
  auto require = [](bool ok, const auto&... what) {
    kosmos::Impl::require(ok, "kosmos::nbody::integrate", what...);
  };
  require(cfg.steps_per_launch >= 1, "steps_per_launch = ", cfg.steps_per_launch, " < 1");
  require(cfg.max_iterations >= 0, "max_iterations = ", cfg.max_iterations, " < 0");
  require(mon.log_slots_per_launch >= 2, "log_slots_per_launch = ", mon.log_slots_per_launch,
          " < 2");
  require(!mon.merging() || mon.log_slots_per_launch >= 3,
          "log_slots_per_launch = ", mon.log_slots_per_launch,
          " < 3 with merging (a step may log a merge, an event and an interval)");
  const bool needs_dt = cfg.method != Method::hermite_adaptive;
  require(!needs_dt || (cfg.dt > 0 && std::isfinite(cfg.dt)), "dt = ", cfg.dt,
          " must be positive and finite");
  for (double r : mon.radius)
    require(r >= 0 && std::isfinite(r), "collision radius ", r, " must be >= 0 and finite");
  require(mon.energy_error_limit >= 0 && !std::isnan(mon.energy_error_limit),
          "energy_error_limit = ", mon.energy_error_limit, " must be >= 0 (0: off)");
  require(mon.close_encounter_hill >= 0 && std::isfinite(mon.close_encounter_hill),
          "close_encounter_hill = ", mon.close_encounter_hill, " must be >= 0 and finite (0: off)");
  require(mon.ejection_distance >= 0 && std::isfinite(mon.ejection_distance),
          "ejection_distance = ", mon.ejection_distance, " must be >= 0 and finite (0: off)");
  require(mon.log_interval >= 0 && std::isfinite(mon.log_interval),
          "log_interval = ", mon.log_interval, " must be >= 0 and finite (0: events only)");
  // The methods in Jacobi or heliocentric coordinates do not merge (a merge would change the
  // coordinates' masses and the central body's Kepler motion).
  require(!mon.merging() || (cfg.method != Method::mvs && cfg.method != Method::whfast &&
                             cfg.method != Method::mercurius),
          "on_collision = merge is not supported by ", name,
          " (supported: hermite, hermite_adaptive, verlet, rkck, rkck_adaptive, ias15)");
  if (cfg.method == Method::hermite_adaptive)
    require(cfg.tau > 0 && std::isfinite(cfg.tau), "tau = ", cfg.tau, " must be positive");
  if (cfg.method == Method::rkck_adaptive)
    require(cfg.tolerance > 0 && std::isfinite(cfg.tolerance), "tolerance = ", cfg.tolerance,
            " must be positive");
  if (cfg.work_model == IntegratorConfig::WorkModel::system_per_thread)
    require(Impl::plain_hermite<Force>(options, n_bodies),
            "the system_per_thread work model runs Hermite with Newtonian gravity, 2 to 8 bodies, "
            "no stop conditions and no logs");
  if (cfg.method == Method::mercurius) {
    require(cfg.tolerance > 0 && cfg.tolerance < 1e-3, "tolerance = ", cfg.tolerance,
            " must be within (0, 1e-3) (the relative error of mercurius' encounter sub-steps)");
    require(cfg.changeover_hill > 0 && std::isfinite(cfg.changeover_hill),
            "changeover_hill = ", cfg.changeover_hill, " must be positive and finite");
  }
  if (cfg.method == Method::whfast || cfg.method == Method::ias15 ||
      cfg.method == Method::mercurius) {
    require(std::is_same<Force, Newtonian>::value, name, " integrates Newtonian gravity only");
    require(!options.on_log, name, " runs without logs");
    require(n_bodies >= Impl::system_kernel_min_bodies && n_bodies <= Impl::system_kernel_max_bodies,
            name, " handles ", Impl::system_kernel_min_bodies, " to ", Impl::system_kernel_max_bodies,
            " bodies, not ", n_bodies);
  }
  if (cfg.method == Method::whfast) {
    require(Impl::valid_corrector_order(cfg.corrector), "corrector order ", cfg.corrector,
            " is not one of 0, 3, 5, 7, 11");
    require(cfg.corrector == 0 || cfg.coordinates == WHCoordinates::jacobi, "symplectic corrector ",
            cfg.corrector, " needs Jacobi coordinates");
  }
  require(!options.megno || cfg.method == Method::ias15 || cfg.method == Method::whfast,
          "megno is supported by ias15 and whfast, not ", name);
  require(!options.megno || cfg.method != Method::whfast || cfg.coordinates == WHCoordinates::jacobi,
          "megno with whfast needs Jacobi coordinates (its variational equations are Jacobi's)");
  require(!options.megno || !mon.merging(), "megno runs without merging (on_collision = merge)");
  if (cfg.method == Method::ias15)
    require(cfg.epsilon > 0 && std::isfinite(cfg.epsilon), "epsilon = ", cfg.epsilon,
            " must be positive and finite");
}

// Integrates every active system of `ens` (in place, on `space`) to `destination` time with the
// integrator of options.integrator and the force law `force` (Newtonian gravity by default).
// Systems are first validated (validate()): bad ones are disabled with their reason.
template <class ExecSpace, class Force = Newtonian>
IntegrationReport integrate(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
                            double destination, const IntegrateOptions& options = {},
                            const Force& force = Force()) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "kosmos::nbody::integrate: the first argument must be a Kokkos execution space");
  kosmos::Impl::require(std::isfinite(destination), "kosmos::nbody::integrate", "destination time ", destination,
                " is not finite");
  check_options<Force>(options, ens.n_bodies());
  kosmos::Impl::require(!std::isnan(options.pause_at), "kosmos::nbody::integrate",
                        "pause_at is NaN");
  const IntegratorConfig& cfg = options.integrator;
  validate(space, ens);
  Impl::require_not_before(space, ens, destination);
  if (cfg.method == Method::mvs || cfg.method == Method::whfast || cfg.method == Method::mercurius)
    validate_central_body(space, ens);
  using WM = IntegratorConfig::WorkModel;
  const bool plain = Impl::plain_hermite<Force>(options, ens.n_bodies());
  if (cfg.work_model == WM::system_per_thread ||
      (cfg.work_model == WM::automatic && plain && ens.n_bodies() <= max_auto_register_bodies &&
       Impl::HasCudaSpecialization<ExecSpace>::value)) {
    Impl::HermiteSystemParams p;
    p.dt = cfg.dt;
    if (cfg.method == Method::hermite_adaptive) p.tau = cfg.tau;
    return Impl::run_hermite_system(space, ens, destination, p, options);
  }
  switch (cfg.method) {
    case Method::hermite:
    case Method::hermite_adaptive: {
      Impl::HermitePropagator p;
      p.dt = cfg.dt;
      if (cfg.method == Method::hermite_adaptive) p.tau = cfg.tau;
      return Impl::run_driver(space, ens, destination, p, force, options);
    }
    case Method::rkck:
    case Method::rkck_adaptive: {
      Impl::RKCKPropagator p;
      p.dt = cfg.dt;
      if (cfg.method == Method::rkck_adaptive) p.tolerance = cfg.tolerance;
      return Impl::run_driver(space, ens, destination, p, force, options);
    }
    case Method::mvs: {
      Impl::MVSPropagator p;
      p.dt = cfg.dt;
      return Impl::run_driver(space, ens, destination, p, force, options);
    }
    case Method::verlet: {
      Impl::VerletPropagator p;
      p.dt = cfg.dt;
      return Impl::run_driver(space, ens, destination, p, force, options);
    }
    case Method::whfast:
    case Method::ias15:
    case Method::mercurius: return Impl::run_modern(space, ens, destination, options);
  }
  return {};
}

// Overload on the ensemble's own execution space.
template <class MemorySpace>
IntegrationReport integrate(const Ensemble<MemorySpace>& ens, double destination,
                            const IntegrateOptions& options = {}) {
  return integrate(typename MemorySpace::execution_space(), ens, destination, options);
}

// integrate() with Newtonian gravity is compiled once per enabled execution space, in the library
// (integrate_<space>.cpp, from cmake/KosmosInstances.cmake), not in every file that calls
// it: its kernels are most of the module's device code.
#define KOSMOS_NBODY_INTEGRATE_INSTANCE(PREFIX, SPACE)                                                 \
  PREFIX template IntegrationReport integrate<SPACE, Newtonian>(                                     \
      const SPACE&, const Ensemble<SPACE::memory_space>&, double, const IntegrateOptions&,            \
      const Newtonian&);
#if defined(KOKKOS_ENABLE_SERIAL)
KOSMOS_NBODY_INTEGRATE_INSTANCE(extern, Kokkos::Serial)
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
KOSMOS_NBODY_INTEGRATE_INSTANCE(extern, Kokkos::OpenMP)
#endif
#if defined(KOKKOS_ENABLE_CUDA)
KOSMOS_NBODY_INTEGRATE_INSTANCE(extern, Kokkos::Cuda)
#endif

}  // namespace nbody
}  // namespace kosmos
