// The dust emission engine for radiative-transfer codes: cells in host memory (or filled on the
// device chunk by chunk) stream through the device in chunks (EmissionPipeline: copies overlapping
// kernels on several execution-space instances), and each chunk's results come back as host rows
// with a summary reduced on the device, handed to a callback that may run on worker threads.
//
// Input per cell: the mean intensity J_lambda (W m^-2 m^-1 sr^-1) or the power the cell's dust
// absorbs in each wavelength bin (W, as a Monte Carlo code's absorption counters give it:
// A_{c,l} = 4 pi m_c kappa_l J_{c,l} dlambda_l with kappa_l = sum_s n_s sigma_{s,l}), and the dust
// mass m_c. Optional CMB heating: the CMB blackbody B(lambda, T_cmb) is added to J (as SKIRT does).
// Output per chunk: equilibrium temperatures and statuses per (cell, species), the emission SED
// L_lambda per cell (W m^-1 sr^-1; divide by m_c for the emissivity per unit dust mass), the
// absorbed power per grain L_h, and for the stochastically heated species their status and (on
// request) P(T) on their temperature bins.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/dust/grain_inputs.hpp>
#include <kosmos/dust/impl/chunk_summary.hpp>
#include <kosmos/dust/impl/ordered_workers.hpp>
#include <kosmos/dust/pipeline.hpp>
#include <kosmos/dust/planck.hpp>
#include <kosmos/dust/stochastic.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace kosmos {
namespace dust {

enum class CellInput {
  mean_intensity,  // J_lambda per cell, W m^-2 m^-1 sr^-1
  absorbed_power   // power absorbed by the cell's dust per wavelength bin, W
};

struct StreamOptions {
  PipelineOptions pipeline;  // chunk_cells, instances (ring_chunks: see EmissionStream::ring_rows)
  SolverOptions solver;
  CellInput input = CellInput::mean_intensity;
  // K; the CMB blackbody B(lambda, cmb_temperature) is added to every cell's mean intensity; 0:
  // none.
  double cmb_temperature = 2.725;
  // Threads that run on_rows (in chunk order; several at once when > 1); 0: the calling thread.
  int worker_threads = 0;
  // P(T) of the stochastically heated species in the rows (a second pass of the P(T) kernel).
  bool distributions = false;
  // K per species (empty: no check): converged temperatures above it get status_above_sublimation.
  std::vector<double> sublimation_temperature;
  // Called on the host after each chunk with the cells done so far and the run's cells.
  std::function<void(std::int64_t done, std::int64_t cells)> on_progress;
};

// Totals over a run, summed from the per-chunk device reductions.
struct StreamSummary {
  std::vector<std::int64_t> status_counts =
      std::vector<std::int64_t>(std::size_t(temperature_status_count), 0);  // TemperatureStatus
  std::vector<std::int64_t> stochastic_counts =
      std::vector<std::int64_t>(std::size_t(stochastic_invalid_heating) + 1, 0);
  // Over the heated grains (statuses other than no heating and invalid heating); min > max when
  // none.
  double min_temperature = std::numeric_limits<double>::infinity(), max_temperature = 0;
  double absorbed = 0;  // sum of m_c n_s L_h over the heated grains, W sr^-1 (the mass unit's)
  double emitted = 0;   // sum of L_lambda dlambda over the SEDs of chunks without overflow
  std::int64_t nonfinite_sed = 0;  // SED values that are not finite
  // Seconds: the host waiting for the device, reading the summaries, blocked on busy workers, and
  // the workers' time in on_rows (summed over the threads).
  double device_wait_seconds = 0, summary_seconds = 0, worker_blocked_seconds = 0,
         worker_busy_seconds = 0;
  int worker_threads = 0;
  // Each chunk's summary (chunk_width values), in chunk order: the totals above are their sums in
  // that order, so chunks of one run spread over several processes give the same totals
  // (sum_chunk_summaries).
  static constexpr std::size_t chunk_width = std::size_t(Impl::summary_size);
  std::vector<double> chunk_summaries;

