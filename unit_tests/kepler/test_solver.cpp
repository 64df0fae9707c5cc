// Kepler solvers against an extended-precision reference (long double Newton/bisection after a
// __float128 range reduction), over e in [0, 0.999] and M over +-1000 orbits.
#include <kosmos/kepler/solver.hpp>

#include <kepler/solver_reference.hpp>
#include <test_spaces.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace {

#if defined(__SIZEOF_FLOAT128__) && !defined(__CUDACC__)
using Wide = __float128;
#else
using Wide = long double;
#endif
using kosmos_test::angle_distance;
using kosmos_test::kTwoPiL;
using kosmos_test::LD;
using kosmos_test::solve_reference;

// 2 pi as a sum of three doubles (~160 bits).
constexpr double kTwoPi0 = 6.283185307179586232, kTwoPi1 = 2.4492935982947064e-16,
                 kTwoPi2 = -5.9895396194366793e-33;

// M (exactly as given) reduced to [0, 2pi) in extended precision.
LD reduce_reference(double M) {
  // Cody-Waite with the leading double of 2 pi cut into 32 + 21 bits: every product k * piece
  // that matters is then exact even when Wide is long double (64-bit mantissa, as under nvcc).
  const double head = std::ldexp(std::floor(std::ldexp(kTwoPi0, 29)), -29);
  const double tail = kTwoPi0 - head;
  const Wide two_pi = Wide(kTwoPi0) + Wide(kTwoPi1) + Wide(kTwoPi2);
  const Wide k = Wide(std::floor(LD(M) / kTwoPiL));
  Wide r = ((Wide(M) - k * Wide(head)) - k * Wide(tail)) - (k * Wide(kTwoPi1) + k * Wide(kTwoPi2));
  while (r < 0) r += two_pi;
  while (r >= two_pi) r -= two_pi;
  return LD(r);
}

// Test inputs: a grid of hard cases (M near 0, pi, 2pi and many orbits out, e up to 0.999) plus
// random ones.
void make_inputs(std::vector<double>& M, std::vector<double>& e, int n_random) {
  const double es[] = {0.0, 1e-8, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.99, 0.995, 0.999};
  const double pi = 3.14159265358979323846;
  const double Ms[] = {0.0,
                       1e-12,
                       1e-7,
                       1e-4,
                       1e-2,
                       0.5,
                       1.0,
                       pi - 1e-6,
                       pi,
                       pi + 1e-6,
                       2 * pi - 1e-6,
                       2 * pi,
                       2 * pi + 1e-9,
                       -1e-9,
                       -1.0,
                       1000 * 2 * pi + 1e-3,
                       -1000 * 2 * pi + pi,
                       6283.0};
  for (double ee : es)
    for (double mm : Ms) {
      M.push_back(mm);
      e.push_back(ee);
    }
  std::mt19937_64 rng(2009);
  std::uniform_real_distribution<double> um(-1000 * 2 * pi, 1000 * 2 * pi), ue(0.0, 0.999),
      u01(0.0, 1.0);
  for (int i = 0; i < n_random; ++i) {
    M.push_back(i % 3 == 0 ? 2 * pi * u01(rng) : um(rng));
    // a third of the eccentricities in [0.9, 0.999]
    e.push_back(i % 3 == 1 ? 0.9 + 0.099 * u01(rng) : ue(rng));
  }
}

