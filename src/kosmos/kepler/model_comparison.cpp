#include <kosmos/kepler/impl/model_comparison.hpp>

#include <cmath>
#include <sstream>

namespace kosmos {
namespace kepler {
namespace Impl {
int compare_planet_counts(const HostObservations& obs, const std::function<Model(int)>& model_for,
                          const std::vector<std::vector<double>>& optimum_of_count,
                          const SearchOptions& opt, SearchResult& result, long long& evaluations) {
  const double n_obs = double(obs.t.size());
  for (int c = opt.min_planets; c <= opt.planets; ++c) {
    const Model m = model_for(c);
    auto lik = make_reporting_likelihood(obs, m, opt, true);
    std::vector<double> lp, ll;
    lik->evaluate(optimum_of_count[c], 1, lp, &ll);
    ModelComparison mc;
    mc.planets = c;
    mc.n_free = m.n_free();
    mc.loglike = ll[0];
    const double k = mc.n_free;
    mc.bic = k * std::log(n_obs) - 2 * mc.loglike;
    mc.aicc =
        2 * k - 2 * mc.loglike + (n_obs - k - 1 > 0 ? 2 * k * (k + 1) / (n_obs - k - 1) : kInf);
    for (int j = 0; j < c; ++j) mc.orbits.push_back(m.orbit(optimum_of_count[c].data(), j));
    result.comparison.push_back(mc);
    evaluations += lik->evaluations;
  }
  int count = opt.min_planets;
  double bic = result.comparison.front().bic;
  for (const auto& mc : result.comparison)
    if (bic - mc.bic > opt.bic_threshold) {
      count = mc.planets;
      bic = mc.bic;
    }
  std::ostringstream rule;
  rule << "fewest planets that no larger count improves by delta BIC > " << opt.bic_threshold
       << " (Kass & Raftery 1995: very strong evidence)";
  result.comparison_rule = rule.str();
  return count;
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
