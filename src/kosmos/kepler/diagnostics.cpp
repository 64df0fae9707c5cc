// Chain diagnostics (split R-hat, ESS) and posterior quantiles.
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/impl/diagnostics.hpp>
#include <kosmos/kepler/search.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

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

// Phi^-1((r - 3/8) / (S + 1/4)) for the ranks and half ranks r = 1, 1.5, 2, .., S (entry
// 2r - 2): a table per thread for the last S (every column of a posterior has the same S, and
// each z-scale of it needs S quantiles; a chain that rejects proposals repeats draws, so ties of
// an even count, whose mean rank is a half rank, are common).
const std::vector<double>& rank_quantiles(std::size_t S) {
  thread_local std::vector<double> table;
  const std::size_t entries = S > 0 ? 2 * S - 1 : 0;
  if (table.size() != entries) {
    table.resize(entries);
    for (std::size_t h = 0; h < table.size(); ++h)
      table[h] = normal_quantile(h % 2 == 0 ? (double(h / 2) + 0.625) / (double(S) + 0.25)
                                            : (0.5 * double(h + 2) - 0.375) / (double(S) + 0.25));
  }
  return table;
}

// Draws of m equally long chains, chain after chain (draw i of chain c at x[c * n + i]).
struct Draws {
  std::size_t m = 0, n = 0;
  std::vector<double> x;
  double at(std::size_t c, std::size_t i) const { return x[c * n + i]; }
};

// Each chain's first and last floor(n / 2) draws as two chains (ArviZ's split).
void split_chains(const double* draws, std::size_t m, std::size_t n, Draws& out) {
  out.m = 2 * m;
  out.n = n / 2;
  out.x.clear();
  for (std::size_t c = 0; c < m; ++c) {
    const double* chain = draws + c * n;
    out.x.insert(out.x.end(), chain, chain + out.n);
    out.x.insert(out.x.end(), chain + n - out.n, chain + n);
  }
}

// The indices of v (all finite) in ascending order of value, equal values in ascending index
// (the order of sorting (value, index) pairs; -0 equals +0). A stable LSD radix sort on 32-bit
// keys, the float of each value less the smallest (an order-preserving map, and the subtraction
// keeps the resolution of a narrow posterior far from 0, such as a time of conjunction), then
// each run of equal keys sorted by its doubles. (Work arrays per thread: the summaries call this
// for every column of every star.)
void ascending_order(const std::vector<double>& v, std::vector<std::uint32_t>& order) {
  const std::size_t S = v.size();
  thread_local std::vector<std::uint32_t> key, key_next, next;
  key.resize(S);
  key_next.resize(S);
  next.resize(S);
  order.resize(S);
  const double lowest = S > 0 ? *std::min_element(v.begin(), v.end()) : 0.0;
  for (std::size_t k = 0; k < S; ++k) {
    const float above = float(v[k] - lowest);  // >= 0: its bits ascend with its value
    std::uint32_t bits;
    std::memcpy(&bits, &above, sizeof bits);
    key[k] = bits;
    order[k] = std::uint32_t(k);
  }
  // LSD passes over 11-bit digits; every digit's counts from one read of the keys, and no pass
  // for a digit that all keys share.
  constexpr int kDigitBits = 11, kDigits = (32 + kDigitBits - 1) / kDigitBits;
  constexpr std::size_t kBuckets = std::size_t(1) << kDigitBits;
  std::vector<std::size_t> count(kDigits * kBuckets, 0);
  for (std::size_t k = 0; k < S; ++k)
    for (int digit = 0; digit < kDigits; ++digit)
      ++count[std::size_t(digit) * kBuckets + ((key[k] >> (digit * kDigitBits)) & (kBuckets - 1))];
  for (int digit = 0; digit < kDigits; ++digit) {
    const int shift = digit * kDigitBits;
    std::size_t* first = &count[std::size_t(digit) * kBuckets];
    if (first[(key[0] >> shift) & (kBuckets - 1)] == S) continue;  // one digit everywhere
    std::size_t sum = 0;
    for (std::size_t b = 0; b < kBuckets; ++b) sum += std::exchange(first[b], sum);
    for (std::size_t k = 0; k < S; ++k) {
      const std::size_t to = first[(key[k] >> shift) & (kBuckets - 1)]++;
      key_next[to] = key[k];
      next[to] = order[k];
    }
    key.swap(key_next);
    order.swap(next);
  }
  // Runs of one key hold values that round to the same float (and equal values, in index order):
  // ordered by value, stably.
  const auto by_value = [&](std::uint32_t a, std::uint32_t b) { return v[a] < v[b]; };
  for (std::size_t i = 0; i < S;) {
    std::size_t j = i + 1;
    while (j < S && key[j] == key[i]) ++j;
    if (j - i > 1 && !std::is_sorted(order.begin() + std::ptrdiff_t(i),
                                     order.begin() + std::ptrdiff_t(j), by_value))
      std::stable_sort(order.begin() + std::ptrdiff_t(i), order.begin() + std::ptrdiff_t(j),
                       by_value);
    i = j;
  }
}