template <class Space>
class KeplerSolverTest : public ::testing::Test {};
TYPED_TEST_SUITE(KeplerSolverTest, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

struct Bounds {
  double residual;  // |E - e sin E - M| in extended precision
  double scaled;    // |E - E_ref| * (1 - e), and the same for sin E, cos E
};

template <class T>
Bounds bounds_for() {
  // Documented in kosmos/kepler/solver.hpp.
  return std::is_same<T, float>::value ? Bounds{1.5e-6, 1.5e-6} : Bounds{3e-15, 3e-15};
}

template <class Space, class T>
void check_accuracy(kosmos::kepler::Solver solver) {
  std::vector<double> M, e;
  make_inputs(M, e, kosmos_test::is_device_space<Space>() ? 200000 : 20000);
  const int n = int(M.size());
  Kokkos::View<T*, Space> dM("M", n), de("e", n), E("E", n), s("s", n), c("c", n), nu("nu", n);
  Kokkos::View<std::uint8_t*, Space> status("status", n);
  auto hM = Kokkos::create_mirror_view(dM);
  auto he = Kokkos::create_mirror_view(de);
  for (int i = 0; i < n; ++i) {
    hM(i) = T(M[i]);
    he(i) = T(e[i]);
  }
  Kokkos::deep_copy(dM, hM);
  Kokkos::deep_copy(de, he);
  kosmos::kepler::SolverOptions options;
  options.solver = solver;
  kosmos::kepler::solve(Space(), dM, de, E, s, c, nu, status, options);
  auto hE = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), E);
  auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  auto hnu = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), nu);
  auto hst = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), status);
  const Bounds b = bounds_for<T>();
  double worst_res = 0, worst_scaled = 0;
  int failures = 0;
  for (int i = 0; i < n; ++i) {
    const LD m = reduce_reference(double(hM(i))), ee = LD(he(i));
    const LD Eref = solve_reference(m, ee);
    const LD Eo = LD(hE(i));
    const LD res = angle_distance(Eo - ee * sinl(Eo), m);  // residual modulo 2 pi
    const LD w = 1 - ee;
    const LD scaled = std::max({angle_distance(Eo, Eref) * w, fabsl(LD(hs(i)) - sinl(Eref)) * w,
                                fabsl(LD(hc(i)) - cosl(Eref)) * w});
    worst_res = std::max(worst_res, double(res));
    worst_scaled = std::max(worst_scaled, double(scaled));
    // true anomaly: compare through the half-angle form in long double
    const LD nuref = 2 * atan2l(sqrtl(1 + ee) * sinl(Eref / 2), sqrtl(1 - ee) * cosl(Eref / 2));
    const LD nuref2pi = nuref < 0 ? nuref + kTwoPiL : nuref;
    const bool bad = hst(i) != kosmos::kepler::converged || !(Eo >= 0 && Eo < kTwoPiL) ||
                     !(res <= b.residual) || !(scaled <= b.scaled) ||
                     !(angle_distance(LD(hnu(i)), nuref2pi) * w * w <= 20 * b.scaled);
    if (bad && ++failures <= 5)
      ADD_FAILURE() << kosmos::kepler::solver_name(solver) << " M = " << double(hM(i))
                    << " e = " << double(he(i)) << ": E = " << double(Eo) << " ref " << double(Eref)
                    << " residual " << double(res) << " scaled error " << double(scaled) << " nu "
                    << double(hnu(i)) << " ref " << double(nuref2pi) << " status " << int(hst(i));
  }
  EXPECT_EQ(failures, 0);
  std::printf("[kepler] %s %s: %d solutions, max residual %.3g, max (1-e)|dE| %.3g\n",
              kosmos::kepler::solver_name(solver),
              std::is_same<T, float>::value ? "float" : "double", n, worst_res, worst_scaled);
}

TYPED_TEST(KeplerSolverTest, MarkleyDoubleMatchesReference) {
  check_accuracy<TypeParam, double>(kosmos::kepler::Solver::Markley);
}
TYPED_TEST(KeplerSolverTest, MarkleyFloatMatchesReference) {
  check_accuracy<TypeParam, float>(kosmos::kepler::Solver::Markley);
}
TYPED_TEST(KeplerSolverTest, DanbyDoubleMatchesReference) {
  check_accuracy<TypeParam, double>(kosmos::kepler::Solver::Danby);
}
TYPED_TEST(KeplerSolverTest, DanbyFloatMatchesReference) {
  check_accuracy<TypeParam, float>(kosmos::kepler::Solver::Danby);
}

// The host's vectorized Markley path reduces M to the nearest whole turn, so E near 0 (where
// Kepler's equation is conditioned by 1 / (1 - e)) keeps the accuracy of a small number:
// |E - E_ref| itself, not scaled by (1 - e), at most 2e-15 on dfm/libkepler's benchmark problem
// (M evenly over [-50, 50]) for e up to 0.99 (libkepler's SIMD solver: 1.2-1.4e-15 to e = 0.9).
TYPED_TEST(KeplerSolverTest, HostMarkleyIsAccurateNearPeriapsis) {
  if (kosmos_test::is_device_space<TypeParam>())
    GTEST_SKIP() << "the vectorized path is the host's (device spaces: the scaled bound above)";
  const int n = 1 << 16;
  for (const double ecc : {0.1, 0.5, 0.9, 0.99}) {
    Kokkos::View<double*, TypeParam> M("M", n), e("e", n), E("E", n), none;
    Kokkos::View<std::uint8_t*, TypeParam> status("status", n);
    for (int i = 0; i < n; ++i) M(i) = 100.0 * i / (n - 1) - 50.0;
    Kokkos::deep_copy(e, ecc);
    kosmos::kepler::solve(TypeParam(), M, e, E, none, none, none, status);
    TypeParam().fence();
    double worst = 0, worst_M = 0;
    for (int i = 0; i < n; ++i) {
      const double error =
          double(angle_distance(LD(E(i)), solve_reference(reduce_reference(M(i)), LD(ecc))));
      if (error > worst) {
        worst = error;
        worst_M = M(i);
      }
    }
    EXPECT_LE(worst, 2e-15) << "e = " << ecc << ", M = " << worst_M;
  }
}

