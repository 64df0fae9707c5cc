#include <kosmos/core/error.hpp>
#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/core/multi_double.hpp>
#include <kosmos/series/pipeline.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <type_traits>

namespace kosmos {
namespace series {

bool pipeline_supports(int precision) {
  switch (precision) {
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 8:
    case 10:
      return true;
    default:
      return false;
  }
}

namespace {
using Space = Kokkos::DefaultExecutionSpace;

// run(std::integral_constant<int, N>(), std::bool_constant<Complex>()) at the precision: the one
// place that instantiates the pipeline for N = 1, 2, 3, 4, 5, 8, 10, real and complex.
template <class Run>
auto dispatch_precision(int N, bool complex, const char* who, Run&& run) {
  auto as = [&](auto n) { return complex ? run(n, std::true_type()) : run(n, std::false_type()); };
  switch (N) {
    case 1:
      return as(std::integral_constant<int, 1>());
    case 2:
      return as(std::integral_constant<int, 2>());
    case 3:
      return as(std::integral_constant<int, 3>());
    case 4:
      return as(std::integral_constant<int, 4>());
    case 5:
      return as(std::integral_constant<int, 5>());
    case 8:
      return as(std::integral_constant<int, 8>());
    case 10:
      return as(std::integral_constant<int, 10>());
    default:
      throw invalid_input(std::string("kosmos::series::") + who + ": precision " +
                          std::to_string(N) + " is not one of 1, 2, 3, 4, 5, 8, 10");
  }
}
using HostSeries =
    Kokkos::View<const double***, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
using DeviceSeries = Kokkos::View<double***, Kokkos::LayoutLeft, Space>;

DeviceSeries upload(const std::vector<double>& host, std::size_t n1, std::size_t count,
                    std::size_t limbs, const char* label) {
  DeviceSeries d(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n1, count,
                 limbs);
  Kokkos::deep_copy(d, HostSeries(host.data(), n1, count, limbs));
  return d;
}

// file_error at the first non-finite limb of `array` (LayoutLeft (d + 1, count, limbs)).
void require_finite(const std::vector<double>& array, std::size_t n1, std::size_t count,
                    const NumericSystem& sys, std::size_t k, const char* what) {
  const std::size_t rows = n1 * count;
  for (std::size_t i = 0; i < array.size(); ++i) {
    if (std::isfinite(array[i])) continue;
    const std::size_t row = i % rows, series = row / n1, coefficient = row % n1;
    const auto& p = sys.polynomials[k];
    std::string name = what;
    if (count > 1 || std::string(what) != "value") name += " x" + std::to_string(series + 1);
    throw file_error(
        where(sys.source, p.line) + ": polynomial " + std::to_string(k + 1) + ": " + name +
        " coefficient " + std::to_string(coefficient) + " is " +
        (std::isnan(array[i]) ? "nan (an intermediate result overflowed)" : "inf (overflow)") +
        " in the evaluation; rescale the coefficients or the point");
  }
}

template <int N, bool Complex>
SystemValues evaluate_in(const NumericSystem& sys, KernelChoice kernels, std::ostream* timing) {
  constexpr int L = Complex ? 2 * N : N;
  const std::size_t n1 = std::size_t(sys.degree) + 1, n = std::size_t(sys.num_variables);
  Space space;
  const DeviceSeries z = upload(sys.point, n1, n, L, "kosmos::series::z");
  DeviceSeries gradient("kosmos::series::gradient", n1, n, L);
  Kokkos::View<double**, Kokkos::LayoutLeft, Space> value("kosmos::series::value", n1, L);
  SystemValues out;
  out.num_variables = sys.num_variables;
  out.degree = sys.degree;
  out.precision = N;
  out.complex = Complex;
  for (std::size_t k = 0; k < sys.polynomials.size(); ++k) {
    const auto& p = sys.polynomials[k];
    PolynomialEvaluator<N, Complex, Space> eval(space, p.structure, sys.degree, kernels);
    const DeviceSeries a = upload(p.coefficients, n1, p.structure.monomials.size() + 1, L,
                                  "kosmos::series::coefficients");
    StageTimes times;
    eval.evaluate(space, a, z, value, gradient, timing ? &times : nullptr);
    out.values.emplace_back(n1 * L);
    out.gradients.emplace_back(n1 * n * L);
    Kokkos::deep_copy(
        space,
        Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
            out.values.back().data(), n1, std::size_t(L)),
        value);
    Kokkos::deep_copy(
        space,
        Kokkos::View<double***, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
            out.gradients.back().data(), n1, n, std::size_t(L)),
        gradient);
    space.fence();
    if (timing)
      *timing << "polynomial " << k + 1 << ": " << eval.plan().num_convolutions()
              << " convolutions in " << eval.plan().convolution_layers.size() << " layers ("
              << 1e3 * times.convolution << " ms), " << eval.plan().num_additions()
              << " additions in " << eval.plan().addition_layers.size() << " layers ("
              << 1e3 * times.addition << " ms), wall " << 1e3 * times.wall << " ms"
              << (eval.uses_cuda_specialization() ? " [CUDA kernels]" : " [generic Kokkos kernels]")
              << "\n";
    require_finite(out.values.back(), n1, 1, sys, k, "value");
    require_finite(out.gradients.back(), n1, n, sys, k, "derivative");
  }
  return out;
}

}  // namespace

