// The ranks `kosmos` runs on. Started by an MPI launcher (mpirun, srun) in a build with
// KOSMOS_ENABLE_MPI, the tool runs one rank per process over MPI_COMM_WORLD, one GPU each; else
// (or without MPI) it is one rank. Commands split their items (systems, stars, cells, paths)
// with run_chunks (or chunk_block) and bring the results to rank 0 with gather_rows /
// gather_strings (or send_pieces_to_root); rank 0 prints and writes everything, so the outputs are
// those of a one-rank run.
#pragma once

#include <kosmos/distributed/partition.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kosmos {
namespace cli {

// For main(): MPI_Init when an MPI launcher started the process, the Kokkos device argument of
// this rank, standard output and error quiet except on rank 0; MPI_Finalize at the end.
class RankSession {
 public:
  RankSession(int& argc, char**& argv);
  ~RankSession();
  RankSession(const RankSession&) = delete;
  RankSession& operator=(const RankSession&) = delete;
  // Kokkos arguments this rank adds (its GPU from the node-local rank) unless the user chose one.
  std::vector<std::string> kokkos_arguments(const std::vector<std::string>& given) const;
  // A failed rank ends every rank (the others may wait for it in a collective call).
  [[noreturn]] void abort(int status) const;
  // The standard error stream of this rank, also on quiet ranks (for its own fatal errors).
  std::ostream& error_stream() const;
};

// This process's share of its node's CPUs when an MPI launcher started several ranks on the node
// (OpenMPI's, MPICH's or PMIx's node-local rank and size in the environment) and left each free
// to use every CPU: those CPUs split evenly, in rank order. Empty otherwise (no launcher, one rank
// on the node, or ranks the launcher bound to CPUs of their own). Reads no MPI: for before
// MPI_Init and the OpenMP runtime.
std::vector<int> node_cpu_share();

int rank();
int ranks();
inline bool is_root() {
  return rank() == 0;
}

// Calls `work` for each chunk of [0, n) this rank runs (kosmos::distributed::ChunkQueue; one
// rank: one chunk [0, n)) and returns those chunks in the order they ran.
std::vector<distributed::IndexRange> run_chunks(
    std::int64_t n, const distributed::Schedule& schedule,
    const std::function<void(const distributed::IndexRange&)>& work);

// On rank 0 (on every rank with on_every_rank): all items' rows in item order (`rows`: this
// rank's, `width` doubles per item, for `done` in order); on other ranks: empty. One rank: `rows`.
std::vector<double> gather_rows(const std::vector<distributed::IndexRange>& done,
                                const std::vector<double>& rows, std::size_t width, std::int64_t n,
                                bool on_every_rank = false);
std::vector<std::string> gather_strings(const std::vector<distributed::IndexRange>& done,
                                        const std::vector<std::string>& items, std::int64_t n);
// This rank's block of [0, n) in whole chunks of `chunk` items (distributed::chunk_aligned_block;
// one rank: [0, n)), for items of even cost that a pipeline cuts into chunks of its own.
distributed::IndexRange chunk_block(std::int64_t n, std::int64_t chunk);
// Rank 0 gets the other ranks' pieces one at a time in item order and passes each to `receive`
// (distributed::send_pieces_to_root); other ranks send theirs. One rank: nothing happens.
void send_pieces_to_root(
    const std::vector<distributed::Piece>& pieces,
    const std::function<void(const distributed::IndexRange&, std::vector<char>)>& receive);
// Returns when every rank has called it.
void synchronize_ranks();
// The sum over all ranks, on every rank.
long long sum_over_ranks(long long value);

// The --mpi-chunk option of the commands that split their items: 0 picks the schedule's default.
distributed::Schedule schedule_from(long long chunk, int chunks_per_rank);

}  // namespace cli
}  // namespace kosmos