  bool any_heated() const { return min_temperature <= max_temperature; }
  double emitted_over_absorbed() const { return absorbed > 0 ? emitted / absorbed : 0.0; }
};

// The totals of chunk summaries (StreamSummary::chunk_summaries, in chunk order), summed as
// EmissionStream::run sums them; the timings stay 0.
inline StreamSummary sum_chunk_summaries(const std::vector<double>& chunk_summaries) {
  constexpr std::size_t width = StreamSummary::chunk_width;
  kosmos::Impl::require(chunk_summaries.size() % width == 0, "kosmos::dust::sum_chunk_summaries",
                        chunk_summaries.size(), " values are not whole chunk summaries of ", width);
  StreamSummary s;
  for (std::size_t at = 0; at < chunk_summaries.size(); at += width) {
    const double* r = &chunk_summaries[at];
    for (std::size_t k = 0; k < s.status_counts.size(); ++k)
      s.status_counts[k] += std::int64_t(r[Impl::summary_status + int(k)]);
    for (std::size_t k = 0; k < s.stochastic_counts.size(); ++k)
      s.stochastic_counts[k] += std::int64_t(r[Impl::summary_stochastic_status + int(k)]);
    s.min_temperature = std::min(s.min_temperature, r[Impl::summary_t_min]);
    s.max_temperature = std::max(s.max_temperature, r[Impl::summary_t_max]);
    s.absorbed += r[Impl::summary_absorbed];
    s.nonfinite_sed += std::int64_t(r[Impl::summary_nonfinite_sed]);
    if (r[Impl::summary_nonfinite_sed] == 0) s.emitted += r[Impl::summary_emitted];
  }
  s.chunk_summaries = chunk_summaries;
  return s;
}

// One chunk's results in host memory (row-major, one row per cell), valid while on_rows runs.
template <class T>
struct StreamRows {
  template <class V>
  using host_view = Kokkos::View<V, Kokkos::LayoutRight, Kokkos::HostSpace,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  std::int64_t first_cell = 0, cells = 0;
  host_view<const T*> dust_mass;                     // (n)
  host_view<const T**> heating, temperature, sed;    // (n, S), (n, S), (n, L)
  host_view<const int**> status, stochastic_status;  // (n, S) TemperatureStatus, (n, Q)
  // (n, Q, M) when StreamOptions::distributions: P(T) and its bin temperatures (K); else empty.
  host_view<const double***> probability, bin_temperature;
};

// A chunk's rows as one string of bytes and back, to bring rows computed in one process to the
// process that writes them (`kosmos dust` over MPI ranks): the parts it writes of dust masses,
// temperatures, statuses, SEDs, stochastic statuses, P(T) with its bin temperatures (when the rows
// have them), and the cells' intensities (n x L, row-major, given apart from the rows).
template <class T>
class PackedRows {
 public:
  enum Part : unsigned {
    dust_mass = 1,
    temperature = 2,
    status = 4,
    sed = 8,
    stochastic_status = 16,
    distributions = 32,  // probability and bin_temperature
    intensity = 64,
    all = 127
  };

  PackedRows(const StreamRows<T>& rows, unsigned parts, const T* intensities = nullptr) {
    kosmos::Impl::require(parts <= all && (!(parts & intensity) || intensities),
                          "kosmos::dust::PackedRows", "parts ", parts,
                          " are not a set of Part values, or ask for intensities not given");
    header_ = {rows.first_cell,
               rows.cells,
               std::int64_t(rows.temperature.extent(1)),
               std::int64_t(rows.sed.extent(1)),
               std::int64_t(rows.stochastic_status.extent(1)),
               std::int64_t(rows.probability.extent(2)),
               std::int64_t(parts)};
    const Layout at = layout(header_);
    bytes_.resize(at.total);
    std::memcpy(bytes_.data(), header_.data(), sizeof(header_));
    auto put = [&](const Section& section, const void* data) {
      if (section.bytes > 0) std::memcpy(bytes_.data() + section.offset, data, section.bytes);
    };
    put(at.dust_mass, rows.dust_mass.data());
    put(at.temperature, rows.temperature.data());
    put(at.status, rows.status.data());
    put(at.sed, rows.sed.data());
    put(at.stochastic_status, rows.stochastic_status.data());
    put(at.probability, rows.probability.data());
    put(at.bin_temperature, rows.bin_temperature.data());
    put(at.intensity, intensities);
  }
  explicit PackedRows(std::vector<char> bytes) : bytes_(std::move(bytes)) {
    const char* where = "kosmos::dust::PackedRows";
    kosmos::Impl::require(bytes_.size() >= sizeof(header_), where, bytes_.size(),
                          " bytes hold no header");
    std::memcpy(header_.data(), bytes_.data(), sizeof(header_));
    for (auto v : header_) kosmos::Impl::require(v >= 0, where, "a negative size in the header");
    kosmos::Impl::require(header_[6] <= all && layout(header_).total == bytes_.size(), where,
                          bytes_.size(), " bytes for rows of ", layout(header_).total);
  }

