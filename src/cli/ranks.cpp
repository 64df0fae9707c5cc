#include "ranks.hpp"

#include <kosmos/config.hpp>

#if KOSMOS_HAVE_MPI
#include <kosmos/distributed/distributed.hpp>
#endif

#include <Kokkos_Macros.hpp>  // KOKKOS_ENABLE_CUDA

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <streambuf>

#if defined(__linux__)
#include <sched.h>
#include <unistd.h>
#endif

namespace kosmos {
namespace cli {
namespace {
int this_rank = 0, rank_count = 1;
std::streambuf* saved_error = nullptr;

#if KOSMOS_HAVE_MPI
bool mpi_started = false;

// Swallows what quiet ranks print.
class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};
NullBuffer null_buffer;

// OpenMPI, MPICH / Slurm's PMI and PMIx set these in the processes they start.
bool started_by_mpi_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name)) return true;
  return false;
}
#endif
}  // namespace

std::vector<int> node_cpu_share() {
#if KOSMOS_HAVE_MPI && defined(__linux__)
  const auto number = [](std::initializer_list<const char*> names) {
    for (const char* name : names)
      if (const char* value = std::getenv(name)) return std::atoi(value);
    return -1;
  };
  const int local_rank =
      number({"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMIX_LOCAL_RANK"});
  const int local_size =
      number({"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMIX_LOCAL_SIZE"});
  if (local_size < 2 || local_rank < 0 || local_rank >= local_size) return {};
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return {};
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (long(cpus.size()) < online) return {};  // bound by the launcher: its set is the share
  const std::size_t share = std::max<std::size_t>(1, cpus.size() / std::size_t(local_size));
  const std::size_t first = std::min(cpus.size() - share, std::size_t(local_rank) * share);
  return std::vector<int>(cpus.begin() + std::ptrdiff_t(first),
                          cpus.begin() + std::ptrdiff_t(first + share));
#else
  return {};
#endif
}

RankSession::RankSession([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv) {
#if KOSMOS_HAVE_MPI
  if (!started_by_mpi_launcher()) return;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  mpi_started = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &this_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &rank_count);
  if (this_rank != 0) {
    std::cout.rdbuf(&null_buffer);
    saved_error = std::cerr.rdbuf(&null_buffer);
  }
#endif
}

RankSession::~RankSession() {
  if (saved_error) std::cerr.rdbuf(saved_error);
#if KOSMOS_HAVE_MPI
  if (mpi_started) MPI_Finalize();
#endif
}

std::vector<std::string> RankSession::kokkos_arguments(
    const std::vector<std::string>& given) const {
  std::vector<std::string> out;
#if KOSMOS_HAVE_MPI && defined(KOKKOS_ENABLE_CUDA)
  for (const auto& a : given)
    if (a.rfind("--kokkos-device", 0) == 0) return out;  // the user's choice
  // --kokkos-device-id: Kokkos 3.4 reads it too (and warns about the older --kokkos-device).
  if (mpi_started)
    out.push_back("--kokkos-device-id=" + std::to_string(distributed::device_id(MPI_COMM_WORLD)));
#else
  (void)given;
#endif
  return out;
}

void RankSession::abort(int status) const {
#if KOSMOS_HAVE_MPI
  if (mpi_started && rank_count > 1) MPI_Abort(MPI_COMM_WORLD, status);
#endif
  std::exit(status);
}

std::ostream& RankSession::error_stream() const {
  static std::ostream own(saved_error ? saved_error : std::cerr.rdbuf());
  return own;
}

int rank() {
  return this_rank;
}
int ranks() {
  return rank_count;
}

std::vector<distributed::IndexRange> run_chunks(
    std::int64_t n, [[maybe_unused]] const distributed::Schedule& schedule,
    const std::function<void(const distributed::IndexRange&)>& work) {
  std::vector<distributed::IndexRange> done;
  if (rank_count == 1) {
    done.push_back({0, n});
    if (n > 0) work(done.back());
    return done;
  }
#if KOSMOS_HAVE_MPI
  distributed::ChunkQueue queue(MPI_COMM_WORLD, n, schedule);
  for (distributed::IndexRange r; queue.next(r);) {
    work(r);
    done.push_back(r);
  }
#endif
  return done;
}

std::vector<double> gather_rows(const std::vector<distributed::IndexRange>& done,
                                const std::vector<double>& rows, std::size_t width, std::int64_t n,
                                bool on_every_rank) {
#if KOSMOS_HAVE_MPI
  if (rank_count > 1)
    return on_every_rank ? distributed::all_gather_rows(MPI_COMM_WORLD, done, rows, width, n)
                         : distributed::gather_rows(MPI_COMM_WORLD, done, rows, width, n, 0);
#else
  (void)done, (void)width, (void)n, (void)on_every_rank;
#endif
  return rows;
}

std::vector<std::string> gather_strings(const std::vector<distributed::IndexRange>& done,
                                        const std::vector<std::string>& items, std::int64_t n) {
#if KOSMOS_HAVE_MPI
  if (rank_count > 1) return distributed::gather_strings(MPI_COMM_WORLD, done, items, n, 0);
#else
  (void)done, (void)n;
#endif
  return items;
}

distributed::IndexRange chunk_block(std::int64_t n, std::int64_t chunk) {
  return distributed::chunk_aligned_block(n, chunk, rank_count, this_rank);
}

void send_pieces_to_root([[maybe_unused]] const std::vector<distributed::Piece>& pieces,
                         [[maybe_unused]] const std::function<void(const distributed::IndexRange&,
                                                                   std::vector<char>)>& receive) {
#if KOSMOS_HAVE_MPI
  if (rank_count > 1) distributed::send_pieces_to_root(MPI_COMM_WORLD, pieces, 0, receive);
#endif
}

void synchronize_ranks() {
#if KOSMOS_HAVE_MPI
  if (rank_count > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

long long sum_over_ranks(long long value) {
#if KOSMOS_HAVE_MPI
  if (rank_count > 1) {
    long long sum = 0;
    MPI_Allreduce(&value, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return sum;
  }
#endif
  return value;
}

distributed::Schedule schedule_from(long long chunk, int chunks_per_rank) {
  distributed::Schedule s;
  s.chunk = chunk;
  s.chunks_per_rank = chunks_per_rank;
  return s;
}

}  // namespace cli
}  // namespace kosmos
