// Stages 2-4 for cells that live in host memory: the cells go through the device in chunks, each
// chunk's copy in, kernels and copy out queued on one of several execution-space instances, so
// that the transfers of one chunk overlap the kernels of the others (the paper's GPU column counts
// the transfers). Host arrays are row-major (one cell per row, as in the files) and should be in
// pinned memory (HostCells allocates them there) for asynchronous copies at full bus speed.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/dust/equilibrium.hpp>

#include <KokkosKernels_config.h>
#include <KokkosBlas3_gemm.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace kosmos {
namespace dust {

// Cells, heating, temperatures, statuses and SEDs in host memory, one row per cell. Without
// `with_intensity` the intensities get no rows (cells generated on the device).
template <class T, class MemorySpace = kosmos::pinned_host_space>
struct HostCells {
  using matrix = Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>;
  matrix intensity;                                              // (C, L), W m^-2 m^-1 sr^-1
  Kokkos::View<T*, MemorySpace> dust_mass;                       // (C)
  matrix heating;                                                // (C, S), L_h in W sr^-1 per grain
  matrix temperature;                                            // (C, S), K
  Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace> status;  // (C, S), TemperatureStatus
  matrix sed;                                                    // (C, L), W m^-1 sr^-1

  // Which arrays get rows: the intensities (inputs), the heating ... SEDs (results), or both;
  // every part has the dust masses.
  enum Parts { inputs = 1, results = 2, both = 3 };

  HostCells() = default;
  HostCells(std::int64_t cells, int wavelengths, int species, Parts parts = both)
      : intensity(alloc("kosmos::dust::host_intensity"), parts & inputs ? cells : 0, wavelengths),
        dust_mass(alloc("kosmos::dust::host_dust_mass"), cells),
        heating(alloc("kosmos::dust::host_heating"), parts & results ? cells : 0, species),
        temperature(alloc("kosmos::dust::host_temperature"), parts & results ? cells : 0, species),
        status(alloc("kosmos::dust::host_status"), parts & results ? cells : 0, species),
        sed(alloc("kosmos::dust::host_sed"), parts & results ? cells : 0, wavelengths) {}
  std::int64_t cells() const { return std::int64_t(dust_mass.extent(0)); }

 private:
  static auto alloc(const char* label) {
    return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label));
  }
};

struct PipelineOptions {
  std::int64_t chunk_cells = 16384;  // cells per chunk (the last one may be shorter)
  int instances = 3;                 // execution-space instances (streams) the chunks rotate over
  // Chunk slots of a ring `out` (ring_rows() = ring_chunks x chunk_cells; 0: instances). Slots
  // beyond the instances keep a chunk's rows valid while on_chunk's consumer (e.g. a writer
  // thread) still reads them: see EmissionPipeline::run.
  int ring_chunks = 0;

  // Rows of a HostCells that holds only the chunks in flight.
  std::int64_t ring_rows() const {
    return std::int64_t(ring_chunks > 0 ? ring_chunks : instances) * chunk_cells;
  }
};

