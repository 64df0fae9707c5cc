// The vector lanes of one team thread working together on one item (a path of the tracker): loops
// over the item's entries are spread over the lanes, reductions are broadcast to every lane, and
// the code outside them runs on every lane alike, so that each lane holds the same scalars.
//
// The lanes of a GPU thread share memory: a lane may write an entry that another lane reads only
// after a loop, a reduction or single() separates the read from the write (each ends in a warp
// barrier on CUDA). On host spaces a thread has one lane and these are plain loops.
#pragma once

#include <kosmos/core/compat.hpp>

#include <Kokkos_Core.hpp>

namespace kosmos {
namespace Impl {

template <class Member>
struct VectorLanes {
  const Member& member;

  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each(int begin, int end, const F& f) const {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, begin, end), f);
  }
  // f() on one lane, then a barrier of the lanes.
  template <class F>
  KOKKOS_INLINE_FUNCTION void single(const F& f) const {
    Kokkos::single(Kokkos::PerThread(member), f);
  }
  // max(0, f(begin), .., f(end - 1)) (NaN values are passed over, as math::fmax does).
  template <class F>
  KOKKOS_INLINE_FUNCTION double max(int begin, int end, const F& f) const {
    double r = 0;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(member, begin, end),
        [&](int i, double& acc) { acc = math::fmax(acc, f(i)); }, Kokkos::Max<double>(r));
    return math::fmax(r, 0.0);
  }
  // min(f(begin), .., f(end - 1), the largest finite double).
  template <class F>
  KOKKOS_INLINE_FUNCTION double min(int begin, int end, const F& f) const {
    double r = 0;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(member, begin, end),
        [&](int i, double& acc) { acc = math::fmin(acc, f(i)); }, Kokkos::Min<double>(r));
    return r;
  }
  template <class F>
  KOKKOS_INLINE_FUNCTION double sum(int begin, int end, const F& f) const {
    double r = 0;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(member, begin, end), [&](int i, double& acc) { acc += f(i); }, r);
    return r;
  }
};

// One lane: loops and single() as plain code, for a lane's own serial work inside a lane loop.
struct OneLane {
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each(int begin, int end, const F& f) const {
    for (int i = begin; i < end; ++i) f(i);
  }
  template <class F>
  KOKKOS_INLINE_FUNCTION void single(const F& f) const {
    f();
  }
};

// Vector lanes per item of `entries` entries on ExecSpace: `requested` (> 0) or the power of two
// at or above `entries`, up to a warp, on GPUs; 1 on host spaces (their vector loops run
// serially).
template <class ExecSpace>
int lanes_per_item(int entries, int requested = 0) {
  if (is_host_space<ExecSpace>()) return 1;
  if (requested > 0) return requested;
  int lanes = 1;
  while (lanes < entries && lanes < 32) lanes *= 2;
  return lanes;
}
// Items per team (team threads) for `lanes` lanes each: 64 lanes a team on GPUs, 1 on hosts.
template <class ExecSpace>
int items_per_team(int lanes) {
  return is_host_space<ExecSpace>() || lanes >= 64 ? 1 : 64 / lanes;
}

}  // namespace Impl
}  // namespace kosmos
