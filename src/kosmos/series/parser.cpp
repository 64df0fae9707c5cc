#include <kosmos/core/error.hpp>
#include <kosmos/core/multi_double.hpp>
#include <kosmos/series/parser.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace kosmos {
namespace series {
namespace {

constexpr int P = 10;  // limbs of the coefficient arithmetic
using Real = MultiDouble<P>;
struct Cplx {
  Real re, im;
};
Cplx operator+(const Cplx& a, const Cplx& b) {
  return {a.re + b.re, a.im + b.im};
}
Cplx operator*(const Cplx& a, const Cplx& b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
bool is_zero(const Cplx& a) {
  return a.re.limb[0] == 0.0 && a.im.limb[0] == 0.0;
}

// A polynomial in x whose coefficients are polynomials in t: monomial exponents -> series.
using Exponents = std::vector<int>;  // by variable index, trailing zeros dropped
using Series = std::vector<Cplx>;
using Poly = std::map<Exponents, Series>;

void trim(Exponents& e) {
  while (!e.empty() && e.back() == 0) e.pop_back();
}
void add_into(Poly& acc, const Exponents& e, const Series& s) {
  Series& target = acc[e];
  if (target.size() < s.size()) target.resize(s.size());
  for (std::size_t k = 0; k < s.size(); ++k) target[k] = target[k] + s[k];
}
Poly add(const Poly& a, const Poly& b, bool subtract) {
  Poly r = a;
  for (const auto& [e, s] : b) {
    Series c = s;
    if (subtract)
      for (auto& z : c) z = {-z.re, -z.im};
    add_into(r, e, c);
  }
  return r;
}
// Products of nonzero series coefficients a * b takes (zero coefficients, as in t^k, are skipped).
double product_count(const Poly& a, const Poly& b) {
  auto nonzero = [](const Poly& p) {
    double n = 0;
    for (const auto& term : p)
      for (const Cplx& z : term.second) n += is_zero(z) ? 0 : 1;
    return n;
  };
  return nonzero(a) * nonzero(b);
}
Poly multiply(const Poly& a, const Poly& b) {
  Poly r;
  for (const auto& [ea, sa] : a)
    for (const auto& [eb, sb] : b) {
      Exponents e(std::max(ea.size(), eb.size()), 0);
      for (std::size_t j = 0; j < ea.size(); ++j) e[j] += ea[j];
      for (std::size_t j = 0; j < eb.size(); ++j) e[j] += eb[j];
      Series s(sa.size() + sb.size() - 1);
      for (std::size_t i = 0; i < sa.size(); ++i) {
        if (is_zero(sa[i])) continue;
        for (std::size_t j = 0; j < sb.size(); ++j)
          if (!is_zero(sb[j])) s[i + j] = s[i + j] + sa[i] * sb[j];
      }
      add_into(r, e, s);
    }
  return r;
}
Poly constant(const Cplx& c) {
  return Poly{{Exponents{}, Series{c}}};
}

class Parser {
 public:
  Parser(const std::string& text, const std::string& source) : text_(text), source_(source) {}

  NumericSystem run(int precision, std::vector<std::string>* names) {
    skip_blank();
    long long declared = -1;
    // PHCpack: a first line with the number of equations (and maybe of variables)
    if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      std::size_t end = pos_;
      while (end < text_.size() && text_[end] != '\n' && text_[end] != ';') ++end;
      std::istringstream first(text_.substr(pos_, end - pos_));
      long long a = 0, b = 0;
      std::string rest;
      if (end < text_.size() && text_[end] == '\n' && (first >> a) &&
          (!(first >> b) || !(first >> rest))) {
        declared = a;
        pos_ = end;
      }
    }
    std::vector<std::pair<Poly, std::size_t>> equations;
    while (true) {
      skip_blank();
      if (pos_ >= text_.size()) break;
      const std::size_t line = line_;
      Poly p = expression();
      skip_blank();
      if (peek() == '=') {
        ++pos_;
        p = add(p, expression(), true);
        skip_blank();
      }
      if (peek() != ';')
        fail(pos_ < text_.size() ? "expected ';' or an operator before '" + token_text() + "'"
                                 : std::string("missing ';' at the end of the last equation"));
      ++pos_;
      equations.push_back({p, line});
    }
    if (equations.empty()) fail("no equations");
    if (declared >= 0 && declared != (long long)equations.size())
      throw file_error(where(source_, 1) + ": the first line declares " + std::to_string(declared) +
                       " equation(s), the file has " + std::to_string(equations.size()));
    return numeric(equations, precision, names);
  }

 private:
  const std::string& text_;
  const std::string& source_;
  std::size_t pos_ = 0, line_ = 1;
  double products_ = 0;  // coefficient products of the expansions so far (product())
  std::vector<std::string> variables_;

  [[noreturn]] void fail(const std::string& what) const {
    throw file_error(where(source_, line_) + ": " + what);
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_blank() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (c == '#' || c == '%') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }
  std::string token_text() const {
    std::size_t end = pos_;
    while (end < text_.size() && !std::isspace(static_cast<unsigned char>(text_[end])) &&
           end - pos_ < 20)
      ++end;
    return text_.substr(pos_, std::max<std::size_t>(end - pos_, 1));
  }

  Poly expression() {
    skip_blank();
    Poly r = term();
    while (true) {
      skip_blank();
      const char c = peek();
      if (c != '+' && c != '-') return r;
      ++pos_;
      r = add(r, term(), c == '-');
    }
  }
  Poly term() {
    Poly r = unary();
    while (true) {
      skip_blank();
      const char c = peek();
      if (c == '*' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') return r;  // '**' power
      if (c != '*' && c != '/') return r;
      ++pos_;
      Poly f = unary();
      if (c == '*') {
        r = product(r, f);
      } else {
        if (f.size() != 1 || !f.begin()->first.empty() || f.begin()->second.size() != 1 ||
            is_zero(f.begin()->second[0]))
          fail("division by a non-constant or zero expression (only numbers may divide)");
        const Cplx d = f.begin()->second[0];
        const Real norm = d.re * d.re + d.im * d.im;
        r = product(r, constant({d.re / norm, -(d.im / norm)}));
      }
    }
  }
  Poly unary() {
    skip_blank();
    if (peek() == '-') {
      ++pos_;
      return product(constant({Real(-1.0), Real(0.0)}), unary());
    }
    if (peek() == '+') {
      ++pos_;
      return unary();
    }
    Poly base = primary();
    skip_blank();
    const bool caret = peek() == '^';
    const bool stars = peek() == '*' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*';
    if (!caret && !stars) return base;
    pos_ += caret ? 1 : 2;
    skip_blank();
    const std::size_t start = pos_;
    while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
    if (start == pos_)
      fail("the exponent after '^' must be a non-negative integer, not '" + token_text() + "'");
    const std::string digits = text_.substr(start, pos_ - start);
    if (digits.size() > 7 || std::stol(digits) > max_exponent)
      fail("exponent " + digits + " is above the limit " + std::to_string(max_exponent));
    // By squaring: 2 log2(e) products, not e.
    Poly r = constant({Real(1.0), Real(0.0)});
    for (long e = std::stol(digits); e > 0; e /= 2) {
      if (e % 2) r = product(r, base);
      if (e > 1) base = product(base, base);
    }
    return r;
  }
  // a * b, refused (an error at the expression's line) where its series in t would pass
  // max_degree or the expansions so far more than kMaxProducts products of coefficients (each in
  // 10-fold double, a few microseconds): an expression that large is for a computer algebra
  // system to expand, not for minutes of parsing.
  static constexpr long long kMaxProducts = 200000;
  Poly product(const Poly& a, const Poly& b) {
    std::size_t longest_a = 0, longest_b = 0;
    for (const auto& term : a) longest_a = std::max(longest_a, term.second.size());
    for (const auto& term : b) longest_b = std::max(longest_b, term.second.size());
    if (longest_a + longest_b > std::size_t(max_degree) + 2)
      fail("the expression's series in t would pass degree " + std::to_string(max_degree));
    products_ += product_count(a, b);
    if (products_ > double(kMaxProducts))
      fail("expanding the expressions takes more than " + std::to_string(kMaxProducts) +
           " products of series coefficients (powers or products of large polynomials): expand "
           "them beforehand");
    return multiply(a, b);
  }
  Poly primary() {
    skip_blank();
    const char c = peek();
    if (c == '(') {
      ++pos_;
      Poly r = expression();
      skip_blank();
      if (peek() != ')') fail("expected ')' before '" + token_text() + "'");
      ++pos_;
      return r;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = pos_;
      while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_') ++pos_;
      const std::string name = text_.substr(start, pos_ - start);
      if (name == "i" || name == "I") return constant({Real(0.0), Real(1.0)});
      if (name == "t") return Poly{{Exponents{}, Series{Cplx{}, Cplx{Real(1.0), Real(0.0)}}}};
      std::size_t index = 0;
      while (index < variables_.size() && variables_[index] != name) ++index;
      if (index == variables_.size()) variables_.push_back(name);
      Exponents e(index + 1, 0);
      e[index] = 1;
      return Poly{{e, Series{Cplx{Real(1.0), Real(0.0)}}}};
    }
    fail(c == '\0' ? std::string("unexpected end of file in an expression")
                   : "unexpected '" + token_text() + "' (expected a number, a variable or '(')");
  }
  Poly number() {
    const std::size_t start = pos_;
    while (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '.') ++pos_;
    if ((peek() == 'e' || peek() == 'E') && pos_ + 1 < text_.size() &&
        (std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])) ||
         ((text_[pos_ + 1] == '+' || text_[pos_ + 1] == '-') && pos_ + 2 < text_.size() &&
          std::isdigit(static_cast<unsigned char>(text_[pos_ + 2]))))) {
      pos_ += 2;
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
    }
    std::string digits = text_.substr(start, pos_ - start);
    if (digits.front() == '.') digits = "0" + digits;
    if (digits.back() == '.') digits += "0";
    Real value;
    const DecimalStatus status = kosmos::Impl::parse_decimal(digits, value.limb, P);
    if (status == DecimalStatus::overflow)
      fail("number '" + digits + "' overflows (beyond the largest double)");
    if (status != DecimalStatus::ok) fail("malformed number '" + digits + "'");
    return constant({value, Real(0.0)});
  }

