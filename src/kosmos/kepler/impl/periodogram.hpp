// Generalized Lomb-Scargle periodogram (Zechmeister & Kuerster 2009) of residuals on the
// execution space and its strongest distinct peaks: the seeds of each planet's search.
#pragma once

#include <kosmos/core/compat.hpp>

#include <Kokkos_Core.hpp>

#include <vector>

namespace kosmos {
namespace kepler {
namespace Impl {
// The periodogram's frequency step: a fifth of the resolution 1 / baseline. A 20-year survey
// down to 0.5 d scans 7e4 frequencies; 1e7 (three 80 MB arrays) is generous.
inline double periodogram_step(double baseline) {
  return 0.2 / baseline;
}
constexpr double max_periodogram_frequencies = 1e7;

struct Peak {
  double period, power, amplitude, phase;  // y ~ amplitude cos(2 pi t / P + phase)
};

// Generalized Lomb-Scargle power at angular frequency omega of observations t(k), y(k), w(k)
// (weights summing to 1), k in [begin, begin + n), and the sinusoid's cos / sin amplitudes a, b:
// the sums of one frequency, shared by the one-star and the survey periodograms.
template <class TView, class YView, class WView>
KOKKOS_INLINE_FUNCTION void gls_at(double omega, const TView& t, const YView& y, const WView& w,
                                   int begin, int n, double& power, double& a, double& b) {
  double Y = 0, C = 0, S = 0, YY = 0, YC = 0, YS = 0, CC = 0, SS = 0, CS = 0;
  for (int k = begin; k < begin + n; ++k) {
    double s, c;
    math::sincos(omega * t(k), &s, &c);
    const double wk = w(k), yk = y(k);
    Y += wk * yk;
    C += wk * c;
    S += wk * s;
    YY += wk * yk * yk;
    YC += wk * yk * c;
    YS += wk * yk * s;
    CC += wk * c * c;
    SS += wk * s * s;
    CS += wk * c * s;
  }
  YY -= Y * Y;
  YC -= Y * C;
  YS -= Y * S;
  CC -= C * C;
  SS -= S * S;
  CS -= C * S;
  const double D = CC * SS - CS * CS;
  power = D > 0 && YY > 0 ? (SS * YC * YC + CC * YS * YS - 2 * CS * YC * YS) / (YY * D) : 0.0;
  a = D > 0 ? (YC * SS - YS * CS) / D : 0.0;
  b = D > 0 ? (YS * CC - YC * CS) / D : 0.0;
}

// The max_peaks strongest local maxima of the power over [f_min, f_max] in steps df, at least
// 1.5 / baseline apart in frequency; w are weights (any scale). host_space: on the default host
// execution space instead of the default one.
// The GLS power (the normalization of periodogram_peaks: 1 - chi^2(f) / chi^2 of a constant) at
// one frequency, on the host.
double gls_power(const std::vector<double>& t, const std::vector<double>& y,
                 const std::vector<double>& w, double frequency);

std::vector<Peak> periodogram_peaks(bool host_space, const std::vector<double>& t,
                                    const std::vector<double>& y, const std::vector<double>& w,
                                    double f_min, double f_max, double df, int max_peaks,
                                    double baseline);
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
