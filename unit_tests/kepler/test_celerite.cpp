// The O(N J^2) celerite likelihood against the dense-matrix Gaussian likelihood (Cholesky in
// double), with the covariances built from the closed-form SHO kernel of Foreman-Mackey et al.
// (2017, eq. 21 and its overdamped counterpart) rather than from the celerite coefficients.
#include "../test_spaces.hpp"

#include <kosmos/kepler/celerite.hpp>

#include "dense_gp_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace {
using kosmos_test::dense_log_likelihood;
using kosmos_test::kPi;
using kosmos_test::rotation_closed_form;
using kosmos_test::sho_sigma_rho_tau;

struct Case {
  kosmos::kepler::CeleriteTerms terms;
  double (*covariance)(const double*, double);
  double p[5];
};

// Random sorted times over 120 d (with a near-duplicate pair), residuals and variances.
void synthetic(int n, std::vector<double>& t, std::vector<double>& r, std::vector<double>& var,
               unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  t.resize(std::size_t(n));
  for (auto& x : t) x = -60 + 120 * u(rng);
  std::sort(t.begin(), t.end());
  t[5] = t[4] + 1e-4;
  r.resize(std::size_t(n));
  var.resize(std::size_t(n));
  for (int i = 0; i < n; ++i) {
    r[std::size_t(i)] = 6 * std::sin(0.3 * t[std::size_t(i)]) + 3 * (u(rng) - 0.5);
    var[std::size_t(i)] = 0.5 + 2 * u(rng);
  }
}

std::vector<Case> cases() {
  using namespace kosmos::kepler;
  auto sho = [](const double* p, double tau) { return sho_sigma_rho_tau(p[0], p[1], p[2], tau); };
  auto rot = [](const double* p, double tau) {
    return rotation_closed_form(p[0], p[1], p[2], p[3], p[4], tau);
  };
  return {
      {sho_kernel(4.0, 12.0, 30.0), sho, {4.0, 12.0, 30.0, 0, 0}},  // underdamped, Q = 7.9
      {sho_kernel(3.0, 20.0, 2.0), sho, {3.0, 20.0, 2.0, 0, 0}},    // overdamped, Q = 0.31
      {rotation_kernel(5.0, 9.5, 0.8, 3.0, 0.4), rot, {5.0, 9.5, 0.8, 3.0, 0.4}},
  };
}

template <class Space>
struct KeplerCeleriteTest : ::testing::Test {};
TYPED_TEST_SUITE(KeplerCeleriteTest, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

TYPED_TEST(KeplerCeleriteTest, LogLikelihoodMatchesDenseCholesky) {
  using Space = TypeParam;
  using namespace kosmos::kepler;
  const int n = 80;
  std::vector<double> t, r, var;
  synthetic(n, t, r, var, 7);
  const auto all = cases();
  const int n_sys = int(all.size());
  Kokkos::View<double*, Space> dt("t", n);
  Kokkos::View<double**, Space> dr("r", n_sys, n), dv("var", n_sys, n);
  Kokkos::View<CeleriteTerms*, Space> dk("terms", n_sys);
  Kokkos::View<double*, Space> ll("loglike", n_sys);
  auto ht = Kokkos::create_mirror_view(dt);
  auto hr = Kokkos::create_mirror_view(dr);
  auto hv = Kokkos::create_mirror_view(dv);
  auto hk = Kokkos::create_mirror_view(dk);
  for (int i = 0; i < n; ++i) ht(i) = t[std::size_t(i)];
  for (int s = 0; s < n_sys; ++s) {
    hk(s) = all[std::size_t(s)].terms;
    for (int i = 0; i < n; ++i) {
      hr(s, i) = r[std::size_t(i)];
      hv(s, i) = var[std::size_t(i)];
    }
  }
  Kokkos::deep_copy(dt, ht);
  Kokkos::deep_copy(dr, hr);
  Kokkos::deep_copy(dv, hv);
  Kokkos::deep_copy(dk, hk);
  gp_log_likelihood(Space(), dt, dr, dv, dk, ll);
  auto hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ll);
  for (int s = 0; s < n_sys; ++s) {
    const Case& c = all[std::size_t(s)];
    std::vector<double> C(std::size_t(n * n));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        C[std::size_t(i * n + j)] =
            c.covariance(c.p, std::fabs(t[std::size_t(i)] - t[std::size_t(j)])) +
            (i == j ? var[std::size_t(i)] : 0.0);
    const double dense = dense_log_likelihood(C, r);
    EXPECT_NEAR(hl(s), dense, 1e-9 * std::fabs(dense)) << "kernel " << s;
    // The kernel itself: k(0) = sigma^2 and the closed form at a few lags.
    for (double tau : {0.0, 0.7, 5.0, 33.0})
      EXPECT_NEAR(c.terms.kernel(tau), c.covariance(c.p, tau), 1e-12 * c.p[0] * c.p[0]);
  }
}

