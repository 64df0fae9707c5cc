// How an ensemble's index range [0, n) is cut into chunks and which rank runs which: the
// arithmetic of kosmos::distributed, without MPI (testable and usable in any build).
//
// A Schedule cuts [0, n) into chunks of `chunk` items (the last one shorter). The first
// static_fraction of the chunks are dealt out before any work starts, in contiguous blocks of
// equal chunk counts, rank r taking the r-th block (no communication, locality kept); the rest
// form a queue that ranks draw from as they finish (ChunkQueue in distributed.hpp), so a rank whose
// items take longer (adaptive steps, bigger stars) simply draws fewer of them. Items of even cost
// that a pipeline cuts into chunks of its own (dust cells) go in chunk_aligned_block instead.
#pragma once

#include <kosmos/core/error.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kosmos {
namespace distributed {

// Items [begin, end) of the ensemble.
struct IndexRange {
  std::int64_t begin = 0, end = 0;
  std::int64_t size() const { return end - begin; }
  bool operator==(const IndexRange& o) const { return begin == o.begin && end == o.end; }
};

// The block of [0, n) that part `part` of `parts` owns: sizes differ by at most one, larger first.
inline IndexRange block_range(std::int64_t n, int parts, int part) {
  kosmos::Impl::require(n >= 0 && parts >= 1 && part >= 0 && part < parts,
                        "kosmos::distributed::block_range", "n = ", n, ", parts = ", parts,
                        ", part = ", part, " (need n >= 0, 0 <= part < parts)");
  const std::int64_t base = n / parts, extra = n % parts;
  const std::int64_t begin = part * base + std::min<std::int64_t>(part, extra);
  return {begin, begin + base + (part < extra ? 1 : 0)};
}

// The block of [0, n) that part `part` of `parts` owns in whole chunks of `chunk` items (the last
// chunk of [0, n) may be shorter): block_range over the chunks, so that a pipeline cutting each
// block into chunks of `chunk` items cuts exactly the chunks of one pipeline over [0, n).
inline IndexRange chunk_aligned_block(std::int64_t n, std::int64_t chunk, int parts, int part) {
  kosmos::Impl::require(chunk >= 1, "kosmos::distributed::chunk_aligned_block", "chunk = ", chunk,
                        " must be >= 1");
  const IndexRange chunks = block_range((n + chunk - 1) / chunk, parts, part);
  return {std::min(n, chunks.begin * chunk), std::min(n, chunks.end * chunk)};
}

// A piece of an ensemble's results: its items and their bytes (send_pieces_to_root).
struct Piece {
  IndexRange range;
  std::vector<char> bytes;
};

struct Schedule {
  std::int64_t chunk = 0;        // items per chunk; 0: n / (chunks_per_rank x ranks), rounded up
  int chunks_per_rank = 4;       // for chunk = 0: more chunks balance better, fewer launch bigger
  double static_fraction = 0.5;  // of the chunks, dealt out in blocks before the queue starts
};

// The chunks of one schedule for n items over `ranks` ranks.
class ChunkPlan {
 public:
  ChunkPlan(std::int64_t n, int ranks, const Schedule& s) : n_(n), ranks_(ranks) {
    constexpr const char* where = "kosmos::distributed::Schedule";
    kosmos::Impl::require(n >= 0 && ranks >= 1, where, "n = ", n, ", ranks = ", ranks);
    kosmos::Impl::require(s.chunk >= 0 && s.chunks_per_rank >= 1, where, "chunk = ", s.chunk,
                          ", chunks_per_rank = ", s.chunks_per_rank,
                          " (need chunk >= 0, chunks_per_rank >= 1)");
    kosmos::Impl::require(s.static_fraction >= 0 && s.static_fraction <= 1, where,
                          "static_fraction = ", s.static_fraction, " is outside [0, 1]");
    const std::int64_t wanted = std::int64_t(s.chunks_per_rank) * ranks;
    chunk_ = s.chunk > 0 ? s.chunk : std::max<std::int64_t>(1, (n + wanted - 1) / wanted);
    chunks_ = (n + chunk_ - 1) / chunk_;
    static_per_rank_ = std::int64_t(s.static_fraction * double(chunks_) / ranks);
  }
  std::int64_t chunk() const { return chunk_; }
  std::int64_t chunks() const { return chunks_; }
  // Chunks [0, static_chunks()) are dealt out: rank r owns [r, r + 1) x static_per_rank().
  std::int64_t static_per_rank() const { return static_per_rank_; }
  std::int64_t static_chunks() const { return static_per_rank_ * ranks_; }
  IndexRange chunk_range(std::int64_t c) const {
    return {c * chunk_, std::min(n_, (c + 1) * chunk_)};
  }

 private:
  std::int64_t n_ = 0, chunk_ = 1, chunks_ = 0, static_per_rank_ = 0;
  int ranks_ = 1;
};

}  // namespace distributed
}  // namespace kosmos
