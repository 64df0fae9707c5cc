// kosmos._kosmos.series: multiple-double numbers as limbs (exact decimal conversion), systems of
// polynomials with power series coefficients, their evaluation and Newton's method on series.
#include "common.hpp"

#include <kosmos/core/multi_double.hpp>
#include <kosmos/series/example_systems.hpp>
#include <kosmos/series/parser.hpp>
#include <kosmos/series/pipeline.hpp>
#include <kosmos/series/track.hpp>

#include <pybind11/complex.h>

#include <memory>

namespace kosmos_python {
namespace {
namespace ks = kosmos::series;

void require_precision(int precision) {
  kosmos::Impl::require(ks::pipeline_supports(precision), "kosmos.series", "precision ", precision,
                        " is not one of 1, 2, 3, 4, 5, 8, 10");
}

// (n, precision) limbs: each decimal correctly rounded to a `precision`-fold double.
py::array_t<double> parse(const std::vector<std::string>& texts, int precision) {
  kosmos::Impl::require(precision >= 1 && precision <= 10, "kosmos.series.parse", "precision ",
                        precision, " is outside [1, 10]");
  py::array_t<double> out({py::ssize_t(texts.size()), py::ssize_t(precision)});
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const auto status =
        kosmos::Impl::parse_decimal(texts[i], out.mutable_data(py::ssize_t(i), 0), precision);
    kosmos::Impl::require(status == kosmos::DecimalStatus::ok, "kosmos.series.parse", "'", texts[i],
                          "' is ",
                          status == kosmos::DecimalStatus::overflow ? "beyond the largest double"
                                                                    : "not a decimal number");
  }
  return out;
}

// Each row of limbs (n, N), correctly rounded to `digits` (0: the fewest that read back).
std::vector<std::string> format(py::handle limbs_in, int digits) {
  auto limbs = as_array<double>(limbs_in, "kosmos.series.format", "limbs", 2);
  kosmos::Impl::require(digits >= 0 && digits <= ks::max_output_digits, "kosmos.series.format",
                        "digits = ", digits, " is outside [0, ", ks::max_output_digits, "]");
  std::vector<std::string> out;
  for (py::ssize_t i = 0; i < limbs.shape(0); ++i)
    out.push_back(kosmos::Impl::format_decimal(limbs.data(i, 0), int(limbs.shape(1)), digits));
  return out;
}

// A system held for Python (host data only: no Views).
struct PySystem {
  ks::NumericSystem system;
};

PySystem load(const std::string& path, int precision) {
  require_precision(precision);
  return PySystem{ks::load_system(path, precision)};
}

PySystem generate(const std::string& name, int degree, bool complex, unsigned seed, int precision) {
  require_precision(precision);
  kosmos::Impl::require(degree >= 0, "kosmos.series.generate", "degree ", degree, " < 0");
  return PySystem{ks::to_numeric(ks::generate_system(name, degree, complex, seed), precision,
                                 "generated " + name)};
}

ks::KernelChoice kernels_from(const std::string& name) {
  if (name == "automatic") return ks::KernelChoice::automatic;
  if (name == "generic") return ks::KernelChoice::generic;
  throw kosmos::invalid_input("kosmos.series: kernels must be 'automatic' or 'generic', not '" +
                              name + "'");
}

// Arrays viewing the result's own vectors (LayoutLeft blocks as Fortran-ordered arrays); the
// capsule keeps the result alive.
template <class Result>
py::capsule owner(std::shared_ptr<Result> r) {
  return py::capsule(new std::shared_ptr<Result>(std::move(r)),
                     [](void* p) { delete static_cast<std::shared_ptr<Result>*>(p); });
}
py::array_t<double> fortran_view(std::vector<double>& v, std::vector<py::ssize_t> shape,
                                 py::handle base) {
  std::vector<py::ssize_t> strides;
  py::ssize_t stride = sizeof(double);
  for (auto n : shape) {
    strides.push_back(stride);
    stride *= n;
  }
  return py::array_t<double>(shape, strides, v.data(), base);
}

// values: per polynomial (d + 1, limbs); gradients: per polynomial (d + 1, variables, limbs).
py::dict evaluate(const PySystem& s, const std::string& kernels) {
  auto r = std::make_shared<ks::SystemValues>();
  {
    py::gil_scoped_release unlocked;
    *r = ks::evaluate_system(s.system, kernels_from(kernels));
  }
  const auto base = owner(r);
  const py::ssize_t d1 = r->degree + 1, limbs = r->limbs(), nv = r->num_variables;
  py::list values, gradients;
  for (auto& v : r->values) values.append(fortran_view(v, {d1, limbs}, base));
  for (auto& g : r->gradients) gradients.append(fortran_view(g, {d1, nv, limbs}, base));
  return py::dict(py::arg("values") = values, py::arg("gradients") = gradients,
                  py::arg("precision") = r->precision, py::arg("complex") = r->complex,
                  py::arg("degree") = r->degree);
}

// x: (d + 1, variables, limbs) of the series solution; steps, residuals, ratios.
py::dict newton(const PySystem& s, int degree, const std::vector<std::string>& start,
                const std::string& kernels, bool refine_start) {
  auto r = std::make_shared<ks::NewtonSolution>();
  {
    py::gil_scoped_release unlocked;
    *r = ks::solve_newton(s.system, degree, start, kernels_from(kernels), nullptr, refine_start);
  }
  const auto base = owner(r);
  py::list steps;
  for (const auto& step : r->result.steps)
    steps.append(py::dict(py::arg("degree") = step.degree, py::arg("update") = step.update));
  return py::dict(
      py::arg("x") = fortran_view(r->x, {r->degree + 1, r->num_variables, r->limbs()}, base),
      py::arg("precision") = r->precision, py::arg("complex") = r->complex,
      py::arg("degree") = r->degree, py::arg("residual") = r->result.residual,
      py::arg("start_residual") = r->result.start_residual,
      py::arg("start_shift") = r->result.start_shift, py::arg("condition") = r->result.condition,
      py::arg("error") = r->result.error, py::arg("radius") = r->result.radius,
      py::arg("coefficient_ratio") = r->result.coefficient_ratio, py::arg("steps") = steps);
}
PySystem symbolic(const std::string& text, int precision) {
  require_precision(precision);
  return PySystem{ks::parse_symbolic(text, "<text>", precision)};
}

PySystem example(const std::string& name, int n, std::uint64_t seed) {
  kosmos::Impl::require(n >= 1 && n <= 16, "kosmos.series.example", "n = ", n,
                        " is outside [1, 16]");
  if (name == "cyclic") return PySystem{ks::cyclic_system(n)};
  if (name == "katsura") return PySystem{ks::katsura_system(n)};
  if (name == "random") return PySystem{ks::random_dense_system(n, 2, seed)};
  throw kosmos::invalid_input("kosmos.series.example: name must be cyclic, katsura or random, not '" +
                              name + "'");
}

// Every path's end point and status, and the distinct solutions, as arrays.
py::dict track(const PySystem& s, const py::dict& options) {
  ks::TrackOptions o;
  for (const auto& [k, value] : options) {
    const auto key = py::cast<std::string>(k);
    if (key == "seed")
      o.seed = value.cast<std::uint64_t>();
    else if (key == "precision")
      o.precision = value.cast<int>();
    else if (key == "max_precision")
      o.max_precision = value.cast<int>();
    else if (key == "max_steps")
      o.max_steps = value.cast<int>();
    else
      throw kosmos::invalid_input("kosmos.series.track: unknown option '" + key + "'");
  }
  // The system carries the highest precision a path may be raised to.
  const auto system = ks::with_precision(s.system, o.max_precision);
  ks::TrackResult r;
  {
    py::gil_scoped_release unlocked;
    r = ks::track(Space(), system, o);
  }
  const py::ssize_t paths = py::ssize_t(r.paths.size()), n = r.num_variables;
  py::array_t<std::complex<double>> x({paths, n});
  py::array_t<int> status(paths), precision(paths), steps(paths), solution(paths);
  py::array_t<double> t(paths), residual(paths), condition(paths);
  for (py::ssize_t p = 0; p < paths; ++p) {
    const auto& path = r.paths[std::size_t(p)];
    for (py::ssize_t j = 0; j < n; ++j) x.mutable_at(p, j) = path.x(int(j));
    status.mutable_at(p) = int(path.status);
    precision.mutable_at(p) = path.precision;
    steps.mutable_at(p) = path.steps;
    solution.mutable_at(p) = path.solution;
    t.mutable_at(p) = path.t;
    residual.mutable_at(p) = path.residual;
    condition.mutable_at(p) = path.condition;
  }
  const py::ssize_t distinct = py::ssize_t(r.solutions.size());
  py::array_t<int> solution_path(distinct), multiplicity(distinct);
  py::array_t<bool> singular(distinct);
  for (py::ssize_t k = 0; k < distinct; ++k) {
    const auto& sol = r.solutions[std::size_t(k)];
    solution_path.mutable_at(k) = sol.path;
    multiplicity.mutable_at(k) = sol.multiplicity;
    singular.mutable_at(k) = sol.singular;
  }
  return py::dict(py::arg("x") = x, py::arg("status") = status, py::arg("precision") = precision,
                  py::arg("steps") = steps, py::arg("solution") = solution, py::arg("t") = t,
                  py::arg("residual") = residual, py::arg("condition") = condition,
                  py::arg("solution_path") = solution_path, py::arg("multiplicity") = multiplicity,
                  py::arg("singular") = singular, py::arg("degrees") = r.degrees,
                  py::arg("gamma") = r.gamma, py::arg("raised") = r.raised);
}
}  // namespace