SystemValues evaluate_system(const NumericSystem& sys, KernelChoice kernels, std::ostream* timing) {
  return dispatch_precision(sys.precision, sys.complex, "evaluate_system", [&](auto n, auto c) {
    return evaluate_in<decltype(n)::value, decltype(c)::value>(sys, kernels, timing);
  });
}

namespace {
// " : c_0 ... c_d" of series s of a LayoutLeft (d + 1, count, limbs) array.
void write_series(std::ostream& out, const std::vector<double>& array, std::size_t s,
                  std::size_t count, int degree, int N, bool complex, int digits) {
  const std::size_t n1 = std::size_t(degree) + 1, rows = n1 * count;
  std::vector<double> limbs(static_cast<std::size_t>(N), 0.0);
  out << " :";
  for (std::size_t k = 0; k < n1; ++k) {
    for (int part = 0; part < (complex ? 2 : 1); ++part) {
      for (int l = 0; l < N; ++l)
        limbs[std::size_t(l)] = array[s * n1 + k + rows * std::size_t(part * N + l)];
      out << (part ? ',' : ' ') << kosmos::Impl::format_decimal(limbs.data(), N, digits);
    }
  }
  out << '\n';
}
}  // namespace

void write_values(std::ostream& out, const SystemValues& values, int digits) {
  const std::size_t n = std::size_t(values.num_variables);
  for (std::size_t k = 0; k < values.values.size(); ++k) {
    out << "value " << k + 1;
    write_series(out, values.values[k], 0, 1, values.degree, values.precision, values.complex,
                 digits);
    for (std::size_t v = 0; v < n; ++v) {
      out << "derivative " << k + 1 << " x" << v + 1;
      write_series(out, values.gradients[k], v, n, values.degree, values.precision, values.complex,
                   digits);
    }
  }
}

void write_values_h5(const std::string& path, const SystemValues& values,
                     const std::string& source) {
  io::H5Writer out(path);
  out.attribute("/", "format", "kosmos series values");
  out.attribute("/", "source", source);
  out.attribute("/", "variables", (long long)values.num_variables);
  out.attribute("/", "degree", (long long)values.degree);
  out.attribute("/", "precision", (long long)values.precision);
  out.attribute("/", "complex", (long long)values.complex);
  const std::size_t P = values.values.size(), n1 = std::size_t(values.degree) + 1,
                    L = std::size_t(values.limbs()), n = std::size_t(values.num_variables);
  out.attribute("/", "polynomials", (long long)P);
  out.create<double>("value", {P, L, n1});
  out.create<double>("gradient", {P, L, n, n1});
  for (std::size_t k = 0; k < P; ++k) {
    out.write_rows("value", k, 1, values.values[k].data());
    out.write_rows("gradient", k, 1, values.gradients[k].data());
  }
  out.commit();
}

