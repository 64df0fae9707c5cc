// MPFR references for the series tests: exact values of multiple-double numbers, and power series
// arithmetic (naive convolution) at a precision far above what the code under test carries.
#pragma once

#include <kosmos/core/multi_double.hpp>

#include <mpfr.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

namespace kosmos_test {

class Mp {
 public:
  explicit Mp(mpfr_prec_t prec = 1200) { mpfr_init2(v_, prec); mpfr_set_zero(v_, 1); }
  Mp(const Mp& o) { mpfr_init2(v_, mpfr_get_prec(o.v_)); mpfr_set(v_, o.v_, MPFR_RNDN); }
  Mp& operator=(const Mp& o) {
    if (this != &o) {
      mpfr_set_prec(v_, mpfr_get_prec(o.v_));
      mpfr_set(v_, o.v_, MPFR_RNDN);
    }
    return *this;
  }
  ~Mp() { mpfr_clear(v_); }
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  double to_double() const { return mpfr_get_d(v_, MPFR_RNDN); }

 private:
  mpfr_t v_;
};

template <int N>
Mp exact(const kosmos::MultiDouble<N>& x, mpfr_prec_t prec = 1200) {
  Mp r(prec);
  for (int i = 0; i < N; ++i) mpfr_add_d(r.get(), r.get(), x.limb[i], MPFR_RNDN);  // exact at 1200 bits
  return r;
}

// |a - b| / scale as a double (scale > 0), or |a - b| if scale == 0.
inline double relative_difference(const Mp& a, const Mp& b, const Mp& scale) {
  Mp d(mpfr_get_prec(a.get()));
  mpfr_sub(d.get(), a.get(), b.get(), MPFR_RNDN);
  mpfr_abs(d.get(), d.get(), MPFR_RNDN);
  if (mpfr_zero_p(scale.get())) return d.to_double();
  mpfr_div(d.get(), d.get(), scale.get(), MPFR_RNDN);
  return d.to_double();
}

// A random N-double with full-length limbs: leading limb 2^e * U(-1, 1), e in [emin, emax].
template <int N, class Rng>
kosmos::MultiDouble<N> random_md(Rng& rng, int emin, int emax) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> e(emin, emax);
  const int ex = e(rng);
  kosmos::MultiDouble<N> x(std::ldexp(u(rng), ex));
  for (int i = 1; i < N; ++i) x = x + kosmos::MultiDouble<N>(std::ldexp(u(rng), ex - 53 * i));
  return x;
}

// Power series over MPFR: complex when im is non-empty.
struct MpSeries {
  std::vector<Mp> re, im;
};

inline MpSeries mp_zero(int degree, bool complex, mpfr_prec_t prec) {
  MpSeries s;
  s.re.assign(std::size_t(degree) + 1, Mp(prec));
  if (complex) s.im.assign(std::size_t(degree) + 1, Mp(prec));
  return s;
}

// Truncated product, or its magnitude bound when `absolute` (|x| * |y| with |re| + |im|).
inline MpSeries mp_mul(const MpSeries& x, const MpSeries& y, bool absolute = false) {
  const int d = int(x.re.size()) - 1;
  const bool cplx = !x.im.empty();
  const mpfr_prec_t prec = mpfr_get_prec(x.re[0].get());
  MpSeries z = mp_zero(d, cplx && !absolute, prec);
  Mp t(prec);
  for (int k = 0; k <= d; ++k)
    for (int i = 0; i <= k; ++i) {
      const auto& a = x.re[std::size_t(i)];
      const auto& b = y.re[std::size_t(k - i)];
      if (!cplx) {
        mpfr_mul(t.get(), a.get(), b.get(), MPFR_RNDN);
        mpfr_add(z.re[std::size_t(k)].get(), z.re[std::size_t(k)].get(), t.get(), MPFR_RNDN);
      } else if (absolute) {
        // x, y hold magnitudes in re only when absolute
        mpfr_mul(t.get(), a.get(), b.get(), MPFR_RNDN);
        mpfr_add(z.re[std::size_t(k)].get(), z.re[std::size_t(k)].get(), t.get(), MPFR_RNDN);
      } else {
        const auto& ai = x.im[std::size_t(i)];
        const auto& bi = y.im[std::size_t(k - i)];
        mpfr_mul(t.get(), a.get(), b.get(), MPFR_RNDN);
        mpfr_add(z.re[std::size_t(k)].get(), z.re[std::size_t(k)].get(), t.get(), MPFR_RNDN);
        mpfr_mul(t.get(), ai.get(), bi.get(), MPFR_RNDN);
        mpfr_sub(z.re[std::size_t(k)].get(), z.re[std::size_t(k)].get(), t.get(), MPFR_RNDN);
        mpfr_mul(t.get(), a.get(), bi.get(), MPFR_RNDN);
        mpfr_add(z.im[std::size_t(k)].get(), z.im[std::size_t(k)].get(), t.get(), MPFR_RNDN);
        mpfr_mul(t.get(), ai.get(), b.get(), MPFR_RNDN);
        mpfr_add(z.im[std::size_t(k)].get(), z.im[std::size_t(k)].get(), t.get(), MPFR_RNDN);
      }
    }
  return z;
}

inline void mp_add_to(MpSeries& acc, const MpSeries& x) {
  for (std::size_t k = 0; k < acc.re.size(); ++k) {
    mpfr_add(acc.re[k].get(), acc.re[k].get(), x.re[k].get(), MPFR_RNDN);
    if (!acc.im.empty()) mpfr_add(acc.im[k].get(), acc.im[k].get(), x.im[k].get(), MPFR_RNDN);
  }
}

inline void mp_scale(MpSeries& x, long factor) {
  for (auto& c : x.re) mpfr_mul_si(c.get(), c.get(), factor, MPFR_RNDN);
  for (auto& c : x.im) mpfr_mul_si(c.get(), c.get(), factor, MPFR_RNDN);
}

// Magnitudes |re| + |im| as a real series.
inline MpSeries mp_abs(const MpSeries& x) {
  MpSeries a;
  for (std::size_t k = 0; k < x.re.size(); ++k) {
    Mp m(x.re[k]);
    mpfr_abs(m.get(), m.get(), MPFR_RNDN);
    if (!x.im.empty()) {
      Mp t(x.im[k]);
      mpfr_abs(t.get(), t.get(), MPFR_RNDN);
      mpfr_add(m.get(), m.get(), t.get(), MPFR_RNDN);
    }
    a.re.push_back(m);
  }
  return a;
}
}  // namespace kosmos_test
