// Chain diagnostics (split R-hat, ESS) and posterior quantiles.
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/impl/diagnostics.hpp>
#include <kosmos/kepler/search.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kosmos {
namespace kepler {
namespace Impl {
double sorted_percentile(const std::vector<double>& v, double q) {
  const double pos = q * (v.size() - 1);
  const std::size_t i = std::size_t(pos);
  const double f = pos - i;
  return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}
}  // namespace Impl

// Split R-hat and effective sample size of one quantity from `chains` (equal lengths), after
// Gelman et al., BDA3 Sec. 11.4-11.5: each chain is split in halves; ESS from the variogram
// autocorrelations summed in pairs while positive (Geyer's initial positive sequence).
void chain_diagnostics(const std::vector<std::vector<double>>& chains, double& rhat, double& ess) {
  kosmos::Impl::require(!chains.empty() && !chains.front().empty(),
                        "kosmos::kepler::chain_diagnostics", "no samples");
  std::vector<const double*> halves;
  const int len = int(chains.front().size()) / 2;
  // Split halves need 2 samples each for a variance: with fewer the diagnostics are unknown (NaN),
  // not a reassuring R-hat of 1.
  rhat = std::numeric_limits<double>::quiet_NaN();
  ess = std::numeric_limits<double>::quiet_NaN();
  if (len < 2) return;
  rhat = 1;
  ess = double(chains.size()) * chains.front().size();
  for (const auto& c : chains) {
    halves.push_back(c.data());
    halves.push_back(c.data() + len);
  }
  const int m = int(halves.size());
  std::vector<double> mean(m, 0.0);
  double W = 0, grand = 0;
  for (int c = 0; c < m; ++c) {
    for (int i = 0; i < len; ++i) mean[c] += halves[c][i] / len;
    double v = 0;
    for (int i = 0; i < len; ++i) v += (halves[c][i] - mean[c]) * (halves[c][i] - mean[c]);
    W += v / (len - 1) / m;
    grand += mean[c] / m;
  }
  double B = 0;
  for (int c = 0; c < m; ++c) B += (mean[c] - grand) * (mean[c] - grand) * len / (m - 1);
  const double var_plus = (len - 1.0) / len * W + B / len;
  if (!(W > 0) || !(var_plus > 0)) return;  // constant (fixed) quantity
  rhat = std::sqrt(var_plus / W);
  double sum_rho = 0;
  for (int t = 1; t + 1 < len; t += 2) {
    double pair = 0;
    for (int lag = t; lag <= t + 1; ++lag) {
      double variogram = 0;
      for (int c = 0; c < m; ++c)
        for (int i = lag; i < len; ++i)
          variogram += (halves[c][i] - halves[c][i - lag]) * (halves[c][i] - halves[c][i - lag]);
      variogram /= double(m) * (len - lag);
      pair += 1 - variogram / (2 * var_plus);
    }
    if (pair < 0) break;
    sum_rho += pair;
  }
  ess = std::min(double(m) * len / (1 + 2 * sum_rho), double(m) * len);
}
}  // namespace kepler
}  // namespace kosmos

