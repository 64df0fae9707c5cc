// Data staging of Verschelde (2021), Section 5: job coordinates of convolutions and additions.
#include <kosmos/core/error.hpp>
#include <kosmos/series/polynomial.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <utility>

namespace kosmos {
namespace series {

std::int64_t EvaluationPlan::num_convolutions() const {
  std::int64_t n = 0;
  for (const auto& layer : convolution_layers) n += std::int64_t(layer.size());
  return n;
}
std::int64_t EvaluationPlan::num_additions() const {
  std::int64_t n = 0;
  for (const auto& layer : addition_layers) n += std::int64_t(layer.size());
  return n;
}

void validate(const Polynomial& p) {
  const char* where = "kosmos::series::validate";
  Impl::require(p.num_variables > 0, where, "the polynomial has ", p.num_variables,
                " variables, expected at least one");
  for (std::size_t k = 0; k < p.monomials.size(); ++k) {
    const auto& m = p.monomials[k];
    Impl::require(!m.variables.empty(), where, "monomial ", k, " has no variables");
    Impl::require(m.exponents.empty() || m.exponents.size() == m.variables.size(), where,
                  "monomial ", k, " has ", m.variables.size(), " variables but ",
                  m.exponents.size(), " exponents");
    std::vector<int> seen;
    for (std::size_t j = 0; j < m.variables.size(); ++j) {
      const int v = m.variables[j];
      Impl::require(v >= 0 && v < p.num_variables, where, "monomial ", k, ": variable index ", v,
                    " out of range [0, ", p.num_variables, ")");
      Impl::require(std::find(seen.begin(), seen.end(), v) == seen.end(), where, "monomial ", k,
                    ": variable ", v, " repeated (use an exponent)");
      seen.push_back(v);
      if (!m.exponents.empty()) {
        Impl::require(m.exponents[j] >= 1, where, "monomial ", k, ": exponent ", m.exponents[j],
                      " of variable ", v, " is below 1");
        Impl::require(m.exponents[j] <= max_exponent, where, "monomial ", k, ": exponent ",
                      m.exponents[j], " of variable ", v, " is above the limit ", max_exponent);
      }
    }
  }
}

namespace {
Polynomial all_products(int n, int m) {
  Polynomial p;
  p.num_variables = n;
  std::vector<int> idx(m);
  for (int i = 0; i < m; ++i) idx[i] = i;
  while (true) {
    p.monomials.push_back(Monomial{idx, {}});
    int i = m - 1;
    while (i >= 0 && idx[i] == n - m + i) --i;
    if (i < 0) break;
    ++idx[i];
    for (int j = i + 1; j < m; ++j) idx[j] = idx[j - 1] + 1;
  }
  return p;
}
}  // namespace

Polynomial make_p1() {
  return all_products(16, 4);
}
Polynomial make_p3() {
  return all_products(128, 2);
}
Polynomial make_p2() {
  Polynomial p;
  p.num_variables = 128;
  for (int k = 0; k < 128; ++k) {
    Monomial m;
    for (int j = 0; j < 64; ++j) m.variables.push_back((k + j) % 128);
    std::sort(m.variables.begin(), m.variables.end());
    p.monomials.push_back(m);
  }
  return p;
}
Polynomial make_test_polynomial(const std::string& name) {
  if (name == "p1") return make_p1();
  if (name == "p2") return make_p2();
  if (name == "p3") return make_p3();
  throw invalid_input("kosmos::series::make_test_polynomial: unknown test polynomial '" + name +
                      "', expected p1, p2 or p3");
}

namespace {
// Builds jobs while tracking, per slot, the layer after which its value is ready.
class Builder {
 public:
  explicit Builder(int first_free) : next_slot_(first_free) {}
  int new_slot() {
    ready_.resize(std::size_t(next_slot_) + 1, 0);
    return next_slot_++;
  }
  int ready(int slot) const { return slot < int(ready_.size()) ? ready_[std::size_t(slot)] : 0; }
  int convolve(int x, int y) {
    const int out = new_slot();
    const int layer = std::max(ready(x), ready(y)) + 1;
    ready_[std::size_t(out)] = layer;
    if (int(conv_.size()) < layer) conv_.resize(std::size_t(layer));
    conv_[std::size_t(layer) - 1].push_back(Job{x, y, out});
    return out;
  }
  int slots() const { return next_slot_; }
  std::vector<std::vector<Job>> conv_;

