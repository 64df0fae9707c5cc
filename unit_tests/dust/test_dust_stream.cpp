// EmissionStream, the batch API for radiative-transfer codes: every cell reaches on_rows once (on
// worker threads, through a ring of chunk slots) with temperatures that balance the long-double
// reference; absorbed power per bin in gives the temperatures of the mean intensity it stands for
// (converted here independently); sublimation limits flag the grains above them; the CMB heats an
// unlit grain to T_cmb and adds to a lit one as B(T_cmb) added to the field would; P(T) of the
// stochastic species comes back normalized and energy-conserving on 128 bins and on 2048 (beyond
// the fast team scratch of a CPU team); cells run in two halves (as on two MPI ranks) give the rows
// and totals of one run; an invalid cell is named.
#include "dust_test_problem.hpp"

#include <kosmos/dust/stream.hpp>

#include <test_spaces.hpp>

#include <atomic>
#include <cmath>
#include <string>
#include <vector>

namespace {
using namespace dust_test;
using kosmos::dust::CellInput;
using kosmos::dust::StreamOptions;
using kosmos::dust::StreamRows;

template <class Space>
class DustStreamTest : public ::testing::Test {};
TYPED_TEST_SUITE(DustStreamTest, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

template <class Space>
kosmos::dust::GrainInputs<typename Space::memory_space> grain_inputs(
    const DeviceProblem<double, Space>& d) {
  kosmos::dust::GrainInputs<typename Space::memory_space> in;
  in.wavelength = d.wavelength;
  in.width = d.width;
  in.radius = d.radius;
  in.number = d.number;
  in.sigma = d.sigma;
  return in;
}

// The problem's cells (or `values` instead of their intensities) in host rows.
kosmos::dust::HostCells<double> host_cells(const Problem& p,
                                           const std::vector<std::vector<double>>& values) {
  kosmos::dust::HostCells<double> cells(p.nc(), p.nl(), p.ns(),
                                        kosmos::dust::HostCells<double>::inputs);
  for (int c = 0; c < p.nc(); ++c) {
    cells.dust_mass(c) = p.dust_mass[std::size_t(c)];
    for (int l = 0; l < p.nl(); ++l) cells.intensity(c, l) = values[std::size_t(c)][std::size_t(l)];
  }
  return cells;
}

struct Collected {
  std::vector<double> temperature;
  std::vector<int> status, seen;
};

// Runs the stream over the cells into a ring and collects the rows that on_rows sees.
template <class Space>
Collected run_stream(const Problem& p, const std::vector<std::vector<double>>& values,
                     const StreamOptions& o, kosmos::dust::StreamSummary* summary = nullptr) {
  DeviceProblem<double, Space> d(p);
  const auto g = d.prepare(o.solver);
  kosmos::dust::EmissionStream<double, Space> stream(Space(), g, grain_inputs(d), o);
  const auto cells = host_cells(p, values);
  const int nc = p.nc(), ns = p.ns();
  const kosmos::dust::HostCells<double> ring(stream.ring_rows(), p.nl(), ns,
                                             kosmos::dust::HostCells<double>::results);
  Collected r{std::vector<double>(std::size_t(nc) * ns), std::vector<int>(std::size_t(nc) * ns),
              std::vector<int>(std::size_t(nc), 0)};
  const auto s = stream.run(nc, decltype(stream)::pipeline_type::copy_cells_in(cells), ring,
                            [&](const StreamRows<double>& rows) {
                              for (std::int64_t k = 0; k < rows.cells; ++k) {
                                const std::size_t c = std::size_t(rows.first_cell + k);
                                ++r.seen[c];
                                for (int sp = 0; sp < ns; ++sp) {
                                  r.temperature[c * ns + std::size_t(sp)] = rows.temperature(k, sp);
                                  r.status[c * ns + std::size_t(sp)] = rows.status(k, sp);
                                }
                              }
                            });
  if (summary) *summary = s;
  return r;
}

StreamOptions small_chunks(int workers) {
  StreamOptions o;
  o.pipeline.chunk_cells = 4;
  o.pipeline.instances = 2;
  o.worker_threads = workers;
  o.cmb_temperature = 0;
  return o;
}

TYPED_TEST(DustStreamTest, RowsReachWorkersOnceAndBalanceTheReference) {
  using Space = TypeParam;
  const auto p = graphite_problem(97, 8, 11, 3);
  kosmos::dust::StreamSummary summary;
  const auto r = run_stream<Space>(p, p.intensity, small_chunks(3), &summary);
  for (int c = 0; c < p.nc(); ++c) {
    ASSERT_EQ(r.seen[std::size_t(c)], 1) << "cell " << c;
    for (int s = 0; s < p.ns(); ++s) {
      const double t_ref = bisect_temperature(p, s, heating_ref(p, c, s));
      EXPECT_EQ(r.status[std::size_t(c * p.ns() + s)], kosmos::dust::status_converged);
      // 1e-3 in energy balance: a few 1e-4 in T (E ~ T^(4 + beta)).
      EXPECT_NEAR(r.temperature[std::size_t(c * p.ns() + s)] / t_ref, 1.0, 3e-4) << c << ' ' << s;
    }
  }
  EXPECT_EQ(summary.status_counts[kosmos::dust::status_converged], std::int64_t(p.nc()) * p.ns());
  EXPECT_EQ(summary.worker_threads, 3);
  EXPECT_NEAR(summary.emitted_over_absorbed(), 1.0, 2e-3);
}

TYPED_TEST(DustStreamTest, AbsorbedPowerInGivesTheTemperaturesOfItsMeanIntensity) {
  using Space = TypeParam;
  const auto p = graphite_problem(97, 8, 9, 5);
  // A_{c,l} = 4 pi m_c kappa_l J_{c,l} dlambda_l, kappa_l = sum_s n_s sigma_{s,l}.
  std::vector<std::vector<double>> absorbed = p.intensity;
  for (int c = 0; c < p.nc(); ++c)
    for (int l = 0; l < p.nl(); ++l) {
      long double kappa = 0;
      for (int s = 0; s < p.ns(); ++s)
        kappa += LD(p.number_per_mass[std::size_t(s)]) * p.sigma[std::size_t(s)][std::size_t(l)];
      absorbed[std::size_t(c)][std::size_t(l)] =
          double(4 * 3.14159265358979323846L * p.dust_mass[std::size_t(c)] * kappa *
                 p.intensity[std::size_t(c)][std::size_t(l)] * p.width[std::size_t(l)]);
    }
  auto o = small_chunks(0);
  const auto from_j = run_stream<Space>(p, p.intensity, o);
  o.input = CellInput::absorbed_power;
  const auto from_a = run_stream<Space>(p, absorbed, o);
  for (std::size_t k = 0; k < from_j.temperature.size(); ++k)
    EXPECT_NEAR(from_a.temperature[k] / from_j.temperature[k], 1.0, 1e-9) << k;
}

TYPED_TEST(DustStreamTest, CmbHeatsUnlitGrainsToTheCmbTemperature) {
  using Space = TypeParam;
  auto p = graphite_problem(97, 8, 3, 9);
  std::fill(p.intensity[0].begin(), p.intensity[0].end(), 0.0);
  for (auto& v : p.intensity[1]) v *= 1e-6;  // a field comparable to the CMB in the far-IR
  auto o = small_chunks(1);
  o.cmb_temperature = 2.725;
  o.solver.min_temperature = 1.0;
  const auto r = run_stream<Space>(p, p.intensity, o);
  // Reference: the field plus B(lambda, 2.725 K) in long double, solved by bisection.
  Problem q = p;
  for (int c = 0; c < p.nc(); ++c)
    for (int l = 0; l < p.nl(); ++l)
      q.intensity[std::size_t(c)][std::size_t(l)] +=
          double(planck(p.wavelength[std::size_t(l)], 2.725L));
  for (int c = 0; c < p.nc(); ++c)
    for (int s = 0; s < p.ns(); ++s) {
      const std::size_t k = std::size_t(c * p.ns() + s);
      EXPECT_EQ(r.status[k], kosmos::dust::status_converged) << c << ' ' << s;
      const double t_ref = bisect_temperature(q, s, heating_ref(q, c, s));
      if (c == 0) {
        EXPECT_NEAR(t_ref, 2.725, 1e-9);
      }
      EXPECT_NEAR(r.temperature[k] / t_ref, 1.0, 3e-4) << c << ' ' << s;
    }
}

// The problem's graphite species below 0.01 micron, heated stochastically.
std::vector<kosmos::dust::StochasticSpecies> stochastic_species(const Problem& p) {
  std::vector<kosmos::dust::StochasticSpecies> small;
  for (int s = 0; s < p.ns(); ++s)
    if (p.radius[std::size_t(s)] < 0.01e-6)
      small.push_back({s, kosmos::dust::GrainMaterial::graphite, p.radius[std::size_t(s)] * 1e6});
  return small;
}

// A problem's grains on the device, its stochastic species on `bins` bins, and stream options with
// P(T) in the rows (chunks of 4, 2 workers).
template <class Space>
struct StochasticSetup {
  StochasticSetup(const Problem& p, int bins)
      : d(p), o(with_distributions()), g(d.prepare(o.solver)), small(stochastic_species(p)) {
    kosmos::dust::StochasticOptions so;
    so.bins = bins;
    m = kosmos::dust::prepare_stochastic(Space(), g, small, so);
  }
  static StreamOptions with_distributions() {
    auto o = small_chunks(2);
    o.distributions = true;
    return o;
  }
  DeviceProblem<double, Space> d;
  StreamOptions o;
  kosmos::dust::GrainModel<double, Space> g;
  std::vector<kosmos::dust::StochasticSpecies> small;
  kosmos::dust::StochasticModel<Space> m;
};

// bins: 128 fits the fast team scratch; 2048 (74 KB) does not, on CPU teams or GPUs, and runs
// from global memory. Status ok means the P(T) emits what the grain absorbs to 1 %.
template <class Space>
void check_distributions(int bins) {
  SCOPED_TRACE("bins " + std::to_string(bins));
  const auto p = graphite_problem(97, 8, 6, 13);
  const StochasticSetup<Space> setup(p, bins);
  const auto& [d, o, g, small, m] = setup;
  ASSERT_EQ(small.size(), 3u);
  kosmos::dust::EmissionStream<double, Space> stream(Space(), g, grain_inputs(d), o, m);
  const auto cells = host_cells(p, p.intensity);
  const kosmos::dust::HostCells<double> out(p.nc(), p.nl(), p.ns(),
                                            kosmos::dust::HostCells<double>::results);
  std::atomic<int> rows_seen{0};
  const auto summary = stream.run(
      p.nc(), decltype(stream)::pipeline_type::copy_cells_in(cells), out,
      [&](const StreamRows<double>& rows) {
        ASSERT_EQ(rows.probability.extent(1), 3u);
        ASSERT_EQ(rows.probability.extent(2), std::size_t(bins));
        for (std::int64_t k = 0; k < rows.cells; ++k)
          for (int q = 0; q < 3; ++q) {
            double sum = 0;
            for (int j = 0; j < bins; ++j) {
              sum += rows.probability(k, q, j);
              if (j > 0) {
                EXPECT_GT(rows.bin_temperature(k, q, j), rows.bin_temperature(k, q, j - 1));
              }
            }
            EXPECT_NEAR(sum, 1.0, 1e-9);
            EXPECT_EQ(rows.stochastic_status(k, q), kosmos::dust::stochastic_ok);
          }
        rows_seen += int(rows.cells);
      });
  EXPECT_EQ(rows_seen.load(), p.nc());
  EXPECT_EQ(summary.stochastic_counts[kosmos::dust::stochastic_ok], 3 * p.nc());
}

TYPED_TEST(DustStreamTest, DistributionsOfStochasticSpeciesAreNormalized) {
  check_distributions<TypeParam>(128);
}
TYPED_TEST(DustStreamTest, ManyBinsRunBeyondTheTeamScratch) {
  check_distributions<TypeParam>(2048);
}

// A limit 1 % below a grain's temperature flags it, 1 % above leaves it converged; the
// temperatures themselves do not change.
TYPED_TEST(DustStreamTest, SublimationFlagsOnlyGrainsAboveTheirLimit) {
  using Space = TypeParam;
  const auto p = graphite_problem(97, 8, 3, 17);
  auto o = small_chunks(0);
  const auto free = run_stream<Space>(p, p.intensity, o);
  o.sublimation_temperature.resize(std::size_t(p.ns()));
  for (int s = 0; s < p.ns(); ++s)
    o.sublimation_temperature[std::size_t(s)] =
        free.temperature[std::size_t(s)] * (s % 2 ? 1.01 : 0.99);
  const auto flagged = run_stream<Space>(p, p.intensity, o);
  for (int s = 0; s < p.ns(); ++s) {
    EXPECT_EQ(flagged.status[std::size_t(s)],
              s % 2 ? kosmos::dust::status_converged : kosmos::dust::status_above_sublimation)
        << s;
    EXPECT_EQ(flagged.temperature[std::size_t(s)], free.temperature[std::size_t(s)]) << s;
  }
}

// Cells [0, 11) in one run and as two run_range halves split on a chunk boundary (as two MPI ranks
// run them, each with its own stream): the same rows, byte for byte, also after packing into bytes
// and unpacking (PackedRows, with P(T) and intensities, or the temperatures alone); the halves'
// chunk summaries joined in chunk order sum to the whole run's totals exactly.
TYPED_TEST(DustStreamTest, HalvesOnAChunkBoundaryGiveTheWholeRun) {
  using Space = TypeParam;
  using kosmos::dust::PackedRows;
  const auto p = graphite_problem(97, 8, 11, 13);
  const StochasticSetup<Space> setup(p, 32);
  const auto cells = host_cells(p, p.intensity);
  // Packed rows by first cell, and the run's summary.
  auto run = [&](std::int64_t first, std::int64_t n, std::vector<std::vector<char>>& packed) {
    kosmos::dust::EmissionStream<double, Space> stream(Space(), setup.g, grain_inputs(setup.d),
                                                       setup.o, setup.m);
    const kosmos::dust::HostCells<double> ring(stream.ring_rows(), p.nl(), p.ns(),
                                               kosmos::dust::HostCells<double>::results);
    return stream.run_range(
        first, n, decltype(stream)::pipeline_type::copy_cells_in(cells), ring,
        [&](const StreamRows<double>& rows) {
          const double* intensity = &cells.intensity(rows.first_cell, 0);
          packed[std::size_t(rows.first_cell)] =
              PackedRows<double>(rows, PackedRows<double>::all, intensity).bytes();
        });
  };
  std::vector<std::vector<char>> whole(std::size_t(p.nc())), halves(std::size_t(p.nc()));
  const auto total = run(0, p.nc(), whole);
  const auto first = run(0, 8, halves), second = run(8, p.nc() - 8, halves);
  ASSERT_EQ(first.chunk_summaries.size(), 2 * kosmos::dust::StreamSummary::chunk_width);
  for (int c = 0; c < p.nc(); ++c) {
    EXPECT_EQ(whole[std::size_t(c)], halves[std::size_t(c)]) << "rows from cell " << c;
    if (c % 4 != 0) continue;
    const PackedRows<double> back{std::vector<char>(halves[std::size_t(c)])};
    const auto rows = back.rows();
    ASSERT_EQ(rows.first_cell, c);
    ASSERT_EQ(rows.cells, std::min(4, p.nc() - c));
    ASSERT_EQ(rows.probability.extent(1), setup.small.size());
    ASSERT_EQ(rows.probability.extent(2), 32u);
    EXPECT_EQ(back.intensities()[p.nl() + 1], p.intensity[std::size_t(c + 1)][1]);
    EXPECT_EQ(rows.dust_mass(1), p.dust_mass[std::size_t(c + 1)]);
    double sum = 0;  // P(T) of the last cell's first stochastic species
    for (int j = 0; j < 32; ++j) sum += rows.probability(rows.cells - 1, 0, j);
    EXPECT_NEAR(sum, 1.0, 1e-9);
    // Repacked: the same bytes; only temperatures: those alone.
    EXPECT_EQ(PackedRows<double>(rows, PackedRows<double>::all, back.intensities()).bytes(),
              halves[std::size_t(c)]);
    const PackedRows<double> some(rows, PackedRows<double>::temperature);
    const auto t = some.rows();
    EXPECT_EQ(some.bytes().size(), 7 * 8 + std::size_t(rows.cells) * p.ns() * sizeof(double));
    ASSERT_EQ(t.temperature.extent(0), std::size_t(rows.cells));
    EXPECT_EQ(t.temperature(1, 2), rows.temperature(1, 2));
    EXPECT_EQ(t.sed.extent(0), 0u);
    EXPECT_EQ(some.intensities(), nullptr);
  }
  auto joined = first.chunk_summaries;
  joined.insert(joined.end(), second.chunk_summaries.begin(), second.chunk_summaries.end());
  const auto summed = kosmos::dust::sum_chunk_summaries(joined);
  EXPECT_EQ(summed.status_counts, total.status_counts);
  EXPECT_EQ(summed.stochastic_counts, total.stochastic_counts);
  EXPECT_EQ(summed.absorbed, total.absorbed);
  EXPECT_EQ(summed.emitted, total.emitted);
  EXPECT_EQ(summed.min_temperature, total.min_temperature);
  EXPECT_EQ(summed.max_temperature, total.max_temperature);
  EXPECT_EQ(summed.status_counts[kosmos::dust::status_converged], std::int64_t(p.nc()) * p.ns());
  EXPECT_THROW(PackedRows<double>(std::vector<char>(halves[0].begin(), halves[0].end() - 8)),
               kosmos::invalid_input);
}

TYPED_TEST(DustStreamTest, InvalidCellIsNamed) {
  using Space = TypeParam;
  auto p = graphite_problem(31, 16, 11, 2);
  p.intensity[7][5] = -1.0;
  try {
    run_stream<Space>(p, p.intensity, small_chunks(2));
    FAIL() << "no error for a negative intensity";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("intensity(7, 5) = -1"), std::string::npos) << e.what();
  }
}
}  // namespace
