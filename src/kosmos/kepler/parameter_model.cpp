// Parameter scales of the search's parameter vector.
#include <kosmos/kepler/impl/search_model.hpp>

#include <cmath>

namespace kosmos {
namespace kepler {
namespace Impl {
std::vector<double> parameter_scales(const std::vector<double>& x, const ParamLayout& L,
                                     double baseline) {
  std::vector<double> s(L.dim());
  for (int j = 0; j < L.n_pl; ++j) {
    const double P = std::exp(x[L.lnP(j)]);
    s[L.lnP(j)] = 0.05 * P / baseline;  // about a twentieth of the periodogram peak width
    s[L.K(j)] = 0.2;
    s[L.h(j)] = s[L.k(j)] = 0.03;
    s[L.lambda(j)] = 0.05;
  }
  for (int i = 0; i < L.n_inst; ++i) {
    s[L.gamma(i)] = 0.3;
    s[L.jitter(i)] = 0.3;
  }
  for (int i = 0; i < L.n_trend; ++i)
    s[L.trend(i)] = 0.3 / std::pow(baseline, i + 1);        // 0.3 m/s over the span
  for (int i = 0; i < L.n_noise; ++i) s[L.noise(i)] = 0.1;  // 10 % in a log-sampled one
  return s;
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