 private:
  int next_slot_;
  std::vector<int> ready_;
};

// Tree sum of `terms` (writable[i] says whether a term's slot may be overwritten); returns the
// slot holding the sum. Additions of one tree level form one layer (relative to the start).
int tree_sum(std::vector<int> terms, std::vector<bool> writable, int zero_slot, int& next_slot,
             std::vector<std::vector<Job>>& layers) {
  if (terms.empty()) return zero_slot;
  std::size_t level = 0;
  while (terms.size() > 1) {
    std::vector<int> next;
    std::vector<bool> next_writable;
    if (layers.size() <= level) layers.resize(level + 1);
    for (std::size_t i = 0; i + 1 < terms.size(); i += 2) {
      int out;
      if (writable[i])
        out = terms[i];
      else if (writable[i + 1])
        out = terms[i + 1];
      else
        out = next_slot++;
      layers[level].push_back(Job{terms[i], terms[i + 1], out});
      next.push_back(out);
      next_writable.push_back(true);
    }
    if (terms.size() % 2) {
      next.push_back(terms.back());
      next_writable.push_back(writable.back());
    }
    terms.swap(next);
    writable.swap(next_writable);
    ++level;
  }
  return terms[0];
}
}  // namespace

EvaluationPlan make_plan(const Polynomial& p) {
  validate(p);
  EvaluationPlan plan;
  const int N = int(p.monomials.size());
  const int n = p.num_variables;
  plan.num_variables = n;
  plan.num_monomials = N;
  plan.first_coefficient_slot = 0;
  plan.first_variable_slot = 1 + N;
  plan.zero_slot = 1 + N + n;
  Builder b(plan.zero_slot + 1);
  auto z = [&](int v) { return plan.first_variable_slot + v; };

  // Powers z_v^e by repeated squaring (O(log e) convolutions each), shared between monomials.
  std::map<std::pair<int, int>, int> power_slots;
  std::function<int(int, int)> power = [&](int v, int e) -> int {
    if (e == 1) return z(v);
    const auto found = power_slots.find({v, e});
    if (found != power_slots.end()) return found->second;
    const int slot =
        e % 2 ? b.convolve(power(v, e - 1), z(v)) : b.convolve(power(v, e / 2), power(v, e / 2));
    power_slots[{v, e}] = slot;
    return slot;
  };

  // Terms of the value and of each derivative.
  std::vector<int> value_terms{plan.first_coefficient_slot};
  std::vector<bool> value_writable{false};
  std::vector<std::vector<int>> grad_terms(static_cast<std::size_t>(n));
  std::vector<std::vector<bool>> grad_writable(static_cast<std::size_t>(n));
  auto add_grad = [&](int v, int slot, bool writable, int exponent) {
    grad_terms[std::size_t(v)].push_back(slot);
    grad_writable[std::size_t(v)].push_back(writable);
    if (exponent > 1) plan.scale_jobs.push_back(ScaleJob{slot, double(exponent)});
  };

  for (int k = 0; k < N; ++k) {
    const auto& mono = p.monomials[std::size_t(k)];
    const int m = int(mono.variables.size());
    auto exponent = [&](int j) {
      return mono.exponents.empty() ? 1 : mono.exponents[std::size_t(j)];
    };
    // Common factor a_k * prod z^(e - 1).
    int a = plan.first_coefficient_slot + 1 + k;
    bool a_writable = false;
    for (int j = 0; j < m; ++j) {
      if (exponent(j) > 1) {
        a = b.convolve(a, power(mono.variables[std::size_t(j)], exponent(j) - 1));
        a_writable = true;
      }
    }
    auto zi = [&](int j) {
      return z(mono.variables[std::size_t(j - 1)]);
    };  // 1-based like the paper
    auto var = [&](int j) { return mono.variables[std::size_t(j - 1)]; };
    if (m == 1) {
      const int f1 = b.convolve(a, zi(1));
      value_terms.push_back(f1);
      value_writable.push_back(true);
      add_grad(var(1), a, a_writable, exponent(0));
      continue;
    }
    // forward products f_1..f_m
    std::vector<int> f(std::size_t(m) + 1);
    f[1] = b.convolve(a, zi(1));
    for (int j = 2; j <= m; ++j) f[std::size_t(j)] = b.convolve(f[std::size_t(j) - 1], zi(j));
    value_terms.push_back(f[std::size_t(m)]);
    value_writable.push_back(true);
    if (m == 2) {
      const int b1 = b.convolve(zi(2), a);
      add_grad(var(1), b1, true, exponent(0));
      add_grad(var(2), f[1], true, exponent(1));
      continue;
    }
    // backward products b_1 = z_m z_{m-1}, b_j = b_{j-1} z_{m-j}, j <= m-2; then b_{m-2} * a
    std::vector<int> bw(std::size_t(m) + 1);
    bw[1] = b.convolve(zi(m), zi(m - 1));
    for (int j = 2; j <= m - 2; ++j)
      bw[std::size_t(j)] = b.convolve(bw[std::size_t(j) - 1], zi(m - j));
    const int da1 = b.convolve(bw[std::size_t(m) - 2], a);
    add_grad(var(1), da1, true, exponent(0));
    // cross products c_j = f_j * b_{m-2-j} (b_0 = z_m): the derivative to x_{i_{j+1}}
    for (int j = 1; j <= m - 2; ++j) {
      const int other = (j == m - 2) ? zi(m) : bw[std::size_t(m - 2 - j)];
      const int c = b.convolve(f[std::size_t(j)], other);
      add_grad(var(j + 1), c, true, exponent(j));
    }
    add_grad(var(m), f[std::size_t(m) - 1], true, exponent(m - 1));
  }
  plan.convolution_layers = std::move(b.conv_);

  int next_slot = b.slots();
  plan.value_slot =
      tree_sum(value_terms, value_writable, plan.zero_slot, next_slot, plan.addition_layers);
  plan.gradient_slots.resize(static_cast<std::size_t>(n));
  for (int v = 0; v < n; ++v)
    plan.gradient_slots[std::size_t(v)] =
        tree_sum(grad_terms[std::size_t(v)], grad_writable[std::size_t(v)], plan.zero_slot,
                 next_slot, plan.addition_layers);
  plan.num_slots = next_slot;
  return plan;
}
}  // namespace series
}  // namespace kosmos
