// Exact decimal <-> multiple-double conversion (declared in multi_double.hpp).
//
// Every finite double is an integer multiple of 2^-1074, so both directions work on integers in
// that unit:
//  * parsing: the decimal d * 10^e is the rational P / Q with P = d 10^max(e,0) 2^1074 and
//    Q = 10^max(-e,0) (in units of 2^-1074). Limb i is the double nearest to the remaining
//    rational (ties to even, subnormal spacing respected), found as an integer quotient of at
//    most 54 bits with its exact remainder; the remainder is the next rational. The limbs are
//    thus the greedy round-to-nearest expansion of the exact value: non-overlapping, and their
//    sum is the N-double nearest to the decimal.
//  * printing: the exact sum of the limbs is S 2^-1074 = T 10^k (T = S 5^1074 / 2^... after
//    removing common factors), whose decimal digits are exact; rounding them to D digits (ties
//    to even) is then exact too.
#include <kosmos/core/multi_double.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace kosmos {
namespace Impl {
namespace {

constexpr int kUnitExponent = -1074;  // every finite double is a multiple of 2^-1074

// Non-negative integer, little-endian 32-bit words without leading zero words.
class BigNat {
 public:
  BigNat() = default;
  explicit BigNat(std::uint64_t v) {
    while (v) {
      w_.push_back(std::uint32_t(v));
      v >>= 32;
    }
  }
  bool is_zero() const { return w_.empty(); }
  const std::vector<std::uint32_t>& words() const { return w_; }

  int bit_length() const {
    if (w_.empty()) return 0;
    int top = 32;
    while (!(w_.back() >> (top - 1))) --top;
    return int(w_.size() - 1) * 32 + top;
  }
  int trailing_zeros() const {
    int n = 0;
    std::size_t i = 0;
    while (w_[i] == 0) {
      n += 32;
      ++i;
    }
    std::uint32_t x = w_[i];
    while (!(x & 1u)) {
      x >>= 1;
      ++n;
    }
    return n;
  }

