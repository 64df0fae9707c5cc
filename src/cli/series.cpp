// `kosmos series`: value and gradient of a polynomial system with power series coefficients at a
// point of power series, in N-fold double precision (Verschelde 2021); also writes the paper's
// test polynomials p1, p2, p3 in the same text format.
#include "options.hpp"

#include <kosmos/core/error.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/core/multi_double.hpp>
#include <kosmos/series/evaluate.hpp>
#include <kosmos/series/text_format.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <iostream>
#include <sstream>

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
    "the chosen precision (complex: re,im).";

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
      .option("degree", "D", "with --generate: truncation degree", "8")
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
  if (input.empty()) throw kosmos::cli::usage_error("missing argument <input> (or --generate NAME)");
  const std::string kernels_name = options.str("kernels");
  if (kernels_name != "auto" && kernels_name != "generic")
    throw kosmos::cli::usage_error("--kernels '" + kernels_name + "': expected auto or generic");
  const int N = int(options.integer("precision", 1));
  const int digits = int(options.integer("digits", 0));
  const auto sys = read_system(input);
  const auto text = dispatch(N, sys, input, kernels_name == "auto" ? KernelChoice::automatic : KernelChoice::generic,
                             digits, options.is_set("timing"));
  emit(output, input, text);
  return 0;
}
const kosmos::cli::CommandRegistration registration{
    {"series", "power series polynomial value + gradient, multi-double", &run_series}};
}  // namespace
