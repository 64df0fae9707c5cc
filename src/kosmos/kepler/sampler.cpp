// The DE-MCMC stage: starting scatter from the curvature of ln posterior, then the chains of
// every star on the execution space (Likelihood::run_chains).
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/impl/de_mcmc.hpp>
#include <kosmos/kepler/impl/diagnostics.hpp>
#include <kosmos/kepler/impl/search_stages.hpp>
#include <kosmos/kepler/impl/survey_search.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

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

HostObservations concatenate(const std::vector<StarFit*>& fits, std::vector<int>& begin,
                             std::vector<int>& count, const SearchOptions& opt) {
  HostObservations obs;
  for (const StarFit* fit : fits) {
    const RVData& d = *fit->data;
    begin.push_back(int(obs.t.size()));
    count.push_back(int(d.size()));
    obs.append(d, fit->epoch, opt);  // each star about its own epoch
  }
  return obs;
}

std::unique_ptr<Likelihood> stars_likelihood(const std::vector<StarFit*>& fits,
                                             const SearchOptions& opt) {
  std::vector<int> begin, count;
  std::vector<Model> models;
  for (const StarFit* fit : fits) {
    kosmos::Impl::require(fit->model->L.n_trend == fits.front()->model->L.n_trend,
                          "kosmos::kepler::survey", "every star needs the same trend order (",
                          fit->data->path, ")");
    models.push_back(*fit->model);
  }
  const HostObservations obs = concatenate(fits, begin, count, opt);
  return make_likelihood(obs, models, begin, count, opt);
}

// Whether the star's chains have converged: rank-normalized split R-hat < target for ln L and
// every free sampled parameter (ln L and the periods, the slowest to mix, first; the check stops
// at the first that fails). NaN R-hat (not estimable) is not converged.
bool sampled_converged(const StarFit& fit, int chains, double target) {
  const Model& model = *fit.model;
  const ParamLayout& L = model.L;
  std::vector<int> columns{L.dim() + 1};  // ln L (column dim holds the ln posterior)
  for (int j = 0; j < L.n_pl; ++j) columns.push_back(L.lnP(j));
  for (int d = 0; d < L.dim(); ++d)
    if (std::find(columns.begin(), columns.end(), d) == columns.end()) columns.push_back(d);
  const std::vector<std::size_t> rows = rows_chain_after_chain(fit.result.sample_chain, chains);
  std::vector<double> draws(rows.size());
  for (const int d : columns) {
    if (d < L.dim() && model.is_fixed(d)) continue;
    for (std::size_t k = 0; k < rows.size(); ++k) draws[k] = fit.kept[rows[k]][std::size_t(d)];
    if (!(rank_diagnostics(draws, std::size_t(chains), false, nullptr).rhat < target)) return false;
  }
  return true;
}

// Every other kept generation of each chain (rows are ordered generation, then chain): the rows
// kept so far thinned twice as much.
void halve_kept(StarFit& fit, int chains) {
  auto even_generation = [&](std::size_t r) { return (r / std::size_t(chains)) % 2 == 0; };
  fit.kept.keep_if(even_generation);
  std::size_t out = 0;
  const std::size_t rows = fit.kept_loglike.size();
  for (std::size_t r = 0; r < rows; ++r) {
    if (!even_generation(r)) continue;
    fit.kept_loglike[out] = fit.kept_loglike[r];
    fit.result.sample_chain[out] = fit.result.sample_chain[r];
    ++out;
  }
  fit.kept_loglike.resize(out);
  fit.result.sample_chain.resize(out);
}

void require_extension_options(const SearchOptions& opt, const char* where) {
  kosmos::Impl::require(opt.max_extensions >= 0 && opt.max_extensions <= 10, where,
                        "max_extensions = ", opt.max_extensions, " must be within 0..10");
  kosmos::Impl::require(opt.target_rhat > 1, where, "target_rhat = ", opt.target_rhat,
                        " must be > 1");
}

void extend_unconverged(const std::vector<StarFit*>& fits, const SearchOptions& opt,
                        std::uint64_t seed, Progress& progress, const FinalStars& on_final) {
  const auto start = std::chrono::steady_clock::now();
  double checks = 0, kept_rows = 0;
  std::vector<char> released(fits.size(), 0);
  // Hands on the stars not yet released that `final_now` says are done.
  auto release = [&](const auto& final_now) {
    std::vector<std::size_t> done;
    for (std::size_t s = 0; s < fits.size(); ++s)
      if (!released[s] && final_now(s)) {
        released[s] = 1;
        done.push_back(s);
      }
    if (on_final && !done.empty()) on_final(done);
  };
  for (int round = 1; round <= opt.max_extensions; ++round) {
    std::vector<StarFit*> pending;
    std::vector<char> converged(fits.size());
    const auto check_start = std::chrono::steady_clock::now();
    host_for(
        "kosmos::kepler::search::convergence", fits.size(),
        [&](const std::size_t s) {
          converged[s] = sampled_converged(*fits[s], opt.chains, opt.target_rhat);
        },
        2);
    checks += std::chrono::duration<double>(std::chrono::steady_clock::now() - check_start).count();
    for (std::size_t s = 0; s < fits.size(); ++s)
      if (fits[s]->keep_parameters && !converged[s]) pending.push_back(fits[s]);
    release([&](std::size_t s) { return !fits[s]->keep_parameters || converged[s]; });
    if (pending.empty()) break;
    // The generations after burn-in double; the new ones are kept on the same grid of every
    // (thin x 2^r)-th generation as the halved earlier rows, so the sample count stays.
    const int before = opt.steps << (round - 1);
    SearchOptions more = opt;
    more.thin = opt.thin << round;
    more.burn = (more.thin - before % more.thin) % more.thin;
    more.steps = before - more.burn;
    if (more.steps < 1) {  // fewer generations than one thinning interval: off the grid
      more.burn = 0;
      more.steps = before;
    }
    std::ostringstream m;
    m << pending.size() << " star(s) with R-hat >= " << opt.target_rhat << ": " << before
      << " generations more (extension " << round << " of " << opt.max_extensions << ")";
    progress.message(m.str());
    host_for(
        "kosmos::kepler::search::halve_kept", pending.size(),
        [&](const std::size_t s) {
          halve_kept(*pending[s], opt.chains);
          pending[s]->result.extensions = round;
        },
        2);
    auto lik = stars_likelihood(pending, opt);
    lik->run_chains(pending, more, mix64(seed + std::uint64_t(round)), progress);
    for (StarFit* fit : pending) fit->evaluations += lik->evaluations / (long long)pending.size();
    kept_rows += lik->timing.kept_rows;
  }
  release([](std::size_t) { return true; });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (StarFit* fit : fits) {
    fit->result.sampler_timing.total += seconds;
    fit->result.sampler_timing.convergence += checks;
    fit->result.sampler_timing.kept_rows += kept_rows;
  }
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