namespace kosmos {
namespace kepler {
namespace {
// The standard normal quantile: Abramowitz & Stegun 26.2.23 (|error| < 4.5e-4), then two
// Halley steps on the CDF written with erfc (full double precision).
double normal_quantile(double p) {
  const double q = std::min(p, 1 - p), t = std::sqrt(-2 * std::log(q));
  double z = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                     (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
  if (p < 0.5) z = -z;
  for (int it = 0; it < 2; ++it) {
    const double e = 0.5 * std::erfc(-z / std::sqrt(2.0)) - p;
    const double u = e * std::sqrt(2 * 3.14159265358979323846) * std::exp(0.5 * z * z);
    z -= u / (1 + 0.5 * z * u);
  }
  return z;
}

using Chains = std::vector<std::vector<double>>;

// Each chain's first and last floor(n / 2) draws as two chains (ArviZ's split).
Chains split_chains(const Chains& chains) {
  Chains out;
  const std::size_t n = chains.front().size(), half = n / 2;
  for (const auto& c : chains) {
    out.emplace_back(c.begin(), c.begin() + std::ptrdiff_t(half));
    out.emplace_back(c.end() - std::ptrdiff_t(half), c.end());
  }
  return out;
}

// Phi^-1((r - 3/8) / (S + 1/4)) for the ranks r = 1..S: a table per thread for the last S (every
// column of a posterior has the same S, and each z-scale of it needs S quantiles).
double rank_quantile(double rank, std::size_t S) {
  thread_local std::vector<double> table;
  thread_local std::size_t table_size = 0;
  const double size = double(S);
  if (rank != std::floor(rank))  // the mean rank of an even number of ties
    return normal_quantile((rank - 0.375) / (size + 0.25));
  if (table_size != S) {
    table.resize(S);
    for (std::size_t r = 0; r < S; ++r)
      table[r] = normal_quantile((double(r) + 0.625) / (size + 0.25));
    table_size = S;
  }
  return table[std::size_t(rank) - 1];
}

// Rank normalization of `chains` (equal lengths) given the order of its draws (`order`: flat
// indices c * n + i, ascending in key): z = Phi^-1((r - 3/8) / (S + 1/4)), r the average rank of
// each draw among all S draws (equal keys share their mean rank).
template <class Key>
Chains z_scale(const Chains& chains, const std::vector<std::size_t>& order, const Key& key) {
  const std::size_t len = chains.front().size(), S = order.size();
  Chains out = chains;
  for (std::size_t i = 0; i < S;) {
    std::size_t j = i;
    const double value = key(order[i]);
    while (j < S && key(order[j]) == value) ++j;
    const double z = rank_quantile(0.5 * double(i + 1 + j), S);  // mean of ranks i + 1 .. j
    for (std::size_t k = i; k < j; ++k) out[order[k] / len][order[k] % len] = z;
    i = j;
  }
  return out;
}

// Split-free potential scale reduction of equally long chains (BDA3 eq. 11.4).
double basic_rhat(const Chains& chains) {
  const std::size_t m = chains.size(), n = chains.front().size();
  std::vector<double> mean(m, 0.0);
  double within = 0, grand = 0;
  for (std::size_t c = 0; c < m; ++c) {
    for (double x : chains[c]) mean[c] += x / double(n);
    double v = 0;
    for (double x : chains[c]) v += (x - mean[c]) * (x - mean[c]);
    within += v / double(n - 1) / double(m);
    grand += mean[c] / double(m);
  }
  double between = 0;
  for (std::size_t c = 0; c < m; ++c)
    between += (mean[c] - grand) * (mean[c] - grand) * double(n) / double(m - 1);
  return std::sqrt((between / within + double(n) - 1) / double(n));
}

// ESS of equally long chains (Vehtari et al. 2021, eqs. 10-13; Stan's and ArviZ's estimator):
// autocovariances per chain (biased, 1 / n), combined with the between-chain variance, summed over
// Geyer's initial positive sequence made monotone; tau at least 1 / log10(m n).
double basic_ess(const Chains& chains) {
  const std::size_t m = chains.size(), n = chains.front().size();
  double lo = chains[0][0], hi = lo;
  for (const auto& c : chains)
    for (double x : c) lo = std::min(lo, x), hi = std::max(hi, x);
  if (hi - lo < 1e-15) return double(m * n);  // ArviZ: a constant quantity
  std::vector<double> mean(m, 0.0);
  for (std::size_t c = 0; c < m; ++c)
    for (double x : chains[c]) mean[c] += x / double(n);
  auto mean_acov = [&](std::size_t lag) {
    double sum = 0;
    for (std::size_t c = 0; c < m; ++c) {
      double a = 0;
      for (std::size_t i = 0; i + lag < n; ++i)
        a += (chains[c][i] - mean[c]) * (chains[c][i + lag] - mean[c]);
      sum += a / double(n);
    }
    return sum / double(m);
  };
  const double mean_var = mean_acov(0) * double(n) / double(n - 1);
  double var_plus = mean_var * double(n - 1) / double(n);
  if (m > 1) {
    double grand = 0, between = 0;
    for (double x : mean) grand += x / double(m);
    for (double x : mean) between += (x - grand) * (x - grand) / double(m - 1);
    var_plus += between;
  }
  std::vector<double> rho(n, 0.0);
  double rho_even = 1, rho_odd = 1 - (mean_var - mean_acov(1)) / var_plus;
  rho[0] = rho_even;
  rho[1] = rho_odd;
  std::size_t t = 1;
  while (t + 3 < n && rho_even + rho_odd > 0) {
    rho_even = 1 - (mean_var - mean_acov(t + 1)) / var_plus;
    rho_odd = 1 - (mean_var - mean_acov(t + 2)) / var_plus;
    if (rho_even + rho_odd >= 0) {
      rho[t + 1] = rho_even;
      rho[t + 2] = rho_odd;
    }
    t += 2;
  }
  const std::size_t max_t = t - 2;  // t >= 1 here; max_t wraps for t = 1 and is not used then
  if (t >= 3 && rho_even > 0) rho[max_t + 1] = rho_even;
  if (t >= 3)
    for (std::size_t s = 1; s + 2 <= max_t; s += 2)
      if (rho[s + 1] + rho[s + 2] > rho[s - 1] + rho[s]) {
        rho[s + 1] = 0.5 * (rho[s - 1] + rho[s]);
        rho[s + 2] = rho[s + 1];
      }
  double tau = -1;
  if (t >= 3) {
    for (std::size_t s = 0; s <= max_t; ++s) tau += 2 * rho[s];
    tau += rho[max_t + 1];
  } else {  // the loop never ran (n <= 4 or rho_0 + rho_1 <= 0): ArviZ's sums with max_t = -1
    tau += rho[0];
  }
  const double total = double(m * n);
  tau = std::max(tau, 1 / std::log10(total));
  for (double r : rho)
    if (std::isnan(r)) return std::numeric_limits<double>::quiet_NaN();
  return total / tau;
}
}  // namespace

namespace {
RankDiagnostics rank_statistics(const std::vector<std::vector<double>>& chains, bool with_ess) {
  kosmos::Impl::require(!chains.empty() && !chains.front().empty(),
                        "kosmos::kepler::rank_diagnostics", "no samples");
  for (const auto& c : chains)
    kosmos::Impl::require(c.size() == chains.front().size(), "kosmos::kepler::rank_diagnostics",
                          "chains of different lengths (", c.size(), " and ", chains.front().size(),
                          ")");
  RankDiagnostics d;
  if (chains.front().size() < 4) return d;  // halves of under 2 draws: not estimable (NaN)
  for (const auto& c : chains)
    for (double x : c)
      if (!std::isfinite(x)) return d;
  const Chains split = split_chains(chains);
  std::vector<double> flat;  // the split chains' draws, chain after chain
  for (const auto& c : split) flat.insert(flat.end(), c.begin(), c.end());
  auto value = [&](std::size_t k) { return flat[k]; };
  std::vector<std::pair<double, std::size_t>> sorted;
  for (std::size_t k = 0; k < flat.size(); ++k) sorted.emplace_back(flat[k], k);
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::size_t> order;
  for (const auto& entry : sorted) order.push_back(entry.second);
  std::vector<double> pooled;
  if (order.size() == chains.size() * chains.front().size()) {  // the split keeps every draw
    for (const auto& entry : sorted) pooled.push_back(entry.first);
  } else {
    for (const auto& c : chains) pooled.insert(pooled.end(), c.begin(), c.end());
    std::sort(pooled.begin(), pooled.end());
  }
  if (pooled.back() - pooled.front() < 1e-15 * std::max(1.0, std::fabs(pooled.front()))) {
    d.rhat = 1;  // a constant quantity
    d.ess_bulk = d.ess_tail = double(pooled.size());
    return d;
  }
  const double median = Impl::sorted_percentile(pooled, 0.5);
  // |x - median| in ascending order: the sorted draws merged outwards from the median (the
  // distances grow monotonically on each side, rounding included).
  auto distance = [&](std::size_t k) { return std::fabs(value(k) - median); };
  std::vector<std::size_t> folded_order;
  folded_order.reserve(order.size());
  std::size_t right = std::size_t(
      std::lower_bound(sorted.begin(), sorted.end(), std::make_pair(median, std::size_t(0))) -
      sorted.begin());
  std::size_t left = right;  // order[left - 1] is the next below the median
  while (left > 0 || right < order.size()) {
    const bool take_left =
        right == order.size() || (left > 0 && distance(order[left - 1]) <= distance(order[right]));
    folded_order.push_back(take_left ? order[--left] : order[right++]);
  }
  const Chains z_split = z_scale(split, order, value);
  d.rhat = std::max(basic_rhat(z_split), basic_rhat(z_scale(split, folded_order, distance)));
  if (!with_ess) return d;
  d.ess_bulk = basic_ess(z_split);
  double tail = std::numeric_limits<double>::infinity();
  for (double q : {0.05, 0.95}) {
    const double cut = Impl::sorted_percentile(pooled, q);
    Chains below = split;
    for (auto& c : below)
      for (auto& x : c) x = x <= cut ? 1.0 : 0.0;
    tail = std::min(tail, basic_ess(below));
  }
  d.ess_tail = tail;
  return d;
}
}  // namespace

RankDiagnostics rank_diagnostics(const std::vector<std::vector<double>>& chains) {
  return rank_statistics(chains, true);
}

double rank_rhat(const std::vector<std::vector<double>>& chains) {
  return rank_statistics(chains, false).rhat;
}
}  // namespace kepler
}  // namespace kosmos
