// kosmos::distributed under mpiexec (1, 2 and 3 ranks, one node): partitions cover every item
// once, the chunk queue hands out every chunk once, gathers put rows and strings in item order.
// References are computed here independently (closed forms of the item index). Checkpoints in
// parts: each rank writes its systems, every rank reads the run back whole. Pieces of bytes reach
// rank 0 in item order.
#include <kosmos/distributed/distributed.hpp>
#include <kosmos/nbody/checkpoint.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace {
using kosmos::distributed::IndexRange;

int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
int size_of(MPI_Comm comm) {
  int s = 1;
  MPI_Comm_size(comm, &s);
  return s;
}

TEST(Partition, BlocksCoverTheRangeInOrderWithSizesWithinOne) {
  for (std::int64_t n : {0, 1, 7, 64, 1001})
    for (int parts : {1, 2, 3, 5, 16}) {
      std::int64_t next = 0, smallest = n, largest = 0;
      for (int p = 0; p < parts; ++p) {
        const IndexRange r = kosmos::distributed::block_range(n, parts, p);
        EXPECT_EQ(r.begin, next) << "n " << n << " parts " << parts << " part " << p;
        next = r.end;
        smallest = std::min(smallest, r.size());
        largest = std::max(largest, r.size());
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(largest - smallest, 1);
    }
  EXPECT_THROW(kosmos::distributed::block_range(10, 2, 2), kosmos::invalid_input);
}

// Blocks of whole chunks: contiguous, covering [0, n), starting on a chunk boundary, chunk counts
// within one of each other.
TEST(Partition, ChunkAlignedBlocksKeepChunksWhole) {
  for (std::int64_t n : {0, 1, 10, 23, 1001})
    for (std::int64_t chunk : {1, 3, 4, 64, 2000})
      for (int parts : {1, 2, 3, 7}) {
        std::int64_t next = 0, fewest = n, most = 0;
        for (int p = 0; p < parts; ++p) {
          const IndexRange r = kosmos::distributed::chunk_aligned_block(n, chunk, parts, p);
          SCOPED_TRACE("n " + std::to_string(n) + " chunk " + std::to_string(chunk) + " parts " +
                       std::to_string(parts) + " part " + std::to_string(p));
          EXPECT_EQ(r.begin, next);
          EXPECT_TRUE(r.begin % chunk == 0 || r.begin == n);
          const std::int64_t chunks = (r.size() + chunk - 1) / chunk;
          fewest = std::min(fewest, chunks);
          most = std::max(most, chunks);
          next = r.end;
        }
        EXPECT_EQ(next, n);
        EXPECT_LE(most - fewest, 1);
      }
  EXPECT_EQ(kosmos::distributed::chunk_aligned_block(23, 4, 2, 1), (IndexRange{12, 23}));
  EXPECT_THROW(kosmos::distributed::chunk_aligned_block(10, 0, 2, 0), kosmos::invalid_input);
}

TEST(Partition, PlanChunksAndStaticShare) {
  kosmos::distributed::Schedule s;
  s.chunk = 3;
  s.static_fraction = 0.5;
  const kosmos::distributed::ChunkPlan plan(10, 2, s);
  EXPECT_EQ(plan.chunks(), 4);  // 3 3 3 1
  EXPECT_EQ(plan.static_per_rank(), 1);
  EXPECT_EQ(plan.chunk_range(3), (IndexRange{9, 10}));
  s.chunk = 0;  // automatic: chunks_per_rank x ranks chunks
  EXPECT_EQ(kosmos::distributed::ChunkPlan(100, 3, s).chunk(), 9);  // ceil(100 / 12)
  s.static_fraction = 1.5;
  EXPECT_THROW(kosmos::distributed::ChunkPlan(10, 2, s), kosmos::invalid_input);
}

TEST(Distributed, NodeLocalRankOnOneNode) {
  EXPECT_EQ(kosmos::distributed::node_local_rank(MPI_COMM_WORLD), rank_of(MPI_COMM_WORLD));
  EXPECT_EQ(kosmos::distributed::node_local_size(MPI_COMM_WORLD), size_of(MPI_COMM_WORLD));
  EXPECT_GE(kosmos::distributed::device_id(MPI_COMM_WORLD), 0);
}

// Rows of item i: (i, 1.5 i, -i^2) whichever rank computed them; rank 0 works slowly, so the
// others draw more of the queue.
TEST(Distributed, QueueHandsOutEveryChunkOnceAndGatherRestoresItemOrder) {
  const std::int64_t n = 103;
  for (double static_fraction : {0.0, 0.5, 1.0}) {
    kosmos::distributed::Schedule s;
    s.chunk = 4;
    s.static_fraction = static_fraction;
    std::vector<IndexRange> done;
    std::vector<double> rows;
    {
      kosmos::distributed::ChunkQueue queue(MPI_COMM_WORLD, n, s);
      for (IndexRange r; queue.next(r);) {
        if (rank_of(MPI_COMM_WORLD) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        for (std::int64_t i = r.begin; i < r.end; ++i)
          for (double v : {double(i), 1.5 * double(i), -double(i) * double(i)}) rows.push_back(v);
        done.push_back(r);
      }
    }
    const auto all = kosmos::distributed::gather_rows(MPI_COMM_WORLD, done, rows, 3, n, 0);
    if (rank_of(MPI_COMM_WORLD) != 0) {
      EXPECT_TRUE(all.empty());
      continue;
    }
    ASSERT_EQ(all.size(), std::size_t(3 * n));
    for (std::int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(all[std::size_t(3 * i)], double(i)) << "static fraction " << static_fraction;
      EXPECT_EQ(all[std::size_t(3 * i + 1)], 1.5 * double(i));
      EXPECT_EQ(all[std::size_t(3 * i + 2)], -double(i) * double(i));
    }
  }
}

TEST(Distributed, GatherStringsOfDifferentLengths) {
  const std::int64_t n = 11;
  const int size = size_of(MPI_COMM_WORLD), rank = rank_of(MPI_COMM_WORLD);
  // Blocks in reverse rank order: the gather must order by item, not by rank.
  const IndexRange mine = kosmos::distributed::block_range(n, size, size - 1 - rank);
  std::vector<std::string> items;
  for (std::int64_t i = mine.begin; i < mine.end; ++i)
    items.push_back(std::string(std::size_t(i % 4), char('a' + i)));
  const auto all = kosmos::distributed::gather_strings(MPI_COMM_WORLD, {mine}, items, n, 0);
  if (rank != 0) return;
  ASSERT_EQ(all.size(), std::size_t(n));
  for (std::int64_t i = 0; i < n; ++i)
    EXPECT_EQ(all[std::size_t(i)], std::string(std::size_t(i % 4), char('a' + i)));
}

// Each rank's pieces (chunks of 3 items of its block, sent in reverse order; item i's bytes: i % 7
// + 1 copies of char('a' + i % 26)) reach rank 0 in item order, rank 0's own excepted.
TEST(Distributed, PiecesReachRootInItemOrder) {
  const std::int64_t n = 29;
  const int size = size_of(MPI_COMM_WORLD), rank = rank_of(MPI_COMM_WORLD);
  auto bytes_of = [](std::int64_t begin, std::int64_t end) {
    std::vector<char> b;
    for (std::int64_t i = begin; i < end; ++i)
      b.insert(b.end(), std::size_t(i % 7 + 1), char('a' + i % 26));
    return b;
  };
  const IndexRange mine = kosmos::distributed::block_range(n, size, rank);
  std::vector<kosmos::distributed::Piece> pieces;
  for (std::int64_t b = mine.begin; b < mine.end; b += 3) {
    const std::int64_t e = std::min(mine.end, b + 3);
    pieces.insert(pieces.begin(), {{b, e}, bytes_of(b, e)});
  }
  std::vector<IndexRange> received;
  kosmos::distributed::send_pieces_to_root(
      MPI_COMM_WORLD, pieces, 0, [&](const IndexRange& r, std::vector<char> bytes) {
        EXPECT_EQ(bytes, bytes_of(r.begin, r.end)) << "[" << r.begin << ", " << r.end << ")";
        received.push_back(r);
      });
  if (rank != 0) {
    EXPECT_TRUE(received.empty());
    return;
  }
  std::int64_t next = kosmos::distributed::block_range(n, size, 0).end;  // after root's own
  for (const auto& r : received) {
    EXPECT_EQ(r.begin, next);
    next = r.end;
  }
  EXPECT_EQ(next, size > 1 ? n : kosmos::distributed::block_range(n, size, 0).end);
}

TEST(Distributed, RowsThatDoNotMatchTheRangesAreRefused) {
  const std::vector<IndexRange> done = {{0, 2}};
  EXPECT_THROW(
      kosmos::distributed::gather_rows(MPI_COMM_WORLD, done, std::vector<double>(3), 2, 2, 0),
      kosmos::invalid_input);
}

// Rank r has integrated systems r and r + ranks (moved by 1 + index in x, at time index + 1/2,
// 10 x index steps, carried state {index, 7}); the last system is in no part. Read back on every
// rank: each system from its part, the last one as it started with a fresh state (no steps, no
// carried state); after a new start of another run the old parts are ignored.
TEST(DistributedCheckpoint, PartsOfEveryRankComeBackWhole) {
  using namespace kosmos::nbody;
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int rank = rank_of(comm), ranks = size_of(comm), n = 2 * ranks + 1;
  const std::string path = "parts_np" + std::to_string(ranks) + ".ckpt";
  const HostEnsemble start = generate_planetary_ensemble(n, 3, 1e-3, 0.4, 5);
  RunState start_state;  // nothing integrated yet: the reference energies only
  for (int s = 0; s < n; ++s) start_state.reference_energy.push_back(-1.0 - s);
  if (rank == 0)
    write_checkpoint_start(path, Checkpoint{start, start_state, {{"destination", "3"}}}, ranks,
                           "a");
  MPI_Barrier(comm);
  const std::vector<int> index = {rank, rank + ranks};
  const HostEnsemble mine(2, 3);
  RunState state;
  for (int k = 0; k < 2; ++k) {
    const int g = index[std::size_t(k)];
    copy_system(start, g, mine, k);
    mine.x(k, 1, 0) += 1 + g;
    mine.time(k) = g + 0.5;
    state.iterations.push_back(10 * g);
    state.reference_energy.push_back(-1.0 - g);
    state.carried.insert(state.carried.end(), {double(g), 7.0});
  }
  write_checkpoint_part(path, rank, "a", mine, index, state);
  MPI_Barrier(comm);
  const Checkpoint whole = read_checkpoint(path, {"destination"});
  ASSERT_EQ(whole.ensemble.n_systems(), n);
  EXPECT_EQ(whole.settings.at("destination"), "3");
  ASSERT_EQ(whole.state.iterations.size(), std::size_t(n));
  ASSERT_EQ(whole.state.carried.size(), std::size_t(2 * n));
  for (int s = 0; s < n; ++s) {
    const bool integrated = s < n - 1;
    EXPECT_EQ(whole.ensemble.x(s, 1, 0), start.x(s, 1, 0) + (integrated ? 1 + s : 0)) << s;
    EXPECT_EQ(whole.ensemble.x(s, 2, 1), start.x(s, 2, 1)) << s;
    EXPECT_EQ(whole.ensemble.time(s), integrated ? s + 0.5 : start.time(s)) << s;
    EXPECT_EQ(whole.state.iterations[std::size_t(s)], integrated ? 10 * s : 0) << s;
    EXPECT_EQ(whole.state.reference_energy[std::size_t(s)], -1.0 - s) << s;
    EXPECT_EQ(whole.state.carried[std::size_t(2 * s)], integrated ? s : 0) << s;
    EXPECT_EQ(whole.state.carried[std::size_t(2 * s + 1)], integrated ? 7 : 0) << s;
  }
  MPI_Barrier(comm);  // every rank has read it
  if (rank == 0)
    write_checkpoint_start(path, Checkpoint{start, start_state, {{"destination", "3"}}}, ranks,
                           "b");
  MPI_Barrier(comm);
  const Checkpoint restarted = read_checkpoint(path);
  EXPECT_TRUE(restarted.state.iterations.empty());
  for (int s = 0; s < n; ++s) EXPECT_EQ(restarted.ensemble.x(s, 1, 0), start.x(s, 1, 0)) << s;
  MPI_Barrier(comm);
  std::remove(checkpoint_part_path(path, rank).c_str());
  if (rank == 0) std::remove(path.c_str());
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  MPI_Finalize();
  return status;
}