namespace {
// "%.<digits>e": the diagnostics are estimates, printed with few digits.
std::string scientific(double value, int digits = 3) {
  char number[40];
  std::snprintf(number, sizeof number, "%.*e", digits, value);
  return number;
}

template <int N, bool Complex>
NewtonSolution newton_in(const NumericSystem& sys, int degree, const std::vector<double>& x0,
                         KernelChoice kernels, bool refine_start, std::ostream* timing) {
  constexpr std::size_t L = Complex ? 2 * N : N;
  const std::size_t d1 = std::size_t(degree) + 1, n1 = std::size_t(sys.degree) + 1,
                    n = std::size_t(sys.num_variables);
  const std::size_t given = std::min(d1, n1);  // coefficients above the file's degree are zero
  Space space;
  std::vector<Polynomial> structures;
  std::vector<DeviceSeries> coefficients;
  for (const auto& p : sys.polynomials) {
    structures.push_back(p.structure);
    const std::size_t count = p.structure.monomials.size() + 1;
    std::vector<double> a(d1 * count * L, 0.0);
    for (std::size_t row = 0; row < count * L; ++row)
      for (std::size_t k = 0; k < given; ++k) a[k + d1 * row] = p.coefficients[k + n1 * row];
    coefficients.push_back(upload(a, d1, count, L, "kosmos::series::newton::coefficients"));
  }
  NewtonSolution out;
  out.num_variables = sys.num_variables;
  out.degree = degree;
  out.precision = N;
  out.complex = Complex;
  out.x.assign(d1 * n * L, 0.0);
  for (std::size_t row = 0; row < n * L; ++row) out.x[d1 * row] = x0[row];
  const DeviceSeries x = upload(out.x, d1, n, L, "kosmos::series::newton::x");
  SeriesNewton<N, Complex, Space> newton(space, structures, degree, kernels);
  NewtonOptions options;
  options.refine_start = refine_start;
  options.timed = timing != nullptr;
  out.result = newton.solve(space, coefficients, x, options);
  Kokkos::deep_copy(
      space,
      Kokkos::View<double***, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
          out.x.data(), d1, n, L),
      x);
  space.fence();
  if (timing)
    for (std::size_t s = 0; s < out.result.steps.size(); ++s) {
      const NewtonStep& step = out.result.steps[s];
      *timing << "step " << s + 1 << ": degree " << step.degree << ", evaluation "
              << 1e3 * step.evaluation_seconds << " ms, linear solve " << 1e3 * step.solve_seconds
              << " ms, max |update| " << step.update << "\n";
    }
  return out;
}
}  // namespace

NewtonSolution solve_newton(const NumericSystem& sys, int degree,
                            const std::vector<std::string>& start, KernelChoice kernels,
                            std::ostream* timing, bool refine_start) {
  const std::string at = where(sys.source, 0) + ": ";
  const std::size_t n = std::size_t(sys.num_variables), n1 = std::size_t(sys.degree) + 1;
  if (sys.polynomials.size() != n)
    throw invalid_input(at + "has " + std::to_string(sys.polynomials.size()) +
                        " polynomial(s) in " + std::to_string(n) +
                        " variables; the system must be square");
  if (degree < 0) throw invalid_input(at + "negative Newton degree " + std::to_string(degree));
  if (!start.empty() && start.size() != n)
    throw invalid_input(at + std::to_string(start.size()) + " start value(s) for " +
                        std::to_string(n) + " variables");
  // x0 as LayoutLeft (variables, limbs): the given start values, else the point's constant terms.
  const int N = sys.precision;
  const std::size_t L = std::size_t(sys.limbs());
  std::vector<double> x0(n * L);
  for (std::size_t v = 0; v < n; ++v) {
    if (start.empty()) {
      for (std::size_t l = 0; l < L; ++l) x0[v + n * l] = sys.point[n1 * (v + n * l)];
      continue;
    }
    const std::string& token = start[v];
    std::string parts[2];
    if (!split_complex(token, parts[0], parts[1]))
      throw invalid_input(at + "malformed start value '" + token + "'");
    if (!sys.complex && token.find(',') != std::string::npos)
      throw invalid_input(at + "complex start value '" + token + "' for a real system");
    std::vector<double> limbs(static_cast<std::size_t>(N));
    for (int part = 0; part < (sys.complex ? 2 : 1); ++part) {
      if (kosmos::Impl::parse_decimal(parts[part], limbs.data(), N) != DecimalStatus::ok)
        throw invalid_input(at + "start value '" + token +
                            "' is malformed or beyond the largest double");
      for (int l = 0; l < N; ++l) x0[v + n * std::size_t(part * N + l)] = limbs[std::size_t(l)];
    }
  }
  NewtonSolution solution = dispatch_precision(N, sys.complex, "solve_newton", [&](auto p, auto c) {
    return newton_in<decltype(p)::value, decltype(c)::value>(sys, degree, x0, kernels, refine_start,
                                                             timing);
  });
  const NewtonResult& result = solution.result;
  const std::size_t step = result.steps.size();
  const std::string at_step =
      "Newton step " + std::to_string(step) + " (degree " +
      std::to_string(result.steps.empty() ? 0 : result.steps.back().degree) + ")";
  if (result.status == NewtonStatus::singular_jacobian) {
    if (step == 1)
      throw invalid_input(at + "the Jacobian at the start point is singular (no pivot in column " +
                          std::to_string(result.singular_column + 1) +
                          " at this precision): the solution is no power series there");
    throw invalid_input(at + at_step + " met a singular Jacobian J(0) (no pivot in column " +
                        std::to_string(result.singular_column + 1) +
                        " at this precision) at an iterate whose constant term moved by up to " +
                        scientific(result.start_shift) +
                        " from the start; the Jacobian at the start point was regular");
  }
  if (result.status == NewtonStatus::not_finite)
    throw invalid_input(at + "a NaN or infinity appeared at " + at_step);
  if (result.status == NewtonStatus::start_not_root)
    throw invalid_input(
        at + "the start point is not a root of H(x, 0): max |H_i(x0, 0)| is " +
        scientific(result.start_residual) + " and by " + at_step + " Newton moved it by " +
        scientific(result.start_shift) + ", beyond the tolerance " +
        scientific(NewtonOptions().start_tolerance) +
        " x max(1, |x0|); give a root, or --refine-start to let Newton move it to a root");
  if (result.status == NewtonStatus::not_converged)
    throw invalid_input(at + "Newton's method did not converge: after " + std::to_string(step) +
                        " steps the last update is still " +
                        scientific(result.steps.back().update) +
                        "; max |H_i(x0, 0)| at the start point is " +
                        scientific(result.start_residual) + " (is the start a root of H(x, 0)?)");
  return solution;
}

