// Standard test systems of polynomial homotopy continuation, as NumericSystems of degree 0 (no t)
// for the path tracker (track.hpp), its tests and benchmarks:
//   cyclic n-roots: F_k = sum_{i=0}^{n-1} prod_{j=0}^{k-1} x_{(i+j) mod n}, k = 1..n-1,
//                   F_n = x_0 ... x_{n-1} - 1  (total degree n!; 70 isolated roots for n = 5,
//                   156 for n = 6, 924 for n = 7)
//   katsura n:      n + 1 unknowns x_0..x_n (x_{-i} = x_i, x_i = 0 for |i| > n):
//                   sum_{i=-n}^{n} x_i = 1, sum_{i=-n}^{n} x_i x_{m-i} = x_m (m = 0..n-1);
//                   2^n solutions, all finite and regular
//   random dense:   n polynomials of degree d with every monomial of degree <= d and complex
//                   coefficients uniform in [-1, 1]^2 (seeded): d^n regular solutions
#pragma once

#include <kosmos/series/system.hpp>

#include <complex>
#include <cstdint>
#include <vector>

namespace kosmos {
namespace series {

// One term of a polynomial given by code: coefficient times prod x_variables[q]^exponents[q].
struct Term {
  std::complex<double> coefficient;
  std::vector<int> variables;  // 0-based, distinct
  std::vector<int> exponents;  // one per variable (empty: all ones)
};

// A NumericSystem of degree 0 in double precision from terms (constants: no variables); complex
// when any coefficient has an imaginary part.
NumericSystem system_from_terms(int num_variables,
                                const std::vector<std::vector<Term>>& polynomials,
                                const std::string& source);

NumericSystem cyclic_system(int n);
NumericSystem katsura_system(int n);
NumericSystem random_dense_system(int n, int degree, std::uint64_t seed);
}  // namespace series
}  // namespace kosmos
