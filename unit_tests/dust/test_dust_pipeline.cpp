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

template <class T, class Space>
void check_pipeline(const kosmos::dust::PipelineOptions& po) {
  auto p = graphite_problem(97, 8, 23, 7);
  std::fill(p.intensity[4].begin(), p.intensity[4].end(), 0.0);  // a zero field among them
  DeviceProblem<T, Space> d(p);
  const SolverOptions o;
  const auto g = d.prepare(o);
  const int nc = p.nc(), ns = p.ns(), nl = p.nl();
  kosmos::dust::HostCells<T> cells(nc, nl, ns);
  for (int c = 0; c < nc; ++c) {
    cells.dust_mass(c) = T(p.dust_mass[c]);
    for (int l = 0; l < nl; ++l) cells.intensity(c, l) = T(p.intensity[c][l]);
  }
  kosmos::dust::EmissionPipeline<T, Space> pipeline(Space(), g, po);
  std::vector<int> seen(std::size_t(nc), 0);
  pipeline.run(decltype(pipeline)::copy_cells_in(cells), cells, o,
               [&](std::int64_t c0, std::int64_t n) {
                 for (std::int64_t c = c0; c < c0 + n; ++c) ++seen[std::size_t(c)];
               });
  for (int c = 0; c < nc; ++c) EXPECT_EQ(seen[std::size_t(c)], 1) << "cell " << c;

  const auto ref = run<T, Space>(p, o);  // the device-resident path
  const double slack = std::is_same<T, float>::value ? 2e-5 : 1e-12;
  for (int c = 0; c < nc; ++c) {
    for (int s = 0; s < ns; ++s) {
      const LD l_h = heating_ref(p, c, s);
      if (c == 4) {
        EXPECT_EQ(cells.status(c, s), kosmos::dust::status_no_heating);
        EXPECT_EQ(cells.temperature(c, s), T(0));
        continue;
      }
      ASSERT_EQ(cells.status(c, s), kosmos::dust::status_converged) << c << "," << s;
      const LD e = emission_ref(p, s, LD(cells.temperature(c, s)));
      EXPECT_LE(std::fabs(double(e / l_h - 1)), o.tolerance + slack) << c << "," << s;
    }
    for (int l = 0; l < nl; ++l) {
      const double x = double(cells.sed(c, l)), y = double(ref.f(c, l));
      EXPECT_LE(std::fabs(x - y), 16 * slack * std::fabs(y)) << "cell " << c << " wavelength " << l;
    }
  }
}

TYPED_TEST(DustPipelineTest, ChunksOnSeveralInstancesMatchTheReference) {
  kosmos::dust::PipelineOptions uneven;  // 23 cells in chunks of 5 over 3 instances
  uneven.chunk_cells = 5;
  uneven.instances = 3;
  check_pipeline<double, TypeParam>(uneven);
  check_pipeline<float, TypeParam>(uneven);
  kosmos::dust::PipelineOptions one;  // one chunk larger than the problem, one instance
  one.chunk_cells = 64;
  one.instances = 1;
  check_pipeline<double, TypeParam>(one);
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
