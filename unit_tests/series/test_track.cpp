// The path tracker (kosmos/series/track.hpp) on systems whose solution counts are known:
//   univariate cubics with analytic roots (1, 2, 3; the 4 roots of x^4 + 1);
//   a double root (x^3 - 3 x + 2 = (x - 1)^2 (x + 2)) and a tangency (a circle and a tangent
//   line), whose double roots must be flagged singular with multiplicity 2 (the tangency's
//   paths end in the Cauchy end game: winding number 2 and 1e-10 accuracy, where Newton's
//   method at t = 1 alone gives about 1e-8);
//   cyclic 5-roots: 120 total-degree paths, 70 isolated solutions, 50 paths at infinity;
//   katsura 6: 64 paths, 64 regular solutions; random dense quadratic systems in 6 and 8
//   variables: 64 and 256 regular solutions (Bezout's bound is reached by a generic dense system);
//   cyclic 5-roots with seed 3 in double alone (a path that passes near a fixed chart's
//   hyperplane at infinity: the dynamic chart must carry it);
//   a path of cyclic 7 that fails in double (its steps collapse far from t = 1) and must be
//   tracked again in double double (precision escalation) to its regular solution;
//   the parameter homotopy: two circles with fixed centres and radii moved from a generic complex
//   instance to real ones (intersecting, tangent-free, disjoint: complex points), against the
//   analytic intersection points.
// Every distinct solution is checked independently of the tracker: F(x) in MPFR (256 bits) from
// the exact limbs, and the Newton correction |J(x)^{-1} F(x)| (J in double from the same
// expansion), which bounds the distance to a true regular root to first order, must be below
// 1e-10 while the distinct solutions lie at least 1e-4 apart: so they are as many distinct roots.
#include "mpfr_reference.hpp"

#include <kosmos/series/example_systems.hpp>
#include <kosmos/series/track.hpp>

#include <test_spaces.hpp>

#include <algorithm>
#include <cmath>
#include <complex>