namespace Impl {
// c = a^T b on `space`, all LayoutLeft: a chunk's heating from its row-major intensities (see
// EmissionPipeline::run). Generic: KokkosBlas::gemm on the default instance (Kokkos Kernels 3.4
// takes no instance), ordered by fences. The CUDA specialization runs cuBLAS on the instance's
// stream.
template <class T, class ExecSpace>
struct InstanceGemm {
  explicit InstanceGemm(const ExecSpace&) {}
  template <class A, class B, class C>
  void operator()(const ExecSpace& space, const A& a, const B& b, const C& c) const {
    space.fence();
    KokkosBlas::gemm("T", "N", T(1), a, b, T(0), c);
    ExecSpace().fence();
  }
};

// Layout of the pipeline's results on the device. Row-major chunks, as in the files and host
// arrays, are coalesced on a host backend's threads (a thread per cell walks its own row) and need
// no extra pass; on a GPU the stage 3-4 kernels put consecutive cells on consecutive threads, so
// row-major temperatures and SEDs would be read and written with a cell-sized stride (the H100
// pipeline ran its kernels at half the device-resident speed): there the results are LayoutLeft,
// as in the device-resident API, and transposed to rows on the device before the copy out.
template <class ExecSpace>
using pipeline_layout_t = std::conditional_t<kosmos::Impl::is_host_space<ExecSpace>(),
                                             Kokkos::LayoutRight, Kokkos::LayoutLeft>;

// rows(i, j) = columns(i, j) for a LayoutLeft `columns` and a LayoutRight `rows` of the same
// extents: one team per 32 x 32 tile, read down the columns into team scratch and written along
// the rows, so that consecutive threads touch consecutive elements on both sides.
template <class ExecSpace, class Columns, class Rows>
void columns_to_rows(const ExecSpace& space, const Columns& columns, const Rows& rows) {
  static_assert(std::is_same<typename Columns::array_layout, Kokkos::LayoutLeft>::value &&
                    std::is_same<typename Rows::array_layout, Kokkos::LayoutRight>::value,
                "kosmos::dust::Impl::columns_to_rows: LayoutLeft in, LayoutRight out");
  static_assert(
      std::is_same<typename Columns::non_const_value_type, typename Rows::value_type>::value,
      "kosmos::dust::Impl::columns_to_rows: the same value type in and out");
  using value = typename Rows::value_type;
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  using tile_view = Kokkos::View<value*, typename ExecSpace::scratch_memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  constexpr std::int64_t edge = 32, pitch = edge + 1;  // pitch: no shared-memory bank conflicts
  const std::int64_t n = std::int64_t(rows.extent(0)), m = std::int64_t(rows.extent(1));
  kosmos::Impl::require(
      std::int64_t(columns.extent(0)) == n && std::int64_t(columns.extent(1)) == m,
      "kosmos::dust::Impl::columns_to_rows", "extents (", columns.extent(0), ", ",
      columns.extent(1), ") in, (", n, ", ", m, ") out");
  if (n == 0 || m == 0) return;
  const std::int64_t tiles_i = (n + edge - 1) / edge, tiles_j = (m + edge - 1) / edge;
  const int team_size = kosmos::Impl::is_host_space<ExecSpace>() ? 1 : 256;
  Kokkos::parallel_for(
      "kosmos::dust::pipeline_columns_to_rows",
      kosmos::Impl::non_blocking_policy(policy(space, int(tiles_i * tiles_j), team_size))
          .set_scratch_size(0, Kokkos::PerTeam(tile_view::shmem_size(edge * pitch))),
      KOKKOS_LAMBDA(const member& team) {
        const std::int64_t i0 = team.league_rank() % tiles_i * edge,
                           j0 = team.league_rank() / tiles_i * edge;
        const tile_view tile(team.team_scratch(0), edge * pitch);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, int(edge * edge)), [&](const int e) {
          const std::int64_t i = e % edge, j = e / edge;  // down a column
          if (i0 + i < n && j0 + j < m) tile(j * pitch + i) = columns(i0 + i, j0 + j);
        });
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, int(edge * edge)), [&](const int e) {
          const std::int64_t i = e / edge, j = e % edge;  // along a row
          if (i0 + i < n && j0 + j < m) rows(i0 + i, j0 + j) = tile(j * pitch + i);
        });
      });
}
}  // namespace Impl
}  // namespace dust
}  // namespace kosmos

// cuBLAS is linked where Kokkos Kernels uses it.
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA) && \
    defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS)
#include <kosmos/dust/heating_cuda.hpp>
#endif