  NumericSystem numeric(const std::vector<std::pair<Poly, std::size_t>>& equations, int precision,
                        std::vector<std::string>* names) const {
    NumericSystem s;
    s.num_variables = int(variables_.size());
    s.precision = precision;
    s.source = source_;
    s.degree = 0;
    for (const auto& [p, line] : equations)
      for (const auto& [e, series] : p)
        for (std::size_t k = 0; k < series.size(); ++k) {
          if (!is_zero(series[k])) s.degree = std::max(s.degree, int(k));
          s.complex = s.complex || series[k].im.limb[0] != 0.0;
        }
    if (s.num_variables == 0) throw file_error(where(source_, 1) + ": the system has no variables");
    const std::size_t n1 = std::size_t(s.degree) + 1, L = std::size_t(s.limbs());
    std::vector<double> limbs(static_cast<std::size_t>(precision));
    for (const auto& [p, line] : equations) {
      NumericPolynomial np;
      np.line = line;
      np.structure.num_variables = s.num_variables;
      std::vector<const Series*> series{nullptr};
      for (const auto& [e0, sr] : p) {
        Exponents e = e0;
        trim(e);
        bool zero = true;
        for (const auto& z : sr) zero = zero && is_zero(z);
        if (zero) continue;
        if (e.empty()) {
          series[0] = &sr;
          continue;
        }
        Monomial m;
        for (std::size_t j = 0; j < e.size(); ++j)
          if (e[j] > 0) {
            m.variables.push_back(int(j));
            m.exponents.push_back(e[j]);
          }
        np.structure.monomials.push_back(m);
        series.push_back(&sr);
      }
      const std::size_t count = series.size();
      np.coefficients.assign(n1 * count * L, 0.0);
      for (std::size_t m = 0; m < count; ++m) {
        if (!series[m]) continue;
        // powers of t above the degree cancelled (they are zero): not stored
        for (std::size_t k = 0; k < std::min(series[m]->size(), n1); ++k)
          for (int part = 0; part < (s.complex ? 2 : 1); ++part) {
            const Real& v = part == 0 ? (*series[m])[k].re : (*series[m])[k].im;
            if (!std::isfinite(v.limb[0]))
              throw file_error(where(source_, line) +
                               ": a coefficient overflows in the arithmetic");
            kosmos::Impl::round_limbs(v.limb, P, limbs.data(), precision);
            for (int l = 0; l < precision; ++l)
              np.coefficients[k + n1 * (m + count * std::size_t(part * precision + l))] =
                  limbs[std::size_t(l)];
          }
      }
      s.polynomials.push_back(np);
    }
    s.point.assign(n1 * std::size_t(s.num_variables) * L, 0.0);
    if (names) *names = variables_;
    return s;
  }
};
}  // namespace

bool is_symbolic(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string word;
    if (!(words >> word) || word[0] == '#') continue;
    return !(word == "variables" || word == "degree" || word == "complex" || word == "polynomial" ||
             word == "constant" || word == "term" || word == "point");
  }
  return true;
}

NumericSystem parse_symbolic(const std::string& text, const std::string& source, int precision,
                             std::vector<std::string>* names) {
  kosmos::Impl::require(precision >= 1 && precision <= 16, "kosmos::series::parse_symbolic",
                        "precision ", precision, " is not in 1..16");
  Parser parser(text, source);
  return parser.run(precision, names);
}
}  // namespace series
}  // namespace kosmos
