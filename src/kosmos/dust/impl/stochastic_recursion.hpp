// The P(T) recursion's blocks (see StochasticFunctor::solve_recursion): the scratch a block of
// rows shares, and the generic walk that finishes a block's rows in order.
#pragma once

#include <Kokkos_Core.hpp>

namespace kosmos {
namespace dust {
namespace Impl {

// A block of `rows` bins solved together. Its flows are computed by items of rows_per_item
// neighbouring rows and one of row_parts parts of their source bins (a source's gaps to
// neighbouring rows are shared: rows_per_item + 1 photon searches give rows_per_item flows).
template <class ScratchView, class IndexView>
struct RecursionBlock {
  static constexpr int rows = 16, rows_per_item = 4, row_parts = 16;
  // Rows of an odd number of doubles: a warp's lanes, one a row or one a part, hit distinct banks.
  static constexpr int tile_stride = rows + 1, parts_stride = row_parts + 1;
  static constexpr int tile_size = rows * tile_stride, parts_size = rows * parts_stride;
  ScratchView tile;        // (u, r): D(j0 + u, j0 + r), the block's own pairs
  ScratchView parts;       // (r, part): part's share of sum_i p(i) D(i, j0 + r) over i < j0
  IndexView first_source;  // (j), j >= 1: the lowest bin that reaches row j

  static std::size_t scratch_bytes(int bins) {
    return ScratchView::shmem_size(tile_size) + ScratchView::shmem_size(parts_size) +
           IndexView::shmem_size(bins);
  }
  KOKKOS_INLINE_FUNCTION double& part(int part, int r) const {
    return parts(r * parts_stride + part);
  }
  KOKKOS_INLINE_FUNCTION double& pair(int u, int r) const { return tile(u * tile_stride + r); }
  // The first source of row r inside the block (its sources below j0 are in the parts).
  KOKKOS_INLINE_FUNCTION int first_pair(int j0, int r) const {
    const int i = first_source(j0 + r);
    return i > j0 ? i - j0 : 0;
  }
  // Bin 0 is no row, so its slot passes a walk's rescale count to the team.
  KOKKOS_INLINE_FUNCTION auto& rescales() const { return first_source(0); }
};

// P_j = (sum_parts + sum_{u<r} P_{j0+u} D(j0 + u, j)) / L_j for the block's rows in order, with P
// kept finite by factors of 1e-200 where it rises steeply (big grains): one thread walks the rows
// while the team waits. Returns the number of rescales (to every thread), after a barrier.
struct SerialBlockWalk {
  template <class Member, class Block, class Scratch>
  KOKKOS_INLINE_FUNCTION int operator()(const Member& team, const Block& w, const Scratch& p,
                                        const Scratch& cool, int j0, int rows) const {
    int rescales = 0;
    Kokkos::single(
        Kokkos::PerTeam(team),
        [&](int& count) {
          count = 0;
          for (int r = 0; r < rows; ++r) {
            const int j = j0 + r;
            double sum = 0;
            for (int part = 0; part < Block::row_parts; ++part) sum += w.part(part, r);
            for (int n = 0; n < count; ++n) sum *= 1e-200;
            for (int u = w.first_pair(j0, r); u < r; ++u) sum += p(j0 + u) * w.pair(u, r);
            p(j) = sum / cool(j);
            if (p(j) > 1e200) {
              for (int i = j0; i <= j; ++i) p(i) *= 1e-200;
              ++count;
            }
          }
        },
        rescales);
    team.team_barrier();
    return rescales;
  }
};

}  // namespace Impl
}  // namespace dust
}  // namespace kosmos