  // this := this * m + add
  void mul_add_small(std::uint32_t m, std::uint32_t add = 0) {
    std::uint64_t carry = add;
    for (auto& x : w_) {
      const std::uint64_t t = std::uint64_t(x) * m + carry;
      x = std::uint32_t(t);
      carry = t >> 32;
    }
    if (carry) w_.push_back(std::uint32_t(carry));
    trim();
  }
  // this := this / d, returns the remainder
  std::uint32_t div_small(std::uint32_t d) {
    std::uint64_t r = 0;
    for (std::size_t i = w_.size(); i-- > 0;) {
      const std::uint64_t t = (r << 32) | w_[i];
      w_[i] = std::uint32_t(t / d);
      r = t % d;
    }
    trim();
    return std::uint32_t(r);
  }
  void shift_left(int bits) {
    if (w_.empty() || bits == 0) return;
    const std::size_t words = std::size_t(bits / 32);
    const int rest = bits % 32;
    std::vector<std::uint32_t> r(words, 0u);
    std::uint32_t carry = 0;
    for (const auto x : w_) {
      r.push_back(rest ? (x << rest) | carry : x);
      carry = rest ? x >> (32 - rest) : 0;
    }
    if (carry) r.push_back(carry);
    w_.swap(r);
  }
  void shift_right(int bits) {
    const std::size_t words = std::size_t(bits / 32);
    const int rest = bits % 32;
    if (words >= w_.size()) {
      w_.clear();
      return;
    }
    std::vector<std::uint32_t> r(w_.begin() + std::ptrdiff_t(words), w_.end());
    if (rest)
      for (std::size_t i = 0; i < r.size(); ++i)
        r[i] = (r[i] >> rest) | (i + 1 < r.size() ? r[i + 1] << (32 - rest) : 0u);
    w_.swap(r);
    trim();
  }
  // this := this + b
  void add(const BigNat& b) {
    if (w_.size() < b.w_.size()) w_.resize(b.w_.size(), 0u);
    std::uint64_t carry = 0;
    for (std::size_t i = 0; i < w_.size(); ++i) {
      const std::uint64_t t = std::uint64_t(w_[i]) + (i < b.w_.size() ? b.w_[i] : 0u) + carry;
      w_[i] = std::uint32_t(t);
      carry = t >> 32;
    }
    if (carry) w_.push_back(std::uint32_t(carry));
  }
  // this := this - b, requires this >= b
  void subtract(const BigNat& b) {
    std::int64_t borrow = 0;
    for (std::size_t i = 0; i < w_.size(); ++i) {
      std::int64_t t = std::int64_t(w_[i]) - (i < b.w_.size() ? b.w_[i] : 0u) - borrow;
      borrow = t < 0;
      if (t < 0) t += std::int64_t(1) << 32;
      w_[i] = std::uint32_t(t);
    }
    trim();
  }
  // this * m for m < 2^64
  BigNat times(std::uint64_t m) const {
    BigNat lo = *this, hi = *this;
    lo.mul_add_small(std::uint32_t(m));
    hi.mul_add_small(std::uint32_t(m >> 32));
    hi.shift_left(32);
    lo.add(hi);
    return lo;
  }
  // The value as mantissa * 2^exponent with the top 64 bits in the mantissa (a double).
  double top(int& exponent) const {
    const int bits = bit_length();
    const int shift = std::max(bits - 64, 0);
    BigNat t = *this;
    t.shift_right(shift);
    std::uint64_t v = 0;
    for (std::size_t i = t.w_.size(); i-- > 0;) v = (v << 32) | t.w_[i];
    exponent = shift;
    return double(v);
  }
  // Decimal digits, most significant first ("0" for zero).
  std::string decimal() const {
    if (w_.empty()) return "0";
    BigNat t = *this;
    std::vector<std::uint32_t> chunks;  // base 10^9, least significant first
    while (!t.is_zero()) chunks.push_back(t.div_small(1000000000u));
    std::string s = std::to_string(chunks.back());
    for (std::size_t i = chunks.size() - 1; i-- > 0;) {
      const std::string c = std::to_string(chunks[i]);
      s.append(9 - c.size(), '0');
      s += c;
    }
    return s;
  }

  friend int compare(const BigNat& a, const BigNat& b) {
    if (a.w_.size() != b.w_.size()) return a.w_.size() < b.w_.size() ? -1 : 1;
    for (std::size_t i = a.w_.size(); i-- > 0;)
      if (a.w_[i] != b.w_[i]) return a.w_[i] < b.w_[i] ? -1 : 1;
    return 0;
  }

