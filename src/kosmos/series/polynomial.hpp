// Polynomials whose coefficients are truncated power series, and the data staging of
// Verschelde (2021), Section 5: the job coordinates of all convolutions (forward, backward and
// cross products, grouped in layers that can run at the same time) and of all additions (tree
// sums) that evaluate p(z) and its gradient at a vector z of power series.
//
//   p(x) = a_0 + sum_k a_k x_{i_1}^{e_1} ... x_{i_m}^{e_m}
//
// A monomial with exponents above one is written, as in Section 3, as c * x_{i_1} ... x_{i_m}
// with the common factor c = a_k prod x_i^(e_i - 1), the powers computed by repeated squaring
// (O(log e) convolutions, shared between monomials); the derivative to x_i is then
// e_i * c * prod_{j != i} x_j. A polynomial without monomials is the constant a_0.
//
// Series live in one data array of "slots" (d + 1 coefficients each; one array per limb):
//   slot 0: a_0 | slots 1..N: a_1..a_N | slots N+1..N+n: z_1..z_n | one zero slot |
//   powers, common factors, forward/backward/cross products | addition scratch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kosmos {
namespace series {

struct Monomial {
  std::vector<int> variables;  // 0-based, distinct
  std::vector<int> exponents;  // empty = all ones; else one exponent >= 1 per variable
};

struct Polynomial {
  int num_variables = 0;
  std::vector<Monomial> monomials;  // the constant a_0 is not a monomial here
};

// Largest exponent accepted: 2^20 (20 squarings; a series to a higher power overflows or
// underflows long before in any precision unless it is the constant 1).
constexpr int max_exponent = 1 << 20;
// Largest truncation degree accepted (files, generated systems, Newton): a series of 100001
// coefficients in deca double is 8 MB per variable.
constexpr int max_degree = 100000;

// Throws kosmos::invalid_input naming the monomial and variable for: no variables, a monomial
// without variables, a variable index out of [0, num_variables) or repeated, an exponent < 1 or
// above max_exponent, a size mismatch between variables and exponents.
void validate(const Polynomial& p);

// The test polynomials of Section 6.1: p1 (16 variables, all 1820 products of 4 distinct
// variables), p2 (128 variables, 128 monomials of 64 consecutive variables, cyclically),
// p3 (128 variables, all 8128 products of 2 distinct variables).
Polynomial make_p1();
Polynomial make_p2();
Polynomial make_p3();
Polynomial make_test_polynomial(const std::string& name);  // "p1", "p2" or "p3"

// One convolution job out := x * y, or one addition job out := x + y (slot indices; the kernels
// multiply by d + 1 to get coefficient offsets). out never aliases x or y in a convolution.
struct Job {
  std::int32_t x, y, out;
};
// slot := factor * slot (the exponent factor of a derivative of x^e, e > 1).
struct ScaleJob {
  std::int32_t slot;
  double factor;
};

// Everything about an evaluation that depends only on the structure of the polynomial.
struct EvaluationPlan {
  int num_variables = 0;
  int num_monomials = 0;
  int num_slots = 0;
  int first_coefficient_slot = 0;  // a_0; a_k is at first_coefficient_slot + k
  int first_variable_slot = 0;     // z_1
  int zero_slot = 0;
  std::vector<std::vector<Job>> convolution_layers;
  std::vector<ScaleJob> scale_jobs;
  std::vector<std::vector<Job>> addition_layers;
  int value_slot = 0;
  std::vector<int> gradient_slots;  // one per variable

  std::int64_t num_convolutions() const;
  std::int64_t num_additions() const;
};

// Builds the plan (validates p first). Convolution layers follow the data dependencies: forward
// and backward products f_j, b_j at layer j, cross products c_j at max(j, m - 2 - j) + 1
// (Proposition 3.1), powers and common factors before them; additions are tree sums.
EvaluationPlan make_plan(const Polynomial& p);

// Number of convolutions that evaluate and differentiate one monomial of m > 2 variables
// (all exponents 1): 3 m - 3.
constexpr std::int64_t convolutions_per_monomial(int m) {
  return m == 1 ? 1 : (m == 2 ? 3 : 3 * std::int64_t(m) - 3);
}
}  // namespace series
}  // namespace kosmos