void bind_series(py::module_& parent) {
  auto m = parent.def_submodule("series", "kosmos::series (Verschelde 2021)");
  m.def("parse", &parse, py::arg("texts"), py::arg("precision"));
  m.def("format", &format, py::arg("limbs"), py::arg("digits"));
  py::class_<PySystem>(m, "System")
      .def_property_readonly("variables", [](const PySystem& s) { return s.system.num_variables; })
      .def_property_readonly("degree", [](const PySystem& s) { return s.system.degree; })
      .def_property_readonly("precision", [](const PySystem& s) { return s.system.precision; })
      .def_property_readonly("complex", [](const PySystem& s) { return s.system.complex; })
      .def_property_readonly("polynomials",
                             [](const PySystem& s) { return s.system.polynomials.size(); })
      .def_property_readonly("source", [](const PySystem& s) { return s.system.source; })
      .def("with_precision", [](const PySystem& s, int precision) {
        require_precision(precision);
        return PySystem{ks::with_precision(s.system, precision)};
      });
  m.def("load", &load, py::arg("path"), py::arg("precision"));
  m.def("generate", &generate, py::arg("name"), py::arg("degree"), py::arg("complex"),
        py::arg("seed"), py::arg("precision"));
  m.def("evaluate", &evaluate, py::arg("system"), py::arg("kernels"));
  m.def("newton", &newton, py::arg("system"), py::arg("degree"), py::arg("start"),
        py::arg("kernels"), py::arg("refine_start"));
  m.def("symbolic", &symbolic, py::arg("text"), py::arg("precision"));
  m.def("example", &example, py::arg("name"), py::arg("n"), py::arg("seed"));
  m.def("track", &track, py::arg("system"), py::arg("options"));
  m.def("path_status_name", [](int status) {
    kosmos::Impl::require(status >= 0 && status <= 3, "kosmos.series.path_status_name", "status ",
                          status, " is outside [0, 3]");
    return std::string(ks::to_string(ks::PathStatus(status)));
  });
}
}  // namespace kosmos_python