 private:
  void trim() {
    while (!w_.empty() && w_.back() == 0) w_.pop_back();
  }
  std::vector<std::uint32_t> w_;
};

BigNat product(const BigNat& a, const BigNat& b) {
  BigNat r;
  for (std::size_t w = 0; w < b.words().size(); ++w) {
    BigNat part = a.times(b.words()[w]);
    part.shift_left(int(32 * w));
    r.add(part);
  }
  return r;
}

BigNat power_of_five(int k) {
  BigNat r(1);
  for (; k >= 13; k -= 13) r.mul_add_small(1220703125u);  // 5^13
  for (; k > 0; --k) r.mul_add_small(5u);
  return r;
}
BigNat power_of_ten(int k) {
  BigNat r = power_of_five(k);
  r.shift_left(k);
  return r;
}

// The double nearest to P / Q units of 2^unit (ties to even). With unit = -1074 the spacing of
// 1 unit below 2^53 units is the subnormal spacing; with a coarser unit a result whose spacing
// would be below 1 unit returns nan (the caller retries with the subnormal unit). On return P
// holds |P / Q - result| * Q and `flipped` says whether the result was rounded up (the remainder
// then has the opposite sign). Returns +inf on overflow.
double nearest_double(BigNat& P, const BigNat& Q, int unit, bool& flipped) {
  flipped = false;
  if (P.is_zero()) return 0.0;
  int t = P.bit_length() - Q.bit_length();  // floor(log2(P / Q)) is t or t - 1
  if (t >= 0) {
    BigNat scaled = Q;
    scaled.shift_left(t);
    if (compare(P, scaled) < 0) --t;
  } else {
    --t;  // P / Q < 1 (floor(log2) only matters through max(t - 52, 0) = 0 here)
  }
  if (t < 52 && unit != kUnitExponent) return std::nan("");
  const int g = std::max(t - 52, 0);
  BigNat D = Q;
  D.shift_left(g);
  // quotient m = floor(P / D) < 2^54: estimate from the leading bits, then correct exactly
  int ep, ed;
  const double ratio = P.top(ep) / D.top(ed);
  const int shift = ep - ed;
  double estimate = shift > -1100 ? std::ldexp(ratio, shift) : 0.0;
  estimate = std::min(std::max(std::floor(estimate), 0.0), 0x1p60);
  std::uint64_t m = std::uint64_t(estimate);
  BigNat product = D.times(m);
  while (compare(product, P) > 0) {
    product.subtract(D);
    --m;
  }
  P.subtract(product);  // now the remainder r, 0 <= r
  while (compare(P, D) >= 0) {
    P.subtract(D);
    ++m;
  }
  BigNat twice = P;
  twice.shift_left(1);
  const int c = compare(twice, D);
  if (c > 0 || (c == 0 && (m & 1u))) {
    ++m;
    D.subtract(P);
    P = D;
    flipped = true;
  }
  return std::ldexp(double(m), g + unit);  // m <= 2^54: exact, or inf on overflow
}

// Exact value of sum(limbs) as sign and magnitude in units of 2^-1074 (finite limbs).
BigNat exact_sum(const double* limbs, int n, bool& negative) {
  BigNat pos, neg;
  for (int i = 0; i < n; ++i) {
    if (limbs[i] == 0.0) continue;
    int e;
    const double f = std::frexp(std::fabs(limbs[i]), &e);  // |limb| = f 2^e, f in [0.5, 1)
    // |limb| = mantissa 2^(e - 53) with a 53-bit integer mantissa; shift to units of 2^-1074
    std::int64_t exponent = e - 53 - kUnitExponent;
    auto mantissa = std::uint64_t(std::ldexp(f, 53));
    while (exponent < 0) {  // subnormal: the low bits of the mantissa are zero
      mantissa >>= 1;
      ++exponent;
    }
    BigNat term(mantissa);
    term.shift_left(int(exponent));
    (limbs[i] < 0 ? neg : pos).add(term);
  }
  negative = compare(neg, pos) > 0;
  if (negative) {
    neg.subtract(pos);
    return neg;
  }
  pos.subtract(neg);
  return pos;
}
}  // namespace

namespace {
// A decimal split into sign, significant digits (no leading or trailing zeros; empty for zero)
// and exponent: value = digits * 10^exponent.
struct DecimalParts {
  bool negative = false;
  std::string digits;
  long long exponent = 0;
  // value in [10^(magnitude - 1), 10^magnitude)
  long long magnitude() const { return exponent + (long long)digits.size(); }
};

bool split_decimal(const std::string& text, DecimalParts& d) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) d.negative = text[i++] == '-';
  bool dot = false, any_digit = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      any_digit = true;
      if (!(d.digits.empty() && c == '0')) d.digits.push_back(c);
      if (dot) --d.exponent;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!any_digit) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exponent_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exponent_negative = text[i++] == '-';
    const std::size_t start = i;
    long long e = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i)
      e = std::min(e * 10 + (text[i] - '0'), 1000000000000LL);  // saturates far beyond any double
    if (i == start) return false;
    d.exponent += exponent_negative ? -e : e;
  }
  if (i != text.size()) return false;
  while (!d.digits.empty() && d.digits.back() == '0') {
    d.digits.pop_back();
    ++d.exponent;
  }
  return true;
}
}  // namespace

DecimalStatus check_decimal(const std::string& text) {
  DecimalParts d;
  if (!split_decimal(text, d)) return DecimalStatus::malformed;
  if (d.digits.empty() || d.magnitude() < 308) return DecimalStatus::ok;  // below 1e308 < DBL_MAX
  double limb;
  return parse_decimal(text, &limb, 1);
}

