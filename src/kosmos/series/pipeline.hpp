// The `kosmos series` pipeline as library functions, so that the command line tool and the
// end-to-end benchmark run the same code: load a system (text or HDF5), evaluate every
// polynomial and its gradient on the default execution space, write the results (text or HDF5).
//
// HDF5 layout of a result file (".h5"/".hdf5"; C order, so each polynomial's block is its
// LayoutLeft View):
//   attributes on "/": format = "kosmos series values", source, variables, degree, precision,
//                      complex, polynomials (P)
//   value     double (P, limbs, d + 1)              p_k(z)
//   gradient  double (P, limbs, variables, d + 1)   dp_k/dx_v (z)
//
// HDF5 layout of a Newton solution file (--newton, C order as above):
//   attributes on "/": format = "kosmos series newton", source, variables, degree (of the
//                      solution), precision, complex, steps, residual, condition, error,
//                      start_shift (double; newton.hpp)
//   x       double (limbs, variables, d + 1)   the series solution x(t)
//   ratio   double (variables)                 |x_(d-1)| / |x_d| (only for d >= 1)
//   radius  double (variables)                 pade_radius (newton.hpp; only for d >= 3)
#pragma once

#include <kosmos/series/evaluate.hpp>
#include <kosmos/series/newton.hpp>
#include <kosmos/series/system.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace kosmos {
namespace series {

// The precisions the pipeline is compiled for: N = 1, 2, 3, 4, 5, 8, 10, real and complex.
bool pipeline_supports(int precision);

struct SystemValues {
  int num_variables = 0;
  int degree = 0;
  int precision = 1;
  bool complex = false;
  std::vector<std::vector<double>> values;  // per polynomial, LayoutLeft (d + 1, limbs)
  std::vector<std::vector<double>>
      gradients;  // per polynomial, LayoutLeft (d + 1, variables, limbs)
  int limbs() const { return complex ? 2 * precision : precision; }
};

// Evaluates every polynomial of `system` at its point in the system's precision. A coefficient
// of a value or derivative that overflows to inf or is nan is a file_error
// "<source>:<line>: polynomial k: <what> coefficient j is inf". `timing` (optional) receives one
// line per polynomial with job counts and fenced stage times.
SystemValues evaluate_system(const NumericSystem& system,
                             KernelChoice kernels = KernelChoice::automatic,
                             std::ostream* timing = nullptr);

// Text: "value k : c_0 ... c_d" and "derivative k x<v> : c_0 ... c_d" lines (complex: re,im),
// every coefficient correctly rounded to `digits` (0: enough to read back the same N-double).
void write_values(std::ostream& out, const SystemValues& values, int digits);
// Largest `digits` the CLI accepts: beyond every exact expansion of a 10-fold double worth
// printing.
constexpr int max_output_digits = 10000;
void write_values_h5(const std::string& path, const SystemValues& values,
                     const std::string& source);

struct FileEvaluation {
  std::string input;   // system file, text or .h5
  std::string output;  // "" or "-": text on `out`; .h5: HDF5; else a text file
  int precision = 2;
  KernelChoice kernels = KernelChoice::automatic;
  int digits = 0;
  std::ostream* timing = nullptr;
};
// load_system -> evaluate_system -> write_values / write_values_h5.
void evaluate_file(const FileEvaluation& job, std::ostream& out);

// Newton's method on power series (newton.hpp) for the square homotopy `system` (its
// coefficients above the file's degree are zero), at the system's precision.
struct NewtonSolution {
  int num_variables = 0;
  int degree = 0;
  int precision = 1;
  bool complex = false;
  std::vector<double> x;  // LayoutLeft (d + 1, variables, limbs)
  NewtonResult result;
  int limbs() const { return complex ? 2 * precision : precision; }
};

// The series solution x(t) to `degree` from the start point `start` (one decimal per variable,
// complex: re,im; empty: the constant terms of the system's point), correctly rounded to the
// precision. kosmos::invalid_input "<source>: ..." for a system that is not square, a bad start
// value, a singular Jacobian (naming the step that met it: "at the start point" only for the
// first), a result that is not finite, a start that is not a root of H(x, 0) (unless
// refine_start: then Newton may move it to a root, NewtonResult::start_shift says how far) or
// steps that did not converge. `timing` (optional) receives one line per Newton step with
// fenced stage times.
NewtonSolution solve_newton(const NumericSystem& system, int degree,
                            const std::vector<std::string>& start = {},
                            KernelChoice kernels = KernelChoice::automatic,
                            std::ostream* timing = nullptr, bool refine_start = false);

// Text: "x<v> : c_0 ... c_d" per variable (correctly rounded like write_values), then
// "residual : r", "condition : cond_1(J_0)", "error : e" (newton.hpp), "start_shift : s" when
// Newton moved the start (refine_start), for d >= 1 "ratio x<v> : |c_(d-1) / c_d|" and for
// d >= 3 "radius x<v> : R" (pade_radius).
void write_newton(std::ostream& out, const NewtonSolution& solution, int digits);
void write_newton_h5(const std::string& path, const NewtonSolution& solution,
                     const std::string& source);
}  // namespace series
}  // namespace kosmos
