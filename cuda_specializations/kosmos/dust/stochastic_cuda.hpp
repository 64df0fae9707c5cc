// Hand-tuned CUDA for the P(T) recursion: a block's rows finished by the team's first warp, one
// lane a row, instead of one thread (SerialBlockWalk) while the team waits. Row u's P_u goes to
// the other lanes by a shuffle, and each later row adds P_u times its pair at once, so the walk is
// one division and one shuffle a row where the serial walk adds every pair of a row in turn. The
// sums are added in the serial walk's order: the same P_j bit for bit unless a rescale (big
// grains) scales a row's sum after, not before, its first pairs. Used by the P(T) kernel on
// Kokkos::Cuda (StochasticOptions::use_cuda_specialization); needs teams of at least 32 threads.
#pragma once

#include <kosmos/dust/impl/stochastic_recursion.hpp>

#include <cstdint>

#include <Kokkos_Core.hpp>

namespace kosmos {
namespace dust {
namespace Impl {

struct CudaWarpBlockWalk {
  template <class Member, class Block, class Scratch>
  KOKKOS_INLINE_FUNCTION int operator()(const Member& team, const Block& w, const Scratch& p,
                                        const Scratch& cool, int j0, int rows) const {
#ifdef __CUDA_ARCH__
    static_assert(Block::rows <= 32, "kosmos::dust: a block's rows are one warp's lanes");
    constexpr unsigned warp = 0xffffffffu;
    if (team.team_rank() < 32) {  // Kokkos' team ranks are the block's linear thread indices
      const int lane = team.team_rank();
      const bool own = lane < rows;
      double sum = 0, p_own = 0;
      // 1 / L_j before the walk, off its chain: a row then takes a product and one correction
      // (Markstein's: the quotient rounded as sum / L_j away from the subnormals) for a division.
      const double cool_own = own ? cool(j0 + lane) : 1.0, inverse_cool = 1.0 / cool_own;
      const int first = own ? w.first_pair(j0, lane) : Block::rows;
      if (own)
        for (int part = 0; part < Block::row_parts; ++part) sum += w.part(part, lane);
      int rescales = 0;
#pragma unroll
      for (int u = 0; u < Block::rows; ++u) {
        if (u >= rows) break;
        if (lane == u) {
          const double q = sum * inverse_cool;
          p_own = fma(fma(-q, cool_own, sum), inverse_cool, q);
        }
        double p_u = __shfl_sync(warp, p_own, u);
        if (p_u > 1e200) {  // the same on every lane
          if (lane <= u)
            p_own *= 1e-200;
          else
            sum *= 1e-200;
          p_u *= 1e-200;
          ++rescales;
        }
        if (own && lane > u && u >= first) sum += p_u * w.pair(u, lane);
      }
      if (own) p(j0 + lane) = p_own;
      if (lane == 0) w.rescales() = std::int16_t(rescales);
    }
    team.team_barrier();
    return w.rescales();
#else
    return SerialBlockWalk()(team, w, p, cool, j0, rows);
#endif
  }
};

}  // namespace Impl
}  // namespace dust
}  // namespace kosmos