DecimalStatus parse_decimal(const std::string& text, double* limbs, int n) {
  for (int i = 0; i < n; ++i) limbs[i] = 0.0;
  DecimalParts parts;
  if (!split_decimal(text, parts)) return DecimalStatus::malformed;
  const bool negative = parts.negative;
  const std::string& digits = parts.digits;
  const long long exponent = parts.exponent;
  if (digits.empty()) return DecimalStatus::ok;  // zero
  const long long length = (long long)digits.size();
  // value in [10^(exponent + length - 1), 10^(exponent + length))
  if (exponent + length - 1 > 308) return DecimalStatus::overflow;  // >= 1e309 > DBL_MAX
  if (exponent + length <= -324) return DecimalStatus::ok;          // < 1e-324 < 2^-1075: zero
  BigNat digit_value(0);
  for (std::size_t k = 0; k < digits.size(); k += 9) {
    const std::string chunk = digits.substr(k, 9);
    std::uint32_t scale = 1;
    for (std::size_t j = 0; j < chunk.size(); ++j) scale *= 10u;
    digit_value.mul_add_small(scale, std::uint32_t(std::stoul(chunk)));
  }
  // value = P / Q in units of 2^unit. A unit a few bits below the last limb's spacing keeps the
  // integers short; a limb finer than it (a long run of zero bits) falls back to 2^-1074.
  const long long lowest_log2 =
      (long long)std::floor(double(exponent + length - 1) * 3.3219280948873623) - 1;
  const int coarse_unit = int(std::max<long long>(kUnitExponent, lowest_log2 - 64LL * n - 16));
  for (int unit : {coarse_unit, kUnitExponent}) {
    BigNat P = digit_value, Q(1);
    if (exponent >= 0) {
      P = product(P, power_of_ten(int(exponent)));
    } else {
      Q = power_of_ten(int(-exponent));
    }
    if (unit < 0) {
      P.shift_left(-unit);
    } else {
      Q.shift_left(unit);
    }
    bool sign = negative, too_fine = false;
    for (int k = 0; k < n && !P.is_zero(); ++k) {
      bool flipped;
      const double limb = nearest_double(P, Q, unit, flipped);
      if (std::isnan(limb)) {
        too_fine = true;
        break;
      }
      if (std::isinf(limb)) {
        for (int j = 0; j < n; ++j) limbs[j] = 0.0;
        return DecimalStatus::overflow;
      }
      limbs[k] = sign ? -limb : limb;
      if (flipped) sign = !sign;
    }
    if (!too_fine) return DecimalStatus::ok;
    for (int j = 0; j < n; ++j) limbs[j] = 0.0;
  }
  return DecimalStatus::ok;  // not reached: the subnormal unit never returns nan
}

void round_limbs(const double* in, int n_in, double* out, int n_out) {
  for (int i = 0; i < n_out; ++i) out[i] = 0.0;
  bool negative;
  BigNat P = exact_sum(in, n_in, negative);
  const BigNat Q(1);
  for (int k = 0; k < n_out && !P.is_zero(); ++k) {
    bool flipped;
    const double limb = nearest_double(P, Q, kUnitExponent, flipped);
    out[k] = negative ? -limb : limb;
    if (flipped) negative = !negative;
  }
}

