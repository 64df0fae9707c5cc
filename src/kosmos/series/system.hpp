// A polynomial system with its coefficients and point as multiple-double limbs on the host, laid
// out like the evaluator's Views, and its two file formats: the text format of text_format.hpp
// (numbers parsed exactly to N limbs) and HDF5 (limbs stored as they are).
//
// HDF5 layout of a system file (".h5"/".hdf5"); arrays in C order, so a dataset of dims
// (limbs, count, d + 1) is exactly the LayoutLeft (d + 1, count, limbs) View:
//   attributes on "/": format = "kosmos series system", variables, degree, precision (N of the
//                      stored limbs), complex (0 or 1), polynomials (count P)
//   point                          double (limbs, variables, d + 1)
//   polynomial_<k>/coefficients    double (limbs, monomials + 1, d + 1), series 0 the constant
//   polynomial_<k>/monomial_offsets int32 (monomials + 1): monomial j owns the entries
//                                  [offsets[j], offsets[j + 1]) of
//   polynomial_<k>/variables       int32, 1-based variable indices, and
//   polynomial_<k>/exponents       int32, their exponents (>= 1)
// for k = 1 .. P; limbs = N (real) or 2 N (complex: real part limbs, then imaginary part limbs).
#pragma once

#include <kosmos/series/polynomial.hpp>
#include <kosmos/series/text_format.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace kosmos {
namespace series {

struct NumericPolynomial {
  Polynomial structure;
  std::vector<double> coefficients;  // LayoutLeft (d + 1, monomials + 1, limbs)
  std::size_t line = 0;              // first line in the text file (0: not from text)
};

struct NumericSystem {
  int num_variables = 0;
  int degree = 0;
  int precision = 1;  // N: limbs per real number
  bool complex = false;
  std::vector<NumericPolynomial> polynomials;
  std::vector<double> point;  // LayoutLeft (d + 1, num_variables, limbs)
  std::string source;         // file it came from, for messages

  int limbs() const { return complex ? 2 * precision : precision; }
};

// "<source>:<line>", or the source alone when line is 0 (for messages).
std::string where(const std::string& source, std::size_t line);

// Every number of `text` correctly rounded to `precision` limbs (kosmos::file_error
// "<source>:<line>: ..." for a number that is malformed or overflows).
NumericSystem to_numeric(const SystemText& text, int precision, const std::string& source);

// The same system at another precision: extra limbs are zero (exact), fewer limbs are the
// nearest N-double of the stored sum.
NumericSystem with_precision(const NumericSystem& system, int precision);

// HDF5 (layout above). read_system_h5 throws file_error naming the file and dataset for a
// missing or mis-sized dataset, a bad attribute, structure or a non-finite number.
void write_system_h5(const std::string& path, const NumericSystem& system,
                     const std::string& comment);
NumericSystem read_system_h5(const std::string& path);

// A system file in either format (io::is_hdf5_path picks), at `precision` limbs.
NumericSystem load_system(const std::string& path, int precision);
}  // namespace series
}  // namespace kosmos
