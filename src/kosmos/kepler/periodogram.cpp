#include <kosmos/core/compat.hpp>
#include <kosmos/kepler/impl/periodogram.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>

namespace kosmos {
namespace kepler {
namespace Impl {
// Generalized Lomb-Scargle power (Zechmeister & Kuerster 2009) on a frequency grid, plus the
// sinusoid's cos/sin amplitudes; one frequency per work item.
template <class Space>
struct GLSFunctor {
  Kokkos::View<const double*, Space> t, y, w;  // w normalized to sum 1
  Kokkos::View<double*, Space> power, a, b;
  double f0, df;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    gls_at(math::two_pi<double>() * (f0 + i * df), t, y, w, 0, n, power(i), a(i), b(i));
  }
};

template <class Space>
std::vector<Peak> periodogram_peaks_on(const std::vector<double>& t, const std::vector<double>& y,
                                       const std::vector<double>& w, double f_min, double f_max,
                                       double df, int max_peaks, double baseline) {
  const int n = int(t.size());
  const int nf = int((f_max - f_min) / df) + 1;  // <= max_periodogram_frequencies (search())
  Kokkos::View<double*, Space> dt("kosmos::kepler::gls::t", n), dy("kosmos::kepler::gls::y", n),
      dw("kosmos::kepler::gls::w", n), power("kosmos::kepler::gls::power", nf),
      a("kosmos::kepler::gls::a", nf), b("kosmos::kepler::gls::b", nf);
  auto ht = Kokkos::create_mirror_view(dt);
  auto hy = Kokkos::create_mirror_view(dy);
  auto hw = Kokkos::create_mirror_view(dw);
  double wsum = 0;
  for (int k = 0; k < n; ++k) wsum += w[k];
  for (int k = 0; k < n; ++k) {
    ht(k) = t[k];
    hy(k) = y[k];
    hw(k) = w[k] / wsum;
  }
  Kokkos::deep_copy(dt, ht);
  Kokkos::deep_copy(dy, hy);
  Kokkos::deep_copy(dw, hw);
  Kokkos::parallel_for("kosmos::kepler::periodogram", Kokkos::RangePolicy<Space>(0, nf),
                       GLSFunctor<Space>{dt, dy, dw, power, a, b, f_min, df, n});
  auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), power);
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  std::vector<int> maxima;
  for (int i = 0; i < nf; ++i)
    if ((i == 0 || hp(i) >= hp(i - 1)) && (i == nf - 1 || hp(i) >= hp(i + 1))) maxima.push_back(i);
  std::sort(maxima.begin(), maxima.end(), [&](int p, int q) { return hp(p) > hp(q); });
  std::vector<Peak> peaks;
  for (int i : maxima) {
    const double f = f_min + i * df;
    bool distinct = true;
    for (const auto& p : peaks)
      distinct = distinct && std::fabs(1.0 / p.period - f) > 1.5 / baseline;
    if (!distinct) continue;
    // y = a cos(w t) + b sin(w t) = A cos(w t + phase)
    peaks.push_back({1.0 / f, hp(i), std::hypot(ha(i), hb(i)), std::atan2(-hb(i), ha(i))});
    if (int(peaks.size()) == max_peaks) break;
  }
  return peaks;
}
std::vector<Peak> periodogram_peaks(bool host_space, const std::vector<double>& t,
                                    const std::vector<double>& y, const std::vector<double>& w,
                                    double f_min, double f_max, double df, int max_peaks,
                                    double baseline) {
  return host_space ? periodogram_peaks_on<Kokkos::DefaultHostExecutionSpace>(
                          t, y, w, f_min, f_max, df, max_peaks, baseline)
                    : periodogram_peaks_on<Kokkos::DefaultExecutionSpace>(t, y, w, f_min, f_max, df,
                                                                          max_peaks, baseline);
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
