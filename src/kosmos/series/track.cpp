#include <kosmos/core/error.hpp>
#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/multi_double.hpp>
#include <kosmos/series/track.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

namespace kosmos {
namespace series {

const char* to_string(PathStatus s) {
  switch (s) {
    case PathStatus::regular:
      return "regular";
    case PathStatus::singular:
      return "singular";
    case PathStatus::at_infinity:
      return "at infinity";
    case PathStatus::failed:
      return "failed";
  }
  return "unknown";
}

std::complex<double> PathResult::x(int j) const {
  double re = 0, im = 0;
  const std::size_t N = std::size_t(precision);
  for (std::size_t l = N; l-- > 0;) {
    re += limbs[2 * N * std::size_t(j) + l];
    im += limbs[2 * N * std::size_t(j) + N + l];
  }
  return {re, im};
}

std::int64_t TrackResult::count(PathStatus s) const {
  return std::count_if(paths.begin(), paths.end(),
                       [s](const PathResult& p) { return p.status == s; });
}

std::int64_t TrackResult::count_precision(int N) const {
  return std::count_if(paths.begin(), paths.end(),
                       [N](const PathResult& p) { return p.precision == N; });
}

std::complex<double> gamma_of_seed(std::uint64_t seed) {
  // SplitMix64: one well-mixed 64-bit value per seed, an angle away from 0 and pi
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double u = double(z >> 11) * 0x1p-53;
  const double angle = 0.1 + u * (3.141592653589793 - 0.2) + (z & 1 ? 3.141592653589793 : 0.0);
  return {std::cos(angle), std::sin(angle)};
}

std::int64_t total_degree_paths(const std::vector<int>& degrees, std::int64_t limit) {
  std::int64_t paths = 1;
  for (std::size_t i = 0; i < degrees.size(); ++i) {
    kosmos::Impl::require(degrees[i] >= 1, "kosmos::series::track", "polynomial ", i + 1,
                          " has degree ", degrees[i], "; every polynomial needs a variable");
    kosmos::Impl::require(paths <= limit / degrees[i], "kosmos::series::track",
                          "the total degree (product of the degrees) is above the limit of ", limit,
                          " paths");
    paths *= degrees[i];
  }
  return paths;
}

namespace Impl {

void check_options(const TrackOptions& o) {
  const char* w = "kosmos::series::track";
  kosmos::Impl::require(o.precision == 1 || o.precision == 2 || o.precision == 4, w, "precision ",
                        o.precision, " is not 1, 2 or 4");
  kosmos::Impl::require(o.max_precision == 1 || o.max_precision == 2 || o.max_precision == 4, w,
                        "max_precision ", o.max_precision, " is not 1, 2 or 4");
  kosmos::Impl::require(o.max_precision >= o.precision, w, "max_precision ", o.max_precision,
                        " is below precision ", o.precision);
  kosmos::Impl::require(o.max_steps >= 1, w, "max_steps ", o.max_steps, " is below 1");
  kosmos::Impl::require(o.reruns >= 0 && o.reruns <= 8, w, "reruns ", o.reruns,
                        " is not in 0 .. 8");
  kosmos::Impl::require(o.lanes_per_path >= 0 && o.lanes_per_path <= 32 &&
                            (o.lanes_per_path & (o.lanes_per_path - 1)) == 0,
                        w, "lanes_per_path ", o.lanes_per_path,
                        " is not 0 (automatic) or a power of two up to 32");
  kosmos::Impl::require(o.host_pass_paths >= 0, w, "host_pass_paths ", o.host_pass_paths,
                        " is negative");
  kosmos::Impl::require(o.rerun_step_scale > 0 && o.rerun_step_scale <= 1, w, "rerun_step_scale ",
                        o.rerun_step_scale, " is not in (0, 1]");
  const double fractions[] = {o.pole_fraction, o.curvature_fraction};
  for (double f : fractions)
    kosmos::Impl::require(f > 0 && f < 1, w, "step fraction ", f, " is not in (0, 1)");
  kosmos::Impl::require(o.max_step > 0 && o.max_step <= 1, w, "max_step ", o.max_step,
                        " is not in (0, 1]");
  kosmos::Impl::require(o.min_step > 0 && o.min_step < o.max_step, w, "min_step ", o.min_step,
                        " is not in (0, max_step)");
  kosmos::Impl::require(o.endgame_collapse > 0 && o.endgame_collapse < 1, w, "endgame_collapse ",
                        o.endgame_collapse, " is not in (0, 1)");
  const double positive[] = {o.corrector_tolerance, o.endgame_distance,   o.endgame_stall,
                             o.infinity_threshold,  o.singular_condition, o.duplicate_tolerance,
                             o.diverging_size};
  for (double v : positive)
    kosmos::Impl::require(v > 0 && std::isfinite(v), w, "tolerance ", v,
                          " is not a positive number");
}

TrackParameters parameters(const TrackOptions& o, int pass) {
  const double scale = std::pow(o.rerun_step_scale, pass);
  const double steps = std::min(double(o.max_steps) / scale, 1e8);
  return {int(steps),
          o.pole_fraction * scale,
          o.curvature_fraction * scale,
          o.max_step * scale,
          o.min_step,
          o.corrector_tolerance,
          o.endgame_distance,
          o.endgame_stall,
          o.endgame_collapse,
          o.infinity_threshold,
          o.singular_condition,
          o.residual_tolerance,
          o.diverging_size,
          pass > 0,
          std::numeric_limits<double>::infinity(),
          std::numeric_limits<double>::quiet_NaN()};
}

void FlatTerms::add_term(const std::vector<std::pair<int, int>>& factors, const double* re,
                         const double* im, int N) {
  int degree = 0;
  for (const auto& [variable, exponent] : factors) {
    factor_var.push_back(variable);
    factor_exp.push_back(exponent);
    degree += exponent;
  }
  factor_offsets.push_back(int(factor_var.size()));
  term_degree.push_back(degree);
  double r = 0, i = 0;
  for (int l = N; l-- > 0;) r += re[l], i += im[l];
  term_magnitude.push_back(std::hypot(r, i));
  coefficients.insert(coefficients.end(), re, re + N);
  coefficients.insert(coefficients.end(), im, im + N);
}

void FlatTerms::index_terms(int variables, double chunk_weight) {
  const int polynomials = int(term_offsets.size()) - 1;
  column_offsets.assign(1, 0);
  column_term.clear();
  column_factor.clear();
  chunk_offsets.assign(1, 0);
  chunk_first.assign(1, 0);
  for (int i = 0; i < polynomials; ++i) {
    for (int v = 0; v < variables; ++v) {
      for (int m = term_offsets[i]; m < term_offsets[i + 1]; ++m)
        for (int q = factor_offsets[m]; q < factor_offsets[m + 1]; ++q)
          if (factor_var[q] == v) {
            column_term.push_back(m);
            column_factor.push_back(q);
          }
      column_offsets.push_back(int(column_term.size()));
    }
    double weight = 0;
    for (int m = term_offsets[i]; m < term_offsets[i + 1]; ++m) {
      const double w = taylor_weight(term_degree[m]);
      if (m > term_offsets[i] && weight + w > chunk_weight) {
        chunk_first.push_back(m);
        weight = 0;
      }
      weight += w;
    }
    chunk_first.push_back(term_offsets[i + 1]);
    chunk_offsets.push_back(int(chunk_first.size()) - 1);
  }
}

bool jacobian_by_columns(const FlatSystem& flat, int lanes) {
  const int n = flat.n + 1;  // rows and columns, the chart's included
  std::vector<double> row(std::size_t(n), 0.0), value(std::size_t(n), 0.0),
      column(std::size_t(n), 1.0);  // each column's chart entry
  row[std::size_t(n - 1)] = value[std::size_t(n - 1)] = n;
  for (const FlatTerms* T : {&flat.target, &flat.start})
    for (int i = 0; i + 1 < int(T->term_offsets.size()); ++i)
      for (int m = T->term_offsets[std::size_t(i)]; m < T->term_offsets[std::size_t(i) + 1]; ++m) {
        const int f0 = T->factor_offsets[std::size_t(m)],
                  f1 = T->factor_offsets[std::size_t(m) + 1];
        const double factors = f1 - f0;
        value[std::size_t(i)] += factors + 1;
        row[std::size_t(i)] += factors * (factors - 1) + 1;
        for (int q = f0; q < f1; ++q) column[std::size_t(T->factor_var[std::size_t(q)])] += factors;
      }
  // the longest lane's work when item k of `items` goes to lane k mod lanes
  const auto longest = [&](const std::vector<double>& items) {
    std::vector<double> lane(std::size_t(lanes), 0.0);
    for (std::size_t k = 0; k < items.size(); ++k) lane[k % std::size_t(lanes)] += items[k];
    return *std::max_element(lane.begin(), lane.end());
  };
  std::vector<double> by_rows(row), by_columns(column);
  for (int i = 0; i < n; ++i) by_rows[std::size_t(i)] += value[std::size_t(i)];
  by_columns.insert(by_columns.end(), value.begin(), value.end());
  return longest(by_columns) < longest(by_rows);
}

double FlatTerms::taylor_weight() const {
  double w = 0;
  for (const int d : term_degree) w += taylor_weight(d);
  return w;
}

namespace {
// The terms of polynomial i of a degree-0 system: coefficient limbs (re, im at N) and factors.
struct PolynomialTerms {
  std::vector<std::vector<double>> re, im;
  std::vector<std::vector<std::pair<int, int>>> factors;
  int degree = 0;
};

PolynomialTerms terms_of(const NumericSystem& system, std::size_t i, const std::string& src) {
  const char* w = "kosmos::series::track";
  const NumericPolynomial& p = system.polynomials[i];
  const std::size_t n1 = std::size_t(system.degree) + 1;
  const std::size_t count = p.structure.monomials.size() + 1;
  const int N = system.precision, limbs = system.limbs();
  // coefficient s (0: the constant) at limb l of the LayoutLeft (d + 1, count, limbs) array
  const auto coefficient = [&](std::size_t s, std::size_t k, int l) {
    return p.coefficients[k + n1 * (s + count * std::size_t(l))];
  };
  for (std::size_t s = 0; s < count; ++s)
    for (std::size_t k = 1; k < n1; ++k)
      for (int l = 0; l < limbs; ++l)
        if (coefficient(s, k, l) != 0.0)
          throw invalid_input(where(src, p.line) + ": polynomial " + std::to_string(i + 1) +
                              " has a coefficient that depends on t (series coefficient " +
                              std::to_string(k) + "); the tracker solves systems in x only");
  PolynomialTerms out;
  for (std::size_t s = 0; s < count; ++s) {
    bool nonzero = false;
    for (int l = 0; l < limbs; ++l) nonzero = nonzero || coefficient(s, 0, l) != 0.0;
    if (!nonzero) continue;
    std::vector<std::pair<int, int>> factors;
    int term_degree = 0;
    if (s > 0) {
      const Monomial& m = p.structure.monomials[s - 1];
      for (std::size_t q = 0; q < m.variables.size(); ++q) {
        factors.push_back({m.variables[q], m.exponents.empty() ? 1 : m.exponents[q]});
        term_degree += factors.back().second;
      }
    }
    out.degree = std::max(out.degree, term_degree);
    out.factors.push_back(factors);
    out.re.emplace_back(std::size_t(N));
    out.im.emplace_back(std::size_t(N), 0.0);
    for (int l = 0; l < N; ++l) {
      out.re.back()[std::size_t(l)] = coefficient(s, 0, l);
      if (system.complex) out.im.back()[std::size_t(l)] = coefficient(s, 0, N + l);
    }
  }
  kosmos::Impl::require(out.degree >= 1, w, where(src, p.line), ": polynomial ", i + 1,
                        " is a constant; the system has no isolated solutions");
  return out;
}

// The terms homogenized with x_0 (variable n) to `degree`, as polynomial i of `flat`.
void add_homogenized(FlatTerms& flat, PolynomialTerms terms, int n, int degree, int N) {
  for (std::size_t m = 0; m < terms.factors.size(); ++m) {
    int term_degree = 0;
    for (const auto& factor : terms.factors[m]) term_degree += factor.second;
    if (term_degree < degree) terms.factors[m].push_back({n, degree - term_degree});
    flat.add_term(terms.factors[m], terms.re[m].data(), terms.im[m].data(), N);
  }
  flat.end_polynomial();
}

void require_square(const NumericSystem& s, const std::string& src) {
  kosmos::Impl::require(int(s.polynomials.size()) == s.num_variables, "kosmos::series::track", src,
                        " has ", s.polynomials.size(), " polynomial(s) in ", s.num_variables,
                        " variables; the system must be square");
}

std::string source_of(const NumericSystem& s) {
  return s.source.empty() ? std::string("system") : s.source;
}
}  // namespace

FlatSystem flatten(const NumericSystem& input, int precision) {
  const std::string src = source_of(input);
  require_square(input, src);
  const NumericSystem system = with_precision(input, precision);
  FlatSystem f;
  f.n = system.num_variables;
  f.precision = precision;
  const int N = precision;
  std::vector<double> zero(std::size_t(N), 0.0), one = zero, minus_one = zero;
  one[0] = 1.0;
  minus_one[0] = -1.0;
  for (std::size_t i = 0; i < system.polynomials.size(); ++i) {
    PolynomialTerms terms = terms_of(system, i, src);
    const int degree = terms.degree;
    f.degrees.push_back(degree);
    add_homogenized(f.target, std::move(terms), f.n, degree, N);
    f.start.add_term({{int(i), degree}}, one.data(), zero.data(), N);
    f.start.add_term({{f.n, degree}}, minus_one.data(), zero.data(), N);
    f.start.end_polynomial();
  }
  return f;
}

FlatSystem flatten_parameter(const NumericSystem& generic_input, const NumericSystem& target_input,
                             int precision) {
  const std::string src = source_of(target_input), generic_src = source_of(generic_input);
  require_square(target_input, src);
  require_square(generic_input, generic_src);
  kosmos::Impl::require(generic_input.num_variables == target_input.num_variables,
                        "kosmos::series::track", src, " has ", target_input.num_variables,
                        " variables, the generic system ", generic_src, " has ",
                        generic_input.num_variables);
  const NumericSystem target = with_precision(target_input, precision);
  const NumericSystem generic = with_precision(generic_input, precision);
  FlatSystem f;
  f.n = target.num_variables;
  f.precision = precision;
  for (std::size_t i = 0; i < target.polynomials.size(); ++i) {
    PolynomialTerms to = terms_of(target, i, src), from = terms_of(generic, i, generic_src);
    // both homogenized to the same degree: the homotopy's polynomial i in projective space
    const int degree = std::max(to.degree, from.degree);
    f.degrees.push_back(degree);
    add_homogenized(f.target, std::move(to), f.n, degree, precision);
    add_homogenized(f.start, std::move(from), f.n, degree, precision);
  }
  return f;
}

namespace {
bool finite_endpoint(const PathResult& p) {
  return p.status == PathStatus::regular || p.status == PathStatus::singular;
}
}  // namespace

void deduplicate(TrackResult& result, const TrackOptions& options) {
  result.solutions.clear();
  std::vector<int> order;
  for (std::size_t p = 0; p < result.paths.size(); ++p) {
    result.paths[p].solution = -1;
    if (finite_endpoint(result.paths[p])) order.push_back(int(p));
  }
  const int n = result.num_variables;
  const auto key = [&](int p) { return result.paths[std::size_t(p)].x(0).real(); };
  std::sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  const double tol = options.duplicate_tolerance;
  for (std::size_t a = 0; a < order.size(); ++a) {
    PathResult& pa = result.paths[std::size_t(order[a])];
    for (std::size_t b = a; b-- > 0;) {
      const PathResult& pb = result.paths[std::size_t(order[b])];
      const double scale = tol * (1.0 + std::max(pa.max_abs, pb.max_abs));
      if (key(order[a]) - key(order[b]) > scale) break;
      double distance = 0;
      for (int j = 0; j < n; ++j) distance = std::max(distance, std::abs(pa.x(j) - pb.x(j)));
      if (distance <= scale) {
        pa.solution = pb.solution;
        break;
      }
    }
    if (pa.solution < 0) {
      pa.solution = int(result.solutions.size());
      result.solutions.push_back({order[a], 0, false});
    }
    Solution& s = result.solutions[std::size_t(pa.solution)];
    ++s.multiplicity;
    s.singular = s.singular || pa.status == PathStatus::singular;
  }
  result.regular = result.count(PathStatus::regular);
  result.singular = result.count(PathStatus::singular);
  result.at_infinity = result.count(PathStatus::at_infinity);
  result.failed = result.count(PathStatus::failed);
}

void select_paths(TrackResult& result, const TrackOptions& options, std::int64_t total) {
  result.total_paths = total;
  result.paths.clear();
  if (options.paths.empty()) {
    result.paths.resize(std::size_t(total));
    for (std::int64_t p = 0; p < total; ++p) result.paths[std::size_t(p)].index = p;
    return;
  }
  std::vector<std::int64_t> sorted = options.paths;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t k = 0; k < sorted.size(); ++k) {
    kosmos::Impl::require(sorted[k] >= 0 && sorted[k] < total, "kosmos::series::track",
                          "path number ", sorted[k], " is not below the ", total,
                          " paths of the homotopy");
    kosmos::Impl::require(k == 0 || sorted[k] != sorted[k - 1], "kosmos::series::track",
                          "path number ", sorted[k], " is listed twice");
  }
  for (std::int64_t p : options.paths) {
    result.paths.emplace_back();
    result.paths.back().index = p;
  }
}

std::vector<PathResult> start_points(const TrackResult& generic) {
  std::vector<PathResult> starts;
  for (const Solution& s : generic.solutions)
    if (!s.singular) starts.push_back(generic.paths[std::size_t(s.path)]);
  kosmos::Impl::require(!starts.empty(), "kosmos::series::track_parameter",
                        "the generic system has no regular solution to start from");
  return starts;
}

std::vector<std::int64_t> paths_to_raise(const TrackResult& result) {
  std::vector<std::int64_t> list;
  for (std::size_t p = 0; p < result.paths.size(); ++p) {
    const PathResult& r = result.paths[p];
    const int multiplicity =
        r.solution >= 0 ? result.solutions[std::size_t(r.solution)].multiplicity : 0;
    const bool jumped = r.status == PathStatus::regular && multiplicity > 1;
    // one path at a singular end, without a winding number: no evidence of a multiple root
    const bool lone_singular =
        r.status == PathStatus::singular && multiplicity == 1 && r.winding < 2;
    if (r.status == PathStatus::failed || jumped || lone_singular) list.push_back(std::int64_t(p));
  }
  return list;
}
}  // namespace Impl
}  // namespace series
}  // namespace kosmos

