// Generic Kokkos kernels of the batched chi^2 / log-likelihood (kosmos/kepler/chi2.hpp).
#pragma once

#include <kosmos/core/compensated.hpp>
#include <kosmos/kepler/rv.hpp>

namespace kosmos {
namespace kepler {
namespace Impl {

// Kepler solve for M already in [0, 2pi) and validated e: sin E, cos E.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void solve_reduced(Solver solver, T M, T e, T tol, int max_iterations,
                                               T& s, T& c) {
  T E;
  if (solver == Solver::Danby)
    danby_solve(M, e, tol, max_iterations, E, s, c);
  else
    markley_solve(M, e, E, s, c);
}

// Device copies of the observations in the kernel's precision.
template <class Precision, class ExecSpace>
struct DeviceObservations {
  using Phase = typename Precision::phase_type;
  using Real = typename Precision::real_type;
  Kokkos::View<Phase*, ExecSpace> t;                              // time - epoch
  Kokkos::View<Real*, ExecSpace> v;                               // velocity
  Kokkos::View<Real*, ExecSpace> var;                             // sigma^2
  Kokkos::View<int*, ExecSpace> inst;                             // instrument index
  Kokkos::View<Real**, Kokkos::LayoutRight, ExecSpace> activity;  // (n_obs, n_act) indicators
};

// Observations (double) -> the kernel's precision; sigma -> sigma^2.
template <class Precision, class ExecSpace>
struct ConvertObservations {
  using Phase = typename Precision::phase_type;
  using Real = typename Precision::real_type;
  DeviceObservations<Precision, ExecSpace> out;
  Kokkos::View<const double*, ExecSpace> t, v, sigma;
  Kokkos::View<const int*, ExecSpace> inst;
  Kokkos::View<const double**, Kokkos::LayoutRight, ExecSpace> activity;
  KOKKOS_INLINE_FUNCTION void operator()(const int k) const {
    out.t(k) = Phase(t(k));
    out.v(k) = Real(v(k));
    out.var(k) = Real(sigma(k) * sigma(k));
    out.inst(k) = inst(k);
    for (int i = 0; i < int(activity.extent(1)); ++i) out.activity(k, i) = Real(activity(k, i));
  }
};

// Per-planet constants of one system, computed once per thread.
template <class Precision>
struct PlanetConstants {
  using Phase = typename Precision::phase_type;
  using Real = typename Precision::real_type;
  template <class PView, class RView>
  KOKKOS_INLINE_FUNCTION static void compute(Amplitude amplitude, const PView& P, const RView& K,
                                             const RView& e, const RView& omega, const RView& M0,
                                             int sys, int j, Phase& inv_P, Real& m0, Real& ecc,
                                             Real& A, Real& B) {
    inv_P = Phase(1) / P(sys, j);
    m0 = reduce_mean_anomaly(Real(M0(sys, j)));
    ecc = e(sys, j);
    rv_coefficients(amplitude, Real(K(sys, j)), ecc, Real(omega(sys, j)), A, B);
  }
  // Mean anomaly in [0, 2pi): the phase in Phase precision, the rest in Real (Eq. 6).
  KOKKOS_FORCEINLINE_FUNCTION static Real mean_anomaly(Phase t, Phase inv_P, Real m0) {
    Phase ph = t * inv_P;
    ph -= math::floor(ph);
    Real M = Real(ph) * math::two_pi<Real>() + m0;
    if (M >= math::two_pi<Real>()) M -= math::two_pi<Real>();
    return M;
  }
};

// Separate layout, kernel 1: one thread per (system, planet), looping over observations,
// writes dv(sys * n_pl + j, k). dv uses the execution space's default layout, so on GPUs
// (LayoutLeft) adjacent threads write adjacent addresses and on CPUs each thread writes a row.
template <class Precision, class ExecSpace>
struct DeltaVFunctor {
  using Phase = typename Precision::phase_type;
  using Real = typename Precision::real_type;
  Kokkos::View<const Phase*, ExecSpace> t;
  Kokkos::View<const Phase**, Kokkos::LayoutRight, ExecSpace> P;
  Kokkos::View<const Real**, Kokkos::LayoutRight, ExecSpace> K, e, omega, M0;
  Kokkos::View<Real**, ExecSpace> dv;
  int n_pl, n_obs;
  Solver solver;
  Real tol;
  int max_iterations;
  Amplitude amplitude;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const int sys = int(idx / n_pl), j = int(idx % n_pl);
    Phase inv_P;
    Real m0, ecc, A, B;
    PlanetConstants<Precision>::compute(amplitude, P, K, e, omega, M0, sys, j, inv_P, m0, ecc, A,
                                        B);
    for (int k = 0; k < n_obs; ++k) {
      const Real M = PlanetConstants<Precision>::mean_anomaly(t(k), inv_P, m0);
      Real s, c;
      solve_reduced(solver, M, ecc, tol, max_iterations, s, c);
      dv(idx, k) = rv_from_anomaly(A, B, ecc, s, c);
    }
  }
};

// What both chi^2 kernels read: the observations and the model parameters, and the chi^2 and
// ln L they write.
template <class Precision, class ExecSpace>
struct Chi2Inputs {
  using Phase = typename Precision::phase_type;
  using Real = typename Precision::real_type;
  using policy_type = Kokkos::TeamPolicy<ExecSpace>;
  using member_type = typename policy_type::member_type;
  template <class T>
  using Scratch = Kokkos::View<T*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<const Phase*, ExecSpace> t;
  Kokkos::View<const Real*, ExecSpace> v, var;
  Kokkos::View<const int*, ExecSpace> inst;
  Kokkos::View<const Phase**, Kokkos::LayoutRight, ExecSpace> P;
  Kokkos::View<const Real**, Kokkos::LayoutRight, ExecSpace> K, e, omega, M0, offset, jitter, trend;
  // (n_sys, n_act) coefficients and (n_obs, n_act) indicators, read in place (n_act may be 0)
  Kokkos::View<const Real**, Kokkos::LayoutRight, ExecSpace> activity, indicators;
  Kokkos::View<const Real**, ExecSpace> dv;
  Kokkos::View<const int**, Kokkos::LayoutRight, ExecSpace> obs_range;  // (n_sys, 2) or empty
  Kokkos::View<double*, ExecSpace> chi2, loglike;
  bool want_loglike;
  int n_sys, n_pl, n_obs;
  Solver solver;
  Real tol;
  int max_iterations;
  Amplitude amplitude;