namespace {
using namespace kosmos::series;
using kosmos_test::Mp;
using Complex = std::complex<double>;
constexpr mpfr_prec_t bits = 256;

struct MpComplex {
  Mp re{bits}, im{bits};
};

MpComplex mp_of(const PathResult& p, int j) {
  MpComplex z;
  const std::size_t N = std::size_t(p.precision);
  for (std::size_t l = 0; l < N; ++l) {
    mpfr_add_d(z.re.get(), z.re.get(), p.limbs[2 * N * std::size_t(j) + l], MPFR_RNDN);
    mpfr_add_d(z.im.get(), z.im.get(), p.limbs[2 * N * std::size_t(j) + N + l], MPFR_RNDN);
  }
  return z;
}

void mp_mul(MpComplex& a, const MpComplex& b) {
  Mp rr(bits), ii(bits), ri(bits), ir(bits);
  mpfr_mul(rr.get(), a.re.get(), b.re.get(), MPFR_RNDN);
  mpfr_mul(ii.get(), a.im.get(), b.im.get(), MPFR_RNDN);
  mpfr_mul(ri.get(), a.re.get(), b.im.get(), MPFR_RNDN);
  mpfr_mul(ir.get(), a.im.get(), b.re.get(), MPFR_RNDN);
  mpfr_sub(a.re.get(), rr.get(), ii.get(), MPFR_RNDN);
  mpfr_add(a.im.get(), ri.get(), ir.get(), MPFR_RNDN);
}

// The system's terms read back from the NumericSystem (double coefficients, degree 0).
struct TermView {
  Complex c;
  std::vector<int> v, e;
};
std::vector<std::vector<TermView>> terms_of(const NumericSystem& s) {
  std::vector<std::vector<TermView>> out;
  for (const auto& p : s.polynomials) {
    const std::size_t count = p.structure.monomials.size() + 1;
    std::vector<TermView> terms;
    for (std::size_t k = 0; k < count; ++k) {
      TermView t{{p.coefficients[k], s.complex ? p.coefficients[k + count] : 0.0}, {}, {}};
      if (k > 0) {
        t.v = p.structure.monomials[k - 1].variables;
        t.e = p.structure.monomials[k - 1].exponents;
        if (t.e.empty()) t.e.assign(t.v.size(), 1);
      }
      terms.push_back(t);
    }
    out.push_back(terms);
  }
  return out;
}

// F_i(x) in MPFR from the exact limbs.
std::vector<MpComplex> mp_values(const std::vector<std::vector<TermView>>& f, const PathResult& p,
                                 int n) {
  std::vector<MpComplex> x, values;
  for (int j = 0; j < n; ++j) x.push_back(mp_of(p, j));
  for (const auto& poly : f) {
    MpComplex sum;
    for (const auto& t : poly) {
      MpComplex term;
      mpfr_set_d(term.re.get(), t.c.real(), MPFR_RNDN);
      mpfr_set_d(term.im.get(), t.c.imag(), MPFR_RNDN);
      for (std::size_t q = 0; q < t.v.size(); ++q)
        for (int e = 0; e < t.e[q]; ++e) mp_mul(term, x[std::size_t(t.v[q])]);
      mpfr_add(sum.re.get(), sum.re.get(), term.re.get(), MPFR_RNDN);
      mpfr_add(sum.im.get(), sum.im.get(), term.im.get(), MPFR_RNDN);
    }
    values.push_back(sum);
  }
  return values;
}

// max_i |F_i(x)| in MPFR from the exact limbs.
double mp_residual(const std::vector<std::vector<TermView>>& f, const PathResult& p, int n) {
  double r = 0;
  for (const MpComplex& v : mp_values(f, p, n))
    r = std::max(r, std::hypot(v.re.to_double(), v.im.to_double()));
  return r;
}

// |J(x)^{-1} r| with J in double (Gaussian elimination with partial pivoting) and r = F(x) from
// MPFR rounded to double: the first-order distance to the nearest regular root.
double newton_correction(const std::vector<std::vector<TermView>>& f, const PathResult& p, int n) {
  std::vector<Complex> x;
  for (int j = 0; j < n; ++j) x.push_back(p.x(j));
  const std::vector<MpComplex> values = mp_values(f, p, n);
  std::vector<std::vector<Complex>> a(std::size_t(n),
                                      std::vector<Complex>(std::size_t(n) + 1, 0.0));
  for (int i = 0; i < n; ++i) {
    for (const auto& t : f[std::size_t(i)])
      for (std::size_t q = 0; q < t.v.size(); ++q) {
        Complex d = t.c * double(t.e[q]) * std::pow(x[std::size_t(t.v[q])], t.e[q] - 1);
        for (std::size_t r = 0; r < t.v.size(); ++r)
          if (r != q) d *= std::pow(x[std::size_t(t.v[r])], t.e[r]);
        a[std::size_t(i)][std::size_t(t.v[q])] += d;
      }
    a[std::size_t(i)][std::size_t(n)] = {values[std::size_t(i)].re.to_double(),
                                         values[std::size_t(i)].im.to_double()};
  }
  for (int k = 0; k < n; ++k) {
    int piv = k;
    for (int i = k + 1; i < n; ++i)
      if (std::abs(a[std::size_t(i)][std::size_t(k)]) >
          std::abs(a[std::size_t(piv)][std::size_t(k)]))
        piv = i;
    std::swap(a[std::size_t(k)], a[std::size_t(piv)]);
    for (int i = k + 1; i < n; ++i) {
      const Complex l = a[std::size_t(i)][std::size_t(k)] / a[std::size_t(k)][std::size_t(k)];
      for (int j = k; j <= n; ++j)
        a[std::size_t(i)][std::size_t(j)] -= l * a[std::size_t(k)][std::size_t(j)];
    }
  }
  std::vector<Complex> dx(static_cast<std::size_t>(n));
  double norm = 0;
  for (int k = n - 1; k >= 0; --k) {
    Complex b = a[std::size_t(k)][std::size_t(n)];
    for (int j = k + 1; j < n; ++j) b -= a[std::size_t(k)][std::size_t(j)] * dx[std::size_t(j)];
    dx[std::size_t(k)] = b / a[std::size_t(k)][std::size_t(k)];
    norm = std::max(norm, std::abs(dx[std::size_t(k)]));
  }
  return norm;
}

// The end point is a root in MPFR: residual and first-order distance to the nearest regular root
// both below 1e-10 (1 + |x|).
void expect_mpfr_root(const std::vector<std::vector<TermView>>& f, const PathResult& p, int n) {
  const double scale = 1.0 + p.max_abs;
  EXPECT_LT(mp_residual(f, p, n), 1e-10 * scale) << "path " << p.index;
  EXPECT_LT(newton_correction(f, p, n), 1e-10 * scale) << "path " << p.index;
}

// Checks counts and every distinct regular solution against MPFR; returns the solutions.
void check_all_regular(const NumericSystem& system, const TrackResult& r, std::int64_t paths,
                       std::int64_t solutions, std::int64_t at_infinity) {
  const int n = system.num_variables;
  EXPECT_EQ(std::int64_t(r.paths.size()), paths);
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.singular, 0);
  EXPECT_EQ(r.at_infinity, at_infinity);
  EXPECT_EQ(r.regular, solutions);
  ASSERT_EQ(std::int64_t(r.solutions.size()), solutions);
  const auto f = terms_of(system);
  for (const Solution& s : r.solutions) {
    EXPECT_EQ(s.multiplicity, 1);
    const PathResult& p = r.paths[std::size_t(s.path)];
    expect_mpfr_root(f, p, n);
    EXPECT_LT(p.condition, 1e8);
  }
  double closest = 1e300;
  for (std::size_t a = 0; a < r.solutions.size(); ++a)
    for (std::size_t b = 0; b < a; ++b) {
      const PathResult& pa = r.paths[std::size_t(r.solutions[a].path)];
      const PathResult& pb = r.paths[std::size_t(r.solutions[b].path)];
      double d = 0;
      for (int j = 0; j < n; ++j) d = std::max(d, std::abs(pa.x(j) - pb.x(j)));
      closest = std::min(closest, d);
    }
  EXPECT_GT(closest, 1e-4);
}

