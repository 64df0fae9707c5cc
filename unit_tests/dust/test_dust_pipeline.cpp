// EmissionPipeline: cells in (pinned) host memory streamed through the device in chunks on several
// instances give the energy balance of the long-double reference, the same SEDs as the
// device-resident path, and every chunk exactly once to on_chunk, with the results in rows or in
// LayoutLeft transposed to rows on the device; a chunk_step adds stochastic heating per chunk.
#include "dust_test_problem.hpp"

#include <kosmos/dust/pipeline.hpp>
#include <kosmos/dust/stochastic.hpp>

#include <test_spaces.hpp>

#include <limits>
#include <string>
#include <type_traits>

namespace {
using namespace dust_test;
using kosmos::dust::SolverOptions;

template <class Space>
class DustPipelineTest : public ::testing::Test {};
TYPED_TEST_SUITE(DustPipelineTest, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

// Both result layouts run on every space: LayoutRight (the host backends' default) and LayoutLeft
// transposed to rows before the copy out (the GPUs' default).
template <class F>
void for_each_result_layout(const F& f) {
  f(Kokkos::LayoutRight());
  f(Kokkos::LayoutLeft());
}

// ring: the results land in a HostCells of ring_rows() rows; on_chunk copies them out.
template <class T, class Space, class Layout>
void check_pipeline(const kosmos::dust::PipelineOptions& po, bool ring) {
  SCOPED_TRACE(std::string("result layout ") +
               (std::is_same<Layout, Kokkos::LayoutLeft>::value ? "left" : "right"));
  using Cells = kosmos::dust::HostCells<T>;
  auto p = graphite_problem(97, 8, 23, 7);
  std::fill(p.intensity[4].begin(), p.intensity[4].end(), 0.0);  // a zero field among them
  DeviceProblem<T, Space> d(p);
  const SolverOptions o;
  const auto g = d.prepare(o);
  const int nc = p.nc(), ns = p.ns(), nl = p.nl();
  Cells cells(nc, nl, ns, ring ? Cells::inputs : Cells::both);
  for (int c = 0; c < nc; ++c) {
    cells.dust_mass(c) = T(p.dust_mass[c]);
    for (int l = 0; l < nl; ++l) cells.intensity(c, l) = T(p.intensity[c][l]);
  }
  kosmos::dust::EmissionPipeline<T, Space, Layout> pipeline(Space(), g, po);
  const Cells out = ring ? Cells(pipeline.ring_rows(), nl, ns, Cells::results) : cells;
  std::vector<int> seen(std::size_t(nc), 0), status(std::size_t(nc) * ns);
  std::vector<T> temperature(std::size_t(nc) * ns), sed(std::size_t(nc) * nl),
      mass(static_cast<std::size_t>(nc));
  pipeline.run(nc, decltype(pipeline)::copy_cells_in(cells), out, o,
               [&](std::int64_t c0, std::int64_t n, std::int64_t row) {
                 if (!ring) {
                   EXPECT_EQ(row, c0);
                 }
                 for (std::int64_t k = 0; k < n; ++k) {
                   const std::size_t c = std::size_t(c0 + k);
                   ++seen[c];
                   mass[c] = out.dust_mass(row + k);
                   for (int s = 0; s < ns; ++s) {
                     temperature[c * ns + s] = out.temperature(row + k, s);
                     status[c * ns + s] = out.status(row + k, s);
                   }
                   for (int l = 0; l < nl; ++l) sed[c * nl + l] = out.sed(row + k, l);
                 }
               });
  for (int c = 0; c < nc; ++c) EXPECT_EQ(seen[std::size_t(c)], 1) << "cell " << c;

  const auto ref = run<T, Space>(p, o);  // the device-resident path
  const double slack = std::is_same<T, float>::value ? 2e-5 : 1e-12;
  for (int c = 0; c < nc; ++c) {
    EXPECT_EQ(mass[std::size_t(c)], T(p.dust_mass[c]));
    for (int s = 0; s < ns; ++s) {
      const std::size_t i = std::size_t(c) * ns + s;
      if (c == 4) {
        EXPECT_EQ(status[i], kosmos::dust::status_no_heating);
        EXPECT_EQ(temperature[i], T(0));
        continue;
      }
      ASSERT_EQ(status[i], kosmos::dust::status_converged) << c << "," << s;
      const LD l_h = heating_ref(p, c, s);
      const LD e = emission_ref(p, s, LD(temperature[i]));
      EXPECT_LE(std::fabs(double(e / l_h - 1)), o.tolerance + slack) << c << "," << s;
    }
    for (int l = 0; l < nl; ++l) {
      const double x = double(sed[std::size_t(c) * nl + l]), y = double(ref.f(c, l));
      EXPECT_LE(std::fabs(x - y), 16 * slack * std::fabs(y)) << "cell " << c << " wavelength " << l;
    }
  }
}

TYPED_TEST(DustPipelineTest, ChunksOnSeveralInstancesMatchTheReference) {
  kosmos::dust::PipelineOptions uneven;  // 23 cells in chunks of 5 over 3 instances
  uneven.chunk_cells = 5;
  uneven.instances = 3;
  kosmos::dust::PipelineOptions one;  // one chunk larger than the problem, one instance
  one.chunk_cells = 64;
  one.instances = 1;
  for_each_result_layout([&](auto layout) {
    using Layout = decltype(layout);
    for (bool ring : {false, true}) {
      check_pipeline<double, TypeParam, Layout>(uneven, ring);
      check_pipeline<float, TypeParam, Layout>(uneven, ring);
    }
    check_pipeline<double, TypeParam, Layout>(one, false);
  });
}

// A ring with 2 slots more than the instances: each chunk's rows stay valid until on_chunk has
// returned for 2 later chunks (e.g. for a writer thread), and the chunks land in distinct slots.
TYPED_TEST(DustPipelineTest, RingSlotsBeyondTheInstancesKeepRowsValid) {
  using Space = TypeParam;
  using Cells = kosmos::dust::HostCells<double>;
  auto p = graphite_problem(41, 8, 23);
  for (int c = 0; c < p.nc(); ++c) p.dust_mass[c] = 1.0 + c;  // tells the cells apart
  DeviceProblem<double, Space> d(p);
  const auto g = d.prepare(SolverOptions());
  Cells cells(p.nc(), p.nl(), p.ns(), Cells::inputs);
  for (int c = 0; c < p.nc(); ++c) {
    cells.dust_mass(c) = p.dust_mass[c];
    for (int l = 0; l < p.nl(); ++l) cells.intensity(c, l) = p.intensity[c][l];
  }
  kosmos::dust::PipelineOptions po;  // 23 cells in 5 chunks of 5 over 2 instances, 4 slots
  po.chunk_cells = 5;
  po.instances = 2;
  po.ring_chunks = 4;
  kosmos::dust::EmissionPipeline<double, Space> pipeline(Space(), g, po);
  ASSERT_EQ(pipeline.ring_rows(), 20);
  const Cells out(pipeline.ring_rows(), p.nl(), p.ns(), Cells::results);
  struct Landed {
    std::int64_t c0, n, row;
  };
  std::vector<Landed> landed;
  pipeline.run(p.nc(), decltype(pipeline)::copy_cells_in(cells), out, SolverOptions(),
               [&](std::int64_t c0, std::int64_t n, std::int64_t row) {
                 landed.push_back({c0, n, row});
                 // This chunk and the 2 before it still hold their own rows.
                 for (std::size_t j = landed.size() > 3 ? landed.size() - 3 : 0; j < landed.size();
                      ++j)
                   for (std::int64_t k = 0; k < landed[j].n; ++k)
                     EXPECT_EQ(out.dust_mass(landed[j].row + k), 1.0 + double(landed[j].c0 + k))
                         << "chunk at cell " << landed[j].c0 << " seen from the one at " << c0;
               });
  ASSERT_EQ(landed.size(), 5u);
  for (std::size_t j = 0; j < landed.size(); ++j) {
    EXPECT_EQ(landed[j].c0, std::int64_t(5 * j));  // in order
    EXPECT_EQ(landed[j].row, std::int64_t(5 * (j % 4)));
  }
}

// The stochastic heating hook: add_stochastic_emission queued per chunk by chunk_step (statuses in
// a per-instance slot, copied to the host) conserves each cell's absorbed power (long-double
// reference), gives the SEDs of the whole-array calls, and reports every (cell, small species).
template <class Space, class Layout>
void check_stochastic_chunk_step() {
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  auto p = graphite_problem(97, 8, 23, 7);  // radii 0.001, 0.0025, 0.0063, 0.016, ... micron
  std::fill(p.intensity[4].begin(), p.intensity[4].end(), 0.0);
  DeviceProblem<double, Space> d(p);
  const SolverOptions o;
  const auto g = d.prepare(o);
  const int nc = p.nc(), ns = p.ns(), nl = p.nl();
  std::vector<kosmos::dust::StochasticSpecies> small;
  for (int s = 0; s < ns; ++s)
    if (p.radius[s] < 0.01e-6)
      small.push_back({s, kosmos::dust::GrainMaterial::graphite, p.radius[s] * 1e6});
  ASSERT_EQ(small.size(), 3u);
  const int nq = int(small.size());
  const auto m = kosmos::dust::prepare_stochastic(Space(), g, small);

  kosmos::dust::PipelineOptions po;  // 23 cells in chunks of 5 over 3 instances, results in a ring
  po.chunk_cells = 5;
  po.instances = 3;
  using Pipeline = kosmos::dust::EmissionPipeline<double, Space, Layout>;
  using Cells = kosmos::dust::HostCells<double>;
  Pipeline pipeline(Space(), g, po);
  Cells cells(nc, nl, ns, Cells::inputs);
  for (int c = 0; c < nc; ++c) {
    cells.dust_mass(c) = p.dust_mass[c];
    for (int l = 0; l < nl; ++l) cells.intensity(c, l) = p.intensity[c][l];
  }
  const Cells out(pipeline.ring_rows(), nl, ns, Cells::results);
  Kokkos::View<int**, Kokkos::LayoutRight, device> slots("slots", pipeline.ring_rows(), nq);
  Kokkos::View<int**, Kokkos::LayoutRight, kosmos::pinned_host_space> slots_h(
      "slots_h", pipeline.ring_rows(), nq);
  auto step = [&](const Space& instance, const typename Pipeline::Chunk& chunk) {
    const std::int64_t n = std::int64_t(chunk.in.dust_mass.extent(0)),
                       first = chunk.instance * po.chunk_cells;
    const Kokkos::pair<std::int64_t, std::int64_t> rows(first, first + n);
    EXPECT_EQ(chunk.first_row, first);  // a ring: the instance's slot
    const auto status = Kokkos::subview(slots, rows, Kokkos::ALL);
    kosmos::dust::add_stochastic_emission(instance, g, m, chunk.in.intensity, chunk.temperature,
                                          chunk.in.dust_mass, chunk.sed, status);
    Kokkos::deep_copy(instance, Kokkos::subview(slots_h, rows, Kokkos::ALL), status);
  };
  std::vector<int> status(std::size_t(nc) * nq, -1);
  std::vector<double> sed(std::size_t(nc) * nl);
  pipeline.run(nc, Pipeline::copy_cells_in(cells), out, o, step,
               [&](std::int64_t c0, std::int64_t n, std::int64_t row) {
                 for (std::int64_t k = 0; k < n; ++k) {
                   const std::size_t c = std::size_t(c0 + k);
                   for (int q = 0; q < nq; ++q) status[c * nq + q] = slots_h(row + k, q);
                   for (int l = 0; l < nl; ++l) sed[c * nl + l] = out.sed(row + k, l);
                 }
               });

  // The whole-array calls on the same cells.
  Kokkos::View<double**, Kokkos::LayoutLeft, device> heating("heating", nc, ns),
      temperature("T", nc, ns), whole_sed("sed", nc, nl);
  Kokkos::View<int**, Kokkos::LayoutLeft, device> eq_status("eq_status", nc, ns),
      whole_status("status", nc, nq);
  kosmos::dust::dust_emission(Space(), g, d.intensity, d.dust_mass, heating, temperature, eq_status,
                              whole_sed, o);
  kosmos::dust::add_stochastic_emission(Space(), g, m, d.intensity, temperature, d.dust_mass,
                                        whole_sed, whole_status);
  const auto ref_sed = to_host(whole_sed);
  const auto ref_status = to_host(whole_status);  // LayoutLeft: (c, q) at c + q * nc

  for (int c = 0; c < nc; ++c) {
    for (int q = 0; q < nq; ++q) {
      const int expected =
          c == 4 ? kosmos::dust::stochastic_no_heating : kosmos::dust::stochastic_ok;
      EXPECT_EQ(status[std::size_t(c) * nq + q], expected) << "cell " << c << " species " << q;
      EXPECT_EQ(status[std::size_t(c) * nq + q], ref_status[std::size_t(c) + std::size_t(q) * nc]);
    }
    LD absorbed = 0, emitted = 0;
    for (int s = 0; s < ns; ++s)
      absorbed += LD(p.dust_mass[c]) * LD(p.number_per_mass[s]) * heating_ref(p, c, s);
    for (int l = 0; l < nl; ++l) {
      const double x = sed[std::size_t(c) * nl + l],
                   y = ref_sed[std::size_t(c) + std::size_t(l) * nc];
      EXPECT_LE(std::fabs(x - y), 1e-10 * std::fabs(y)) << "cell " << c << " wavelength " << l;
      emitted += LD(x) * LD(p.width[l]);
    }
    if (c == 4) {
      EXPECT_EQ(emitted, 0.0L);
      continue;
    }
    // Each stochastic species within its 1 % energy tolerance, the others within o.tolerance.
    EXPECT_LE(std::fabs(double(emitted / absorbed - 1)), m.options.energy_tolerance + o.tolerance)
        << "cell " << c;
  }
}

TYPED_TEST(DustPipelineTest, StochasticChunkStepConservesEnergy) {
  for_each_result_layout(
      [](auto layout) { check_stochastic_chunk_step<TypeParam, decltype(layout)>(); });
}

// The transpose of LayoutLeft results to rows before the copy out, against a host loop: extents
// that are not multiples of the 32 x 32 tiles, T and int.
template <class Space, class V>
void check_columns_to_rows(int n, int m) {
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  Kokkos::View<V**, Kokkos::LayoutLeft, device> columns("columns", n, m);
  Kokkos::View<V**, Kokkos::LayoutRight, device> rows("rows", n, m);
  auto columns_h = Kokkos::create_mirror_view(columns);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) columns_h(i, j) = V(1000 * i + j);
  Kokkos::deep_copy(columns, columns_h);
  kosmos::dust::Impl::columns_to_rows(Space(), columns, rows);
  Space().fence();
  const auto rows_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rows);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) ASSERT_EQ(rows_h(i, j), V(1000 * i + j)) << i << "," << j;
}

