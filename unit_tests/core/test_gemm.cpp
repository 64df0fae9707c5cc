// Kokkos Kernels gemm smoke test on every enabled space (cuBLAS underneath on CUDA): checks
// C = alpha A B + beta C against a naive host triple loop.
#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Random.hpp>

#include <test_spaces.hpp>

namespace {
template <class Space>
class GemmSmokeTest : public ::testing::Test {};
TYPED_TEST_SUITE(GemmSmokeTest, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

TYPED_TEST(GemmSmokeTest, MatchesNaiveProduct) {
  using Space = TypeParam;
  using Matrix =
      Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::Device<Space, typename Space::memory_space>>;
  const int m = 67, n = 45, k = 93;
  Matrix a("A", m, k), b("B", k, n), c("C", m, n);
  Kokkos::Random_XorShift64_Pool<Space> pool(1234);
  Kokkos::fill_random(a, pool, -1.0, 1.0);
  Kokkos::fill_random(b, pool, -1.0, 1.0);
  Kokkos::fill_random(c, pool, -1.0, 1.0);
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  auto hc0 = Kokkos::create_mirror(c);  // a real copy even for host Views: gemm overwrites c
  Kokkos::deep_copy(hc0, c);

  KokkosBlas::gemm("N", "N", 1.5, a, b, -0.5, c);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = -0.5 * hc0(i, j);
      for (int l = 0; l < k; ++l) ref += 1.5 * ha(i, l) * hb(l, j);
      EXPECT_NEAR(hc(i, j), ref, 1e-12) << "C(" << i << "," << j << ")";
    }
}
}  // namespace
