// Rank-normalized split R-hat and bulk / tail ESS (Vehtari et al. 2021) against a direct
// implementation written here (ranks by counting, normal quantiles by bisection on erfc,
// autocovariances by their definition, Geyer's sequence in pairs); fixed parameters reported
// n/a; the warnings of bounds, truncated priors, km/s data and a missing sigma column.
#include <kosmos/core/error.hpp>
#include <kosmos/kepler/impl/warnings.hpp>
#include <kosmos/kepler/rv_data.hpp>
#include <kosmos/kepler/search.hpp>

#include "synthetic_rv.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {
using Chains = std::vector<std::vector<double>>;

double quantile_by_bisection(double p) {
  double lo = -40, hi = 40;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// Average rank of each pooled draw by counting, then Phi^-1((r - 3/8) / (S + 1/4)).
Chains rank_normalize(const Chains& c) {
  std::vector<double> all;
  for (const auto& x : c) all.insert(all.end(), x.begin(), x.end());
  Chains out = c;
  for (auto& x : out)
    for (auto& v : x) {
      double less = 0, equal = 0;
      for (double w : all) less += w < v, equal += w == v;
      const double rank = less + (equal + 1) / 2;
      v = quantile_by_bisection((rank - 0.375) / (double(all.size()) + 0.25));
    }
  return out;
}

Chains split(const Chains& c) {
  Chains out;
  const std::size_t h = c[0].size() / 2;
  for (const auto& x : c) {
    out.emplace_back(x.begin(), x.begin() + long(h));
    out.emplace_back(x.end() - long(h), x.end());
  }
  return out;
}

double mean(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v;
  return s / double(x.size());
}

double reference_rhat(const Chains& c) {  // BDA3: sqrt(((n - 1) / n W + B / n) / W)
  const double n = double(c[0].size()), m = double(c.size());
  std::vector<double> means;
  double W = 0;
  for (const auto& x : c) {
    const double mu = mean(x);
    means.push_back(mu);
    double v = 0;
    for (double y : x) v += (y - mu) * (y - mu);
    W += v / (n - 1) / m;
  }
  const double grand = mean(means);
  double B = 0;
  for (double mu : means) B += n * (mu - grand) * (mu - grand) / (m - 1);
  return std::sqrt(((n - 1) / n * W + B / n) / W);
}

// ESS: rho_t = 1 - (W - mean autocovariance_t) / var+, pairs P_k = rho_2k + rho_2k+1 summed
// while positive, made non-increasing (Geyer), plus the even term of the first pair left out when
// positive (Stan, ArviZ); S / max(tau, 1 / log10 S).
double reference_ess(const Chains& c) {
  const std::size_t n = c[0].size(), m = c.size();
  std::vector<double> acov(n, 0.0), means;
  for (const auto& x : c) {
    const double mu = mean(x);
    means.push_back(mu);
    for (std::size_t t = 0; t < n; ++t) {
      double s = 0;
      for (std::size_t i = 0; i + t < n; ++i) s += (x[i] - mu) * (x[i + t] - mu);
      acov[t] += s / double(n) / double(m);
    }
  }
  const double W = acov[0] * double(n) / double(n - 1), grand = mean(means);
  double B = 0;
  for (double mu : means) B += (mu - grand) * (mu - grand) / double(m - 1);
  const double var_plus = W * double(n - 1) / double(n) + B;
  auto rho = [&](std::size_t t) { return t == 0 ? 1.0 : 1 - (W - acov[t]) / var_plus; };
  // Pairs are computed while the last one is positive and lags remain (pair k needs
  // 2k + 2 < n, as in Stan and ArviZ); the last computed pair adds only its even term.
  std::vector<double> pairs = {rho(0) + rho(1)};
  while (pairs.back() > 0 && 2 * pairs.size() + 2 < n)
    pairs.push_back(rho(2 * pairs.size()) + rho(2 * pairs.size() + 1));
  const std::size_t last = pairs.size() - 1;
  double tau = -1, previous = 1e300;
  for (std::size_t k = 0; k < last; ++k) {
    previous = std::min(previous, pairs[k]);
    tau += 2 * previous;
  }
  if (rho(2 * last) > 0) tau += rho(2 * last);
  return double(n * m) / std::max(tau, 1 / std::log10(double(n * m)));
}

Chains ar1_chains(int m, int n, double phi, unsigned seed, double shift_last) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  Chains c(std::size_t(m), std::vector<double>(std::size_t(n), 0.0));
  for (int j = 0; j < m; ++j) {
    double x = g(rng);
    for (int i = 0; i < n; ++i) {
      x = phi * x + std::sqrt(1 - phi * phi) * g(rng);
      c[std::size_t(j)][std::size_t(i)] = x + (j == m - 1 ? shift_last : 0.0);
    }
  }
  return c;
}

