// kosmos::distributed under mpiexec (1, 2 and 3 ranks, one node): partitions cover every item
// once, the chunk queue hands out every chunk once, gathers put rows and strings in item order.
// References are computed here independently (closed forms of the item index).
#include <kosmos/distributed/distributed.hpp>

#include <gtest/gtest.h>

#include <chrono>
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

TEST(Distributed, RowsThatDoNotMatchTheRangesAreRefused) {
  const std::vector<IndexRange> done = {{0, 2}};
  EXPECT_THROW(
      kosmos::distributed::gather_rows(MPI_COMM_WORLD, done, std::vector<double>(3), 2, 2, 0),
      kosmos::invalid_input);
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  MPI_Finalize();
  return status;
}
