// The symbolic input syntax of polynomial systems (PHCpack / Bertini style), an alternative to
// the keyword format of text_format.hpp:
//
//   2                                  optional first line: the number of equations (PHCpack;
//                                      a second number, the number of variables, may follow)
//   x1^2*x2 - (1 + 2*t)*x3 + 0.5;      one equation per ';' (may span lines; "lhs = rhs;" is
//   x2 - 3.5e-1*i*x1 ;                 lhs - rhs); '#' or '%' starts a comment
//
// Variables by name ([A-Za-z_][A-Za-z0-9_]*, numbered in order of first appearance); 'i' and 'I'
// are the imaginary unit; 't' is the continuation parameter (the series variable: coefficients
// become power series in t, of the highest power of t that occurs); '+', '-', '*', '^' (or '**')
// with a non-negative integer exponent, parentheses, and '/' by a number (or an expression in
// numbers and t without a t to divide by). Numbers are decimals read correctly rounded to 10
// doubles; the arithmetic on coefficients runs in 10-fold double before rounding to the
// requested precision, so integer and short decimal coefficients stay exact.
//
// Errors are kosmos::file_error "<source>:<line>: <what>", naming the token.
#pragma once

#include <kosmos/series/system.hpp>

#include <string>
#include <vector>

namespace kosmos {
namespace series {

// True when `text` is in the symbolic syntax (its first token is not a keyword of the
// keyword format).
bool is_symbolic(const std::string& text);

// Parses `text` into a system at `precision` limbs; names receives the variable names.
NumericSystem parse_symbolic(const std::string& text, const std::string& source, int precision,
                             std::vector<std::string>* names = nullptr);
}  // namespace series
}  // namespace kosmos