void write_newton(std::ostream& out, const NewtonSolution& solution, int digits) {
  const std::size_t n = std::size_t(solution.num_variables);
  for (std::size_t v = 0; v < n; ++v) {
    out << 'x' << v + 1;
    write_series(out, solution.x, v, n, solution.degree, solution.precision, solution.complex,
                 digits);
  }
  const NewtonResult& result = solution.result;
  out << "residual : " << scientific(result.residual) << "\n";
  out << "condition : " << scientific(result.condition) << "\n";
  out << "error : " << scientific(result.error) << "\n";
  if (result.start_shift > NewtonOptions().start_tolerance)
    out << "start_shift : " << scientific(result.start_shift) << "\n";
  for (std::size_t v = 0; v < result.coefficient_ratio.size(); ++v)
    out << "ratio x" << v + 1 << " : " << scientific(result.coefficient_ratio[v], 6) << "\n";
  for (std::size_t v = 0; v < result.radius.size(); ++v)
    out << "radius x" << v + 1 << " : " << scientific(result.radius[v], 6) << "\n";
}

void write_newton_h5(const std::string& path, const NewtonSolution& solution,
                     const std::string& source) {
  io::H5Writer out(path);
  out.attribute("/", "format", "kosmos series newton");
  out.attribute("/", "source", source);
  out.attribute("/", "variables", (long long)solution.num_variables);
  out.attribute("/", "degree", (long long)solution.degree);
  out.attribute("/", "precision", (long long)solution.precision);
  out.attribute("/", "complex", (long long)solution.complex);
  out.attribute("/", "steps", (long long)solution.result.steps.size());
  out.attribute("/", "residual", solution.result.residual);
  out.attribute("/", "condition", solution.result.condition);
  out.attribute("/", "error", solution.result.error);
  out.attribute("/", "start_shift", solution.result.start_shift);
  const std::size_t n = std::size_t(solution.num_variables);
  out.write<double>("x", solution.x.data(),
                    {std::size_t(solution.limbs()), n, std::size_t(solution.degree) + 1});
  if (!solution.result.coefficient_ratio.empty())
    out.write<double>("ratio", solution.result.coefficient_ratio.data(), {n});
  if (!solution.result.radius.empty())
    out.write<double>("radius", solution.result.radius.data(), {n});
  out.commit();
}

void evaluate_file(const FileEvaluation& job, std::ostream& out) {
  if (!pipeline_supports(job.precision))
    throw invalid_input("kosmos::series::evaluate_file: precision " +
                        std::to_string(job.precision) + " is not one of 1, 2, 3, 4, 5, 8, 10");
  const NumericSystem sys = load_system(job.input, job.precision);
  const SystemValues values = evaluate_system(sys, job.kernels, job.timing);
  if (io::is_hdf5_path(job.output)) {
    write_values_h5(job.output, values, job.input);
    return;
  }
  std::ostringstream text;
  text << "# kosmos series: " << job.input << ", " << job.precision << "-fold double"
       << (sys.complex ? " complex" : "") << ", degree " << sys.degree << ", " << sys.num_variables
       << " variables, " << sys.polynomials.size() << " polynomial(s)\n";
  write_values(text, values, job.digits);
  if (job.output.empty() || job.output == "-") {
    out << text.str();
    return;
  }
  io::write_atomically(job.output, [&](std::ostream& file) { file << text.str(); });
}
}  // namespace series
}  // namespace kosmos
