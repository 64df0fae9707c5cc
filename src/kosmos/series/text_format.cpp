#include <kosmos/core/error.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/core/multi_double.hpp>
#include <kosmos/series/text_format.hpp>

#include <algorithm>
#include <cstdio>
#include <random>

namespace kosmos {
namespace series {

bool split_complex(const std::string& token, std::string& re, std::string& im) {
  const auto comma = token.find(',');
  if (comma == std::string::npos) {
    re = token;
    im.assign(1, '0');  // not = "0": GCC 12 warns falsely (-Wrestrict) on that in C++20
    return true;
  }
  if (token.find(',', comma + 1) != std::string::npos) return false;
  re = token.substr(0, comma);
  im = token.substr(comma + 1);
  return true;
}

namespace {
// Malformed or overflowing in every precision alike (both depend on the leading limb only); the
// evaluation parses in its own precision.
DecimalStatus check_number(const std::string& token) {
  return kosmos::Impl::check_decimal(token);
}

// Reads ": c_0 ... c_d" starting at field `first` (the colon).
SeriesText read_series(const io::TextReader& reader, const io::Record& record, std::size_t first,
                       const SystemText& sys) {
  if (first >= record.fields.size() || record.fields[first] != ":")
    reader.fail(record.line_number, "expected ':' before the coefficients");
  if (sys.degree < 0) reader.fail(record.line_number, "'degree' must come before any series");
  SeriesText s(record.fields.begin() + std::ptrdiff_t(first) + 1, record.fields.end());
  if (s.size() != std::size_t(sys.degree) + 1)
    reader.fail(record.line_number,
                "degree mismatch: " + std::to_string(s.size()) +
                    " coefficients, expected degree + 1 = " + std::to_string(sys.degree + 1));
  for (const auto& token : s) {
    std::string re, im;
    if (!split_complex(token, re, im))
      reader.fail(record.line_number, "malformed coefficient '" + token + "'");
    for (const auto& part : {re, im}) {
      const DecimalStatus status = check_number(part);
      if (status == DecimalStatus::malformed)
        reader.fail(record.line_number, "malformed coefficient '" + token + "'");
      if (status == DecimalStatus::overflow)
        reader.fail(record.line_number,
                    "coefficient '" + token +
                        "' overflows: beyond the largest double 1.7976931348623157e308");
    }
    if (!sys.complex && token.find(',') != std::string::npos)
      reader.fail(record.line_number,
                  "complex coefficient '" + token + "' without the 'complex' keyword");
  }
  return s;
}

// "x3" or "x3^2" -> variable 2 (0-based), exponent 2.
void read_variable(const io::TextReader& reader, std::size_t line, const std::string& token, int n,
                   int& variable, int& exponent) {
  exponent = 1;
  if (token.size() < 2 || token[0] != 'x')
    reader.fail(line, "expected a variable x<i>, found '" + token + "'");
  const auto caret = token.find('^');
  const std::string index =
      token.substr(1, caret == std::string::npos ? std::string::npos : caret - 1);
  auto parse_int = [&](const std::string& s, int& value) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
      return false;
    value = std::stoi(s);
    return true;
  };
  if (!parse_int(index, variable)) reader.fail(line, "malformed variable '" + token + "'");
  if (caret != std::string::npos && !parse_int(token.substr(caret + 1), exponent))
    reader.fail(line, "malformed exponent in '" + token + "'");
  if (exponent < 1) reader.fail(line, "exponent of '" + token + "' is below 1");
  if (exponent > max_exponent)
    reader.fail(line,
                "exponent of '" + token + "' is above the limit " + std::to_string(max_exponent));
  if (variable < 1 || variable > n)
    reader.fail(line, "variable index " + std::to_string(variable) + " out of range 1.." +
                          std::to_string(n));
  variable -= 1;
}
}  // namespace

SystemText read_system(const std::string& path) {
  io::TextReader reader(path);
  SystemText sys;
  io::Record record;
  std::size_t last_line = 0;
  auto current = [&](std::size_t line) -> PolynomialText& {
    if (sys.polynomials.empty()) {
      sys.polynomials.emplace_back();
      sys.polynomials.back().line = line;
    }
    return sys.polynomials.back();
  };
  std::vector<std::size_t> point_line;
  while (reader.next(record)) {
    last_line = record.line_number;
    const auto& key = record.fields[0];
    const std::size_t line = record.line_number;
    if (key == "variables") {
      if (record.fields.size() != 2) reader.fail(line, "expected 'variables <n>'");
      if (sys.num_variables > 0) reader.fail(line, "'variables' given twice");
      const long long n = reader.integer(record, 1, "number of variables");
      if (n < 1 || n > 1000000)
        reader.fail(line, "number of variables " + std::to_string(n) + " out of range");
      sys.num_variables = int(n);
      sys.point.assign(std::size_t(n), SeriesText{});
      point_line.assign(std::size_t(n), 0);
    } else if (key == "degree") {
      if (record.fields.size() != 2) reader.fail(line, "expected 'degree <d>'");
      if (sys.degree >= 0) reader.fail(line, "'degree' given twice");
      if (record.fields[1].size() > 0 && record.fields[1][0] == '-')
        reader.fail(line, "negative degree " + record.fields[1]);
      const long long d = reader.integer(record, 1, "degree");
      if (d > max_degree)
        reader.fail(line, "degree " + std::to_string(d) + " is above the limit " +
                              std::to_string(max_degree));
      sys.degree = int(d);
    } else if (key == "complex") {
      if (record.fields.size() != 1) reader.fail(line, "'complex' takes no arguments");
      if (!sys.polynomials.empty() ||
          point_line.end() != std::find_if(point_line.begin(), point_line.end(),
                                           [](std::size_t l) { return l != 0; }))
        reader.fail(line, "'complex' must come before any series");
      sys.complex = true;
    } else if (key == "polynomial") {
      if (record.fields.size() != 1) reader.fail(line, "'polynomial' takes no arguments");
      sys.polynomials.emplace_back();
      sys.polynomials.back().line = line;
    } else if (key == "constant") {
      if (sys.num_variables == 0) reader.fail(line, "'variables' must come first");
      auto& p = current(line);
      if (!p.constant.empty()) reader.fail(line, "second constant in one polynomial");
      p.constant = read_series(reader, record, 1, sys);
    } else if (key == "term") {
      if (sys.num_variables == 0) reader.fail(line, "'variables' must come first");
      auto& p = current(line);
      Monomial m;
      std::size_t i = 1;
      bool powers = false;
      for (; i < record.fields.size() && record.fields[i] != ":"; ++i) {
        int v, e;
        read_variable(reader, line, record.fields[i], sys.num_variables, v, e);
        if (std::find(m.variables.begin(), m.variables.end(), v) != m.variables.end())
          reader.fail(line, "variable x" + std::to_string(v + 1) + " repeated (use an exponent)");
        m.variables.push_back(v);
        m.exponents.push_back(e);
        powers = powers || e > 1;
      }
      if (m.variables.empty()) reader.fail(line, "a term needs at least one variable");
      if (!powers) m.exponents.clear();
      p.terms.push_back(read_series(reader, record, i, sys));
      p.structure.monomials.push_back(m);
      p.lines.push_back(line);
    } else if (key == "point") {
      if (sys.num_variables == 0) reader.fail(line, "'variables' must come first");
      if (record.fields.size() < 2) reader.fail(line, "expected 'point x<i> : coefficients'");
      int v, e;
      read_variable(reader, line, record.fields[1], sys.num_variables, v, e);
      if (e != 1) reader.fail(line, "a point line names one variable without exponent");
      if (point_line[std::size_t(v)] != 0)
        reader.fail(line, "second point for x" + std::to_string(v + 1) + " (first on line " +
                              std::to_string(point_line[std::size_t(v)]) + ")");
      sys.point[std::size_t(v)] = read_series(reader, record, 2, sys);
      point_line[std::size_t(v)] = line;
    } else {
      reader.fail(
          line, "unknown keyword '" + key +
                    "' (expected variables, degree, complex, polynomial, constant, term or point)");
    }
  }
  if (sys.num_variables == 0) reader.fail(last_line, "no 'variables' line");
  if (sys.degree < 0) reader.fail(last_line, "no 'degree' line");
  if (sys.polynomials.empty()) reader.fail(last_line, "empty system: no polynomial");
  for (std::size_t k = 0; k < sys.polynomials.size(); ++k) {
    auto& p = sys.polynomials[k];
    p.structure.num_variables = sys.num_variables;
    if (p.terms.empty() && p.constant.empty())
      reader.fail(p.line ? p.line : last_line, "empty polynomial: polynomial " +
                                                   std::to_string(k + 1) +
                                                   " has no constant and no terms");
  }
  for (int v = 0; v < sys.num_variables; ++v)
    if (point_line[std::size_t(v)] == 0)
      reader.fail(last_line, "no point given for x" + std::to_string(v + 1));
  return sys;
}

void write_system(std::ostream& out, const SystemText& sys, const std::string& comment) {
  out << "# " << comment << "\n";
  out << "variables " << sys.num_variables << "\ndegree " << sys.degree << "\n";
  if (sys.complex) out << "complex\n";
  auto series = [&](const SeriesText& s) {
    out << " :";
    for (const auto& c : s) out << ' ' << c;
    out << "\n";
  };
  for (const auto& p : sys.polynomials) {
    out << "polynomial\n";
    if (!p.constant.empty()) {
      out << "constant";
      series(p.constant);
    }
    for (std::size_t k = 0; k < p.terms.size(); ++k) {
      out << "term";
      const auto& m = p.structure.monomials[k];
      for (std::size_t j = 0; j < m.variables.size(); ++j) {
        out << " x" << m.variables[j] + 1;
        if (!m.exponents.empty() && m.exponents[j] > 1) out << '^' << m.exponents[j];
      }
      series(p.terms[k]);
    }
  }
  for (int v = 0; v < sys.num_variables; ++v) {
    out << "point x" << v + 1;
    series(sys.point[std::size_t(v)]);
  }
}

SystemText generate_system(const std::string& name, int degree, bool complex, unsigned seed) {
  Impl::require(degree >= 0 && degree <= max_degree, "kosmos::series::generate_system", "degree ",
                degree, " is outside [0, ", max_degree, "]");
  SystemText sys;
  PolynomialText p;
  p.structure = make_test_polynomial(name);
  sys.num_variables = p.structure.num_variables;
  sys.degree = degree;
  sys.complex = complex;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto number = [&] {
    char buffer[40];
    std::snprintf(buffer, sizeof buffer, "%.17g", u(rng));
    std::string s = buffer;
    if (complex) {
      std::snprintf(buffer, sizeof buffer, "%.17g", u(rng));
      s += std::string(",") + buffer;
    }
    return s;
  };
  auto series = [&] {
    SeriesText s;
    for (int k = 0; k <= degree; ++k) s.push_back(number());
    return s;
  };
  p.constant = series();
  for (std::size_t k = 0; k < p.structure.monomials.size(); ++k) p.terms.push_back(series());
  sys.polynomials.push_back(std::move(p));
  for (int v = 0; v < sys.num_variables; ++v) sys.point.push_back(series());
  return sys;
}
}  // namespace series
}  // namespace kosmos
