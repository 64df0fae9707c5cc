#include <kosmos/core/error.hpp>
#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/multi_double.hpp>
#include <kosmos/series/parser.hpp>
#include <kosmos/series/system.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <type_traits>

namespace kosmos {
namespace series {

namespace {
const char* kFormat = "kosmos series system";

// One series of a text file and where its numbers go: series `s` of a LayoutLeft
// (d + 1, count, limbs) array.
struct SeriesSlot {
  const SeriesText* text;
  std::vector<double>* array;
  std::size_t s, count, line;
};

// Parses the slot's degree + 1 tokens (none: zero); returns the index of the first bad token
// and its status, or npos.
std::size_t parse_series(const SeriesSlot& slot, const NumericSystem& sys, DecimalStatus& status) {
  const std::size_t n1 = std::size_t(sys.degree) + 1, rows = n1 * slot.count;
  const int N = sys.precision;
  std::vector<double> limbs(static_cast<std::size_t>(N), 0.0);
  std::string parts[2];
  for (std::size_t k = 0; k < slot.text->size(); ++k) {
    split_complex((*slot.text)[k], parts[0], parts[1]);
    for (int part = 0; part < (sys.complex ? 2 : 1); ++part) {
      status = kosmos::Impl::parse_decimal(parts[part], limbs.data(), N);
      if (status != DecimalStatus::ok) return k;
      for (int l = 0; l < N; ++l)
        (*slot.array)[slot.s * n1 + k + rows * std::size_t(part * N + l)] = limbs[std::size_t(l)];
    }
  }
  return std::string::npos;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw file_error(path + ": " + what);
}

template <class T>
std::vector<T> read_dataset(const io::H5Reader& in, const std::string& name,
                            const std::vector<std::size_t>& dims) {
  if (!in.has(name)) fail(in.path(), "missing dataset '" + name + "'");
  in.expect_shape(name, dims);
  std::vector<T> v = in.read<T>(name);
  if constexpr (std::is_same<T, double>::value) {
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!std::isfinite(v[i]))
        fail(in.path(),
             "dataset '" + name + "' element " + std::to_string(i) + " is " + std::to_string(v[i]));
  }
  return v;
}

long long read_attribute(const io::H5Reader& in, const char* key, long long lo, long long hi) {
  if (!in.has_attribute("/", key)) fail(in.path(), std::string("missing attribute '") + key + "'");
  const long long v = in.attribute_integer("/", key);
  if (v < lo || v > hi)
    fail(in.path(), std::string("attribute '") + key + "' = " + std::to_string(v) +
                        " is out of range " + std::to_string(lo) + ".." + std::to_string(hi));
  return v;
}
}  // namespace

std::string where(const std::string& source, std::size_t line) {
  std::string r = source;  // appended: GCC 12 warns falsely (-Wrestrict) on ":" + std::to_string
  if (line) {
    r += ':';
    r += std::to_string(line);
  }
  return r;
}

NumericSystem to_numeric(const SystemText& text, int precision, const std::string& source) {
  kosmos::Impl::require(precision >= 1 && precision <= 16, "kosmos::series::to_numeric",
                        "precision ", precision, " is not in 1..16");
  NumericSystem sys;
  sys.num_variables = text.num_variables;
  sys.degree = text.degree;
  sys.precision = precision;
  sys.complex = text.complex;
  sys.source = source;
  const std::size_t n1 = std::size_t(text.degree) + 1, L = std::size_t(sys.limbs());
  std::vector<SeriesSlot> slots;
  sys.polynomials.resize(text.polynomials.size());
  for (std::size_t i = 0; i < text.polynomials.size(); ++i) {
    const auto& p = text.polynomials[i];
    auto& q = sys.polynomials[i];
    q.structure = p.structure;
    q.line = p.line;
    const std::size_t count = p.terms.size() + 1;
    q.coefficients.assign(n1 * count * L, 0.0);
    slots.push_back(SeriesSlot{&p.constant, &q.coefficients, 0, count, p.line});
    for (std::size_t j = 0; j < p.terms.size(); ++j)
      slots.push_back(SeriesSlot{&p.terms[j], &q.coefficients, j + 1, count,
                                 j < p.lines.size() ? p.lines[j] : p.line});
  }
  const std::size_t n = std::size_t(text.num_variables);
  sys.point.assign(n1 * n * L, 0.0);
  for (std::size_t v = 0; v < text.point.size(); ++v)
    slots.push_back(SeriesSlot{&text.point[v], &sys.point, v, n, 0});
  // the series are independent: parse them on all host threads (exact parsing costs microseconds
  // per number), then report the first bad number in file order
  std::vector<std::size_t> bad(slots.size());
  std::vector<DecimalStatus> status(slots.size(), DecimalStatus::ok);
  Kokkos::parallel_for(
      "kosmos::series::parse_numbers",
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<std::int64_t>>(
          0, std::int64_t(slots.size())),
      [&](const std::int64_t i) {
        bad[std::size_t(i)] = parse_series(slots[std::size_t(i)], sys, status[std::size_t(i)]);
      });
  for (std::size_t i = 0; i < slots.size(); ++i)
    if (bad[i] != std::string::npos)
      throw file_error(
          where(source, slots[i].line) + ": coefficient '" + (*slots[i].text)[bad[i]] + "' " +
          (status[i] == DecimalStatus::overflow ? "overflows (beyond the largest double)"
                                                : "is malformed"));
  return sys;
}

namespace {
// Every number of a LayoutLeft (rows, limbs) array from N_in to N_out limbs per real part.
std::vector<double> convert_limbs(const std::vector<double>& in, int parts, int n_in, int n_out) {
  const std::size_t rows = in.size() / std::size_t(parts * n_in);
  std::vector<double> out(rows * std::size_t(parts * n_out), 0.0);
  std::vector<double> a(static_cast<std::size_t>(n_in), 0.0),
      b(static_cast<std::size_t>(n_out), 0.0);
  for (int part = 0; part < parts; ++part)
    for (std::size_t r = 0; r < rows; ++r) {
      for (int l = 0; l < n_in; ++l)
        a[std::size_t(l)] = in[r + rows * std::size_t(part * n_in + l)];
      kosmos::Impl::round_limbs(a.data(), n_in, b.data(), n_out);
      for (int l = 0; l < n_out; ++l)
        out[r + rows * std::size_t(part * n_out + l)] = b[std::size_t(l)];
    }
  return out;
}
}  // namespace

NumericSystem with_precision(const NumericSystem& system, int precision) {
  kosmos::Impl::require(precision >= 1 && precision <= 16, "kosmos::series::with_precision",
                        "precision ", precision, " is not in 1..16");
  if (precision == system.precision) return system;
  NumericSystem r = system;
  const int parts = system.complex ? 2 : 1;
  r.precision = precision;
  for (auto& p : r.polynomials)
    p.coefficients = convert_limbs(p.coefficients, parts, system.precision, precision);
  r.point = convert_limbs(system.point, parts, system.precision, precision);
  return r;
}

void write_system_h5(const std::string& path, const NumericSystem& sys,
                     const std::string& comment) {
  io::H5Writer out(path);
  out.attribute("/", "format", kFormat);
  out.attribute("/", "comment", comment);
  out.attribute("/", "variables", (long long)sys.num_variables);
  out.attribute("/", "degree", (long long)sys.degree);
  out.attribute("/", "precision", (long long)sys.precision);
  out.attribute("/", "complex", (long long)sys.complex);
  out.attribute("/", "polynomials", (long long)sys.polynomials.size());
  const std::size_t n1 = std::size_t(sys.degree) + 1, L = std::size_t(sys.limbs());
  out.write("point", sys.point.data(), {L, std::size_t(sys.num_variables), n1});
  for (std::size_t k = 0; k < sys.polynomials.size(); ++k) {
    const auto& p = sys.polynomials[k];
    const std::string group = "polynomial_" + std::to_string(k + 1) + "/";
    std::vector<std::int32_t> offsets{0}, variables, exponents;
    for (const auto& m : p.structure.monomials) {
      for (std::size_t j = 0; j < m.variables.size(); ++j) {
        variables.push_back(m.variables[j] + 1);
        exponents.push_back(m.exponents.empty() ? 1 : m.exponents[j]);
      }
      offsets.push_back(std::int32_t(variables.size()));
    }
    out.write(group + "coefficients", p.coefficients.data(),
              {L, p.structure.monomials.size() + 1, n1});
    out.write(group + "monomial_offsets", offsets);
    out.write(group + "variables", variables);
    out.write(group + "exponents", exponents);
  }
  out.commit();
}

NumericSystem read_system_h5(const std::string& path) {
  io::H5Reader in(path);
  if (!in.has_attribute("/", "format") || in.attribute_string("/", "format") != kFormat)
    fail(path, std::string("not a kosmos series system (no attribute format = '") + kFormat + "')");
  NumericSystem sys;
  sys.source = path;
  sys.num_variables = int(read_attribute(in, "variables", 1, 1000000));
  sys.degree = int(read_attribute(in, "degree", 0, max_degree));
  sys.precision = int(read_attribute(in, "precision", 1, 16));
  sys.complex = read_attribute(in, "complex", 0, 1) != 0;
  const long long count = read_attribute(in, "polynomials", 1, 1000000);
  const std::size_t n1 = std::size_t(sys.degree) + 1, L = std::size_t(sys.limbs());
  sys.point = read_dataset<double>(in, "point", {L, std::size_t(sys.num_variables), n1});
  for (long long k = 1; k <= count; ++k) {
    const std::string group = "polynomial_" + std::to_string(k) + "/";
    NumericPolynomial p;
    p.structure.num_variables = sys.num_variables;
    if (!in.has(group + "monomial_offsets"))
      fail(path, "missing dataset '" + group + "monomial_offsets'");
    const auto offsets_dims = in.dims(group + "monomial_offsets");
    if (offsets_dims.size() != 1 || offsets_dims[0] < 1)
      fail(path, "dataset '" + group + "monomial_offsets' must be a non-empty list");
    const auto offsets = read_dataset<std::int32_t>(in, group + "monomial_offsets", offsets_dims);
    const std::size_t M = offsets.size() - 1;
    for (std::size_t j = 0; j < offsets.size(); ++j)
      if (offsets[j] < (j ? offsets[j - 1] : 0) || (j == 0 && offsets[0] != 0))
        fail(path, "dataset '" + group +
                       "monomial_offsets' is not a non-decreasing list from 0 (entry " +
                       std::to_string(j) + " = " + std::to_string(offsets[j]) + ")");
    const std::size_t entries = std::size_t(offsets.back());
    const auto variables = read_dataset<std::int32_t>(in, group + "variables", {entries});
    const auto exponents = read_dataset<std::int32_t>(in, group + "exponents", {entries});
    for (std::size_t e = 0; e < entries; ++e)  // 1-based in the file: checked before the shift
      if (variables[e] < 1 || variables[e] > sys.num_variables)
        fail(path, "dataset '" + group + "variables' entry " + std::to_string(e) + " is " +
                       std::to_string(variables[e]) + ", not a variable 1.." +
                       std::to_string(sys.num_variables));
    for (std::size_t j = 0; j < M; ++j) {
      Monomial m;
      bool powers = false;
      for (auto e = std::size_t(offsets[j]); e < std::size_t(offsets[j + 1]); ++e) {
        m.variables.push_back(variables[e] - 1);
        m.exponents.push_back(exponents[e]);
        powers = powers || exponents[e] != 1;
      }
      if (!powers) m.exponents.clear();
      p.structure.monomials.push_back(std::move(m));
    }
    try {
      validate(p.structure);
    } catch (const invalid_input& e) {
      fail(path, group + ": " + e.what() + " (variables are 1-based in the file)");
    }
    p.coefficients = read_dataset<double>(in, group + "coefficients", {L, M + 1, n1});
    sys.polynomials.push_back(std::move(p));
  }
  return sys;
}

NumericSystem load_system(const std::string& path, int precision) {
  if (io::is_hdf5_path(path)) return with_precision(read_system_h5(path), precision);
  std::ifstream in(path);
  if (in) {
    std::stringstream text;
    text << in.rdbuf();
    if (is_symbolic(text.str())) return parse_symbolic(text.str(), path, precision);
  }
  return to_numeric(read_system(path), precision, path);  // also reports a missing file
}
}  // namespace series
}  // namespace kosmos
