// The vectorizable Markley solve of solver_simd.hpp: included there once per instruction-set
// level, each time inside its own namespace (no include guard, no includes of its own).

// x^(1/3) for x > 0 to a relative 1e-9 (Markley's starter needs far less: the fifth-order
// correction removes its error), without a division: an estimate of x^(-1/3) from the high
// word (the 1/cbrt analogue of the 1/sqrt bit trick), three Newton steps z (4 - x z^3) / 3
// (quadratic convergence), then x z^2.
inline double cbrt_vectorizable(double x) {
  std::uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  // high word / 3 as one 32 x 32 -> 64-bit product (vectorizes as vpmuludq)
  const std::uint64_t high = std::uint32_t(bits >> 32);
  const std::uint64_t third = (high * 0xAAAAAAABull) >> 33;
  const std::uint64_t guess_bits = (0x553EF0FFull - third) << 32;
  double z;
  std::memcpy(&z, &guess_bits, sizeof z);
  for (int step = 0; step < 3; ++step) z = z * (4 - x * (z * z * z)) * (1.0 / 3);
  return x * z * z;
}

// c ? a : b on the bits. Every select of the loop below is one of these: with a plain ?: GCC
// sinks the arithmetic of the chosen value into a branch, and under its default -ftrapping-math
// a conditional floating-point operation keeps the loop from being if-converted (vectorized).
inline double blend(bool c, double a, double b) {
  std::uint64_t ua, ub;
  std::memcpy(&ua, &a, sizeof ua);
  std::memcpy(&ub, &b, sizeof ub);
  const std::uint64_t mask = std::uint64_t(0) - std::uint64_t(c);
  const std::uint64_t r = (ua & mask) | (ub & ~mask);
  double out;
  std::memcpy(&out, &r, sizeof out);
  return out;
}

// sqrt(x) for x >= 0 to a few ulp, without the errno path that keeps GCC from vectorizing
// sqrt: the 1/sqrt estimate from the exponent bits (|error| < 3.5 %), four Newton steps (no
// division), x / sqrt(x) = x * (1 / sqrt(x)).
inline double sqrt_vectorizable(double x) {
  const double safe = blend(x > 0, x, 1.0);
  std::uint64_t bits;
  std::memcpy(&bits, &safe, sizeof bits);
  bits = 0x5FE6EB50C7B537A9ull - (bits >> 1);
  double y;
  std::memcpy(&y, &bits, sizeof y);
  y = y * (1.5 - 0.5 * safe * y * y);
  y = y * (1.5 - 0.5 * safe * y * y);
  y = y * (1.5 - 0.5 * safe * y * y);
  y = y * (1.5 - 0.5 * safe * y * y);
  return blend(x > 0, safe * y, 0.0);
}

// Round to nearest for |x| < 2^51 by the 1.5 x 2^52 shift (plain additions: vectorizable
// without a double -> int64 conversion, which AVX2 lacks).
inline double round_vectorizable(double x) {
  constexpr double shift = 6755399441055744.0;
  return (x + shift) - shift;
}

// sin and cos of x in [-pi/2, 3 pi / 2] (Markley's E1): quadrant q = round(x / (pi/2)) in
// -1..3, reduction with pi/2 in three parts (Cephes' DP1..DP3 halves), Cephes' sin / cos
// polynomials, signs and swaps by selects.
inline void sincos_vectorizable(double x, double& s, double& c) {
  const double q = round_vectorizable(x * 0.63661977236758134308);
  double r = x - q * 1.57079625129699707031;
  r -= q * 7.54978941586159635335e-8;
  r -= q * 5.39030252995776476554e-15;
  const double z = r * r;
  const double sp = ((((((1.58962301576546568060e-10 * z - 2.50507477628578072866e-8) * z +
                         2.75573136213857245213e-6) *
                            z -
                        1.98412698295895385996e-4) *
                           z +
                       8.33333333332211858878e-3) *
                          z -
                      1.66666666666666307295e-1) *
                     z) *
                        r +
                    r;
  const double cp = ((((((-1.13585365213876817300e-11 * z + 2.08757008419747316778e-9) * z -
                         2.75573141792967388112e-7) *
                            z +
                        2.48015872888517045348e-5) *
                           z -
                       1.38888888888730564116e-3) *
                          z +
                      4.16666666666665929218e-2) *
                         z * z -
                     0.5 * z) +
                    1.0;
  // bitwise | on the comparisons: no short-circuit branches in the vectorized loop
  const bool odd = (q == 1) | (q == 3) | (q == -1);
  const double sin_base = blend(odd, cp, sp), cos_base = blend(odd, sp, cp);
  s = blend((q >= 2) | (q == -1), -sin_base, sin_base);
  c = blend((q == 1) | (q == 2), -cos_base, cos_base);
}