// Rank normalization of `draws` given the order of its keys (`order`: flat indices; `keys`: the
// keys in that order, ascending): z = Phi^-1((r - 3/8) / (S + 1/4)), r the average rank of each
// draw among all S draws (equal keys share their mean rank).
void z_scale(const Draws& draws, const std::vector<std::uint32_t>& order,
             const std::vector<double>& keys, Draws& out) {
  const std::size_t S = order.size();
  out.m = draws.m;
  out.n = draws.n;
  out.x.resize(draws.x.size());
  const std::vector<double>& quantile = rank_quantiles(S);
  for (std::size_t i = 0; i < S;) {
    std::size_t j = i + 1;
    while (j < S && keys[j] == keys[i]) ++j;
    // Ties share the mean of ranks i + 1 .. j, a half rank for an even number of them.
    const double z = quantile[i + j - 1];
    for (std::size_t k = i; k < j; ++k) out.x[order[k]] = z;
    i = j;
  }
}

// Split-free potential scale reduction of equally long chains (BDA3 eq. 11.4).
double basic_rhat(const Draws& d) {
  const std::size_t m = d.m, n = d.n;
  std::vector<double> mean(m, 0.0);
  double within = 0, grand = 0;
  for (std::size_t c = 0; c < m; ++c) {
    for (std::size_t i = 0; i < n; ++i) mean[c] += d.at(c, i) / double(n);
    double v = 0;
    for (std::size_t i = 0; i < n; ++i) v += (d.at(c, i) - mean[c]) * (d.at(c, i) - mean[c]);
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
double basic_ess(const Draws& d) {
  const std::size_t m = d.m, n = d.n;
  const auto range = std::minmax_element(d.x.begin(), d.x.end());
  if (*range.second - *range.first < 1e-15) return double(m * n);  // ArviZ: a constant quantity
  thread_local std::vector<double> centered;
  centered.resize(d.x.size());
  std::vector<double> mean(m, 0.0);
  for (std::size_t c = 0; c < m; ++c) {
    for (std::size_t i = 0; i < n; ++i) mean[c] += d.at(c, i);
    mean[c] /= double(n);
    for (std::size_t i = 0; i < n; ++i) centered[c * n + i] = d.at(c, i) - mean[c];
  }
  // The chains' mean autocovariances, computed kLags lags per pass as Geyer's sum asks for them:
  // every draw meets kLags lagged partners in one vectorizable inner loop.
  constexpr std::size_t kLags = 8;
  thread_local std::vector<double> acov;
  acov.clear();
  auto mean_acov = [&](std::size_t lag) {
    while (acov.size() <= lag) {
      const std::size_t first = acov.size();
      double sum[kLags] = {};
      for (std::size_t c = 0; c < m; ++c) {
        const double* y = centered.data() + c * n;
        double part[kLags] = {};
        std::size_t i = 0;
        for (; i + first + kLags <= n; ++i) {  // every lag's partner inside the chain
          const double yi = y[i], *partner = y + i + first;
#pragma omp simd
          for (std::size_t l = 0; l < kLags; ++l) part[l] += yi * partner[l];
        }
        for (; i + first < n; ++i)
          for (std::size_t l = 0; i + first + l < n && l < kLags; ++l)
            part[l] += y[i] * y[i + first + l];
        for (std::size_t l = 0; l < kLags; ++l) sum[l] += part[l] / double(n);
      }
      for (std::size_t l = 0; l < kLags; ++l) acov.push_back(sum[l] / double(m));
    }
    return acov[lag];
  };
  const double acov0 = mean_acov(0), acov1 = mean_acov(1);
  const double mean_var = acov0 * double(n) / double(n - 1);
  double var_plus = mean_var * double(n - 1) / double(n);
  if (m > 1) {
    double grand = 0, between = 0;
    for (double x : mean) grand += x / double(m);
    for (double x : mean) between += (x - grand) * (x - grand) / double(m - 1);
    var_plus += between;
  }
  std::vector<double> rho(n, 0.0);
  double rho_even = 1, rho_odd = 1 - (mean_var - acov1) / var_plus;
  rho[0] = rho_even;
  rho[1] = rho_odd;
  std::size_t t = 1;
  while (t + 3 < n && rho_even + rho_odd > 0) {
    const double even = mean_acov(t + 1), odd = mean_acov(t + 2);
    rho_even = 1 - (mean_var - even) / var_plus;
    rho_odd = 1 - (mean_var - odd) / var_plus;
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

// The draws of `chains` (equal lengths) chain after chain.
std::vector<double> flatten(const std::vector<std::vector<double>>& chains) {
  kosmos::Impl::require(!chains.empty() && !chains.front().empty(),
                        "kosmos::kepler::rank_diagnostics", "no samples");
  std::vector<double> flat;
  for (const auto& c : chains) {
    kosmos::Impl::require(c.size() == chains.front().size(), "kosmos::kepler::rank_diagnostics",
                          "chains of different lengths (", c.size(), " and ", chains.front().size(),
                          ")");
    flat.insert(flat.end(), c.begin(), c.end());
  }
  return flat;
}
}  // namespace

namespace Impl {
std::vector<std::size_t> rows_chain_after_chain(const std::vector<int>& chain_of_row, int chains) {
  std::vector<std::size_t> next(std::size_t(chains) + 1, 0), out(chain_of_row.size());
  for (const int c : chain_of_row) ++next[std::size_t(c) + 1];
  for (std::size_t c = 1; c < next.size(); ++c) next[c] += next[c - 1];
  for (std::size_t r = 0; r < chain_of_row.size(); ++r)
    out[next[std::size_t(chain_of_row[r])]++] = r;
  return out;
}

RankDiagnostics rank_diagnostics(const std::vector<double>& draws, std::size_t chains,
                                 bool with_ess, std::vector<double>* sorted) {
  const std::size_t n = chains > 0 ? draws.size() / chains : 0;
  kosmos::Impl::require(n > 0 && n * chains == draws.size(), "kosmos::kepler::rank_diagnostics",
                        draws.size(), " draws are not ", chains, " chains of equal length");
  RankDiagnostics d;
  auto sort_all = [&] {
    if (!sorted) return;
    *sorted = draws;
    std::sort(sorted->begin(), sorted->end());
  };
  if (n < 4) {  // halves of under 2 draws: not estimable (NaN)
    sort_all();
    return d;
  }
  for (double x : draws)
    if (!std::isfinite(x)) {
      sort_all();
      return d;
    }
  // Work arrays per thread (every column of every star comes here).
  thread_local Draws split, z_split, z_folded, below;
  thread_local std::vector<std::uint32_t> order, folded_order;
  thread_local std::vector<double> values, pooled_odd, distances;
  split_chains(draws.data(), chains, n, split);
  ascending_order(split.x, order);
  values.resize(order.size());  // the split draws in ascending order
  for (std::size_t k = 0; k < order.size(); ++k) values[k] = split.x[order[k]];
  const bool every_draw = order.size() == draws.size();  // the split keeps every draw (n even)
  if (!every_draw) {
    pooled_odd = draws;
    std::sort(pooled_odd.begin(), pooled_odd.end());
  }
  const std::vector<double>& pooled = every_draw ? values : pooled_odd;
  const double lowest = pooled.front(), highest = pooled.back();
  if (sorted) *sorted = pooled;
  if (highest - lowest < 1e-15 * std::max(1.0, std::fabs(lowest))) {
    d.rhat = 1;  // a constant quantity
    d.ess_bulk = d.ess_tail = double(pooled.size());
    return d;
  }
  const double median = sorted_percentile(pooled, 0.5);
  // |x - median| in ascending order: the sorted draws merged outwards from the median (the
  // distances grow monotonically on each side, rounding included).
  folded_order.clear();
  distances.clear();
  std::size_t right =
      std::size_t(std::lower_bound(values.begin(), values.end(), median) - values.begin());
  std::size_t left = right;  // values[left - 1] is the next below the median
  while (left > 0 || right < order.size()) {
    const double below = left > 0 ? std::fabs(values[left - 1] - median) : 0;
    const double above = right < order.size() ? std::fabs(values[right] - median) : 0;
    const bool take_left = right == order.size() || (left > 0 && below <= above);
    folded_order.push_back(take_left ? order[--left] : order[right++]);
    distances.push_back(take_left ? below : above);
  }
  z_scale(split, order, values, z_split);
  z_scale(split, folded_order, distances, z_folded);
  d.rhat = std::max(basic_rhat(z_split), basic_rhat(z_folded));
  if (!with_ess) return d;
  d.ess_bulk = basic_ess(z_split);
  double tail = std::numeric_limits<double>::infinity();
  for (double q : {0.05, 0.95}) {
    const double cut = sorted_percentile(pooled, q);
    below.m = split.m;
    below.n = split.n;
    below.x.resize(split.x.size());
    for (std::size_t k = 0; k < split.x.size(); ++k) below.x[k] = split.x[k] <= cut ? 1.0 : 0.0;
    tail = std::min(tail, basic_ess(below));
  }
  d.ess_tail = tail;
  return d;
}
}  // namespace Impl

RankDiagnostics rank_diagnostics(const std::vector<std::vector<double>>& chains) {
  return Impl::rank_diagnostics(flatten(chains), chains.size(), true, nullptr);
}

double rank_rhat(const std::vector<std::vector<double>>& chains) {
  return Impl::rank_diagnostics(flatten(chains), chains.size(), false, nullptr).rhat;
}
}  // namespace kepler
}  // namespace kosmos
