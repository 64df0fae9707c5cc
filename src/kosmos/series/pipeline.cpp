#include <kosmos/core/error.hpp>
#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/core/multi_double.hpp>
#include <kosmos/series/pipeline.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <sstream>

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

template <bool Complex>
SystemValues evaluate_dispatch(const NumericSystem& sys, KernelChoice kernels,
                               std::ostream* timing) {
  switch (sys.precision) {
    case 1:
      return evaluate_in<1, Complex>(sys, kernels, timing);
    case 2:
      return evaluate_in<2, Complex>(sys, kernels, timing);
    case 3:
      return evaluate_in<3, Complex>(sys, kernels, timing);
    case 4:
      return evaluate_in<4, Complex>(sys, kernels, timing);
    case 5:
      return evaluate_in<5, Complex>(sys, kernels, timing);
    case 8:
      return evaluate_in<8, Complex>(sys, kernels, timing);
    case 10:
      return evaluate_in<10, Complex>(sys, kernels, timing);
    default:
      throw invalid_input("kosmos::series::evaluate_system: precision " +
                          std::to_string(sys.precision) + " is not one of 1, 2, 3, 4, 5, 8, 10");
  }
}
}  // namespace

SystemValues evaluate_system(const NumericSystem& sys, KernelChoice kernels, std::ostream* timing) {
  return sys.complex ? evaluate_dispatch<true>(sys, kernels, timing)
                     : evaluate_dispatch<false>(sys, kernels, timing);
}

namespace {
// " : c_0 ... c_d" of series s of a LayoutLeft (d + 1, count, limbs) array.
void write_series(std::ostream& out, const std::vector<double>& array, std::size_t s,
                  std::size_t count, const SystemValues& values, int digits) {
  const std::size_t n1 = std::size_t(values.degree) + 1, rows = n1 * count;
  const int N = values.precision;
  std::vector<double> limbs(static_cast<std::size_t>(N), 0.0);
  out << " :";
  for (std::size_t k = 0; k < n1; ++k) {
    for (int part = 0; part < (values.complex ? 2 : 1); ++part) {
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
    write_series(out, values.values[k], 0, 1, values, digits);
    for (std::size_t v = 0; v < n; ++v) {
      out << "derivative " << k + 1 << " x" << v + 1;
      write_series(out, values.gradients[k], v, n, values, digits);
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
