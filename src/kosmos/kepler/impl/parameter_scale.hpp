// The characteristic step of one search parameter, callable on the device (the batched survey
// search) and on the host (parameter_scales).
#pragma once

#include <kosmos/kepler/impl/posterior.hpp>

namespace kosmos {
namespace kepler {
namespace Impl {
// Step of parameter d of vector x (layout L) for data spanning `baseline` days: starting
// scatter, finite-difference steps, the Nelder-Mead simplex.
KOKKOS_INLINE_FUNCTION double parameter_scale(const ParamLayout& L, const double* x, int d,
                                              double baseline) {
  if (d < 5 * L.n_pl) {
    switch (d % 5) {
      case 0:  // about a twentieth of the periodogram peak width
        return 0.05 * math::exp(x[d]) / baseline;
      case 1:
        return 0.2;
      case 4:
        return 0.05;
      default:
        return 0.03;
    }
  }
  if (d < 5 * L.n_pl + 2 * L.n_inst) return 0.3;
  if (d < L.trend(0) + L.n_trend) {  // 0.3 m/s over the span
    const double span = d == L.trend(0) ? baseline : baseline * baseline;
    return 0.3 / span;
  }
  // an activity coefficient: 5 % of its value (its units are those of its indicator)
  if (L.n_act > 0 && d >= L.activity(0)) return 0.05 * math::fabs(x[d]) + 0.1;
  return 0.1;  // a noise hyper-parameter: 10 % in a log-sampled one
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
