// `kosmos series`: value and gradient of a polynomial system with power series coefficients at a
// point of power series, in N-fold double precision (Verschelde 2021); also writes the paper's
// test polynomials p1, p2, p3 in the same text format.
#include "options.hpp"

#include <kosmos/core/error.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/core/multi_double.hpp>
#include <kosmos/series/evaluate.hpp>
#include <kosmos/series/newton.hpp>
#include <kosmos/series/text_format.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <type_traits>

namespace {
using namespace kosmos::series;

const char* kSummary =
    "Evaluate a polynomial system and its gradient at a point of truncated power series in\n"
    "N-fold double precision (N = 1, 2, 3, 4, 5, 8, 10; complex coefficients for N = 1, 2, 4),\n"
    "with the layered convolution and addition jobs of Verschelde (2021). With --generate,\n"
    "write the paper's test polynomial p1, p2 or p3 (random coefficients and point) instead.\n"
    "\n"
    "Input format ('#' starts a comment; tokens separated by blanks):\n"
    "  variables 3                   the variables are x1 .. x3\n"
    "  degree 4                      every series has degree + 1 coefficients c_0 .. c_d\n"
    "  complex                       (optional) coefficients are written re,im\n"
    "  polynomial                    starts a polynomial (optional before the first)\n"
    "  constant : 1 0 0 0 0          constant series (default zero)\n"
    "  term x1 x3^2 : 0.5 1 0 0 -2   a monomial (distinct variables, exponents >= 1) and its\n"
    "                                coefficient series\n"
    "  point x1 : 1 0.25 0 0 0       the series substituted for x1 (one line per variable)\n"
    "\n"
    "Output: for each polynomial k, a line 'value k : c_0 ... c_d' and one line\n"
    "'derivative k x<i> : c_0 ... c_d' per variable, every coefficient with all the digits of\n"
    "the chosen precision (complex: re,im).\n"
    "\n"
    "Newton's method on power series (--newton SYSTEM): SYSTEM (same format) is a square homotopy\n"
    "H(x, t) = 0, n polynomials in x1 .. xn whose coefficient series are in t; its coefficients\n"
    "above the file's degree are zero. From the start point x0 (--start, else the constant terms\n"
    "of the point lines), with H(x0, 0) = 0 and the Jacobian of H at (x0, 0) invertible, Newton\n"
    "steps on truncated series at degrees 1, 3, 7, ..., --degree give the series solution x(t).\n"
    "Output: 'x<j> : c_0 ... c_d' per variable, 'residual : r' (the largest coefficient of\n"
    "H(x(t), t) up to t^d) and, for d >= 1, 'ratio x<j> : |c_(d-1) / c_d|' (an estimate of the\n"
    "radius of convergence, as PHCpack reports it: trust the series well inside it). Exit 1 with\n"
    "a message when the Jacobian at the start point is singular or a result is not finite.\n"
    "Example: x^2 - 1 - t (variables 1, degree 1, 'constant : -1 -1', 'term x1^2 : 1 0',\n"
    "'point x1 : 1 0') with --newton FILE --degree 4 gives sqrt(1 + t) = 1 + t/2 - t^2/8 + ...";

template <int N, bool Complex>
kosmos::MultiDouble<N> parse_part(const std::string& token, bool imaginary) {
  std::string re, im;
  split_complex(token, re, im);
  kosmos::MultiDouble<N> x;
  if (!kosmos::from_string(imaginary ? im : re, x))
    throw kosmos::invalid_input("kosmos series: malformed coefficient '" + token + "'");
  return x;
}

template <int N, bool Complex, class HostView>
void fill(HostView& h, int series, const SeriesText& text, int degree) {
  for (int k = 0; k <= degree; ++k) {
    const auto re = text.empty() ? kosmos::MultiDouble<N>() : parse_part<N, Complex>(text[std::size_t(k)], false);
    for (int l = 0; l < N; ++l) h(k, series, l) = re.limb[l];
    if (Complex) {
      const auto im = text.empty() ? kosmos::MultiDouble<N>() : parse_part<N, Complex>(text[std::size_t(k)], true);
      for (int l = 0; l < N; ++l) h(k, series, N + l) = im.limb[l];
    }
  }
}

template <int N, bool Complex, class HostView>
void print_series(std::ostream& out, const HostView& h, int series, int degree, int digits) {
  out << " :";
  for (int k = 0; k <= degree; ++k) {
    kosmos::MultiDouble<N> re, im;
    for (int l = 0; l < N; ++l) re.limb[l] = h(k, series, l);
    out << ' ' << kosmos::to_string(re, digits);
    if (Complex) {
      for (int l = 0; l < N; ++l) im.limb[l] = h(k, series, N + l);
      out << ',' << kosmos::to_string(im, digits);
    }
  }
  out << "\n";
}

template <int N, bool Complex>
std::string evaluate_system(const SystemText& sys, const std::string& source, KernelChoice kernels, int digits,
                            bool timing) {
  using Space = Kokkos::DefaultExecutionSpace;
  constexpr int L = Complex ? 2 * N : N;
  using V3 = Kokkos::View<double***, Kokkos::LayoutLeft, Space>;
  using V2 = Kokkos::View<double**, Kokkos::LayoutLeft, Space>;
  const int d = sys.degree, n = sys.num_variables;
  Space space;
  V3 z("z", d + 1, n, L), grad("gradient", d + 1, n, L);
  V2 value("value", d + 1, L);
  auto hz = Kokkos::create_mirror_view(z);
  for (int v = 0; v < n; ++v) fill<N, Complex>(hz, v, sys.point[std::size_t(v)], d);
  Kokkos::deep_copy(z, hz);
  std::ostringstream out;
  out << "# kosmos series: " << source << ", " << N << "-fold double" << (Complex ? " complex" : "")
      << ", degree " << d << ", " << n << " variables, " << sys.polynomials.size() << " polynomial(s)\n";
  for (std::size_t k = 0; k < sys.polynomials.size(); ++k) {
    const auto& p = sys.polynomials[k];
    PolynomialEvaluator<N, Complex, Space> eval(space, p.structure, d, kernels);
    const int M = int(p.terms.size());
    V3 a("coefficients", d + 1, M + 1, L);
    auto ha = Kokkos::create_mirror_view(a);
    fill<N, Complex>(ha, 0, p.constant, d);
    for (int j = 0; j < M; ++j) fill<N, Complex>(ha, j + 1, p.terms[std::size_t(j)], d);
    Kokkos::deep_copy(a, ha);
    StageTimes times;
    eval.evaluate(space, a, z, value, grad, &times);
    if (timing)
      std::cerr << "polynomial " << k + 1 << ": " << eval.plan().num_convolutions() << " convolutions in "
                << eval.plan().convolution_layers.size() << " layers (" << 1e3 * times.convolution << " ms), "
                << eval.plan().num_additions() << " additions in " << eval.plan().addition_layers.size()
                << " layers (" << 1e3 * times.addition << " ms), wall " << 1e3 * times.wall << " ms"
                << (eval.uses_cuda_specialization() ? " [CUDA kernels]" : " [generic Kokkos kernels]") << "\n";
    auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), value);
    auto hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), grad);
    Kokkos::View<double***, Kokkos::LayoutLeft, Kokkos::HostSpace> hv3(hv.data(), std::size_t(d + 1), 1, std::size_t(L));
    out << "value " << k + 1;
    print_series<N, Complex>(out, hv3, 0, d, digits);
    for (int v = 0; v < n; ++v) {
      out << "derivative " << k + 1 << " x" << v + 1;
      print_series<N, Complex>(out, hg, v, d, digits);
    }
  }
  return out.str();
}