// Every instruction-set level of the host solve that this CPU can run (the solve dispatches to
// the widest), against the reference: the bound above on libkepler's problem, and the documented
// scaled bound over the hard cases.
TEST(KeplerSolverLevels, EveryLevelTheCpuRunsIsAccurate) {
  using Chunk =
      void (*)(const double*, const double*, int, double*, double*, double*, std::uint8_t*);
  std::vector<std::pair<const char*, Chunk>> levels{
      {"compiler default", kosmos::kepler::Impl::simd_default::markley_chunk}};
#if defined(KOSMOS_KEPLER_X86_64_LEVELS)
  if (__builtin_cpu_supports("x86-64-v2"))
    levels.push_back({"x86-64-v2", kosmos::kepler::Impl::simd_x86_64_v2::markley_chunk});
  if (__builtin_cpu_supports("x86-64-v3"))
    levels.push_back({"x86-64-v3", kosmos::kepler::Impl::simd_x86_64_v3::markley_chunk});
  if (__builtin_cpu_supports("x86-64-v4"))
    levels.push_back({"x86-64-v4", kosmos::kepler::Impl::simd_x86_64_v4::markley_chunk});
#endif
  std::vector<double> M, e;
  make_inputs(M, e, 20000);
  const int grid = 1 << 14;
  for (const double ecc : {0.1, 0.5, 0.9, 0.99})
    for (int i = 0; i < grid; ++i) {
      M.push_back(100.0 * i / (grid - 1) - 50.0);
      e.push_back(ecc);
    }
  const int n = int(M.size()), chunk = kosmos::kepler::Impl::kSimdChunk;
  for (const auto& level : levels) {
    std::vector<double> E(n), s(n), c(n);
    std::vector<std::uint8_t> scalar(n);
    for (int first = 0; first < n; first += chunk)
      level.second(&M[first], &e[first], std::min(chunk, n - first), &E[first], &s[first],
                   &c[first], &scalar[first]);
    int failures = 0;
    for (int i = 0; i < n; ++i) {
      if (scalar[i]) continue;  // solve_one's elements (|M| >= 2^25 and the like)
      const LD Eref = solve_reference(reduce_reference(M[i]), LD(e[i]));
      const LD w = 1 - LD(e[i]);
      const double error = double(angle_distance(LD(E[i]), Eref));
      const double scaled =
          double(std::max({angle_distance(LD(E[i]), Eref) * w, fabsl(LD(s[i]) - sinl(Eref)) * w,
                           fabsl(LD(c[i]) - cosl(Eref)) * w}));
      const bool bad = i >= n - 4 * grid ? !(error <= 2e-15) : !(scaled <= 3e-15);
      if (bad && ++failures <= 3)
        ADD_FAILURE() << level.first << ": M = " << M[i] << " e = " << e[i] << ": |E - E_ref| "
                      << error << ", scaled " << scaled;
    }
    EXPECT_EQ(failures, 0) << level.first;
  }
}

// The iteration cap holds: an unreachable tolerance with max_iterations = 1 returns at once
// with not_converged, never hangs; the default cap converges everywhere (checked above).
template <class Space>
void check_iteration_cap() {
  std::vector<double> M, e;
  make_inputs(M, e, 1000);
  const int n = int(M.size());
  Kokkos::View<double*, Space> dM("M", n), de("e", n), E("E", n);
  Kokkos::View<std::uint8_t*, Space> status("status", n);
  auto hM = Kokkos::create_mirror_view(dM);
  auto he = Kokkos::create_mirror_view(de);
  for (int i = 0; i < n; ++i) {
    hM(i) = M[i];
    he(i) = e[i];
  }
  Kokkos::deep_copy(dM, hM);
  Kokkos::deep_copy(de, he);
  kosmos::kepler::SolverOptions options;
  options.solver = kosmos::kepler::Solver::Danby;
  options.max_iterations = 1;
  options.tolerance = 1e-300;
  kosmos::kepler::solve(Space(), dM, de, E, status, options);
  const auto failures = kosmos::kepler::count_failures(Space(), status);
  EXPECT_GT(failures, n * 9 / 10);  // only exact starts (e = 0 at M = 0, ...) converge
  auto hst = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), status);
  for (int i = 0; i < n; ++i) EXPECT_NE(hst(i), kosmos::kepler::invalid_element);
  // The same inputs with the default cap of 10 all converge.
  options.max_iterations = 10;
  options.tolerance = 0;
  kosmos::kepler::solve(Space(), dM, de, E, status, options);
  EXPECT_EQ(kosmos::kepler::count_failures(Space(), status), 0);
}
TYPED_TEST(KeplerSolverTest, IterationCapHolds) {
  check_iteration_cap<TypeParam>();
}