// Solves M[i] = E - e[i] sin E for i in [0, n), n <= kSimdChunk: E, sin E, cos E; scalar[i] = 1
// where the element needs solve_one (left untouched here).
inline void markley_chunk(const double* M, const double* ecc, int n, double* E, double* sinE,
                          double* cosE, std::uint8_t* scalar) {
  constexpr double pi = 3.14159265358979323846, two_pi_hi = 6.283185307179586232;
  // 2 pi in three parts, the first two of 30 significant bits: k c1 and k c2 are exact for
  // k < 2^23 (no fma needed, which the default x86-64 target lacks)
  constexpr double c1 = 6.283185310661793, c2 = -3.4822062768002926e-09,
                   c3 = -1.401373759235972e-18, limit = 33554432.0;  // |M| < 2^25: k < 2^23
  KOSMOS_PRAGMA_SIMD
  for (int i = 0; i < n; ++i) {
    const double Mi = M[i], e = ecc[i];
    const bool ok = (e >= 0) & (e < 1) & (Mi > -limit) & (Mi < limit);
    scalar[i] = std::uint8_t(!ok);
    // the flagged elements run through with whatever they give (no select on the inputs: GCC
    // threads constants through one and the loop no longer if-converts); solve_one redoes them
    const double Mr = Mi, er = e;
    // Cody-Waite reduction to the nearest turn, red in [-pi, pi]: M near a whole number of turns
    // (E near 0, where Kepler's equation is worst conditioned, 1 / (1 - e)) keeps the accuracy
    // of a small number instead of an ulp of 2 pi.
    const double k = round_vectorizable(Mr * 0.15915494309189533577);
    double red = Mr - k * c1;
    red -= k * c2;
    red -= k * c3;
    // markley_solve on |red|, branch-free; E and sin E change sign back below
    const bool flip = red < 0;
    const double m = blend(flip, -red, red);
    const double alpha = (3 * pi * pi + 1.6 * pi * (pi - m) / (1 + er)) * 0.25842434945507176;
    const double one_m_e = 1 - er;
    const double d = 3 * one_m_e + alpha * er;
    const double q = 2 * alpha * d * one_m_e - m * m;
    const double r = 3 * alpha * d * (d - 1 + er) * m + m * m * m;
    const double w0 = blend(r < 0, -r, r) + sqrt_vectorizable(q * q * q + r * r);
    const double cb = blend(w0 > 0, cbrt_vectorizable(blend(w0 > 0, w0, 1.0)), 0.0);
    const double w = cb * cb;
    const double denom = w * w + w * q + q * q;
    const bool pos = denom > 0;
    const double E1 = blend(pos, 2 * r * w + m * denom, m) / blend(pos, denom * d, d);
    double s, c;
    sincos_vectorizable(E1, s, c);
    const double f0 = E1 - er * s - m;
    const double f1 = 1 - er * c;
    const double f2 = er * s;
    const double f3 = 1 - f1;
    const double f4 = -f2;
    const double d3 = -f0 * f1 / (f1 * f1 - 0.5 * f0 * f2);
    const double d4 = -f0 / (f1 + 0.5 * d3 * f2 + d3 * d3 * f3 * (1.0 / 6));
    const double d5 =
        -f0 / (f1 + 0.5 * d4 * f2 + d4 * d4 * f3 * (1.0 / 6) + d4 * d4 * d4 * f4 * (1.0 / 24));
    double Ei = E1 + d5;
    // rotate_small(d5, s, c)
    const double dd = d5 * d5;
    const double cd = 1 - dd * (0.5 - dd * (1.0 / 24));
    const double sd = d5 * (1 - dd * (1.0 / 6 - dd * (1.0 / 120)));
    const double s_new = s * cd + c * sd;
    const double c_new = c * cd - s * sd;
    Ei = blend(flip, -Ei, Ei);
    Ei = blend(Ei < 0, Ei + two_pi_hi, Ei);
    Ei = blend(Ei >= two_pi_hi, Ei - two_pi_hi, Ei);
    E[i] = Ei;
    sinE[i] = blend(flip, -s_new, s_new);
    cosE[i] = c_new;
  }
}