  const std::vector<char>& bytes() const { return bytes_; }
  bool has(Part part) const { return (unsigned(header_[6]) & part) != 0; }
  // Views of the rows in bytes(), valid while this object lives; a part not packed has no rows.
  StreamRows<T> rows() const {
    using R = StreamRows<T>;
    const Layout at = layout(header_);
    const std::int64_t ns = header_[2], nl = header_[3], nq = header_[4], bins = header_[5];
    auto n = [&](Part part) { return has(part) ? header_[1] : std::int64_t(0); };
    R r;
    r.first_cell = header_[0];
    r.cells = header_[1];
    r.dust_mass = typename R::template host_view<const T*>(pointer<T>(at.dust_mass), n(dust_mass));
    r.temperature =
        typename R::template host_view<const T**>(pointer<T>(at.temperature), n(temperature), ns);
    r.status = typename R::template host_view<const int**>(pointer<int>(at.status), n(status), ns);
    r.sed = typename R::template host_view<const T**>(pointer<T>(at.sed), n(sed), nl);
    r.stochastic_status = typename R::template host_view<const int**>(
        pointer<int>(at.stochastic_status), n(stochastic_status), nq);
    if (bins > 0) {
      using P = typename R::template host_view<const double***>;
      r.probability = P(pointer<double>(at.probability), n(distributions), nq, bins);
      r.bin_temperature = P(pointer<double>(at.bin_temperature), n(distributions), nq, bins);
    }
    return r;
  }
  // The cells' intensities (n x L), or nullptr when packed without them.
  const T* intensities() const {
    return has(intensity) ? pointer<T>(layout(header_).intensity) : nullptr;
  }

 private:
  using Header = std::array<std::int64_t, 7>;  // first cell, n, S, L, Q, bins, parts
  struct Section {
    std::size_t offset = 0, bytes = 0;
  };
  struct Layout {
    Section dust_mass, temperature, status, sed, stochastic_status, probability, bin_temperature,
        intensity;
    std::size_t total = 0;
  };
  // The parts in the order above, each starting at a multiple of 8 bytes.
  static Layout layout(const Header& h) {
    const auto n = std::size_t(h[1]), ns = std::size_t(h[2]), nl = std::size_t(h[3]),
               nq = std::size_t(h[4]), bins = std::size_t(h[5]);
    const auto parts = unsigned(h[6]);
    std::size_t at = sizeof(Header);
    auto next = [&](Part part, std::size_t bytes) {
      const Section s{at, parts & part ? bytes : 0};
      at += (s.bytes + 7) / 8 * 8;
      return s;
    };
    Layout l;
    l.dust_mass = next(dust_mass, n * sizeof(T));
    l.temperature = next(temperature, n * ns * sizeof(T));
    l.status = next(status, n * ns * sizeof(int));
    l.sed = next(sed, n * nl * sizeof(T));
    l.stochastic_status = next(stochastic_status, n * nq * sizeof(int));
    l.probability = next(distributions, n * nq * bins * sizeof(double));
    l.bin_temperature = next(distributions, n * nq * bins * sizeof(double));
    l.intensity = next(intensity, n * nl * sizeof(T));
    l.total = at;
    return l;
  }
  template <class V>
  const V* pointer(const Section& section) const {
    return section.bytes > 0 ? reinterpret_cast<const V*>(bytes_.data() + section.offset) : nullptr;
  }