template <class Space>
class TrackTest : public ::testing::Test {};
TYPED_TEST_SUITE(TrackTest, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

TYPED_TEST(TrackTest, UnivariateRootsAreTheAnalyticOnes) {
  TrackOptions options;
  for (int N : {1, 2, 4}) {
    options.precision = options.max_precision = N;
    // x^3 - 6 x^2 + 11 x - 6 = (x - 1)(x - 2)(x - 3)
    const NumericSystem cubic = system_from_terms(
        1, {{Term{1.0, {0}, {3}}, Term{-6.0, {0}, {2}}, Term{11.0, {0}, {}}, Term{-6.0, {}, {}}}},
        "cubic");
    const TrackResult r = track(TypeParam(), cubic, options);
    ASSERT_EQ(r.solutions.size(), 3u);
    std::vector<double> roots;
    for (const Solution& s : r.solutions) {
      const PathResult& p = r.paths[std::size_t(s.path)];
      EXPECT_EQ(p.status, PathStatus::regular);
      EXPECT_EQ(p.precision, N);
      EXPECT_LT(std::abs(p.x(0).imag()), 1e-14);
      roots.push_back(p.x(0).real());
      // the limbs carry the precision: |x - k| in MPFR within 8 u_N times the root's condition
      // sum |c_j| k^j / |F'(k)| (the forward error of Newton's method in N-double)
      const double k = std::round(p.x(0).real());
      Mp diff = mp_of(p, 0).re;
      mpfr_sub_d(diff.get(), diff.get(), k, MPFR_RNDN);
      const double condition =
          (k * k * k + 6 * k * k + 11 * k + 6) / std::fabs(3 * k * k - 12 * k + 11);
      EXPECT_LE(std::fabs(diff.to_double()), 8 * condition * std::pow(0x1p-53, N)) << "N = " << N;
    }
    std::sort(roots.begin(), roots.end());
    EXPECT_NEAR(roots[0], 1.0, 1e-14);
    EXPECT_NEAR(roots[1], 2.0, 1e-14);
    EXPECT_NEAR(roots[2], 3.0, 1e-14);
  }
  // x^4 + 1: the four primitive 8th roots of unity
  const NumericSystem quartic =
      system_from_terms(1, {{Term{1.0, {0}, {4}}, Term{1.0, {}, {}}}}, "x^4+1");
  const TrackResult r = track(TypeParam(), quartic, options);
  ASSERT_EQ(r.solutions.size(), 4u);
  for (const Solution& s : r.solutions) {
    const Complex z = r.paths[std::size_t(s.path)].x(0);
    EXPECT_NEAR(std::abs(z), 1.0, 1e-14);
    EXPECT_NEAR(std::fabs(z.real()), std::sqrt(0.5), 1e-14);
    EXPECT_NEAR(std::fabs(z.imag()), std::sqrt(0.5), 1e-14);
  }
}

TYPED_TEST(TrackTest, DoubleRootsAreFlaggedSingular) {
  TrackOptions options;
  // (x - 1)^2 (x + 2) = x^3 - 3 x + 2
  const NumericSystem cubic = system_from_terms(
      1, {{Term{1.0, {0}, {3}}, Term{-3.0, {0}, {}}, Term{2.0, {}, {}}}}, "double root");
  TrackResult r = track(TypeParam(), cubic, options);
  ASSERT_EQ(r.solutions.size(), 2u);
  EXPECT_EQ(r.singular, 2);
  EXPECT_EQ(r.regular, 1);
  for (const Solution& s : r.solutions) {
    const Complex z = r.paths[std::size_t(s.path)].x(0);
    if (s.singular) {
      EXPECT_EQ(s.multiplicity, 2);
      // reached by steps (Newton at t = 1 converges linearly: about 1e-8)
      EXPECT_LT(std::abs(z - 1.0), 1e-6);
    } else {
      EXPECT_EQ(s.multiplicity, 1);
      EXPECT_LT(std::abs(z + 2.0), 1e-14);
    }
  }
  // x^2 + y^2 - 1 = 0 and the tangent x - 1 = 0 meet twice at (1, 0)
  const NumericSystem tangency =
      system_from_terms(2,
                        {{Term{1.0, {0}, {2}}, Term{1.0, {1}, {2}}, Term{-1.0, {}, {}}},
                         {Term{1.0, {0}, {}}, Term{-1.0, {}, {}}}},
                        "tangency");
  r = track(TypeParam(), tangency, options);
  ASSERT_EQ(r.solutions.size(), 1u);
  EXPECT_TRUE(r.solutions[0].singular);
  EXPECT_EQ(r.solutions[0].multiplicity, 2);
  const PathResult& p = r.paths[std::size_t(r.solutions[0].path)];
  EXPECT_EQ(p.winding, 2);
  EXPECT_LT(std::abs(p.x(0) - 1.0), 1e-10);
  EXPECT_LT(std::abs(p.x(1)), 1e-10);
}

// x - y = 0, x - y = 1 (inconsistent): the total-degree path diverges, x ~ (1 - t)^-2. Stopped by
// max_steps short of t = 1, it is at infinity when its size is above diverging_size (its growth
// over the second half of the last quarter: v ~ -2), else failed (and re-tracked in a run that
// allows raises).
TYPED_TEST(TrackTest, PathStoppedWhileDivergingIsAtInfinity) {
  const NumericSystem parallel_lines =
      system_from_terms(2,
                        {{Term{1.0, {0}, {}}, Term{-1.0, {1}, {}}},
                         {Term{1.0, {0}, {}}, Term{-1.0, {1}, {}}, Term{-1.0, {}, {}}}},
                        "parallel lines");
  TrackOptions options;
  options.precision = options.max_precision = 1;
  options.reruns = 0;
  options.max_step = 0.05;
  options.max_steps = 16;
  options.diverging_size = 1e300;
  const TrackResult stopped = track(TypeParam(), parallel_lines, options);
  ASSERT_EQ(stopped.paths.size(), 1u);
  const PathResult& p = stopped.paths[0];
  EXPECT_EQ(p.status, PathStatus::failed);
  EXPECT_EQ(p.steps, options.max_steps);
  EXPECT_LT(p.t, 0.9);
  ASSERT_GT(p.max_abs, 2.0);  // grown from |x| = 1
  options.diverging_size = 0.5 * p.max_abs;
  const TrackResult diverging = track(TypeParam(), parallel_lines, options);
  EXPECT_EQ(diverging.paths[0].status, PathStatus::at_infinity);
  EXPECT_EQ(diverging.at_infinity, 1);
  EXPECT_EQ(diverging.failed, 0);
  EXPECT_TRUE(diverging.solutions.empty());
  options.diverging_size = 2 * p.max_abs;
  EXPECT_EQ(track(TypeParam(), parallel_lines, options).paths[0].status, PathStatus::failed);

  // The check comes every quarter of max_steps: with diverging_size between the path's sizes
  // after 8 and 12 steps, a run allowed 16 stops at step 12 (the third quarter), at infinity.
  const auto size_after = [&](int steps) {
    options.max_steps = steps;
    options.diverging_size = 1e300;
    const PathResult end = track(TypeParam(), parallel_lines, options).paths[0];
    EXPECT_EQ(end.steps, steps);
    return end.max_abs;
  };
  const double size8 = size_after(8), size12 = size_after(12);
  ASSERT_GT(size12, size8);
  options.max_steps = 16;
  options.diverging_size = 0.5 * (size8 + size12);
  const PathResult early = track(TypeParam(), parallel_lines, options).paths[0];
  EXPECT_EQ(early.status, PathStatus::at_infinity);
  EXPECT_EQ(early.steps, 12);
}

TYPED_TEST(TrackTest, Cyclic5HasSeventyIsolatedSolutions) {
  const NumericSystem system = cyclic_system(5);
  const TrackResult r = track(TypeParam(), system, TrackOptions{});
  check_all_regular(system, r, 120, 70, 50);
}

// Cyclic 5's paths to infinity end on its singular solution set at infinity, where eta shrinks
// like (1 - t)^mu with mu > 1 while |x| grows and the steps crawl: the valuation test and the
// singular-eta test stop them short of the end game's radius, the solutions unchanged.
TYPED_TEST(TrackTest, PathsToTheSingularSetAtInfinityStopBeforeTheEndGame) {
  TrackOptions options;
  options.precision = options.max_precision = 1;
  const NumericSystem system = cyclic_system(5);
  const TrackResult r = track(TypeParam(), system, options);
  check_all_regular(system, r, 120, 70, 50);
  int stopped = 0;
  for (const PathResult& p : r.paths) {
    if (p.status != PathStatus::at_infinity || !(1.0 - p.t > options.endgame_distance)) continue;
    ++stopped;
    EXPECT_LT(1.0 - p.t, options.endgame_stall);  // in the end-game zone
    EXPECT_LT(p.steps, options.max_steps / 2);
  }
  EXPECT_GE(stopped, 20);  // 30 of 50 here on OpenMP (10, by the quarter-wise test, without these)
}

TYPED_TEST(TrackTest, Katsura6HasSixtyFourSolutions) {
  const NumericSystem system = katsura_system(6);
  const TrackResult r = track(TypeParam(), system, TrackOptions{});
  check_all_regular(system, r, 64, 64, 0);
}

TYPED_TEST(TrackTest, RandomDenseQuadraticReachesTheBezoutBound) {
  const NumericSystem system = random_dense_system(6, 2, 7);
  const TrackResult r = track(TypeParam(), system, TrackOptions{});
  check_all_regular(system, r, 64, 64, 0);
}

TYPED_TEST(TrackTest, RandomDenseQuadraticInEightVariables) {
  TrackOptions options;
  options.precision = options.max_precision = 1;
  const NumericSystem system = random_dense_system(8, 2, 29);
  const TrackResult r = track(TypeParam(), system, options);
  check_all_regular(system, r, 256, 256, 0);
}

// A path's rows spread over 1 to 32 vector lanes on a GPU (one lane on host spaces): every lane
// count finds the same solutions by the same paths (the lanes change only the order of a few sums).
TYPED_TEST(TrackTest, EveryLaneCountFindsTheSameSolutions) {
  const NumericSystem system = katsura_system(6);
  TrackOptions options;
  options.lanes_per_path = 1;
  const TrackResult one = track(TypeParam(), system, options);
  check_all_regular(system, one, 64, 64, 0);
  for (const int lanes : {2, 8, 32}) {
    options.lanes_per_path = lanes;
    const TrackResult r = track(TypeParam(), system, options);
    check_all_regular(system, r, 64, 64, 0);
    for (std::size_t p = 0; p < r.paths.size(); ++p)
      for (int j = 0; j < system.num_variables; ++j)
        EXPECT_LT(std::abs(r.paths[p].x(j) - one.paths[p].x(j)), 1e-9)
            << lanes << " lanes, path " << p << ", x" << j + 1;
  }
}

TYPED_TEST(TrackTest, Cyclic5Seed3InDoubleAlone) {
  TrackOptions options;
  options.seed = 3;
  options.precision = options.max_precision = 1;
  const NumericSystem system = cyclic_system(5);
  // path 82 (number 81) alone: with a fixed random chart it crawled 4000 steps near t = 0.5333
  options.paths = {81};
  TrackResult r = track(TypeParam(), system, options);
  ASSERT_EQ(r.paths.size(), 1u);
  EXPECT_EQ(r.paths[0].index, 81);
  EXPECT_EQ(r.paths[0].status, PathStatus::regular);
  EXPECT_LT(r.paths[0].steps, 400);
  options.paths.clear();
  r = track(TypeParam(), system, options);
  check_all_regular(system, r, 120, 70, 50);
}

TYPED_TEST(TrackTest, Cyclic7PathWhoseStepsCollapseFarFromTheEndIsTrackedAgain) {
  // cyclic 7 with seed 2: the steps of paths 2219 and 2722 collapse at 1 - t of about 0.1 (their
  // near approach, not the end's singularity); in double a chord of the Cauchy end game started
  // there fails and Newton's method at t = 1 from its first point takes both to one solution (a
  // path jump). Both are raised; in double double they go on stepping: path 2722 must find the
  // regular solution, path 2219 goes to infinity
  TrackOptions options;
  options.seed = 2;
  options.max_precision = 2;
  options.paths = {2218, 2721};
  const NumericSystem system = cyclic_system(7);
  const TrackResult r = track(TypeParam(), system, options);
  ASSERT_EQ(r.paths.size(), options.paths.size());
  EXPECT_EQ(r.raised, 2);
  EXPECT_EQ(r.passes, 2);
  EXPECT_EQ(r.count_precision(2), 2);
  const auto path = [](const TrackResult& result, std::int64_t index) {
    for (const PathResult& p : result.paths)
      if (p.index == index) return p;
    ADD_FAILURE() << "no path " << index;
    return PathResult();
  };
  EXPECT_EQ(path(r, 2218).status, PathStatus::at_infinity);
  const PathResult regular = path(r, 2721);
  EXPECT_EQ(regular.status, PathStatus::regular);
  EXPECT_EQ(regular.precision, 2);
  expect_mpfr_root(terms_of(system), regular, 7);
  // On a GPU the re-run (two paths) ran on the host's cores; on the GPU itself it ends at the
  // same solution
  options.host_pass_paths = 0;
  const PathResult on_space = path(track(TypeParam(), system, options), 2721);
  EXPECT_EQ(on_space.status, PathStatus::regular);
  for (int j = 0; j < 7; ++j)
    EXPECT_LT(std::abs(on_space.x(j) - regular.x(j)), 1e-10 * (1 + regular.max_abs));
}

TYPED_TEST(TrackTest, Cyclic7IllConditionedEndsAreRefinedFromThePath) {
  // cyclic 7 with seed 1: paths 198 and 1050 end at regular solutions with |x| = 9.41 and
  // condition 1.7e7; in double the steps shrink below 1 - t near 1e-6 and the Cauchy loops there
  // do not close (the corrector's noise is above the loops' spread). Newton's method at t = 1 from
  // the mean of the loops' samples failed (residual 1.4, both solutions missing); from the loops'
  // first point, a point of the path, it converges
  TrackOptions options;
  options.seed = 1;
  options.precision = options.max_precision = 1;
  options.paths = {197, 1049};
  const NumericSystem system = cyclic_system(7);
  const TrackResult r = track(TypeParam(), system, options);
  const auto f = terms_of(system);
  ASSERT_EQ(r.paths.size(), options.paths.size());
  EXPECT_EQ(r.solutions.size(), 2u);
  for (const PathResult& p : r.paths) {
    EXPECT_EQ(p.status, PathStatus::regular) << "path " << p.index;
    EXPECT_GT(p.condition, 1e6) << "path " << p.index;
    EXPECT_NEAR(p.max_abs, 9.41, 0.01) << "path " << p.index;
    expect_mpfr_root(f, p, 7);
  }
}

TYPED_TEST(TrackTest, Cyclic7EndGameIsRetriedCloserToTheEnd) {
  // cyclic 7 with seed 2021: path 172 goes to a regular solution of condition 1e7 at |x| = 9.41;
  // in double the loops near its end do not close and Newton's method at t = 1 from the path's
  // point does not converge (residual 1.4). The re-run in double double goes on stepping and tries
  // the end game again a decade closer (it was not retried below 1e-6: the path failed in every
  // precision)
  TrackOptions options;
  options.seed = 2021;
  options.paths = {171};
  const NumericSystem system = cyclic_system(7);
  const TrackResult r = track(TypeParam(), system, options);
  const auto f = terms_of(system);
  ASSERT_EQ(r.paths.size(), 1u);
  const PathResult& p = r.paths[0];
  EXPECT_EQ(p.status, PathStatus::regular);
  EXPECT_EQ(p.precision, 2);
  EXPECT_EQ(p.winding, 1);
  EXPECT_NEAR(p.max_abs, 9.41, 0.01);
  expect_mpfr_root(f, p, 7);
}

// (x - a1)^2 + (y - b1)^2 = q1, (x - a2)^2 + (y - b2)^2 = q2: affine in the parameters q.
NumericSystem circles(std::complex<double> q1, std::complex<double> q2) {
  const double a1 = 0.5, b1 = -1, a2 = 2, b2 = 1.5;
  return system_from_terms(2,
                           {{Term{1.0, {0}, {2}}, Term{1.0, {1}, {2}}, Term{-2 * a1, {0}, {}},
                             Term{-2 * b1, {1}, {}}, Term{a1 * a1 + b1 * b1 - q1, {}, {}}},
                            {Term{1.0, {0}, {2}}, Term{1.0, {1}, {2}}, Term{-2 * a2, {0}, {}},
                             Term{-2 * b2, {1}, {}}, Term{a2 * a2 + b2 * b2 - q2, {}, {}}}},
                           "circles");
}

TYPED_TEST(TrackTest, ParameterHomotopyMovesCircleIntersections) {
  const double a1 = 0.5, b1 = -1, a2 = 2, b2 = 1.5;
  const NumericSystem generic = circles({0.83, -1.21}, {-0.37, 2.09});
  const TrackResult start = track(TypeParam(), generic, TrackOptions{});
  ASSERT_EQ(start.regular, 2);
  ASSERT_EQ(start.at_infinity, 2);
  // radii^2: two real points, again two real points, no real point (complex conjugate pair)
  const double radii[][2] = {{4.0, 5.0}, {9.0, 1.0}, {0.25, 0.5}};
  for (const auto& q : radii) {
    const NumericSystem target = circles(q[0], q[1]);
    const TrackResult r = track_parameter(TypeParam(), generic, start, target, TrackOptions{});
    ASSERT_EQ(r.paths.size(), 2u);
    EXPECT_EQ(r.regular, 2);
    ASSERT_EQ(r.solutions.size(), 2u);
    // analytic: along the centre line at distance m from c1, +- h across it
    const double dx = a2 - a1, dy = b2 - b1, d = std::hypot(dx, dy);
    const double m = (d * d + q[0] - q[1]) / (2 * d);
    const Complex h = std::sqrt(Complex(q[0] - m * m));
    const Complex ex(dx / d), ey(dy / d);
    const Complex expected[2][2] = {{a1 + m * ex - h * ey, b1 + m * ey + h * ex},
                                    {a1 + m * ex + h * ey, b1 + m * ey - h * ex}};
    for (const Solution& s : r.solutions) {
      const PathResult& p = r.paths[std::size_t(s.path)];
      double best = 1e300;
      for (const auto& e : expected)
        best = std::min(best, std::max(std::abs(p.x(0) - e[0]), std::abs(p.x(1) - e[1])));
      EXPECT_LT(best, 1e-12) << "q = " << q[0] << ", " << q[1];
    }
  }
  TrackOptions bad;
  bad.paths = {2};
  EXPECT_THROW(track_parameter(TypeParam(), generic, start, circles(4.0, 5.0), bad),
               kosmos::invalid_input);
}

TYPED_TEST(TrackTest, DoubleDoubleTrackingGivesDoubleDoubleSolutions) {
  TrackOptions options;
  options.precision = options.max_precision = 2;
  const NumericSystem system = katsura_system(3);
  const TrackResult r = track(TypeParam(), system, options);
  check_all_regular(system, r, 8, 8, 0);
  const auto f = terms_of(system);
  for (const Solution& s : r.solutions)
    EXPECT_LT(mp_residual(f, r.paths[std::size_t(s.path)], 4), 1e-28);
}

TEST(TrackInput, BadSystemsAndOptionsAreRefused) {
  const NumericSystem not_square =
      system_from_terms(2, {{Term{1.0, {0}, {}}, Term{1.0, {1}, {}}}}, "ns");
  EXPECT_THROW(track(Kokkos::DefaultHostExecutionSpace(), not_square, TrackOptions{}),
               kosmos::invalid_input);
  const NumericSystem constant = system_from_terms(1, {{Term{2.0, {}, {}}}}, "c");
  EXPECT_THROW(track(Kokkos::DefaultHostExecutionSpace(), constant, TrackOptions{}),
               kosmos::invalid_input);
  TrackOptions bad;
  bad.precision = 3;
  EXPECT_THROW(track(Kokkos::DefaultHostExecutionSpace(), cyclic_system(3), bad),
               kosmos::invalid_input);
  bad = TrackOptions{};
  bad.paths = {3, 3};
  EXPECT_THROW(track(Kokkos::DefaultHostExecutionSpace(), cyclic_system(3), bad),
               kosmos::invalid_input);
  bad.paths = {6};
  EXPECT_THROW(track(Kokkos::DefaultHostExecutionSpace(), cyclic_system(3), bad),
               kosmos::invalid_input);
  bad = TrackOptions{};
  bad.max_paths = 100;
  EXPECT_THROW(track(Kokkos::DefaultHostExecutionSpace(), cyclic_system(5), bad),
               kosmos::invalid_input);
  for (const int lanes : {-1, 3, 64}) {
    bad = TrackOptions{};
    bad.lanes_per_path = lanes;
    EXPECT_THROW(track(Kokkos::DefaultHostExecutionSpace(), cyclic_system(3), bad),
                 kosmos::invalid_input);
  }
  for (const double collapse : {0.0, 1.0, std::nan("")}) {
    bad = TrackOptions{};
    bad.endgame_collapse = collapse;
    EXPECT_THROW(track(Kokkos::DefaultHostExecutionSpace(), cyclic_system(3), bad),
                 kosmos::invalid_input);
  }
}
}  // namespace
