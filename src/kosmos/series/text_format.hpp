// The text format of polynomial systems with power series coefficients, read and written by
// `kosmos series`:
//
//   # '#' starts a comment; tokens are separated by blanks; keywords one per line.
//   variables 3                      number of variables, named x1 .. x3
//   degree 4                         every series is truncated at this degree
//   complex                          (optional) coefficients are complex, written re,im
//   polynomial                       starts a polynomial (optional before the first one)
//   constant : 1 0 0 0 0             a_0: exactly degree + 1 coefficients (default zero)
//   term x1 x3^2 : 0.5 1 0 0 -2      coefficient series of x1 x3^2 (variables distinct)
//   point x1 : 1 0.25 0 0 0          z_1; every variable needs exactly one point line
//
// Numbers are decimal ("-1.5", "2e-3", "0.1", "4.9e-324"), read correctly rounded to the
// evaluation precision (system.hpp: to_numeric): 0.1 becomes the N-double nearest to 1/10, not
// the double nearest to it. read_system checks their syntax and range only.
#pragma once

#include <kosmos/series/polynomial.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace kosmos {
namespace series {

// One coefficient series as written in the file: degree + 1 tokens (re or re,im).
using SeriesText = std::vector<std::string>;

struct PolynomialText {
  Polynomial structure;
  SeriesText constant;             // empty: zero
  std::vector<SeriesText> terms;   // one per monomial
  std::vector<std::size_t> lines;  // line of each term, for messages
  std::size_t line = 0;            // line where the polynomial starts (0: not from a file)
};

struct SystemText {
  int num_variables = 0;
  int degree = -1;
  bool complex = false;
  std::vector<PolynomialText> polynomials;
  std::vector<SeriesText> point;  // one per variable
};

// Reads and checks a system file; errors are kosmos::file_error "<path>:<line>: <what>" (bad
// keyword, variable out of range or repeated, exponent above max_exponent, wrong number of
// coefficients, malformed number or one beyond the largest double, missing point, a polynomial
// with neither constant nor terms, ...).
SystemText read_system(const std::string& path);

// Splits "re,im" (or "re") into its parts; false when malformed.
bool split_complex(const std::string& token, std::string& re, std::string& im);

// Writes `system` in the format above.
void write_system(std::ostream& out, const SystemText& system, const std::string& comment);

// A test polynomial (p1, p2 or p3) with random coefficients and point (uniform in [-1, 1] with
// all 17 digits), as a one-polynomial system.
SystemText generate_system(const std::string& name, int degree, bool complex, unsigned seed);
}  // namespace series
}  // namespace kosmos