TYPED_TEST(DustPipelineTest, ColumnsToRowsMatchesAHostLoop) {
  check_columns_to_rows<TypeParam, double>(45, 70);
  check_columns_to_rows<TypeParam, float>(1, 97);
  check_columns_to_rows<TypeParam, int>(64, 3);
  check_columns_to_rows<TypeParam, int>(0, 5);
}

// The checks run on the device and are read back when the chunk is finished: the error still
// names the absolute cell, the wavelength and the value, and no on_chunk sees the bad chunk.
template <class Space>
void expect_bad_cell(const Problem& p, const std::string& fragment) {
  DeviceProblem<double, Space> d(p);
  const auto g = d.prepare(SolverOptions());
  kosmos::dust::HostCells<double> cells(p.nc(), p.nl(), p.ns());
  for (int c = 0; c < p.nc(); ++c) {
    cells.dust_mass(c) = p.dust_mass[c];
    for (int l = 0; l < p.nl(); ++l) cells.intensity(c, l) = p.intensity[c][l];
  }
  kosmos::dust::PipelineOptions po;
  po.chunk_cells = 4;
  kosmos::dust::EmissionPipeline<double, Space> pipeline(Space(), g, po);
  std::int64_t cells_seen = 0;
  try {
    pipeline.run(p.nc(), decltype(pipeline)::copy_cells_in(cells), cells, SolverOptions(),
                 [&](std::int64_t, std::int64_t n, std::int64_t) { cells_seen += n; });
    ADD_FAILURE() << "no exception; expected one mentioning '" << fragment << "'";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
  EXPECT_LT(cells_seen, p.nc());
}

TYPED_TEST(DustPipelineTest, BadCellsNameTheAbsoluteCell) {
  const auto base = graphite_problem(41, 20, 13);
  auto p = base;
  p.intensity[7][3] = -1.0;
  expect_bad_cell<TypeParam>(p, "validate_cells: intensity(7, 3) = -1 must be finite and >= 0");
  p = base;
  p.intensity[12][19] = std::numeric_limits<double>::infinity();
  expect_bad_cell<TypeParam>(p, "intensity(12, 19) = inf");
  p = base;
  p.dust_mass[10] = 0.0;
  expect_bad_cell<TypeParam>(p, "dust_mass(10) = 0 must be finite and > 0");
}
}  // namespace
