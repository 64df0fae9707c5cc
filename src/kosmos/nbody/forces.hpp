// Accelerations and jerks of every body of every system of an ensemble (one force evaluation,
// as used by external propagators and by the verification tests). The generic path uses the
// body-pair work model in team scratch; on Kokkos::Cuda, compute_acc_jerk dispatches to a
// hand-tuned kernel (shared-memory pair accumulation, hardware rsqrt) in cuda_specializations/.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/validation.hpp>
#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/gravity.hpp>
#include <kosmos/nbody/impl/team_context.hpp>

#include <kosmos/nbody/impl/specialization.hpp>

#include <type_traits>

namespace kosmos {
namespace nbody {
namespace Impl {

template <class ExecSpace, class Force>
struct AccJerkKernel {
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using memory_space = typename ExecSpace::memory_space;
  using scratch_space = typename ExecSpace::scratch_memory_space;
  Ensemble<memory_space> ens;
  typename Ensemble<memory_space>::BodyView acc, jerk;
  Force force;
  Layout L;
  int S = 1;

  static std::size_t scratch_bytes(const Layout& L, int S) {
    return std::size_t(S) * L.total * sizeof(double) + std::size_t(S) * n_flags * sizeof(int) + 64;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    Kokkos::View<double*, scratch_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> ws(team.team_scratch(0),
                                                                                   S * L.total);
    Kokkos::View<int*, scratch_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> fl(team.team_scratch(0),
                                                                                S * n_flags);
    const TeamContext<member_type> ctx{team, L, S, ws.data(), fl.data()};
    const int first = team.league_rank() * S, n_sys = ens.n_systems(), n = L.n;
    ctx.for_all(S, 7 * n, [&](int s, int k) {
      const int sys = first + s;
      if (k == 0) {
        ctx.flag(s, fl_live) = sys < n_sys;
        ctx.flag(s, fl_removed) = 0;
      }
      if (sys >= n_sys) return;
      if (k < 3 * n)
        ctx.at(s, L.x + k) = ens.x(sys, k / 3, k % 3);
      else if (k < 6 * n)
        ctx.at(s, L.v + k - 3 * n) = ens.v(sys, (k - 3 * n) / 3, k % 3);
      else
        ctx.at(s, L.m + k - 6 * n) = ens.m(sys, k - 6 * n);
    });
    ctx.forces(force, L.x, L.v, L.a, true);
    ctx.for_live(3 * n, [&](int s, int k) {
      const int sys = first + s;
      acc(sys / Ensemble<memory_space>::chunk_size, k, sys % Ensemble<memory_space>::chunk_size) = ctx.at(s, L.a + k);
      jerk(sys / Ensemble<memory_space>::chunk_size, k, sys % Ensemble<memory_space>::chunk_size) = ctx.at(s, L.j + k);
    });
  }
};
}  // namespace Impl

// Generic Kokkos path (always available): acc and jerk have the shape of ens.pos.
template <class ExecSpace, class Force = Newtonian>
void compute_acc_jerk_generic(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
                              const typename Ensemble<typename ExecSpace::memory_space>::BodyView& acc,
                              const typename Ensemble<typename ExecSpace::memory_space>::BodyView& jerk,
                              const Force& force = Force()) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "kosmos::nbody::compute_acc_jerk: the first argument must be a Kokkos execution space");
  for (int d = 0; d < 3; ++d) {
    kosmos::Impl::require_extent("kosmos::nbody::compute_acc_jerk", "acc", acc, d, ens.pos.extent(d));
    kosmos::Impl::require_extent("kosmos::nbody::compute_acc_jerk", "jerk", jerk, d, ens.pos.extent(d));
  }
  using Kernel = Impl::AccJerkKernel<ExecSpace, Force>;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  Kernel k;
  k.ens = ens;
  k.acc = acc;
  k.jerk = jerk;
  k.force = force;
  k.L = Impl::Layout::make(ens.n_bodies(), 0, 0);
  const bool gpu = !kosmos::Impl::is_host_space<ExecSpace>();
  int S = gpu ? 16 : 1;
  while (S > 1 && Kernel::scratch_bytes(k.L, S) > std::size_t(Policy::scratch_size_max(0))) --S;
  kosmos::Impl::require(Kernel::scratch_bytes(k.L, S) <= std::size_t(Policy::scratch_size_max(0)),
                "kosmos::nbody::compute_acc_jerk", "team scratch of ", Kernel::scratch_bytes(k.L, S),
                " bytes exceeds scratch_size_max(0)");
  k.S = S;
  const int items = S * (3 * k.L.n > k.L.pairs ? 3 * k.L.n : k.L.pairs);
  const int team_size = gpu ? (items + 31) / 32 * 32 > 256 ? 256 : (items + 31) / 32 * 32 : 1;
  Policy policy(space, (ens.n_systems() + S - 1) / S, team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(Kernel::scratch_bytes(k.L, S)));
  Kokkos::parallel_for("kosmos::nbody::acc_jerk", policy, k);
}

// Newtonian acc and jerk of every body; uses the hand-tuned CUDA kernel on Kokkos::Cuda.
template <class ExecSpace>
void compute_acc_jerk(const ExecSpace& space, const Ensemble<typename ExecSpace::memory_space>& ens,
                      const typename Ensemble<typename ExecSpace::memory_space>::BodyView& acc,
                      const typename Ensemble<typename ExecSpace::memory_space>::BodyView& jerk) {
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
  if constexpr (Impl::HasCudaSpecialization<ExecSpace>::value) {
    for (int d = 0; d < 3; ++d) {
      kosmos::Impl::require_extent("kosmos::nbody::compute_acc_jerk", "acc", acc, d, ens.pos.extent(d));
      kosmos::Impl::require_extent("kosmos::nbody::compute_acc_jerk", "jerk", jerk, d, ens.pos.extent(d));
    }
    Impl::cuda_acc_jerk(space, ens, acc, jerk);
    return;
  }
#endif
  compute_acc_jerk_generic(space, ens, acc, jerk);
}

template <class MemorySpace>
void compute_acc_jerk(const Ensemble<MemorySpace>& ens, const typename Ensemble<MemorySpace>::BodyView& acc,
                      const typename Ensemble<MemorySpace>::BodyView& jerk) {
  compute_acc_jerk(typename MemorySpace::execution_space(), ens, acc, jerk);
}

}  // namespace nbody
}  // namespace kosmos
