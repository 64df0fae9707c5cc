#include <kosmos/kepler/impl/warnings.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace kosmos {
namespace kepler {
namespace Impl {
namespace {
const char* bound_option(PriorTarget target, bool lower) {
  switch (target) {
    case target_P:
      return lower ? "period_min (--period-min)" : "period_max (--period-max)";
    case target_K:
      return "k_max (--k-max)";
    case target_e:
      return "e_max (--e-max)";
    default:
      return "jitter_max (--jitter-max)";
  }
}
}  // namespace

std::vector<std::string> truncated_prior_warnings(const std::vector<BoundPrior>& priors,
                                                  double period_min, double period_max,
                                                  const SearchOptions& opt) {
  std::vector<std::string> out;
  for (const auto& bp : priors) {
    const Prior& p = bp.prior;
    if (p.kind == Prior::fixed) continue;  // a fixed value outside the bounds is an error
    double upper_bound = 0, lower_bound = -HUGE_VAL;
    switch (bp.target) {
      case target_P:
        upper_bound = period_max;
        lower_bound = period_min;
        break;
      case target_K:
        upper_bound = opt.k_max;
        break;
      case target_e:
        upper_bound = opt.e_max;
        break;
      case target_jitter:
        upper_bound = opt.jitter_max;
        break;
      default:
        continue;
    }
    // beta: its mean +- 3 standard deviations, as a Gaussian's
    const bool beta = p.kind == Prior::beta;
    const double beta_mean = p.a / (p.a + p.b),
                 beta_sd = std::sqrt(p.a * p.b / (p.a + p.b + 1)) / (p.a + p.b);
    const bool gauss = p.kind == Prior::gaussian || beta;
    const double centre = beta ? beta_mean : p.a, width = beta ? beta_sd : p.b;
    const bool ranged = p.kind == Prior::uniform || p.kind == Prior::log_uniform;
    const double hi = ranged ? p.b : gauss ? centre + 3 * width : std::min(p.upper, p.a + 3 * p.b);
    const double lo = ranged  ? p.a
                      : gauss ? std::max(centre - 3 * width, beta ? 0.0 : -HUGE_VAL)
                              : std::max(p.lower, p.a - 3 * p.b);
    for (const bool lower : {false, true}) {
      const bool cut = lower ? lo < lower_bound : hi > upper_bound;
      if (!cut) continue;
      std::ostringstream m;
      m << "the prior on " << p.parameter << " reaches " << (lower ? lo : hi) << ", "
        << (lower ? "below " : "beyond ") << bound_option(bp.target, lower) << " = "
        << (lower ? lower_bound : upper_bound)
        << ": the search truncates it there; move the bound to use the whole prior";
      out.push_back(m.str());
    }
  }
  return out;
}

std::vector<std::string> bound_pileup_warnings(const SearchResult& result, double period_min,
                                               double period_max, const SearchOptions& opt) {
  std::vector<std::string> out;
  // Column c in [lo, hi] (ln P for periods): warns when more than 5 % of its samples lie within
  // 1 % of the range from the upper (or lower) end.
  auto check = [&](std::size_t c, double lo, double hi, bool log_scale, bool upper, double at,
                   const char* option) {
    const double band = 0.01 * (hi - lo);
    std::size_t near = 0;
    for (const auto& row : result.samples) {
      const double v = log_scale ? std::log(row[c]) : row[c];
      near += upper ? v >= hi - band : v <= lo + band;
    }
    const double fraction = double(near) / double(result.samples.size());
    if (fraction <= 0.05) return;
    std::ostringstream m;
    m << result.columns[c] << ": " << std::lround(100 * fraction)
      << " % of the posterior samples lie within 1 % of the range from " << option << " = " << at
      << ": the bound truncates the posterior; move it";
    out.push_back(m.str());
  };
  for (std::size_t c = 0; c < result.columns.size(); ++c) {
    if (result.summary[c].fixed || result.samples.empty()) continue;
    const std::string& name = result.columns[c];
    const bool planet = name.size() == 3 && name[1] == '_';
    if (planet && name[0] == 'P') {
      const double lo = std::log(period_min), hi = std::log(period_max);
      check(c, lo, hi, true, true, period_max, "period_max (--period-max)");
      check(c, lo, hi, true, false, period_min, "period_min (--period-min)");
    } else if (planet && name[0] == 'K') {
      check(c, 0, opt.k_max, false, true, opt.k_max, "k_max (--k-max)");
    } else if (planet && name[0] == 'e') {
      check(c, 0, opt.e_max, false, true, opt.e_max, "e_max (--e-max)");
    } else if (name.rfind("jitter_", 0) == 0) {
      check(c, 0, opt.jitter_max, false, true, opt.jitter_max, "jitter_max (--jitter-max)");
    }
  }
  return out;
}

std::vector<std::string> unit_warnings(const RVData& data) {
  const double largest = *std::max_element(data.sigma.begin(), data.sigma.end());
  if (!(largest < 0.05)) return {};
  std::ostringstream m;
  m << (data.path.empty() ? std::string("the data") : data.path)
    << ": every velocity uncertainty is below 0.05 (largest " << largest
    << "): the velocities look like km/s; the search works in m/s (multiply velocities and "
       "uncertainties by 1000)";
  return {m.str()};
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