// Odd chain lengths (the split drops each chain's middle draw), ties (draws rounded to 0.1:
// equal values, and equal distances from the median on both sides of it) and a narrow posterior
// far from 0 beside one far outlier (values a float cannot tell apart, rounded ties) included.
TEST(KeplerDiagnostics, RankDiagnosticsMatchDirectImplementation) {
  for (const double shift : {0.0, 0.8}) {
    for (const int variant : {0, 1, 2, 3, 4}) {
      const bool heavy_tailed = variant == 1, rounded = variant == 2;
      Chains c = ar1_chains(4, variant == 3 ? 401 : 400, 0.6, 3, shift);
      if (heavy_tailed)  // a Cauchy-like transform: R-hat of the draws is unreliable
        for (auto& x : c)
          for (auto& v : x) v = std::tan(0.49 * 3.14159265358979323846 * std::tanh(v));
      if (rounded)
        for (auto& x : c)
          for (auto& v : x) v = 0.1 * std::round(10 * v);
      if (variant == 4) {  // a time of conjunction in days: spacing 4.7e-10 d, a spread of 1e-6 d
        for (auto& x : c)
          for (auto& v : x) v = 2450000.0 + 1e-6 * v;
        c[1][7] = -1e6;
      }
      const auto d = kosmos::kepler::rank_diagnostics(c);
      const Chains s = split(c);
      const double median = [&] {
        std::vector<double> all;
        for (const auto& x : c) all.insert(all.end(), x.begin(), x.end());
        std::sort(all.begin(), all.end());
        return 0.5 * (all[all.size() / 2 - 1] + all[all.size() / 2]);
      }();
      Chains folded = c;
      for (auto& x : folded)
        for (auto& v : x) v = std::fabs(v - median);
      const double rhat = std::max(reference_rhat(rank_normalize(s)),
                                   reference_rhat(rank_normalize(split(folded))));
      EXPECT_NEAR(d.rhat, rhat, 1e-10) << "shift " << shift << " variant " << variant;
      EXPECT_NEAR(d.ess_bulk, reference_ess(rank_normalize(s)), 1e-8 * d.ess_bulk)
          << "shift " << shift << " variant " << variant;
      std::vector<double> all;
      for (const auto& x : c) all.insert(all.end(), x.begin(), x.end());
      std::sort(all.begin(), all.end());
      double tail = 1e300;
      for (double q : {0.05, 0.95}) {  // numpy's linear quantile
        const double pos = q * double(all.size() - 1);
        const std::size_t i = std::size_t(pos);
        const double cut = all[i] + (pos - double(i)) * (all[i + 1] - all[i]);
        Chains indicator = s;
        for (auto& x : indicator)
          for (auto& v : x) v = v <= cut ? 1.0 : 0.0;
        tail = std::min(tail, reference_ess(indicator));
      }
      EXPECT_NEAR(d.ess_tail, tail, 1e-8 * tail) << "shift " << shift << " variant " << variant;
      if (shift > 0) {
        EXPECT_GT(d.rhat, 1.05);
      }
    }
  }
}

TEST(KeplerDiagnostics, RankDiagnosticsIgnoreMonotoneTransformsAndSeeIndependence) {
  const Chains c = ar1_chains(4, 500, 0.0, 5, 0.0);  // independent draws
  Chains e = c;
  for (auto& x : e)
    for (auto& v : x) v = std::exp(3 * v);
  const auto a = kosmos::kepler::rank_diagnostics(c), b = kosmos::kepler::rank_diagnostics(e);
  EXPECT_DOUBLE_EQ(a.rhat, b.rhat);
  EXPECT_DOUBLE_EQ(a.ess_bulk, b.ess_bulk);
  EXPECT_DOUBLE_EQ(a.ess_tail, b.ess_tail);
  EXPECT_LT(a.rhat, 1.01);
  EXPECT_GT(a.ess_bulk, 0.8 * 2000);
  EXPECT_LT(a.ess_bulk, 1.25 * 2000);
  // Too short chains: NaN, not a reassuring value; a constant: R-hat 1.
  EXPECT_TRUE(std::isnan(kosmos::kepler::rank_diagnostics({{1, 2, 3}, {2, 3, 4}}).rhat));
  EXPECT_EQ(kosmos::kepler::rank_diagnostics({{2, 2, 2, 2}, {2, 2, 2, 2}}).rhat, 1.0);
}

// A one-planet star (m/s), optionally with a very large K.
kosmos::kepler::RVData star(double K, unsigned seed) {
  const kosmos::kepler::Orbit truth{12.3, K, 0.1, 1.0, 2.0};
  return kosmos_test::one_instrument_star({truth}, 0.0, 0.0, 2.0, 40, 1000, 150, 1075.0, seed);
}

