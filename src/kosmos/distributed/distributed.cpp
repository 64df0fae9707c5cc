#include <kosmos/distributed/distributed.hpp>

#include <Kokkos_Macros.hpp>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <climits>
#include <cstring>

namespace kosmos {
namespace distributed {
namespace {
// The ranks of `comm` that share this rank's node (memory).
MPI_Comm node_communicator(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  return node;
}

int node_query(MPI_Comm comm, int (*query)(MPI_Comm, int*)) {
  MPI_Comm node = node_communicator(comm);
  int value = 0;
  query(node, &value);
  MPI_Comm_free(&node);
  return value;
}

int checked_count(std::int64_t count, const char* what) {
  kosmos::Impl::require(count >= 0 && count <= INT_MAX, "kosmos::distributed::gather", what, " = ",
                        count, " exceeds what one MPI message can count (", INT_MAX, ")");
  return int(count);
}
}  // namespace

int node_local_rank(MPI_Comm comm) {
  return node_query(comm, MPI_Comm_rank);
}
int node_local_size(MPI_Comm comm) {
  return node_query(comm, MPI_Comm_size);
}

int device_id(MPI_Comm comm) {
  const int local = node_local_rank(comm);
#if defined(KOKKOS_ENABLE_CUDA)
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) return 0;
  return local % devices;
#else
  (void)local;
  return 0;
#endif
}

ChunkQueue::ChunkQueue(MPI_Comm comm, std::int64_t n, const Schedule& schedule)
    : plan_(
          n,
          [comm] {
            int size = 1;
            MPI_Comm_size(comm, &size);
            return size;
          }(),
          schedule) {
  MPI_Comm_rank(comm, &rank_);
  const MPI_Aint bytes = rank_ == 0 ? MPI_Aint(sizeof(std::int64_t)) : 0;
  MPI_Win_allocate(bytes, sizeof(std::int64_t), MPI_INFO_NULL, comm, &counter_, &window_);
  if (rank_ == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, window_);
    *counter_ = plan_.static_chunks();
    MPI_Win_unlock(0, window_);
  }
  MPI_Barrier(comm);  // the counter is set before any rank draws from it
}

ChunkQueue::~ChunkQueue() {
  if (window_ != MPI_WIN_NULL) MPI_Win_free(&window_);
}

bool ChunkQueue::next(IndexRange& range) {
  std::int64_t chunk = 0;
  if (static_taken_ < plan_.static_per_rank()) {
    chunk = rank_ * plan_.static_per_rank() + static_taken_++;
  } else {
    const std::int64_t one = 1;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, window_);
    MPI_Fetch_and_op(&one, &chunk, MPI_INT64_T, 0, 0, MPI_SUM, window_);
    MPI_Win_unlock(0, window_);
  }
  if (chunk >= plan_.chunks()) return false;
  range = plan_.chunk_range(chunk);
  return true;
}

namespace {
// Each rank's `count` values of `type` (`type_bytes` each), concatenated on root in rank order.
std::vector<char> gather_concatenated(MPI_Comm comm, const void* data, std::int64_t count,
                                      MPI_Datatype type, std::size_t type_bytes, int root) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int local = checked_count(count, "values on one rank");
  std::vector<int> counts(size), offsets(size);
  MPI_Gather(&local, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm);
  std::int64_t total = 0;
  if (rank == root)
    for (int r = 0; r < size; ++r) {
      offsets[r] = checked_count(total, "values");
      total += counts[r];
    }
  std::vector<char> out(rank == root ? std::size_t(total) * type_bytes : 0);
  MPI_Gatherv(data, local, type, out.data(), counts.data(), offsets.data(), type, root, comm);
  return out;
}

// Every rank's ranges as begin, end pairs, on root in rank order (the order of the rows).
std::vector<std::int64_t> gather_bounds(MPI_Comm comm, const std::vector<IndexRange>& ranges,
                                        int root) {
  std::vector<std::int64_t> bounds;
  for (const auto& r : ranges) {
    bounds.push_back(r.begin);
    bounds.push_back(r.end);
  }
  const auto bytes = gather_concatenated(comm, bounds.data(), std::int64_t(bounds.size()),
                                         MPI_INT64_T, sizeof(std::int64_t), root);
  std::vector<std::int64_t> out(bytes.size() / sizeof(std::int64_t));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// Root: checks that the gathered ranges cover [0, n) once each.
void require_partition(const std::vector<std::int64_t>& bounds, std::int64_t n) {
  std::vector<char> seen(std::size_t(n), 0);
  std::int64_t covered = 0;
  for (std::size_t k = 0; k < bounds.size(); k += 2) {
    kosmos::Impl::require(0 <= bounds[k] && bounds[k] <= bounds[k + 1] && bounds[k + 1] <= n,
                          "kosmos::distributed::gather", "range [", bounds[k], ", ", bounds[k + 1],
                          ") is outside [0, ", n, ")");
    for (std::int64_t i = bounds[k]; i < bounds[k + 1]; ++i, ++covered) {
      kosmos::Impl::require(!seen[std::size_t(i)], "kosmos::distributed::gather", "item ", i,
                            " came from more than one rank or range");
      seen[std::size_t(i)] = 1;
    }
  }
  kosmos::Impl::require(covered == n, "kosmos::distributed::gather", covered,
                        " items arrived, expected ", n);
}
}  // namespace