namespace kosmos {
namespace series {

void write_track(std::ostream& out, const TrackResult& r, const std::string& source, int digits) {
  out << "# kosmos series --track: " << source << ", " << r.num_variables << " variables, "
      << r.paths.size();
  if (std::int64_t(r.paths.size()) != r.total_paths) out << " of " << r.total_paths;
  if (r.parameter)
    out << " parameter-homotopy paths (from the generic system's regular solutions)\n";
  else
    out << " total-degree paths, gamma = " << r.gamma.real() << (r.gamma.imag() < 0 ? "" : "+")
        << r.gamma.imag() << "i\n";
  for (std::size_t k = 0; k < r.solutions.size(); ++k) {
    const Solution& s = r.solutions[k];
    const PathResult& p = r.paths[std::size_t(s.path)];
    char numbers[128];
    std::snprintf(numbers, sizeof numbers, "residual %.3e condition %.3e winding %d", p.residual,
                  p.condition, p.winding);
    out << "solution " << k + 1 << " : " << (s.singular ? "singular" : "regular")
        << " multiplicity " << s.multiplicity << " path " << p.index + 1 << " precision "
        << p.precision << ' ' << numbers << '\n';
    const std::size_t N = std::size_t(p.precision);
    for (int j = 0; j < r.num_variables; ++j) {
      const double* limbs = p.limbs.data() + 2 * N * std::size_t(j);
      out << "  x" << j + 1 << " : " << kosmos::Impl::format_decimal(limbs, int(N), digits) << ','
          << kosmos::Impl::format_decimal(limbs + N, int(N), digits) << '\n';
    }
  }
  for (std::size_t p = 0; p < r.paths.size(); ++p) {
    const PathResult& q = r.paths[p];
    if (q.status != PathStatus::failed) continue;
    char numbers[160];
    std::snprintf(numbers, sizeof numbers,
                  "t %.17g steps %d rejections %d precision %d residual %.3e |x| %.3e", q.t,
                  q.steps, q.rejections, q.precision, q.residual, q.max_abs);
    out << "failed path " << q.index + 1 << " : " << numbers << '\n';
  }
  out << "paths " << r.paths.size() << " regular " << r.regular << " singular " << r.singular
      << " at_infinity " << r.at_infinity << " failed " << r.failed << " distinct "
      << r.solutions.size() << " raised " << r.raised << " passes " << r.passes;
  for (int N : {1, 2, 4}) out << " precision" << N << ' ' << r.count_precision(N);
  out << '\n';
}

void write_track_h5(const std::string& path, const TrackResult& r, const std::string& source) {
  io::H5Writer out(path);
  out.attribute("/", "format", "kosmos series track");
  out.attribute("/", "source", source);
  out.attribute("/", "variables", (long long)r.num_variables);
  out.attribute("/", "paths", (long long)r.paths.size());
  out.attribute("/", "total_paths", (long long)r.total_paths);
  out.attribute("/", "homotopy", r.parameter ? "parameter" : "total degree");
  out.attribute("/", "gamma_re", r.gamma.real());
  out.attribute("/", "gamma_im", r.gamma.imag());
  out.attribute("/", "regular", (long long)r.regular);
  out.attribute("/", "singular", (long long)r.singular);
  out.attribute("/", "at_infinity", (long long)r.at_infinity);
  out.attribute("/", "failed", (long long)r.failed);
  out.attribute("/", "distinct", (long long)r.solutions.size());
  out.attribute("/", "raised", (long long)r.raised);
  out.attribute("/", "passes", (long long)r.passes);
  const std::size_t P = r.paths.size(), n = std::size_t(r.num_variables);
  std::vector<std::int32_t> status, precision, steps, rejections, solution, winding;
  std::vector<std::int64_t> index;
  std::vector<double> t, residual, condition, max_abs, x, limbs(P * n * 2 * 4, 0.0);
  for (std::size_t p = 0; p < P; ++p) {
    const PathResult& q = r.paths[p];
    index.push_back(q.index);
    status.push_back(std::int32_t(q.status));
    precision.push_back(q.precision);
    steps.push_back(q.steps);
    rejections.push_back(q.rejections);
    winding.push_back(q.winding);
    solution.push_back(q.solution);
    t.push_back(q.t);
    residual.push_back(q.residual);
    condition.push_back(q.condition);
    max_abs.push_back(q.max_abs);
    const std::size_t N = std::size_t(q.precision);
    for (std::size_t j = 0; j < n; ++j) {
      x.push_back(q.x(int(j)).real());
      x.push_back(q.x(int(j)).imag());
      for (std::size_t part = 0; part < 2; ++part)
        for (std::size_t l = 0; l < N && l < 4; ++l)
          limbs[((p * n + j) * 2 + part) * 4 + l] = q.limbs[2 * N * j + part * N + l];
    }
  }
  out.write("path_index", index);
  out.write("path_status", status);
  out.write("path_precision", precision);
  out.write("path_steps", steps);
  out.write("path_rejections", rejections);
  out.write("path_winding", winding);
  out.write("path_solution", solution);
  out.write("path_t", t);
  out.write("path_residual", residual);
  out.write("path_condition", condition);
  out.write("path_max_abs", max_abs);
  out.write("path_x", x.data(), {P, n, 2});
  out.write("path_limbs", limbs.data(), {P, n, 2, 4});
  std::vector<std::int32_t> solution_path, multiplicity, singular;
  for (const Solution& s : r.solutions) {
    solution_path.push_back(std::int32_t(r.paths[std::size_t(s.path)].index));
    multiplicity.push_back(s.multiplicity);
    singular.push_back(s.singular ? 1 : 0);
  }
  out.write("solution_path", solution_path);
  out.write("solution_multiplicity", multiplicity);
  out.write("solution_singular", singular);
  out.commit();
}
}  // namespace series
}  // namespace kosmos