template <class Space>
void check_invalid_elements() {
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  const double Ms[] = {1.0, 1.0, 1.0, nan, inf, 1.0, 2.0};
  const double es[] = {-0.1, 1.0, nan, 0.5, 0.5, 0.5, 0.0};
  const int n = 7;
  Kokkos::View<double*, Space> dM("M", n), de("e", n), E("E", n);
  Kokkos::View<std::uint8_t*, Space> status("status", n);
  auto hM = Kokkos::create_mirror_view(dM);
  auto he = Kokkos::create_mirror_view(de);
  for (int i = 0; i < n; ++i) {
    hM(i) = Ms[i];
    he(i) = es[i];
  }
  Kokkos::deep_copy(dM, hM);
  Kokkos::deep_copy(de, he);
  for (auto solver : {kosmos::kepler::Solver::Danby, kosmos::kepler::Solver::Markley}) {
    kosmos::kepler::SolverOptions options;
    options.solver = solver;
    kosmos::kepler::solve(Space(), dM, de, E, status, options);
    auto hst = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), status);
    auto hE = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), E);
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(hst(i), kosmos::kepler::invalid_element) << i;
      EXPECT_TRUE(std::isnan(hE(i))) << i;
    }
    EXPECT_EQ(hst(5), kosmos::kepler::converged);
    EXPECT_EQ(hst(6), kosmos::kepler::converged);
    EXPECT_NEAR(hE(6), 2.0, 1e-15);  // e = 0: E = M
  }
}
// sin E and cos E into strided outputs (the host's vectorized path writes contiguous ones in
// place, others through a copy) equal those of contiguous outputs.
TYPED_TEST(KeplerSolverTest, StridedOutputsMatchContiguous) {
  using Strided = Kokkos::View<double*, Kokkos::LayoutStride, TypeParam>;
  const int n = 1000;
  Kokkos::View<double*, TypeParam> M("M", n), e("e", n), E("E", n), s("s", n), c("c", n);
  Kokkos::View<double**, Kokkos::LayoutRight, TypeParam> wide("wide", n, 2);
  Kokkos::View<std::uint8_t*, TypeParam> status("status", n);
  auto hM = Kokkos::create_mirror_view(M);
  auto he = Kokkos::create_mirror_view(e);
  for (int i = 0; i < n; ++i) {
    hM(i) = 0.37 * i - 150;
    he(i) = 0.999 * i / n;
  }
  Kokkos::deep_copy(M, hM);
  Kokkos::deep_copy(e, he);
  const Strided none;
  kosmos::kepler::solve(TypeParam(), M, e, Strided(E), Strided(s), Strided(c), none, status);
  const Strided s_strided = Kokkos::subview(wide, Kokkos::ALL(), 0);
  const Strided c_strided = Kokkos::subview(wide, Kokkos::ALL(), 1);
  Kokkos::View<double*, TypeParam> E2("E2", n);
  kosmos::kepler::solve(TypeParam(), M, e, Strided(E2), s_strided, c_strided, none, status);
  auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), wide);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(hs(i), hw(i, 0)) << i;
    ASSERT_EQ(hc(i), hw(i, 1)) << i;
  }
}

TYPED_TEST(KeplerSolverTest, InvalidElementsAreFlagged) {
  check_invalid_elements<TypeParam>();
}

TYPED_TEST(KeplerSolverTest, MismatchedExtentsAreNamed) {
  using Space = TypeParam;
  Kokkos::View<double*, Space> M("M", 10), e("e", 9), E("E", 10);
  Kokkos::View<std::uint8_t*, Space> status("status", 10);
  try {
    kosmos::kepler::solve(Space(), M, e, E, status);
    FAIL() << "mismatch accepted";
  } catch (const kosmos::invalid_input& ex) {
    EXPECT_NE(std::string(ex.what()).find("e.extent(0) is 9, expected 10"), std::string::npos)
        << ex.what();
  }
  kosmos::kepler::SolverOptions bad;
  bad.max_iterations = 0;
  Kokkos::View<double*, Space> e10("e", 10);
  EXPECT_THROW(kosmos::kepler::solve(Space(), M, e10, E, status, bad), kosmos::invalid_input);
}

TEST(KeplerRangeReduction, ManyOrbitsKeepTheGivenAccuracy) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1e7, 1e7);
  for (int i = 0; i < 100000; ++i) {
    const double M = u(rng);
    const double r = kosmos::kepler::reduce_mean_anomaly(M);
    ASSERT_TRUE(r >= 0 && r < 2 * 3.14159265358979323846) << M;
    EXPECT_LE(double(angle_distance(LD(r), reduce_reference(M))), 2e-15) << M;
    const float Mf = float(M * 1e-3);
    const float rf = kosmos::kepler::reduce_mean_anomaly(Mf);
    EXPECT_LE(double(angle_distance(LD(rf), reduce_reference(double(Mf)))), 1e-6) << Mf;
  }
}
}  // namespace