  Header header_{};
  std::vector<char> bytes_;
};

namespace Impl {
// intensity(c, l) <- absorbed(c, l) / (4 pi m_c kappa_dlambda(l)) in place; zero stays zero (also
// where kappa is zero), any other value over a zero kappa or mass becomes non-finite and fails the
// cells' validation, which names the cell.
template <class ExecSpace, class Rows, class Mass, class Kappa>
void absorbed_to_mean_intensity(const ExecSpace& space, const Rows& values, const Mass& mass,
                                const Kappa& kappa_dlambda) {
  using value = typename Rows::value_type;
  const std::int64_t n = std::int64_t(values.extent(0)), nl = std::int64_t(values.extent(1));
  Kokkos::parallel_for(
      "kosmos::dust::absorbed_to_mean_intensity",
      kosmos::Impl::non_blocking_policy(
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n * nl)),
      KOKKOS_LAMBDA(const std::int64_t k) {
        const std::int64_t c = k / nl, l = k % nl;
        const double a = double(values(c, l));
        if (a != 0)
          values(c, l) =
              value(a / (4 * kosmos::math::pi<double>() * double(mass(c)) * kappa_dlambda(l)));
      });
}

// kappa_dlambda(l) = sum_s number(s) sigma(s, l) width(l): the absorption cross section of a unit
// dust mass times the bin width.
template <class ExecSpace, class Sigma, class Vector, class Out>
void mass_absorption_dlambda(const ExecSpace& space, const Sigma& sigma, const Vector& number,
                             const Vector& width, const Out& kappa_dlambda) {
  const int nl = int(width.extent(0)), ns = int(number.extent(0));
  Kokkos::parallel_for(
      "kosmos::dust::mass_absorption_dlambda", Kokkos::RangePolicy<ExecSpace>(space, 0, nl),
      KOKKOS_LAMBDA(const int l) {
        double sum = 0;
        for (int s = 0; s < ns; ++s) sum += number(s) * sigma(s, l);
        kappa_dlambda(l) = sum * width(l);
      });
}

// status(c, s) <- status_above_sublimation where it is converged and temperature(c, s) > limit(s).
template <class ExecSpace, class Status, class Temperature, class Limit>
void flag_sublimation(const ExecSpace& space, const Status& status, const Temperature& temperature,
                      const Limit& limit) {
  const std::int64_t n = std::int64_t(status.extent(0)), ns = std::int64_t(status.extent(1));
  Kokkos::parallel_for(
      "kosmos::dust::flag_sublimation",
      kosmos::Impl::non_blocking_policy(
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n * ns)),
      KOKKOS_LAMBDA(const std::int64_t k) {
        const auto e = memory_order(status, k);
        const int s = int(e.second);
        if (status(e.first, s) == status_converged && double(temperature(e.first, s)) > limit(s))
          status(e.first, s) = status_above_sublimation;
      });
}

// intensity(c, l) += background(l).
template <class ExecSpace, class Rows, class Background>
void add_background(const ExecSpace& space, const Rows& values, const Background& background) {
  const std::int64_t n = std::int64_t(values.extent(0)), nl = std::int64_t(values.extent(1));
  Kokkos::parallel_for(
      "kosmos::dust::add_background_field",
      kosmos::Impl::non_blocking_policy(
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n * nl)),
      KOKKOS_LAMBDA(const std::int64_t k) { values(k / nl, k % nl) += background(k % nl); });
}
}  // namespace Impl

// B(lambda_l, temperature) in W m^-2 m^-1 sr^-1 on a grid in micron (0 where it underflows).
inline std::vector<double> blackbody_intensity(const std::vector<double>& wavelength_micron,
                                               double temperature) {
  kosmos::Impl::require(temperature > 0 && std::isfinite(temperature),
                        "kosmos::dust::blackbody_intensity", "temperature = ", temperature,
                        " K must be positive and finite");
  std::vector<double> b(wavelength_micron.size());
  for (std::size_t l = 0; l < b.size(); ++l) {
    const double lam = wavelength_micron[l] * 1e-6, x = constants::c2 / (lam * temperature);
    b[l] = x > 700 ? 0.0 : constants::c1 / std::pow(lam, 5) / std::expm1(x);
  }
  return b;
}