namespace Impl {
void broadcast_bytes(MPI_Comm comm, void* data, std::size_t bytes, int root) {
  for (std::size_t at = 0; at < bytes; at += std::size_t(INT_MAX)) {  // MPI counts are int
    const std::size_t count = std::min(bytes - at, std::size_t(INT_MAX));
    MPI_Bcast(static_cast<char*>(data) + at, int(count), MPI_BYTE, root, comm);
  }
}

void gather_items(MPI_Comm comm, const std::vector<IndexRange>& ranges, const void* items,
                  std::size_t item_bytes, std::int64_t n, int root, void* out) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::int64_t local_items = 0;
  for (const auto& r : ranges) local_items += r.size();
  const auto bounds = gather_bounds(comm, ranges, root);
  // Whole items as one datatype: counts stay items, not bytes.
  MPI_Datatype item_type;
  MPI_Type_contiguous(checked_count(std::int64_t(item_bytes), "bytes per item"), MPI_BYTE,
                      &item_type);
  MPI_Type_commit(&item_type);
  const auto received = gather_concatenated(comm, items, local_items, item_type, item_bytes, root);
  MPI_Type_free(&item_type);
  if (rank != root) return;
  require_partition(bounds, n);
  const char* source = received.data();
  for (std::size_t k = 0; k < bounds.size(); k += 2) {
    const std::size_t bytes = std::size_t(bounds[k + 1] - bounds[k]) * item_bytes;
    if (bytes > 0)
      std::memcpy(static_cast<char*>(out) + std::size_t(bounds[k]) * item_bytes, source, bytes);
    source += bytes;
  }
}
}  // namespace Impl

std::vector<std::string> gather_strings(MPI_Comm comm, const std::vector<IndexRange>& ranges,
                                        const std::vector<std::string>& items, std::int64_t n,
                                        int root) {
  std::vector<std::int64_t> lengths;
  std::string joined;
  for (const auto& s : items) {
    lengths.push_back(std::int64_t(s.size()));
    joined += s;
  }
  const auto all_lengths = gather_rows(comm, ranges, lengths, 1, n, root);
  const auto bounds = gather_bounds(comm, ranges, root);
  const auto characters =
      gather_concatenated(comm, joined.data(), std::int64_t(joined.size()), MPI_CHAR, 1, root);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<std::string> out(rank == root ? std::size_t(n) : 0);
  std::size_t at = 0;  // the characters arrive in rank order, as the ranges do
  for (std::size_t k = 0; k < bounds.size(); k += 2)
    for (std::int64_t i = bounds[k]; i < bounds[k + 1]; ++i) {
      const auto length = std::size_t(all_lengths[std::size_t(i)]);
      out[std::size_t(i)].assign(characters.data() + at, length);
      at += length;
    }
  return out;
}

void send_pieces_to_root(MPI_Comm comm, const std::vector<Piece>& pieces, int root,
                         const std::function<void(const IndexRange&, std::vector<char>)>& receive) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<std::size_t> order;  // this rank's pieces by range begin: the order root takes them
  for (std::size_t k = 0; k < pieces.size() && rank != root; ++k) order.push_back(k);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return pieces[a].range.begin < pieces[b].range.begin;
  });
  std::vector<std::int64_t> mine;  // rank, begin, end, bytes per piece
  for (const std::size_t k : order)
    mine.insert(mine.end(), {std::int64_t(rank), pieces[k].range.begin, pieces[k].range.end,
                             std::int64_t(pieces[k].bytes.size())});
  const auto gathered = gather_concatenated(comm, mine.data(), std::int64_t(mine.size()),
                                            MPI_INT64_T, sizeof(std::int64_t), root);
  // Both sides cut a piece into messages of at most INT_MAX bytes the same way.
  auto parts = [](char* data, std::size_t bytes, const std::function<void(char*, int)>& part) {
    for (std::size_t at = 0; at < bytes; at += std::size_t(INT_MAX))
      part(data + at, int(std::min(bytes - at, std::size_t(INT_MAX))));
  };
  if (rank != root) {
    for (const std::size_t k : order)
      parts(const_cast<char*>(pieces[k].bytes.data()), pieces[k].bytes.size(),
            [&](char* data, int count) { MPI_Send(data, count, MPI_BYTE, root, 0, comm); });
    return;
  }
  std::vector<std::int64_t> all(gathered.size() / sizeof(std::int64_t));
  if (!all.empty()) std::memcpy(all.data(), gathered.data(), gathered.size());
  std::vector<std::size_t> entries;
  for (std::size_t e = 0; e < all.size() / 4; ++e) entries.push_back(e);
  std::stable_sort(entries.begin(), entries.end(),
                   [&](std::size_t a, std::size_t b) { return all[4 * a + 1] < all[4 * b + 1]; });
  for (const std::size_t e : entries) {
    const std::int64_t* entry = &all[4 * e];
    std::vector<char> bytes(static_cast<std::size_t>(entry[3]));
    parts(bytes.data(), bytes.size(), [&](char* data, int count) {
      MPI_Recv(data, count, MPI_BYTE, int(entry[0]), 0, comm, MPI_STATUS_IGNORE);
    });
    receive(IndexRange{entry[1], entry[2]}, std::move(bytes));
  }
}

}  // namespace distributed
}  // namespace kosmos