namespace kosmos {
namespace dust {

// Runs stages 2-4 (with validate_cells' checks per chunk) on n_cells cells. fill_chunk(instance,
// first_cell, input) queues the filling of one chunk's device input on `instance` (intensity:
// row-major (n, L), dust_mass: (n)); copy_cells_in(host) returns one that copies from HostCells.
// Each chunk's dust masses, heating, temperatures, statuses and SEDs land in `out`: at row
// first_cell when `out` has a row per cell, or, when it has only ring_rows() rows, in ring slot
// k % ring_chunks for the k-th chunk: its rows then stay valid until on_chunk has returned for
// ring_chunks - instances later chunks (with the default ring_chunks = instances: until its own
// on_chunk returns).
// on_chunk(first_cell, n, first_row) runs on the host while the device works on later chunks.
// Nothing blocks the host while it queues a chunk: the checks of the cells run on the device, and
// an invalid cell throws validate_cells' error (naming the cell, wavelength and value) when its
// chunk is finished, before its on_chunk.
// The overload with chunk_step(instance, chunk) lets the caller queue more device work on each
// chunk after its SED and before the copy out (e.g. add_stochastic_emission); chunk.instance
// (0..instances - 1) tells which of the chunks in flight it is, for per-instance scratch.
// ResultLayout: the layout of a chunk's results on the device (Chunk::heating ... status); the
// default suits the space (see Impl::pipeline_layout_t), LayoutLeft results are transposed to
// rows on the device before the copy out.
// run_range(first_cell, n_cells, ...) runs cells [first_cell, first_cell + n_cells) of a larger
// set (e.g. one rank's block): chunks start at first_cell, fill_chunk, on_chunk, Chunk::first_cell
// and error messages name cells by that numbering, rows in `out` count from first_cell (row 0).
template <class T, class ExecSpace, class ResultLayout = Impl::pipeline_layout_t<ExecSpace>>
class EmissionPipeline {
 public:
  using device_type = Kokkos::Device<ExecSpace, typename ExecSpace::memory_space>;
  using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using rows = Kokkos::View<T**, Kokkos::LayoutRight, device_type, unmanaged>;
  using column = Kokkos::View<T*, device_type, unmanaged>;
  using results = Kokkos::View<T**, ResultLayout, device_type, unmanaged>;
  using status_results = Kokkos::View<int**, ResultLayout, device_type, unmanaged>;
  static_assert(std::is_same<ResultLayout, Kokkos::LayoutRight>::value ||
                    std::is_same<ResultLayout, Kokkos::LayoutLeft>::value,
                "kosmos::dust::EmissionPipeline: ResultLayout must be LayoutRight or LayoutLeft");

  EmissionPipeline(const ExecSpace& space, const GrainModel<T, ExecSpace>& grains,
                   const PipelineOptions& options = PipelineOptions())
      : g_(grains), options_(options), instances_(space, options.instances) {
    kosmos::Impl::require(options.chunk_cells >= 1 && options.instances >= 1,
                          "kosmos::dust::EmissionPipeline", "chunk_cells = ", options.chunk_cells,
                          " and instances = ", options.instances, " must be >= 1");
    kosmos::Impl::require(options.ring_chunks == 0 || options.ring_chunks >= options.instances,
                          "kosmos::dust::EmissionPipeline", "ring_chunks = ", options.ring_chunks,
                          " must be 0 or >= instances = ", options.instances);
    if (options_.ring_chunks == 0) options_.ring_chunks = options.instances;
    const std::int64_t nl = g_.wavelengths(), ns = g_.species(), n = options.chunk_cells;
    const std::int64_t staging = transposes ? 1 : 0;  // row copies of the results: see run()
    for (int i = 0; i < instances_.size(); ++i) {
      buffers_.emplace_back(instances_[i], n * ((2 + staging) * nl + (2 + 2 * staging) * ns + 1),
                            n * ns * (1 + staging));
      gemm_.emplace_back(instances_[i]);
    }
  }

  // Work still queued (after an exception in run) must not outlive the buffers.
  ~EmissionPipeline() {
    for (int i = 0; i < instances_.size(); ++i) instances_[i].fence();
  }
  EmissionPipeline(const EmissionPipeline&) = delete;
  EmissionPipeline& operator=(const EmissionPipeline&) = delete;

  // Rows of a HostCells that holds only the chunks in flight.
  std::int64_t ring_rows() const { return options_.ring_rows(); }

  // Seconds the last run spent waiting on the host for chunks to finish (fences), i.e. the host
  // had nothing left to queue; the rest of its wall time the host was queuing or in on_chunk.
  double device_wait_seconds() const { return device_wait_seconds_; }

  // One chunk's device input: intensity (n, L) row-major and dust_mass (n).
  struct Input {
    rows intensity;
    column dust_mass;
  };
  // One chunk on the device after stage 4: its input and results (n cells each).
  struct Chunk {
    std::int64_t first_cell, first_row;  // first_row: where its rows land in `out`
    int instance;
    Input in;
    results heating, temperature, sed;
    status_results status;
  };

  template <class FillChunk, class HostMemory, class OnChunk>
  void run(std::int64_t n_cells, const FillChunk& fill_chunk, const HostCells<T, HostMemory>& out,
           const SolverOptions& solver, const OnChunk& on_chunk) {
    run(n_cells, fill_chunk, out, solver, [](const ExecSpace&, const Chunk&) {}, on_chunk);
  }

  template <class FillChunk, class HostMemory, class ChunkStep, class OnChunk>
  void run(std::int64_t n_cells, const FillChunk& fill_chunk, const HostCells<T, HostMemory>& out,
           const SolverOptions& solver, const ChunkStep& chunk_step, const OnChunk& on_chunk) {
    run_range(0, n_cells, fill_chunk, out, solver, chunk_step, on_chunk);
  }

