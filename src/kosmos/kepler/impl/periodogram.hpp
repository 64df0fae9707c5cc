// Generalized Lomb-Scargle periodogram (Zechmeister & Kuerster 2009) of residuals on the
// execution space and its strongest distinct peaks: the seeds of each planet's search.
#pragma once

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
