// EmissionPipeline: cells in (pinned) host memory streamed through the device in chunks on several
// instances give the energy balance of the long-double reference, the same SEDs as the
// device-resident path, and every chunk exactly once to on_chunk.
#include "dust_test_problem.hpp"

#include <kosmos/dust/pipeline.hpp>

#include <test_spaces.hpp>

namespace {
using namespace dust_test;
using kosmos::dust::SolverOptions;

template <class Space>
class DustPipelineTest : public ::testing::Test {};
TYPED_TEST_SUITE(DustPipelineTest, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

// ring: the results land in a HostCells of ring_rows() rows; on_chunk copies them out.
template <class T, class Space>
void check_pipeline(const kosmos::dust::PipelineOptions& po, bool ring) {
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
  kosmos::dust::EmissionPipeline<T, Space> pipeline(Space(), g, po);
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
  for (bool ring : {false, true}) {
    check_pipeline<double, TypeParam>(uneven, ring);
    check_pipeline<float, TypeParam>(uneven, ring);
  }
  kosmos::dust::PipelineOptions one;  // one chunk larger than the problem, one instance
  one.chunk_cells = 64;
  one.instances = 1;
  check_pipeline<double, TypeParam>(one, false);
}

TYPED_TEST(DustPipelineTest, BadCellsNameTheAbsoluteCell) {
  using Space = TypeParam;
  auto p = graphite_problem(41, 20, 9);
  p.intensity[7][3] = -1.0;
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
  try {
    pipeline.run(cells, SolverOptions());
    ADD_FAILURE() << "no exception for a negative intensity";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("intensity(7, 3) = -1"), std::string::npos) << e.what();
  }
}
}  // namespace