namespace {
// Exact decimal digits of the (finite) sum of the limbs: value = 0.d1 d2 ... * 10^point with
// digits = "d1 d2 ..." (no leading or trailing zeros); false for zero.
bool exact_digits(const double* limbs, int n, bool& negative, std::string& digits,
                  long long& point) {
  BigNat S = exact_sum(limbs, n, negative);
  if (S.is_zero()) return false;
  const int zeros = S.trailing_zeros();
  S.shift_right(zeros);
  const int k = zeros + kUnitExponent;  // value = S 2^k
  long long decimal_exponent = 0;       // value = T 10^decimal_exponent
  if (k >= 0) {
    S.shift_left(k);
  } else {
    S = product(S, power_of_five(-k));
    decimal_exponent = k;
  }
  digits = S.decimal();
  point = (long long)digits.size() + decimal_exponent;
  while (digits.back() == '0') digits.pop_back();
  return true;
}

// d1.d2...dD e<point - 1>, the exact digits rounded to D (ties to even).
std::string compose(bool negative, std::string digits, long long point, int D) {
  if ((int)digits.size() > D) {
    const char next = digits[std::size_t(D)];
    const bool beyond = digits.find_first_not_of('0', std::size_t(D) + 1) != std::string::npos;
    digits.resize(std::size_t(D));
    const bool up = next > '5' || (next == '5' && (beyond || (digits.back() - '0') % 2 == 1));
    if (up) {
      int j = D - 1;
      while (j >= 0 && digits[std::size_t(j)] == '9') digits[std::size_t(j--)] = '0';
      if (j < 0) {
        digits.insert(digits.begin(), '1');
        digits.pop_back();
        ++point;
      } else {
        ++digits[std::size_t(j)];
      }
    }
  }
  digits.resize(std::size_t(D), '0');
  std::string out;  // appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "." + string
  if (negative) out += '-';
  out += digits[0];
  if (D > 1) {
    out += '.';
    out.append(digits, 1, std::string::npos);
  }
  const long long e = point - 1;
  out += 'e';
  out += e < 0 ? '-' : '+';
  out += std::to_string(e < 0 ? -e : e);
  return out;
}

// "1.2500e+3" -> "1.25e+3", "1.000e-1" -> "1e-1"
std::string without_trailing_zeros(const std::string& text) {
  const auto e = text.find('e');
  std::string mantissa = text.substr(0, e);
  if (mantissa.find('.') != std::string::npos) {
    while (mantissa.back() == '0') mantissa.pop_back();
    if (mantissa.back() == '.') mantissa.pop_back();
  }
  return mantissa + text.substr(e);
}

bool same_value(const double* a, int n, const double* b) {
  bool na, nb;
  const BigNat sa = exact_sum(a, n, na), sb = exact_sum(b, n, nb);
  return compare(sa, sb) == 0 && (na == nb || sa.is_zero());
}
}  // namespace

std::string format_decimal(const double* limbs, int n, int digits) {
  bool nan = false, inf = false, negative_inf = false;
  for (int i = 0; i < n; ++i) {
    nan = nan || std::isnan(limbs[i]);
    if (std::isinf(limbs[i])) {
      inf = true;
      negative_inf = limbs[i] < 0;
    }
  }
  if (nan) return "nan";
  if (inf) return negative_inf ? "-inf" : "inf";
  bool negative;
  std::string exact;
  long long point;
  if (!exact_digits(limbs, n, negative, exact, point)) return "0";
  if (digits > 0) return compose(negative, exact, point, digits);
  // Round trip: enough digits to resolve the last limb (or, with fewer nonzero limbs than n,
  // to resolve 2^-1075 so that the missing limbs read back as zero), never more than exact.
  int first = 0, last = n - 1;
  while (limbs[first] == 0.0) ++first;
  while (limbs[last] == 0.0) --last;
  int lead_exponent, last_exponent;
  std::frexp(limbs[first], &lead_exponent);
  std::frexp(limbs[last], &last_exponent);
  const int lsb = last == n - 1 ? std::max(last_exponent - 53, kUnitExponent) : kUnitExponent - 1;
  int D = std::max(int(std::ceil((lead_exponent - lsb) * 0.30102999566398120)) - 1, 1);
  D = std::min(D, int(exact.size()));
  std::vector<double> back(std::size_t(n), 0.0);
  for (;; ++D) {
    std::string text = compose(negative, exact, point, D);
    if (D >= int(exact.size()) || (parse_decimal(text, back.data(), n) == DecimalStatus::ok &&
                                   same_value(limbs, n, back.data())))
      return without_trailing_zeros(text);
  }
}
}  // namespace Impl
}  // namespace kosmos