kosmos::kepler::SearchOptions quick_options() {
  auto o = kosmos_test::test_budget(1, 24, 60, 2, 30, 512);
  o.period_max = 100;
  return o;
}

bool any_contains(const std::vector<std::string>& list, const std::string& text) {
  for (const auto& s : list)
    if (s.find(text) != std::string::npos) return true;
  return false;
}

// Chains too short to converge run on in rounds (steps x 2^(r-1) more, thin x 2^r) until every
// free column's R-hat is below the target or the rounds are spent; the sample count stays that of
// steps / thin, the R-hat falls, and the generations add up.
TEST(KeplerDiagnostics, UnconvergedChainsAreExtended) {
  using namespace kosmos::kepler;
  auto o = quick_options();
  o.burn = o.steps = 20;
  o.thin = 2;
  const auto fixed_budget = search(star(15, 3), o);
  EXPECT_EQ(fixed_budget.generations, 40);
  EXPECT_EQ(fixed_budget.extensions, 0);
  ASSERT_GE(fixed_budget.max_rhat, 1.01);  // else the case tests nothing
  o.max_extensions = 4;
  const auto extended = search(star(15, 3), o);
  ASSERT_GE(extended.extensions, 1);
  int generations = 40;
  for (int r = 1; r <= extended.extensions; ++r) generations += 20 << (r - 1);
  EXPECT_EQ(extended.generations, generations);
  EXPECT_EQ(extended.samples.size(), fixed_budget.samples.size());
  EXPECT_LT(extended.max_rhat, fixed_budget.max_rhat);
  if (extended.extensions < o.max_extensions) {
    EXPECT_LT(extended.max_rhat, 1.05);
  }
  o.max_extensions = -1;
  EXPECT_THROW(search(star(15, 3), o), kosmos::invalid_input);
  o.max_extensions = 1;
  o.target_rhat = 1.0;
  EXPECT_THROW(search(star(15, 3), o), kosmos::invalid_input);
}

TEST(KeplerDiagnostics, FixedParametersAndTheirColumnsAreNotDiagnosed) {
  using namespace kosmos::kepler;
  auto o = quick_options();
  o.priors = {parse_prior("e_b fixed 0", "test"), parse_prior("jitter_A fixed 0.5", "test")};
  const auto r = search(star(15, 1), o);
  for (const char* name : {"e_b", "omega_deg_b", "jitter_A"}) {
    EXPECT_TRUE(r.get(name).fixed) << name;
    EXPECT_TRUE(std::isnan(r.get(name).rhat)) << name;
  }
  for (const char* name : {"P_b", "K_b", "M0_deg_b", "Tc_b", "gamma_A", "lnL"}) {
    EXPECT_FALSE(r.get(name).fixed) << name;
    EXPECT_TRUE(std::isfinite(r.get(name).rhat)) << name;
  }
  EXPECT_TRUE(std::isfinite(r.max_rhat));
  EXPECT_TRUE(std::isfinite(r.min_ess));
}

TEST(KeplerDiagnostics, BoundsWarnWhenTheyTruncateAPriorOrThePosterior) {
  using namespace kosmos::kepler;
  auto o = quick_options();
  o.k_max = 1000;
  o.priors = {parse_prior("K_b uniform 0 5000", "test")};
  const auto r = search(star(3000, 2), o);
  EXPECT_TRUE(any_contains(r.warnings, "the prior on K_b reaches 5000, beyond k_max"))
      << (r.warnings.empty() ? "" : r.warnings[0]);
  EXPECT_TRUE(any_contains(r.warnings, "K_b: ")) << "no pile-up warning at k_max";
  // With the bound raised, neither warning, and K is found.
  o.k_max = 10000;
  const auto free = search(star(3000, 2), o);
  EXPECT_FALSE(any_contains(free.warnings, "K_b")) << free.warnings.size();
  EXPECT_NEAR(free.get("K_b").median, 3000, 30);
}

TEST(KeplerDiagnostics, KilometresPerSecondAndMissingSigmaAreNamed) {
  using namespace kosmos::kepler;
  RVData kms = star(15, 3);
  for (auto& v : kms.velocity) v /= 1000;
  for (auto& s : kms.sigma) s /= 1000;
  const auto w = Impl::unit_warnings(kms);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("look like km/s"), std::string::npos) << w[0];
  EXPECT_TRUE(Impl::unit_warnings(star(15, 3)).empty());

  const std::string path = ::testing::TempDir() + "kosmos_no_sigma.txt";
  std::ofstream(path) << "1.0 2.0\n2.0 3.0\n";
  try {
    read_rv_file(path);
    ADD_FAILURE() << "two columns were accepted";
  } catch (const kosmos::file_error& e) {
    EXPECT_NE(std::string(e.what()).find("no sigma column"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

}  // namespace