std::string dispatch(int N, const SystemText& sys, const std::string& source, KernelChoice kernels, int digits,
                     bool timing) {
  if (sys.complex) {
    switch (N) {
      case 1: return evaluate_system<1, true>(sys, source, kernels, digits, timing);
      case 2: return evaluate_system<2, true>(sys, source, kernels, digits, timing);
      case 4: return evaluate_system<4, true>(sys, source, kernels, digits, timing);
      default: throw kosmos::cli::usage_error("--precision " + std::to_string(N) + ": complex systems run with N = 1, 2 or 4");
    }
  }
  switch (N) {
    case 1: return evaluate_system<1, false>(sys, source, kernels, digits, timing);
    case 2: return evaluate_system<2, false>(sys, source, kernels, digits, timing);
    case 3: return evaluate_system<3, false>(sys, source, kernels, digits, timing);
    case 4: return evaluate_system<4, false>(sys, source, kernels, digits, timing);
    case 5: return evaluate_system<5, false>(sys, source, kernels, digits, timing);
    case 8: return evaluate_system<8, false>(sys, source, kernels, digits, timing);
    case 10: return evaluate_system<10, false>(sys, source, kernels, digits, timing);
    default: throw kosmos::cli::usage_error("--precision " + std::to_string(N) + " is not one of 1, 2, 3, 4, 5, 8, 10");
  }
}