// Per-observation amplitudes (two instruments, the second's GP scaled by 1.7): K_ij = s_i s_j k.
TYPED_TEST(KeplerCeleriteTest, ScaledAmplitudesMatchDenseCholesky) {
  using Space = TypeParam;
  using namespace kosmos::kepler;
  const int n = 70;
  std::vector<double> t, r, var;
  synthetic(n, t, r, var, 9);
  const Case c = cases()[2];
  Kokkos::View<double*, Space> dt("t", n);
  Kokkos::View<double**, Space> dr("r", 1, n), dv("var", 1, n), ds("scale", 1, n);
  Kokkos::View<CeleriteTerms*, Space> dk("terms", 1);
  Kokkos::View<double*, Space> ll("loglike", 1);
  auto ht = Kokkos::create_mirror_view(dt);
  auto hr = Kokkos::create_mirror_view(dr);
  auto hv = Kokkos::create_mirror_view(dv);
  auto hs = Kokkos::create_mirror_view(ds);
  std::vector<double> scale(std::size_t(n), 1.0);
  for (int i = 0; i < n; ++i) {
    scale[std::size_t(i)] = i % 3 == 0 ? 1.7 : 1.0;
    ht(i) = t[std::size_t(i)];
    hr(0, i) = r[std::size_t(i)];
    hv(0, i) = var[std::size_t(i)];
    hs(0, i) = scale[std::size_t(i)];
  }
  Kokkos::deep_copy(dt, ht);
  Kokkos::deep_copy(dr, hr);
  Kokkos::deep_copy(dv, hv);
  Kokkos::deep_copy(ds, hs);
  Kokkos::deep_copy(dk, c.terms);
  gp_log_likelihood(Space(), dt, dr, dv, ds, dk, ll);
  auto hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ll);
  std::vector<double> C(std::size_t(n * n)), K(std::size_t(n * n)), alpha;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const std::size_t ij = std::size_t(i * n + j);
      K[ij] = scale[std::size_t(i)] * scale[std::size_t(j)] *
              c.covariance(c.p, std::fabs(t[std::size_t(i)] - t[std::size_t(j)]));
      C[ij] = K[ij] + (i == j ? var[std::size_t(i)] : 0.0);
    }
  const double dense = dense_log_likelihood(C, r, &alpha);
  EXPECT_NEAR(hl(0), dense, 1e-9 * std::fabs(dense));
  const auto mean = gp_conditional_mean(c.terms, t, r, var, scale);
  for (int i = 0; i < n; ++i) {
    double expected = 0;
    for (int j = 0; j < n; ++j) expected += K[std::size_t(i * n + j)] * alpha[std::size_t(j)];
    EXPECT_NEAR(mean[std::size_t(i)], expected, 1e-9 * 10) << "point " << i;
  }
}

TYPED_TEST(KeplerCeleriteTest, NotPositiveDefiniteGivesMinusInfinity) {
  using Space = TypeParam;
  using namespace kosmos::kepler;
  // A kernel with k(0) < 0 (negative amplitude) and no white noise cannot be a covariance.
  CeleriteTerms bad;
  bad.J = 1;
  bad.a[0] = -1;
  bad.c[0] = 1;
  Kokkos::View<double*, Space> dt("t", 3);
  Kokkos::View<double**, Space> dr("r", 1, 3), dv("var", 1, 3);
  Kokkos::View<CeleriteTerms*, Space> dk("terms", 1);
  Kokkos::View<double*, Space> ll("loglike", 1);
  auto ht = Kokkos::create_mirror_view(dt);
  for (int i = 0; i < 3; ++i) ht(i) = i;
  Kokkos::deep_copy(dt, ht);
  Kokkos::deep_copy(dk, bad);
  gp_log_likelihood(Space(), dt, dr, dv, dk, ll);
  auto hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ll);
  EXPECT_TRUE(std::isinf(hl(0)) && hl(0) < 0) << hl(0);
}

TEST(KeplerCelerite, ConditionalMeanMatchesDenseSolve) {
  using namespace kosmos::kepler;
  const int n = 60;
  std::vector<double> t, r, var;
  synthetic(n, t, r, var, 11);
  for (const Case& c : cases()) {
    std::vector<double> C(std::size_t(n * n)), K(std::size_t(n * n)), alpha;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        K[std::size_t(i * n + j)] =
            c.covariance(c.p, std::fabs(t[std::size_t(i)] - t[std::size_t(j)]));
        C[std::size_t(i * n + j)] =
            K[std::size_t(i * n + j)] + (i == j ? var[std::size_t(i)] : 0.0);
      }
    dense_log_likelihood(C, r, &alpha);
    const auto mean = gp_conditional_mean(c.terms, t, r, var);
    double scale = 0;
    for (double x : r) scale = std::max(scale, std::fabs(x));
    for (int i = 0; i < n; ++i) {
      double expected = 0;  // K (K + diag(var))^-1 r
      for (int j = 0; j < n; ++j) expected += K[std::size_t(i * n + j)] * alpha[std::size_t(j)];
      EXPECT_NEAR(mean[std::size_t(i)], expected, 1e-9 * scale) << "point " << i;
    }
  }
}

}  // namespace
