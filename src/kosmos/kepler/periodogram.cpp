#include <kosmos/core/compat.hpp>
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/impl/periodogram.hpp>
#include <kosmos/kepler/search.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>

namespace kosmos {
namespace kepler {
namespace Impl {
// The GLS on a frequency grid; one frequency per work item.
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

// Host arrays as the callables gls_at reads.
struct HostArray {
  const double* p;
  KOKKOS_INLINE_FUNCTION double operator()(int k) const { return p[k]; }
};

double gls_power(const std::vector<double>& t, const std::vector<double>& y,
                 const std::vector<double>& w, double frequency) {
  double wsum = 0;
  for (double x : w) wsum += x;
  std::vector<double> wn(w.size());
  for (std::size_t k = 0; k < w.size(); ++k) wn[k] = w[k] / wsum;
  double power = 0, a = 0, b = 0;
  gls_at(math::two_pi<double>() * frequency, HostArray{t.data()}, HostArray{y.data()},
         HostArray{wn.data()}, 0, int(t.size()), power, a, b);
  return power;
}
}  // namespace Impl

double false_alarm_probability(double power, const std::vector<double>& t,
                               const std::vector<double>& w, double f_max) {
  const double n = double(t.size());
  kosmos::Impl::require(
      t.size() == w.size() && t.size() >= 5 && f_max > 0 && power >= 0 && power <= 1,
      "kosmos::kepler::false_alarm_probability", "need >= 5 times with as many ",
      "weights, f_max > 0 and power in [0, 1] (got ", t.size(), " times, ", w.size(),
      " weights, f_max ", f_max, ", power ", power, ")");
  double wsum = 0, mean = 0, square = 0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    wsum += w[k];
    mean += w[k] * t[k];
    square += w[k] * t[k] * t[k];
  }
  mean /= wsum;
  const double variance = square / wsum - mean * mean;  // of the times, weighted
  const double W = f_max * std::sqrt(2 * math::two_pi<double>() * variance);
  const double nh = n - 1, nk = n - 3;
  const double gamma =
      std::sqrt(2 / nh) * std::exp(std::lgamma(nh / 2) - std::lgamma((nh - 1) / 2));
  const double single = std::pow(1 - power, nk / 2);
  const double tau = gamma * W * std::pow(1 - power, (nk - 1) / 2) * std::sqrt(nh * power / 2);
  return std::min(1.0, std::max(0.0, -std::expm1(std::log1p(-single) - tau)));
}

namespace Impl {
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