// Streams cells through stages 2-4 (and the stochastic P(T) emission of the species a
// StochasticModel selects), with per-chunk summaries and a host callback per chunk:
//
//   EmissionStream<double> stream(space, grains, inputs, options[, stochastic]);
//   HostCells<double> cells(n, L, S);            // fill cells.intensity and cells.dust_mass
//   StreamSummary s = stream.run(cells, [&](const StreamRows<double>& rows) { ... });
//
// or run(n, fill_chunk, out, on_rows) with fill_chunk(instance, first_cell, input) filling a
// chunk's device input (EmissionPipeline::Input) and `out` a HostCells with a row per cell or only
// ring_rows() rows (then each chunk's rows are valid during its on_rows only). on_rows runs on
// options.worker_threads threads (in chunk order, overlapping each other when there are several)
// while the device works on later chunks; an exception it throws ends the run and is rethrown.
// An invalid cell (NaN, negative intensity, mass <= 0) throws kosmos::invalid_input naming it.
template <class T, class ExecSpace = Kokkos::DefaultExecutionSpace>
class EmissionStream {
 public:
  using pipeline_type = EmissionPipeline<T, ExecSpace>;
  using Input = typename pipeline_type::Input;
  using Chunk = typename pipeline_type::Chunk;
  using host_cells = HostCells<T>;
  using rows_type = StreamRows<T>;
  using inputs_type = GrainInputs<typename ExecSpace::memory_space>;