  template <class FillChunk, class HostMemory, class ChunkStep, class OnChunk>
  void run_range(std::int64_t first_cell, std::int64_t n_cells, const FillChunk& fill_chunk,
                 const HostCells<T, HostMemory>& out, const SolverOptions& solver,
                 const ChunkStep& chunk_step, const OnChunk& on_chunk) {
    kosmos::Impl::require(first_cell >= 0 && n_cells >= 0,
                          "kosmos::dust::EmissionPipeline::run_range", "first_cell = ", first_cell,
                          " and n_cells = ", n_cells, " must be >= 0");
    const std::int64_t nc = n_cells, chunk = options_.chunk_cells;
    const int nl = g_.wavelengths(), ns = g_.species(), ni = instances_.size();
    const bool ring = out.cells() < nc;
    kosmos::Impl::require(!ring || out.cells() >= ring_rows(), "kosmos::dust::EmissionPipeline::run", "out has ",
                          out.cells(), " rows: need one per cell (", nc, ") or ring_rows() = ", ring_rows());
    kosmos::Impl::require(out.sed.extent(0) == out.dust_mass.extent(0), "kosmos::dust::EmissionPipeline::run",
                          "out has no result arrays (HostCells::inputs)");
    using clock = std::chrono::steady_clock;
    device_wait_seconds_ = 0;
    std::vector<std::int64_t> pending(std::size_t(ni), -1);  // chunk number in flight per instance
    auto first_row = [&](std::int64_t k) {
      return ring ? k % options_.ring_chunks * chunk : k * chunk;
    };
    auto finish = [&](int i) {
      const std::int64_t k = pending[std::size_t(i)];
      if (k < 0) return;
      pending[std::size_t(i)] = -1;
      const auto t0 = clock::now();
      instances_[i].fence();
      device_wait_seconds_ += std::chrono::duration<double>(clock::now() - t0).count();
      const std::int64_t c0 = k * chunk, n = std::min(chunk, nc - c0);
      const Buffers& b = buffers_[std::size_t(i)];
      if (b.first_invalid_host() < n * (nl + 1)) {
        const Input in = input(b, n);
        throw invalid_input(Impl::invalid_cell_message("kosmos::dust::validate_cells", in.intensity,
                                                       in.dust_mass, b.first_invalid_host(),
                                                       first_cell + c0));
      }
      on_chunk(first_cell + c0, n, first_row(k));
    };
    for (std::int64_t c0 = 0, k = 0; c0 < nc; c0 += chunk, ++k) {
      const int i = int(k % ni);
      finish(i);  // the instance's buffers are free again
      const auto& space = instances_[i];
      const std::int64_t n = std::min(chunk, nc - c0);
      Buffers& b = buffers_[std::size_t(i)];
      // values: intensity (n, L), dust mass, SED (n, L), temperature and heating (n, S), and
      // when transposing their row copies; status: statuses (n, S) and their row copy.
      T* p = b.values.data();
      int* q = b.status.data();
      const Input in = input(b, n);
      const results sed(p + n * (nl + 1), n, nl), temperature(p + n * (2 * nl + 1), n, ns),
          heating(p + n * (2 * nl + 1 + ns), n, ns);
      const status_results status(q, n, ns);
      const std::int64_t m = transposes ? n : 0;  // rows of the row copies
      p += n * (2 * nl + 1 + 2 * ns);
      const rows sed_rows(p, m, nl), temperature_rows(p + m * nl, m, ns),
          heating_rows(p + m * (nl + ns), m, ns);
      const Kokkos::View<int**, Kokkos::LayoutRight, device_type, unmanaged> status_rows(q + n * ns,
                                                                                         m, ns);
      fill_chunk(space, first_cell + c0, in);
      Impl::find_invalid_cell(
          space, in.intensity, in.dust_mass,
          Kokkos::Min<std::int64_t, typename ExecSpace::memory_space>(b.first_invalid));
      // Heating = I sigma_dlambda, with the row-major I (n, L) read as the LayoutLeft I^T (L, n):
      // LayoutLeft H (n, S) = (I^T)^T sigma_dlambda, or row-major H, i.e. the LayoutLeft
      // H^T (S, n) = sigma_dlambda^T I^T.
      using left = Kokkos::View<T**, Kokkos::LayoutLeft, device_type, unmanaged>;
      const left intensity_t(in.intensity.data(), nl, n);
      if constexpr (transposes)
        gemm_[std::size_t(i)](space, intensity_t, g_.sigma_dlambda, heating);
      else
        gemm_[std::size_t(i)](space, g_.sigma_dlambda, intensity_t, left(heating.data(), ns, n));
      equilibrium_temperatures(space, g_, heating, temperature, status, solver);
      emission_sed(space, g_, temperature, in.dust_mass, sed, solver);
      chunk_step(space,
                 Chunk{first_cell + c0, first_row(k), i, in, heating, temperature, sed, status});
      const Kokkos::pair<std::int64_t, std::int64_t> range(first_row(k), first_row(k) + n);
      auto copy_out = [&](const auto& host, const auto& result, const auto& result_rows) {
        if constexpr (transposes) {
          Impl::columns_to_rows(space, result, result_rows);
          Kokkos::deep_copy(space, Kokkos::subview(host, range, Kokkos::ALL), result_rows);
        } else {
          Kokkos::deep_copy(space, Kokkos::subview(host, range, Kokkos::ALL), result);
        }
      };
      Kokkos::deep_copy(space, b.first_invalid_host, b.first_invalid);
      Kokkos::deep_copy(space, Kokkos::subview(out.dust_mass, range), in.dust_mass);
      copy_out(out.sed, sed, sed_rows);
      copy_out(out.temperature, temperature, temperature_rows);
      copy_out(out.heating, heating, heating_rows);
      copy_out(out.status, status, status_rows);
      pending[std::size_t(i)] = k;
    }
    for (std::int64_t k = 0; k < ni; ++k) {
      // Finish in submission order: the oldest chunk first.
      const std::int64_t chunks = (nc + chunk - 1) / chunk;
      finish(int((chunks + k) % ni));
    }
  }