  // The residual r = v - offset - model of observation k (time tk since the epoch) for system
  // sys, whose planets' constants lie at slot j * stride + first of the scratch arrays (fused),
  // or whose planet velocities are dv's rows (FromDv); *total_var receives sigma^2 + jitter^2.
  template <bool FromDv, class PhaseS, class RealS>
  KOKKOS_FORCEINLINE_FUNCTION Real residual(int sys, int k, Phase tk, Real vk, Real vark, int ik,
                                            const PhaseS& s_invP, const RealS& s_m0,
                                            const RealS& s_e, const RealS& s_A, const RealS& s_B,
                                            int stride, int first, Real& total_var) const {
    CompensatedSum<Real> model;
    if (FromDv) {
      for (int j = 0; j < n_pl; ++j) model.add(dv(std::int64_t(sys) * n_pl + j, k));
    } else {
      for (int j = 0; j < n_pl; ++j) {
        const int slot = j * stride + first;
        // A planet of zero amplitude adds exactly nothing (a survey batch pads stars of fewer
        // planets so): no Kepler solve for it.
        if (s_A(slot) == Real(0) && s_B(slot) == Real(0)) continue;
        const Real ecc = s_e(slot);
        const Real M = PlanetConstants<Precision>::mean_anomaly(tk, s_invP(slot), s_m0(slot));
        Real s, c;
        solve_reduced(solver, M, ecc, tol, max_iterations, s, c);
        model.add(rv_from_anomaly(s_A(slot), s_B(slot), ecc, s, c));
      }
    }
    if (trend.extent(1) > 0) {
      const Real dt = Real(tk);
      model.add(dt * (trend(sys, 0) + (trend.extent(1) > 1 ? dt * trend(sys, 1) : Real(0))));
    }
    for (int i = 0; i < int(activity.extent(1)); ++i)
      model.add(activity(sys, i) * indicators(k, i));
    const Real jit = jitter(sys, ik);
    total_var = vark + jit * jit;
    return (vk - offset(sys, ik)) - model.value();
  }

  KOKKOS_INLINE_FUNCTION void write(int sys, double c2, double logs, int n_used) const {
    chi2(sys) = c2;
    if (want_loglike)
      loglike(sys) = -0.5 * (c2 + logs + n_used * 1.8378770664093454836);  // ln(2 pi)
  }
};

// chi^2 and log-likelihood, one thread per system, observations staged through team scratch in
// tiles. FromDv = false: fused layout (solves Kepler's equation inline); FromDv = true: sums the
// dv of kernel 1 (separate layout).
template <class Precision, class ExecSpace, bool FromDv>
struct Chi2TeamFunctor : Chi2Inputs<Precision, ExecSpace> {
  using Base = Chi2Inputs<Precision, ExecSpace>;
  using typename Base::member_type;
  using typename Base::Phase;
  using typename Base::policy_type;
  using typename Base::Real;
  template <class T>
  using Scratch = typename Base::template Scratch<T>;

  int tile, team_size, groups_per_team;