  EmissionStream(const ExecSpace& space, const GrainModel<T, ExecSpace>& grains,
                 const inputs_type& inputs, const StreamOptions& options = StreamOptions(),
                 const StochasticModel<ExecSpace>& stochastic = StochasticModel<ExecSpace>())
      : grains_(grains),
        inputs_(inputs),
        stochastic_(stochastic),
        options_(checked(options, grains)),
        pipeline_(space, grains, options_.pipeline) {
    const char* where = "kosmos::dust::EmissionStream";
    const int nl = grains.wavelengths(), nq = selected();
    kosmos::Impl::require(inputs.number.extent(0) == std::size_t(grains.species()) &&
                              inputs.width.extent(0) == std::size_t(nl),
                          where, "inputs hold ", inputs.number.extent(0), " species and ",
                          inputs.width.extent(0), " wavelengths, the grains ", grains.species(),
                          " and ", nl);
    const std::int64_t in_flight = std::int64_t(options_.pipeline.instances) * chunk_cells();
    stochastic_status_ =
        device_ints("kosmos::dust::stream_stochastic_status", nq > 0 ? in_flight : 0, nq);
    // add_stochastic_emission's work space, a part per instance.
    const std::int64_t emission_batch =
        nq > 0 ? std::min(chunk_cells(), emission_batch_cells(stochastic, sizeof(T))) : 0;
    emission_work_ = stochastic_emission_work<T>(space, stochastic,
                                                 options_.pipeline.instances * emission_batch);
    const int bins = options_.distributions && nq > 0 ? stochastic.options.bins : 0;
    probability_ = device_p("kosmos::dust::stream_probability", bins > 0 ? in_flight : 0, nq, bins);
    bin_temperature_ =
        device_p("kosmos::dust::stream_bin_temperature", bins > 0 ? in_flight : 0, nq, bins);
    summary_ = decltype(summary_)("kosmos::dust::stream_summary", options_.pipeline.instances,
                                  int(Impl::summary_size));
    if (options_.input == CellInput::absorbed_power) {
      kappa_dlambda_ =
          vector(Kokkos::view_alloc(space, std::string("kosmos::dust::kappa_dlambda")), nl);
      Impl::mass_absorption_dlambda(space, inputs.sigma, inputs.number, inputs.width,
                                    kappa_dlambda_);
    }
    if (!options_.sublimation_temperature.empty()) {
      const auto& limit = options_.sublimation_temperature;
      kosmos::Impl::require(limit.size() == std::size_t(grains.species()), where, limit.size(),
                            " sublimation temperatures for ", grains.species(), " species");
      sublimation_ = vector(Kokkos::view_alloc(space, std::string("kosmos::dust::sublimation")),
                            grains.species());
      const auto h = Kokkos::create_mirror_view(sublimation_);
      for (int s = 0; s < grains.species(); ++s) {
        kosmos::Impl::require(limit[std::size_t(s)] > 0, where, "sublimation_temperature[", s,
                              "] = ", limit[std::size_t(s)], " K must be > 0");
        h(s) = limit[std::size_t(s)];
      }
      Kokkos::deep_copy(space, sublimation_, h);
    }
    if (options_.cmb_temperature > 0) {
      const auto w = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), inputs.wavelength);
      std::vector<double> micron(w.extent(0));
      for (std::size_t l = 0; l < micron.size(); ++l) micron[l] = w(l) * 1e6;
      const auto b = blackbody_intensity(micron, options_.cmb_temperature);
      cmb_ = decltype(cmb_)(Kokkos::view_alloc(space, std::string("kosmos::dust::stream_cmb")), nl);
      const auto h = Kokkos::create_mirror_view(cmb_);
      for (int l = 0; l < nl; ++l) h(l) = T(b[std::size_t(l)]);
      Kokkos::deep_copy(space, cmb_, h);
    }
    space.fence();
  }

  std::int64_t chunk_cells() const { return options_.pipeline.chunk_cells; }
  // Rows of a HostCells `out` that holds only the chunks in flight and those the workers hold.
  std::int64_t ring_rows() const { return pipeline_.ring_rows(); }
  int selected() const { return stochastic_.selected(); }
  const StreamOptions& options() const { return options_; }

  template <class OnRows>
  StreamSummary run(const host_cells& cells, const OnRows& on_rows) {
    return run(cells.cells(), pipeline_type::copy_cells_in(cells), cells, on_rows);
  }

  template <class FillChunk, class OnRows>
  StreamSummary run(std::int64_t n_cells, const FillChunk& fill_chunk, const host_cells& out,
                    const OnRows& on_rows) {
    return run_range(0, n_cells, fill_chunk, out, on_rows);
  }

  // Cells [first_cell, first_cell + n_cells) of a larger set (EmissionPipeline::run_range): the
  // rows' first_cell and fill_chunk's cells count from 0 of that set, `out` from first_cell; with
  // first_cell a multiple of chunk_cells() the chunks are those of a run over the whole set.
  template <class FillChunk, class OnRows>
  StreamSummary run_range(std::int64_t first_cell, std::int64_t n_cells,
                          const FillChunk& fill_chunk, const host_cells& out,
                          const OnRows& on_rows) {
    using clock = std::chrono::steady_clock;
    const std::int64_t chunk = chunk_cells();
    const int nq = selected();
    const bool distributions = probability_.extent(2) > 0;
    host_buffers(out.cells(), nq, distributions ? int(probability_.extent(2)) : 0);
    std::vector<double> chunk_summaries;
    chunk_summaries.reserve(std::size_t((n_cells + chunk - 1) / chunk) *
                            StreamSummary::chunk_width);
    double summary_seconds = 0;
    Impl::OrderedWorkers workers(std::size_t(options_.worker_threads),
                                 std::size_t(options_.worker_threads));
    auto fill = [&](const ExecSpace& instance, std::int64_t c0, const Input& in) {
      fill_chunk(instance, c0, in);
      if (kappa_dlambda_.extent(0) > 0)
        Impl::absorbed_to_mean_intensity(instance, in.intensity, in.dust_mass, kappa_dlambda_);
      if (cmb_.extent(0) > 0) Impl::add_background(instance, in.intensity, cmb_);
    };
    auto step = [&](const ExecSpace& instance, const Chunk& c) { chunk_step(instance, c); };
    auto on_chunk = [&](std::int64_t c0, std::int64_t n, std::int64_t row) {
      const auto t0 = clock::now();
      const double* r = &summary_h_(row / chunk, 0);
      chunk_summaries.insert(chunk_summaries.end(), r, r + StreamSummary::chunk_width);
      summary_seconds += std::chrono::duration<double>(clock::now() - t0).count();
      const rows_type rows = host_rows(out, c0, n, row, nq);
      workers.push([rows, &on_rows] { on_rows(rows); });
      if (options_.on_progress) options_.on_progress(c0 - first_cell + n, n_cells);
    };
    pipeline_.run_range(first_cell, n_cells, fill, out, options_.solver, step, on_chunk);
    workers.finish();
    StreamSummary total = sum_chunk_summaries(chunk_summaries);
    total.summary_seconds = summary_seconds;
    total.device_wait_seconds = pipeline_.device_wait_seconds();
    total.worker_blocked_seconds = workers.blocked_seconds();
    total.worker_busy_seconds = workers.busy_seconds();
    total.worker_threads = int(workers.threads());
    std::int64_t counted = 0, stochastic_counted = 0;
    for (auto k : total.status_counts) counted += k;
    for (auto k : total.stochastic_counts) stochastic_counted += k;
    kosmos::Impl::require(
        counted == n_cells * grains_.species() && stochastic_counted == n_cells * nq,
        "kosmos::dust::EmissionStream::run", "a status outside its range (internal error)");
    return total;
  }

 private:
  using device_type = Kokkos::Device<ExecSpace, typename ExecSpace::memory_space>;
  using vector = Kokkos::View<double*, device_type>;
  using int_rows = Kokkos::View<int**, Kokkos::LayoutRight, device_type>;
  using p_rows = Kokkos::View<double***, Kokkos::LayoutRight, device_type>;
  using pinned = kosmos::pinned_host_space;

  static StreamOptions checked(StreamOptions o, const GrainModel<T, ExecSpace>&) {
    const char* where = "kosmos::dust::EmissionStream";
    kosmos::Impl::require(o.worker_threads >= 0 && o.worker_threads <= 1024, where,
                          "worker_threads = ", o.worker_threads, " must lie in [0, 1024]");
    kosmos::Impl::require(o.cmb_temperature >= 0 && std::isfinite(o.cmb_temperature), where,
                          "cmb_temperature = ", o.cmb_temperature, " K must be >= 0 (0: no CMB)");
    kosmos::Impl::require(o.pipeline.instances >= 1, where, "instances = ", o.pipeline.instances,
                          " must be >= 1");
    // A slot per instance plus one per chunk the workers may hold (see OrderedWorkers' depth).
    if (o.pipeline.ring_chunks == 0)
      o.pipeline.ring_chunks = o.pipeline.instances + o.worker_threads;
    return o;
  }
  static int_rows device_ints(const char* label, std::int64_t n, int m) {
    return int_rows(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n, m);
  }
  static p_rows device_p(const char* label, std::int64_t n, int q, int m) {
    return p_rows(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n, q, m);
  }

  // Host rows for `rows` result rows (a row per cell or the ring), reused by later runs.
  void host_buffers(std::int64_t rows, int nq, int bins) {
    const std::int64_t slots = (rows + chunk_cells() - 1) / chunk_cells();
    if (std::int64_t(summary_h_.extent(0)) != slots)
      summary_h_ =
          decltype(summary_h_)("kosmos::dust::stream_summary_host", slots, int(Impl::summary_size));
    const std::int64_t status_rows = nq > 0 ? rows : 0, p_rows_n = bins > 0 ? rows : 0;
    if (std::int64_t(stochastic_status_h_.extent(0)) != status_rows)
      stochastic_status_h_ = decltype(stochastic_status_h_)(
          Kokkos::view_alloc(Kokkos::WithoutInitializing,
                             std::string("kosmos::dust::stream_stochastic_status_host")),
          status_rows, nq);
    if (std::int64_t(probability_h_.extent(0)) != p_rows_n) {
      auto alloc = [&](const char* label) {
        return decltype(probability_h_)(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), p_rows_n, nq,
            bins);
      };
      probability_h_ = alloc("kosmos::dust::stream_probability_host");
      bin_temperature_h_ = alloc("kosmos::dust::stream_bin_temperature_host");
    }
  }

  // Queued on the chunk's instance after its SED: P(T) emission (and P(T) itself on request) of
  // the stochastic species, the chunk's summary, and their copies to the chunk's host rows.
  void chunk_step(const ExecSpace& instance, const Chunk& chunk) {
    using Range = Kokkos::pair<std::int64_t, std::int64_t>;
    const std::int64_t n = std::int64_t(chunk.in.dust_mass.extent(0)),
                       slot = chunk.instance * chunk_cells();
    const int nq = selected();
    const Range in_flight = nq > 0 ? Range(slot, slot + n) : Range(0, 0);
    const Range rows(chunk.first_row, chunk.first_row + n);
    if (sublimation_.extent(0) > 0)
      Impl::flag_sublimation(instance, chunk.status, chunk.temperature, sublimation_);
    const auto status = Kokkos::subview(stochastic_status_, in_flight, Kokkos::ALL);
    if (nq > 0) {
      const std::int64_t batch = emission_work_.cells() / options_.pipeline.instances;
      const auto work = emission_work_.rows(chunk.instance * batch, (chunk.instance + 1) * batch);
      if (probability_.extent(0) > 0) {
        const auto p = Kokkos::subview(probability_, in_flight, Kokkos::ALL, Kokkos::ALL);
        const auto t = Kokkos::subview(bin_temperature_, in_flight, Kokkos::ALL, Kokkos::ALL);
        add_stochastic_emission(instance, grains_, stochastic_, chunk.in.intensity,
                                chunk.temperature, chunk.in.dust_mass, chunk.sed, status, work, p,
                                t);
        Kokkos::deep_copy(instance, Kokkos::subview(probability_h_, rows, Kokkos::ALL, Kokkos::ALL),
                          p);
        Kokkos::deep_copy(instance,
                          Kokkos::subview(bin_temperature_h_, rows, Kokkos::ALL, Kokkos::ALL), t);
      } else {
        add_stochastic_emission(instance, grains_, stochastic_, chunk.in.intensity,
                                chunk.temperature, chunk.in.dust_mass, chunk.sed, status, work);
      }
      Kokkos::deep_copy(instance, Kokkos::subview(stochastic_status_h_, rows, Kokkos::ALL), status);
    }
    const auto summary = Kokkos::subview(summary_, chunk.instance, Kokkos::ALL);
    Impl::queue_chunk_summary(instance, chunk.status, chunk.temperature, chunk.heating,
                              chunk.in.dust_mass, inputs_.number, chunk.sed, inputs_.width, status,
                              summary.data());
    Kokkos::deep_copy(instance,
                      Kokkos::subview(summary_h_, chunk.first_row / chunk_cells(), Kokkos::ALL),
                      summary);
  }

  rows_type host_rows(const host_cells& out, std::int64_t c0, std::int64_t n, std::int64_t row,
                      int nq) const {
    const int nl = grains_.wavelengths(), ns = grains_.species();
    rows_type r;
    r.first_cell = c0;
    r.cells = n;
    r.dust_mass = decltype(r.dust_mass)(&out.dust_mass(row), n);
    r.heating = decltype(r.heating)(&out.heating(row, 0), n, ns);
    r.temperature = decltype(r.temperature)(&out.temperature(row, 0), n, ns);
    r.sed = decltype(r.sed)(&out.sed(row, 0), n, nl);
    r.status = decltype(r.status)(&out.status(row, 0), n, ns);
    r.stochastic_status = decltype(r.stochastic_status)(
        nq > 0 ? &stochastic_status_h_(row, 0) : nullptr, nq > 0 ? n : 0, nq);
    if (probability_h_.extent(0) > 0) {
      const int bins = int(probability_h_.extent(2));
      r.probability = decltype(r.probability)(&probability_h_(row, 0, 0), n, nq, bins);
      r.bin_temperature = decltype(r.bin_temperature)(&bin_temperature_h_(row, 0, 0), n, nq, bins);
    }
    return r;
  }

  GrainModel<T, ExecSpace> grains_;
  inputs_type inputs_;
  StochasticModel<ExecSpace> stochastic_;
  StreamOptions options_;
  pipeline_type pipeline_;
  vector kappa_dlambda_, sublimation_;
  Kokkos::View<T*, device_type> cmb_;
  int_rows stochastic_status_;
  // add_stochastic_emission's work space: instances x batch cells, a batch per instance.
  StochasticEmissionWork<T, typename ExecSpace::memory_space> emission_work_;
  p_rows probability_, bin_temperature_;
  Kokkos::View<double**, Kokkos::LayoutRight, device_type> summary_;
  Kokkos::View<double**, Kokkos::LayoutRight, pinned> summary_h_;
  Kokkos::View<int**, Kokkos::LayoutRight, pinned> stochastic_status_h_;
  Kokkos::View<double***, Kokkos::LayoutRight, pinned> probability_h_, bin_temperature_h_;
};
}  // namespace dust
}  // namespace kosmos
