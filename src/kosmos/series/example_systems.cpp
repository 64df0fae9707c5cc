#include <kosmos/core/error.hpp>
#include <kosmos/series/example_systems.hpp>

#include <algorithm>
#include <map>
#include <random>

namespace kosmos {
namespace series {

NumericSystem system_from_terms(int n, const std::vector<std::vector<Term>>& polynomials,
                                const std::string& source) {
  NumericSystem s;
  s.num_variables = n;
  s.degree = 0;
  s.precision = 1;
  s.source = source;
  for (const auto& p : polynomials)
    for (const auto& t : p) s.complex = s.complex || t.coefficient.imag() != 0.0;
  const std::size_t limbs = std::size_t(s.limbs());
  for (const auto& p : polynomials) {
    NumericPolynomial np;
    np.structure.num_variables = n;
    // merge terms with the same monomial; the constant is slot 0
    std::map<std::pair<std::vector<int>, std::vector<int>>, std::complex<double>> merged;
    std::complex<double> constant = 0.0;
    for (const auto& t : p) {
      if (t.variables.empty()) {
        constant += t.coefficient;
        continue;
      }
      std::vector<std::pair<int, int>> factors;
      for (std::size_t q = 0; q < t.variables.size(); ++q)
        factors.push_back({t.variables[q], t.exponents.empty() ? 1 : t.exponents[q]});
      std::sort(factors.begin(), factors.end());
      std::vector<int> v, e;
      for (const auto& [variable, exponent] : factors) v.push_back(variable), e.push_back(exponent);
      merged[{v, e}] += t.coefficient;
    }
    std::vector<std::complex<double>> values{constant};
    for (const auto& [key, c] : merged) {
      np.structure.monomials.push_back(Monomial{key.first, key.second});
      values.push_back(c);
    }
    validate(np.structure);
    np.coefficients.assign(values.size() * limbs, 0.0);
    for (std::size_t k = 0; k < values.size(); ++k) {
      np.coefficients[k] = values[k].real();
      if (s.complex) np.coefficients[k + values.size()] = values[k].imag();
    }
    s.polynomials.push_back(np);
  }
  s.point.assign(std::size_t(n) * limbs, 0.0);
  return s;
}

NumericSystem cyclic_system(int n) {
  kosmos::Impl::require(n >= 2, "kosmos::series::cyclic_system", "n = ", n, " is below 2");
  std::vector<std::vector<Term>> f;
  for (int k = 1; k <= n; ++k) {
    std::vector<Term> p;
    for (int i = 0; i < (k < n ? n : 1); ++i) {
      Term t{1.0, {}, {}};
      for (int j = 0; j < k; ++j) t.variables.push_back((i + j) % n);
      p.push_back(t);
    }
    if (k == n) p.push_back(Term{-1.0, {}, {}});
    f.push_back(p);
  }
  return system_from_terms(n, f, "cyclic" + std::to_string(n));
}

NumericSystem katsura_system(int n) {
  kosmos::Impl::require(n >= 1, "kosmos::series::katsura_system", "n = ", n, " is below 1");
  std::vector<std::vector<Term>> f;
  std::vector<Term> linear{Term{-1.0, {}, {}}};
  for (int i = -n; i <= n; ++i) linear.push_back(Term{1.0, {i < 0 ? -i : i}, {}});
  f.push_back(linear);
  for (int m = 0; m < n; ++m) {
    std::vector<Term> p{Term{-1.0, {m}, {}}};
    for (int i = -n; i <= n; ++i) {
      const int a = i < 0 ? -i : i, b = m - i < 0 ? i - m : m - i;
      if (b > n) continue;
      if (a == b)
        p.push_back(Term{1.0, {a}, {2}});
      else
        p.push_back(Term{1.0, {a, b}, {}});
    }
    f.push_back(p);
  }
  return system_from_terms(n + 1, f, "katsura" + std::to_string(n));
}

NumericSystem random_dense_system(int n, int degree, std::uint64_t seed) {
  kosmos::Impl::require(n >= 1 && degree >= 1, "kosmos::series::random_dense_system", "n = ", n,
                        " and degree = ", degree, " must be positive");
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  // all exponent vectors of total degree <= degree
  std::vector<std::vector<int>> exponents{std::vector<int>(std::size_t(n), 0)};
  for (std::size_t first = 0; first < exponents.size(); ++first) {
    int total = 0, last = 0;
    for (int j = 0; j < n; ++j) {
      total += exponents[first][std::size_t(j)];
      if (exponents[first][std::size_t(j)] > 0) last = j;
    }
    if (total == degree) continue;
    for (int j = last; j < n; ++j) {
      auto e = exponents[first];
      ++e[std::size_t(j)];
      exponents.push_back(e);
    }
  }
  std::vector<std::vector<Term>> f(static_cast<std::size_t>(n));
  for (auto& p : f)
    for (const auto& e : exponents) {
      Term t{{u(rng), u(rng)}, {}, {}};
      for (int j = 0; j < n; ++j)
        if (e[std::size_t(j)] > 0) {
          t.variables.push_back(j);
          t.exponents.push_back(e[std::size_t(j)]);
        }
      p.push_back(t);
    }
  return system_from_terms(n, f, "random" + std::to_string(n) + "x" + std::to_string(degree));
}
}  // namespace series
}  // namespace kosmos
