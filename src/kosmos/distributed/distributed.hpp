// Ensembles over MPI ranks, one GPU per rank (the convention of Cabana, ArborX and kokkos-fft):
// every function takes the application's communicator; Kosmos never calls MPI_Init and never
// uses MPI_COMM_WORLD itself. Needs a build with KOSMOS_ENABLE_MPI (kosmos/config.hpp:
// KOSMOS_HAVE_MPI). Items of an ensemble (n-body systems, stars, dust cells, homotopy paths) are
// independent: whichever rank runs an item computes the same numbers, so gathering them in index
// order gives exactly what one rank gives.
//
//   int device = kosmos::distributed::device_id(comm);       // before Kokkos::initialize
//   kosmos::distributed::ChunkQueue queue(comm, n, schedule);  // collective
//   std::vector<kosmos::distributed::IndexRange> done;
//   for (IndexRange r; queue.next(r);) { run items r; done.push_back(r); }
//   auto all = kosmos::distributed::gather_rows(comm, done, my_rows, width, n, 0);  // on rank 0
#pragma once

#include <kosmos/config.hpp>
#include <kosmos/distributed/partition.hpp>

#if !KOSMOS_HAVE_MPI
#error "kosmos/distributed/distributed.hpp needs Kosmos built with KOSMOS_ENABLE_MPI=ON"
#endif

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace kosmos {
namespace distributed {

// This rank's index among the ranks of `comm` on its node (MPI_Comm_split_type with
// MPI_COMM_TYPE_SHARED), and how many there are. Collective.
int node_local_rank(MPI_Comm comm);
int node_local_size(MPI_Comm comm);

// The GPU this rank should use: its node-local rank modulo the node's GPU count (CUDA builds;
// one rank per GPU is the intended layout, more ranks than GPUs share them round-robin). 0 in
// builds without a GPU backend. Call before Kokkos::initialize and pass it as Kokkos' device id
// (--kokkos-device-id=N, which Kokkos 3.4 to 5 read). Collective.
int device_id(MPI_Comm comm);

// The dynamic part of a Schedule: after the statically dealt chunks, each call to next() takes
// the next undistributed chunk through an atomic fetch-and-add (MPI_Fetch_and_op, passive target)
// on a counter in rank 0's memory: no dispatcher rank, no rank waits for another to hand out
// work. Construction and destruction are collective over `comm`; every rank must call next()
// until it returns false before the queue is destroyed.
class ChunkQueue {
 public:
  ChunkQueue(MPI_Comm comm, std::int64_t n, const Schedule& schedule = {});
  ~ChunkQueue();
  ChunkQueue(const ChunkQueue&) = delete;
  ChunkQueue& operator=(const ChunkQueue&) = delete;

  // The next chunk for this rank; false when none is left.
  bool next(IndexRange& range);
  const ChunkPlan& plan() const { return plan_; }

 private:
  ChunkPlan plan_;
  int rank_ = 0;
  std::int64_t static_taken_ = 0;
  std::int64_t* counter_ = nullptr;  // rank 0: the first chunk not yet handed out
  MPI_Win window_ = MPI_WIN_NULL;
};

namespace Impl {
void broadcast_bytes(MPI_Comm comm, void* data, std::size_t bytes, int root);
void gather_items(MPI_Comm comm, const std::vector<IndexRange>& ranges, const void* items,
                  std::size_t item_bytes, std::int64_t n, int root, void* out);
}  // namespace Impl

// Rows of `width` values per item, gathered on `root` in item order: `rows` holds this rank's
// rows for `ranges` (in that order). The result has n x width values on root, none elsewhere.
// Every item of [0, n) must be in exactly one rank's ranges. Collective.
template <class T>
std::vector<T> gather_rows(MPI_Comm comm, const std::vector<IndexRange>& ranges,
                           const std::vector<T>& rows, std::size_t width, std::int64_t n,
                           int root) {
  static_assert(
      std::is_trivially_copyable<T>::value,
      "kosmos::distributed::gather_rows: rows must be trivially copyable (sent as bytes)");
  std::int64_t items = 0;
  for (const auto& r : ranges) items += r.size();
  kosmos::Impl::require(rows.size() == std::size_t(items) * width,
                        "kosmos::distributed::gather_rows", rows.size(), " values for ", items,
                        " items of width ", width);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<T> out(rank == root ? std::size_t(n) * width : 0);
  Impl::gather_items(comm, ranges, rows.data(), sizeof(T) * width, n, root, out.data());
  return out;
}

// gather_rows with the result on every rank (e.g. when every rank continues from all items).
// Collective.
template <class T>
std::vector<T> all_gather_rows(MPI_Comm comm, const std::vector<IndexRange>& ranges,
                               const std::vector<T>& rows, std::size_t width, std::int64_t n) {
  auto out = gather_rows(comm, ranges, rows, width, n, 0);
  out.resize(std::size_t(n) * width);
  Impl::broadcast_bytes(comm, out.data(), out.size() * sizeof(T), 0);
  return out;
}

// One string per item (e.g. a formatted table row), gathered on root in item order.
std::vector<std::string> gather_strings(MPI_Comm comm, const std::vector<IndexRange>& ranges,
                                        const std::vector<std::string>& items, std::int64_t n,
                                        int root);

// Items' results (as bytes) brought to root one piece at a time, so that root never holds the
// other ranks' results all at once (e.g. rows it writes to a file as they arrive): `pieces` are
// this rank's, each an item range and its bytes; on root, receive(range, bytes) runs for each
// piece of the other ranks in item order (by range begin). Root's own pieces are not sent (it
// has them; pass none). A piece may exceed an int's count of bytes. Collective.
void send_pieces_to_root(MPI_Comm comm, const std::vector<Piece>& pieces, int root,
                         const std::function<void(const IndexRange&, std::vector<char>)>& receive);

}  // namespace distributed
}  // namespace kosmos