// Calls run(std::integral_constant<int, N>(), std::bool_constant<Complex>()) for the precision.
template <class Run>
std::string with_precision(int N, bool complex, Run&& run) {
  auto as = [&](auto n) { return complex ? run(n, std::true_type()) : run(n, std::false_type()); };
  switch (N) {
    case 1: return as(std::integral_constant<int, 1>());
    case 2: return as(std::integral_constant<int, 2>());
    case 3: return as(std::integral_constant<int, 3>());
    case 4: return as(std::integral_constant<int, 4>());
    case 5: return as(std::integral_constant<int, 5>());
    case 8: return as(std::integral_constant<int, 8>());
    case 10: return as(std::integral_constant<int, 10>());
    default: throw kosmos::cli::usage_error("--precision " + std::to_string(N) + " is not one of 1, 2, 3, 4, 5, 8, 10");
  }
}

// --newton: the series solution of the homotopy in `sys` from the start point to degree d.
template <int N, bool Complex>
std::string newton_system(const SystemText& sys, const std::string& source, const std::vector<std::string>& start,
                          int d, KernelChoice kernels, int digits, bool timing) {
  using Space = Kokkos::DefaultExecutionSpace;
  constexpr int L = Complex ? 2 * N : N;
  using V3 = Kokkos::View<double***, Kokkos::LayoutLeft, Space>;
  const int n = sys.num_variables;
  if (int(sys.polynomials.size()) != n)
    throw kosmos::invalid_input("kosmos series --newton: " + source + " has " + std::to_string(sys.polynomials.size()) +
                                " polynomial(s) in " + std::to_string(n) + " variables; the system must be square");
  if (!start.empty() && int(start.size()) != n)
    throw kosmos::cli::usage_error("--start has " + std::to_string(start.size()) + " value(s), expected one per variable (" +
                                   std::to_string(n) + ")");
  Space space;
  const int given = std::min(d, sys.degree);  // coefficients above the file's degree are zero
  std::vector<Polynomial> structures;
  std::vector<V3> coefficients;
  for (const auto& p : sys.polynomials) {
    structures.push_back(p.structure);
    V3 a("coefficients", d + 1, p.terms.size() + 1, L);
    auto ha = Kokkos::create_mirror_view(a);
    fill<N, Complex>(ha, 0, p.constant, given);
    for (std::size_t j = 0; j < p.terms.size(); ++j) fill<N, Complex>(ha, int(j) + 1, p.terms[j], given);
    Kokkos::deep_copy(a, ha);
    coefficients.push_back(a);
  }
  V3 x("x", d + 1, n, L);
  auto hx = Kokkos::create_mirror_view(x);
  for (int v = 0; v < n; ++v) {
    const SeriesText x0{start.empty() ? sys.point[std::size_t(v)][0] : start[std::size_t(v)]};
    if (!Complex && x0[0].find(',') != std::string::npos)
      throw kosmos::invalid_input("kosmos series --newton: complex start value '" + x0[0] + "' for a real system");
    fill<N, Complex>(hx, v, x0, 0);
  }
  Kokkos::deep_copy(x, hx);
  SeriesNewton<N, Complex, Space> newton(space, structures, d, kernels);
  const NewtonResult result = newton.solve(space, coefficients, x, timing);
  if (timing)
    for (std::size_t s = 0; s < result.steps.size(); ++s)
      std::cerr << "step " << s + 1 << ": degree " << result.steps[s].degree << ", evaluation "
                << 1e3 * result.steps[s].evaluation_seconds << " ms, linear solve " << 1e3 * result.steps[s].solve_seconds
                << " ms, max |update| " << result.steps[s].update << "\n";
  const std::string at = "kosmos series --newton: " + source + ": ";
  if (result.status == NewtonStatus::singular_jacobian)
    throw kosmos::invalid_input(at + "the Jacobian at the start point is singular (no pivot in column " +
                                std::to_string(result.singular_column + 1) +
                                " at this precision): the solution is no power series there");
  if (result.status == NewtonStatus::not_finite)
    throw kosmos::invalid_input(at + "a NaN or infinity appeared at step " + std::to_string(result.steps.size()) +
                                " (degree " + std::to_string(result.steps.back().degree) + ")");
  Kokkos::deep_copy(hx, x);
  std::ostringstream out;
  out << "# kosmos series --newton: " << source << ", " << N << "-fold double" << (Complex ? " complex" : "")
      << ", degree " << d << ", " << n << " variables, " << result.steps.size() << " Newton steps at degrees";
  for (const auto& step : result.steps) out << ' ' << step.degree;
  out << "\n";
  for (int v = 0; v < n; ++v) {
    out << 'x' << v + 1;
    print_series<N, Complex>(out, hx, v, d, digits);
  }
  char number[32];
  std::snprintf(number, sizeof number, "%.3e", result.residual);
  out << "residual : " << number << "\n";
  for (std::size_t v = 0; v < result.coefficient_ratio.size(); ++v) {
    std::snprintf(number, sizeof number, "%.6e", result.coefficient_ratio[v]);
    out << "ratio x" << v + 1 << " : " << number << "\n";
  }
  return out.str();
}

