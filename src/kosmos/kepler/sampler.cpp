// The DE-MCMC stage: starting scatter from the curvature of ln posterior, then the chains of
// every star on the execution space (Likelihood::run_chains).
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/impl/search_stages.hpp>

#include <algorithm>
#include <cmath>

namespace kosmos {
namespace kepler {
namespace Impl {
// DE-MCMC (ter Braak 2006) for every star at once, started from each star's MAP scattered by
// the curvature of its ln posterior (host, once; each star from its own stream seeded from rng in
// star order, or from the star's stream_rng when the caller numbered it), then every generation on
// the execution space (Likelihood::run_chains): each half of every star's chains is updated from
// the other half, all stars' proposals in one launch. The result depends on the seed only, not on
// the thread count.
void sample_stars(const std::vector<StarFit*>& fits, Likelihood& lik, const SearchOptions& opt,
                  std::mt19937_64& rng, Progress& progress) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t n_stars = fits.size();
  std::vector<std::mt19937_64> star_rng(n_stars);
  for (std::size_t s = 0; s < n_stars; ++s)
    star_rng[s].seed(fits[s]->stream < 0 ? rng() : fits[s]->stream_rng());
  const int n = opt.chains;
  std::vector<const double*> x(fits.size());
  std::vector<double> f, ll;
  {
    // Conditional widths from the curvature of ln posterior (central differences, one batch).
    int rows = 0;
    for (auto* fit : fits) rows = std::max(rows, 2 * fit->model->L.dim() + 1);
    std::vector<std::vector<double>> probes(fits.size());
    std::vector<std::vector<double>> steps(fits.size());
    for (std::size_t s = 0; s < fits.size(); ++s) {
      const StarFit& fit = *fits[s];
      const int dim = fit.model->L.dim();
      steps[s] = parameter_scales(fit.current, fit.model->L, fit.baseline);
      for (int r = 0; r < rows; ++r) {
        probes[s].insert(probes[s].end(), fit.current.begin(), fit.current.end());
        if (r > 0 && r < 2 * dim + 1)
          probes[s][std::size_t(r) * dim + (r - 1) / 2] += (r % 2 ? 1 : -1) * steps[s][(r - 1) / 2];
      }
    }
    for (std::size_t s = 0; s < n_stars; ++s) x[s] = probes[s].data();
    lik.evaluate_stars(x, rows, f, &ll, nullptr);
    for (std::size_t s = 0; s < fits.size(); ++s) {
      StarFit& fit = *fits[s];
      const int dim = fit.model->L.dim();
      const double* fs = &f[s * rows];
      const auto& h = steps[s];
      fit.sigma.assign(dim, 0.0);
      for (int d = 0; d < dim; ++d) {
        const double curv = (fs[2 * d + 1] + fs[2 * d + 2] - 2 * fs[0]) / (h[d] * h[d]);
        fit.sigma[d] = fit.model->is_fixed(d)            ? 0.0
                       : std::isfinite(curv) && curv < 0 ? std::min(1 / std::sqrt(-curv), 20 * h[d])
                                                         : h[d];
      }
    }
  }
  host_for("kosmos::kepler::search::scatter", n_stars, [&](const std::size_t s) {
    std::normal_distribution<double> gauss(0.0, 1.0);
    StarFit& fit = *fits[s];
    const int dim = fit.model->L.dim();
    fit.chains.resize(std::size_t(n) * dim);
    for (int i = 0; i < n; ++i) {
      double* xi = &fit.chains[std::size_t(i) * dim];
      for (int attempt = 0; attempt < 100; ++attempt) {
        for (int d = 0; d < dim; ++d)
          xi[d] = fit.current[d] + (i == 0 ? 0.0 : fit.sigma[d] * gauss(star_rng[s]));
        if (fit.model->log_prior(xi) > kNegInf) break;
        std::copy(fit.current.begin(), fit.current.end(), xi);
      }
    }
  });
  for (std::size_t s = 0; s < n_stars; ++s) x[s] = fits[s]->chains.data();
  lik.evaluate_stars(x, n, f, &ll, nullptr);
  for (std::size_t s = 0; s < fits.size(); ++s) {
    fits[s]->lnpost.assign(f.begin() + s * n, f.begin() + (s + 1) * n);
    fits[s]->lnlike.assign(ll.begin() + s * n, ll.begin() + (s + 1) * n);
    fits[s]->start_lnpost = fits[s]->lnpost[0];  // chain 0 starts at the MAP
    fits[s]->start_lnlike = fits[s]->lnlike[0];
    // Else no chain could move: a posterior of one point, reported as converged.
    kosmos::Impl::require(
        std::isfinite(fits[s]->start_lnpost), "kosmos::kepler::search", fits[s]->data->path,
        ": the best model found has ln posterior ", fits[s]->start_lnpost,
        ": the priors exclude the searched models (check each prior's range against "
        "period_min, period_max, k_max and e_max)");
  }
  lik.run_chains(fits, opt, rng(), progress);
  SamplerTiming timing = lik.timing;
  timing.total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (auto* fit : fits) fit->result.sampler_timing = timing;
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