  template <class HostMemory>
  void run(const HostCells<T, HostMemory>& cells, const SolverOptions& solver) {
    run(cells.cells(), copy_cells_in(cells), cells, solver, [](std::int64_t, std::int64_t, std::int64_t) {});
  }

  // fill_chunk for cells already in host memory.
  template <class HostMemory>
  static auto copy_cells_in(const HostCells<T, HostMemory>& cells) {
    return [cells](const ExecSpace& space, std::int64_t c0, const Input& in) {
      const Kokkos::pair<std::int64_t, std::int64_t> range(
          c0, c0 + std::int64_t(in.dust_mass.extent(0)));
      Kokkos::deep_copy(space, in.intensity, Kokkos::subview(cells.intensity, range, Kokkos::ALL));
      Kokkos::deep_copy(space, in.dust_mass, Kokkos::subview(cells.dust_mass, range));
    };
  }

 private:
  static constexpr bool transposes = !std::is_same<ResultLayout, Kokkos::LayoutRight>::value;
  struct Buffers {
    Kokkos::View<T*, device_type> values;  // intensity, dust mass, SED, temperature, heating
    Kokkos::View<int*, device_type> status;
    // find_invalid_cell's result for the chunk, and its copy that comes back with the results.
    Kokkos::View<std::int64_t, typename ExecSpace::memory_space> first_invalid;
    Kokkos::View<std::int64_t, kosmos::pinned_host_space> first_invalid_host;
    Buffers(const ExecSpace& space, std::int64_t n_values, std::int64_t n_status)
        : values(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                    "kosmos::dust::pipeline_values"),
                 n_values),
          status(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                    "kosmos::dust::pipeline_status"),
                 n_status),
          first_invalid(Kokkos::view_alloc(space, "kosmos::dust::pipeline_first_invalid")),
          first_invalid_host("kosmos::dust::pipeline_first_invalid_host") {}
  };
  // The input of a chunk of n cells in b (the start of its values; see run() for the rest).
  Input input(const Buffers& b, std::int64_t n) const {
    T* p = b.values.data();
    return Input{rows(p, n, g_.wavelengths()), column(p + n * g_.wavelengths(), n)};
  }
  GrainModel<T, ExecSpace> g_;
  PipelineOptions options_;
  kosmos::SpaceInstances<ExecSpace> instances_;
  std::vector<Buffers> buffers_;
  std::vector<Impl::InstanceGemm<T, ExecSpace>> gemm_;
  double device_wait_seconds_ = 0;
};
}  // namespace dust
}  // namespace kosmos