void emit(const std::string& output, const std::string& input, const std::string& text) {
  if (output.empty() || output == "-") {
    std::cout << text;
    return;
  }
  if (!input.empty() && output == input)
    throw kosmos::cli::usage_error("--output '" + output + "' is the input file; refusing to overwrite it");
  kosmos::io::write_atomically(output, [&](std::ostream& out) { out << text; });
}

int run_series(const std::vector<std::string>& args) {
  kosmos::cli::Options options("series", kSummary);
  options.positional("input", "polynomial system file (format above)", false)
      .option("precision", "N", "N-fold double precision: 1, 2, 3, 4, 5, 8 or 10", "2")
      .option("output", "FILE", "write the result here instead of standard output", "", true)
      .option("digits", "D", "significant digits per coefficient (0: all of the precision)", "0")
      .option("kernels", "KIND", "auto (CUDA specialization on GPUs) or generic (Kokkos kernels only)", "auto")
      .option("generate", "NAME", "write test polynomial p1, p2 or p3 with a random point and exit", "", true)
      .option("newton", "SYSTEM", "power-series solution of the homotopy SYSTEM (see above)", "", true)
      .option("start", "\"X1 .. Xn\"", "with --newton: start point, blank-separated (complex: re,im)", "", true)
      .option("degree", "D", "with --generate: truncation degree; with --newton: degree of the solution", "8")
      .option("seed", "S", "with --generate: random seed", "1")
      .flag("complex", "with --generate: complex coefficients")
      .flag("timing", "print job counts and stage times to standard error");
  if (!options.parse(args)) return 0;
  const std::string input = options.str("input"), output = options.str("output");
  if (options.has("generate") && !options.str("generate").empty()) {
    if (!input.empty()) throw kosmos::cli::usage_error("--generate takes no input file");
    const std::string name = options.str("generate");
    if (name != "p1" && name != "p2" && name != "p3")
      throw kosmos::cli::usage_error("--generate '" + name + "': expected p1, p2 or p3");
    const int degree = int(options.integer("degree", 0));
    const auto sys = generate_system(name, degree, options.is_set("complex"), unsigned(options.integer("seed", 0)));
    std::ostringstream text;
    write_system(text, sys, "test polynomial " + name + " of Verschelde (2021), degree " + std::to_string(degree) +
                                ", seed " + options.str("seed") + " (kosmos series --generate)");
    emit(output, "", text.str());
    return 0;
  }
  const std::string kernels_name = options.str("kernels");
  if (kernels_name != "auto" && kernels_name != "generic")
    throw kosmos::cli::usage_error("--kernels '" + kernels_name + "': expected auto or generic");
  const KernelChoice kernels = kernels_name == "auto" ? KernelChoice::automatic : KernelChoice::generic;
  const int N = int(options.integer("precision", 1));
  const int digits = int(options.integer("digits", 0));
  if (options.has("newton") && !options.str("newton").empty()) {
    if (!input.empty()) throw kosmos::cli::usage_error("--newton takes the system file as its value, no <input>");
    const std::string system = options.str("newton");
    std::vector<std::string> start;
    std::istringstream tokens(options.has("start") ? options.str("start") : "");
    for (std::string token; tokens >> token;) start.push_back(token);
    const int degree = int(options.integer("degree", 0));
    const auto sys = read_system(system);
    emit(output, system, with_precision(N, sys.complex, [&](auto n, auto complex) {
           return newton_system<decltype(n)::value, decltype(complex)::value>(sys, system, start, degree, kernels,
                                                                               digits, options.is_set("timing"));
         }));
    return 0;
  }
  if (input.empty()) throw kosmos::cli::usage_error("missing argument <input> (or --generate NAME, --newton SYSTEM)");
  const auto sys = read_system(input);
  const auto text = dispatch(N, sys, input, kernels, digits, options.is_set("timing"));
  emit(output, input, text);
  return 0;
}
const kosmos::cli::CommandRegistration registration{
    {"series", "power series polynomial value + gradient, multi-double", &run_series}};
}  // namespace