  static std::size_t scratch_bytes(int tile, int team_size, int n_pl) {
    std::size_t bytes = Scratch<Phase>::shmem_size(tile) + 2 * Scratch<Real>::shmem_size(tile) +
                        Scratch<int>::shmem_size(tile);
    if (!FromDv)
      bytes += Scratch<Phase>::shmem_size(std::size_t(team_size) * n_pl) +
               4 * Scratch<Real>::shmem_size(std::size_t(team_size) * n_pl);
    return bytes;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const Base& in = *this;
    Scratch<Phase> st(member.team_scratch(0), tile);
    Scratch<Real> sv(member.team_scratch(0), tile);
    Scratch<Real> svar(member.team_scratch(0), tile);
    Scratch<int> sinst(member.team_scratch(0), tile);
    const int np = FromDv ? 0 : team_size * in.n_pl;
    Scratch<Phase> s_invP(member.team_scratch(0), np);
    Scratch<Real> s_m0(member.team_scratch(0), np);
    Scratch<Real> s_e(member.team_scratch(0), np);
    Scratch<Real> s_A(member.team_scratch(0), np);
    Scratch<Real> s_B(member.team_scratch(0), np);
    const int rank = member.team_rank();
    const int n_obs = in.n_obs, n_tiles = (n_obs + tile - 1) / tile;

    for (int g = 0; g < groups_per_team; ++g) {
      const int sys = (member.league_rank() * groups_per_team + g) * team_size + rank;
      const bool active = sys < in.n_sys;
      if (!FromDv && active) {
        for (int j = 0; j < in.n_pl; ++j) {
          const int slot = j * team_size + rank;
          PlanetConstants<Precision>::compute(in.amplitude, in.P, in.K, in.e, in.omega, in.M0, sys,
                                              j, s_invP(slot), s_m0(slot), s_e(slot), s_A(slot),
                                              s_B(slot));
        }
      }
      CompensatedSum<Real> chi, logs;
      for (int tl = 0; tl < n_tiles; ++tl) {
        const int start = tl * tile;
        const int nt = n_obs - start < tile ? n_obs - start : tile;
        if (n_tiles > 1 || g == 0) {  // cooperative load of the tile
          member.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(member, nt), [&](const int k) {
            st(k) = in.t(start + k);
            sv(k) = in.v(start + k);
            svar(k) = in.var(start + k);
            sinst(k) = in.inst(start + k);
          });
          member.team_barrier();
        }
        if (!active) continue;
        for (int k = 0; k < nt; ++k) {
          Real total_var;
          const Real r =
              in.template residual<FromDv>(sys, start + k, st(k), sv(k), svar(k), sinst(k), s_invP,
                                           s_m0, s_e, s_A, s_B, team_size, rank, total_var);
          chi.add(r * r / total_var);
          if (in.want_loglike) logs.add(math::log(total_var));
        }
      }
      if (active)
        in.write(sys, double(chi.hi) + double(chi.lo), double(logs.hi) + double(logs.lo), n_obs);
    }
  }
};

// The survey layout (fused): system s reads its own observations [obs_range(s, 0), +
// obs_range(s, 1)) in place. A thread per system and its vector lanes over those observations
// (on GPUs a warp's lanes: a system's 100 observations are not one thread's sequential loop),
// the sums in double across lanes.
template <class Precision, class ExecSpace>
struct Chi2RangesFunctor : Chi2Inputs<Precision, ExecSpace> {
  using Base = Chi2Inputs<Precision, ExecSpace>;
  using typename Base::member_type;
  using typename Base::Phase;
  using typename Base::policy_type;
  using typename Base::Real;
  template <class T>
  using Scratch = typename Base::template Scratch<T>;

  int team_size;

  static std::size_t scratch_bytes(int team_size, int n_pl) {
    const std::size_t slots = std::size_t(team_size) * n_pl;
    return Scratch<Phase>::shmem_size(slots) + 4 * Scratch<Real>::shmem_size(slots);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const Base& in = *this;
    const int slots = team_size * in.n_pl, rank = member.team_rank();
    Scratch<Phase> s_invP(member.team_scratch(0), slots);
    Scratch<Real> s_m0(member.team_scratch(0), slots);
    Scratch<Real> s_e(member.team_scratch(0), slots);
    Scratch<Real> s_A(member.team_scratch(0), slots);
    Scratch<Real> s_B(member.team_scratch(0), slots);
    const int sys = member.league_rank() * team_size + rank;
    if (sys >= in.n_sys) return;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, in.n_pl), [&](const int j) {
      const int slot = j * team_size + rank;
      PlanetConstants<Precision>::compute(in.amplitude, in.P, in.K, in.e, in.omega, in.M0, sys, j,
                                          s_invP(slot), s_m0(slot), s_e(slot), s_A(slot),
                                          s_B(slot));
    });
    const int begin = in.obs_range(sys, 0), count = in.obs_range(sys, 1);
    double chi = 0, logs = 0;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(member, count),
        [&](const int i, double& sum) {
          const int k = begin + i;
          Real total_var;
          const Real r =
              in.template residual<false>(sys, k, in.t(k), in.v(k), in.var(k), in.inst(k), s_invP,
                                          s_m0, s_e, s_A, s_B, team_size, rank, total_var);
          sum += double(r * r / total_var);
        },
        chi);
    if (in.want_loglike)
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(member, count),
          [&](const int i, double& sum) {
            const int k = begin + i;
            const Real jit = in.jitter(sys, in.inst(k));
            sum += double(math::log(in.var(k) + jit * jit));
          },
          logs);
    Kokkos::single(Kokkos::PerThread(member), [&] { in.write(sys, chi, logs, count); });
  }
};
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
