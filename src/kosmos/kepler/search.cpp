// The search of one star: option checks, the optimization stages (no planet, then one planet
// at a time: periodogram, random search, DE, Nelder-Mead), the planet-count comparison, then
// the DE-MCMC and summaries (sampler.cpp, summaries.cpp).
#include <kosmos/core/error.hpp>
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/impl/model_comparison.hpp>
#include <kosmos/kepler/impl/noise_model.hpp>
#include <kosmos/kepler/impl/optimize.hpp>
#include <kosmos/kepler/impl/periodogram.hpp>
#include <kosmos/kepler/impl/search_stages.hpp>
#include <kosmos/kepler/impl/warnings.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace kosmos {
namespace kepler {
namespace Impl {
void optimize_star(StarFit& fit, const SearchOptions& opt, std::mt19937_64& rng, Progress& progress,
                   bool checks_only) {
  const RVData& data = *fit.data;
  constexpr const char* where = "kosmos::kepler::search";
  fit.start = std::chrono::steady_clock::now();
  kosmos::Impl::require(data.size() >= 5, where, "need at least 5 observations, got ", data.size());
  kosmos::Impl::require(opt.planets >= 0 && opt.planets <= 8, where, "planets = ", opt.planets,
                        " is outside [0, 8]");
  kosmos::Impl::require(opt.min_planets < opt.planets, where, "min_planets = ", opt.min_planets,
                        " must be < planets = ", opt.planets, " (or < 0: no comparison)");
  kosmos::Impl::require(opt.trend >= 0 && opt.trend <= 2, where, "trend = ", opt.trend,
                        " is not 0, 1 or 2");
  require_extension_options(opt, where);
  const double baseline = data.baseline();
  kosmos::Impl::require(baseline > 0, where, "the observations span no time");
  const double p_max = opt.period_max > 0 ? opt.period_max : 2 * baseline;
  kosmos::Impl::require(opt.period_min > 0 && p_max > opt.period_min, where, "period range [",
                        opt.period_min, ", ", p_max, "] is empty or not positive");
  // The periodogram scans frequencies from 1 / p_max to 1 / period_min.
  const double frequencies = (1 / opt.period_min - 1 / p_max) / periodogram_step(baseline) + 1;
  kosmos::Impl::require(frequencies <= max_periodogram_frequencies, where,
                        "the periodogram would scan ", frequencies,
                        " frequencies (observations spanning ", baseline, " d, periods down to ",
                        opt.period_min, " d); at most ", max_periodogram_frequencies,
                        ": raise period_min, or check that the times are in days");
  kosmos::Impl::require(opt.e_max > 0 && opt.e_max < 1, where, "e_max = ", opt.e_max,
                        " is outside (0, 1)");
  kosmos::Impl::require(opt.k_max > 0 && opt.jitter_max > 0, where,
                        "k_max and jitter_max must be > 0");
  // Above 1000 solar masses (no star is) the masses' arithmetic overflows to inf and NaN.
  kosmos::Impl::require(opt.stellar_mass >= 0 && opt.stellar_mass_sigma >= 0 &&
                            opt.stellar_mass <= 1e3 && opt.stellar_mass_sigma <= 1e3,
                        where, "stellar mass ", opt.stellar_mass, " +- ", opt.stellar_mass_sigma,
                        " must be within [0, 1000] solar masses");
  const double epoch = opt.epoch != 0 ? opt.epoch : data.mid_time();
  // Times enter as t - epoch: 1e7 d (27000 years) from the data keeps their phases exact to
  // ~1e-9 d in double; an epoch of 1e20 gave wrong fits.
  kosmos::Impl::require(std::fabs(epoch - data.mid_time()) <= 1e7, where, "epoch ", epoch,
                        " is more than 1e7 d from the observations (mid time ", data.mid_time(),
                        ")");
  fit.epoch = epoch;
  fit.baseline = baseline;
  const PriorBounds bounds{std::log(opt.period_min), std::log(p_max), opt.k_max, opt.e_max,
                           opt.jitter_max};
  const NoiseModel& noise_kind = noise_model(opt.noise);
  const auto noise = extra_parameters(data, opt);  // and the activity coefficients
  const auto bound_priors =
      bind_priors(opt.priors, data.instrument_names, opt.planets, opt.trend, noise);
  append(fit.result.warnings, truncated_prior_warnings(bound_priors, opt.period_min, p_max, opt));
  append(fit.result.warnings, unit_warnings(data));
  auto model_for = [&](int n_pl) {
    return Model({n_pl, data.n_instruments(), opt.trend}, bounds, epoch, bound_priors, noise);
  };
  const Model full = model_for(opt.planets);
  const int dim_full = full.n_free();
  kosmos::Impl::require(opt.chains >= 2 * dim_full + 2 && opt.chains % 2 == 0, where,
                        "chains = ", opt.chains,
                        " must be even and >= 2 x parameters + 2 = ", 2 * dim_full + 2);
  kosmos::Impl::require(opt.burn >= 0 && opt.steps >= 1 && opt.thin >= 1, where,
                        "burn = ", opt.burn, ", steps = ", opt.steps, ", thin = ", opt.thin,
                        ": need burn >= 0, steps >= 1, thin >= 1");
  kosmos::Impl::require(opt.optimizer_generations >= 1 && opt.random_candidates >= opt.chains,
                        where, "optimizer_generations = ", opt.optimizer_generations,
                        ", random_candidates = ", opt.random_candidates,
                        ": need >= 1 and >= chains");
  {
    std::vector<double> x(full.L.dim(), 0.0);
    for (int j = 0; j < full.L.n_pl; ++j)
      x[full.L.lnP(j)] = 0.5 * (bounds.lnP_min + bounds.lnP_max);
    for (int d = 0; d < full.L.dim(); ++d)
      if (full.is_fixed(d)) x[d] = full.fixed[d];
    kosmos::Impl::require(
        full.in_bounds(x.data()), where,
        "a fixed value lies outside the search bounds (period range, K <= k_max, e < e_max, "
        "0 <= jitter <= jitter_max)");
  }
  if (checks_only) return;
  const HostObservations obs(data, epoch, opt);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> gauss(0.0, 1.0);
  SearchResult& result = fit.result;
  result.epoch = epoch;
  result.n_obs = int(data.size());
  result.trend = opt.trend;
  result.instruments = data.instrument_names;
  long long& evaluations = fit.evaluations;
  const bool compare = opt.min_planets >= 0;
  std::vector<std::vector<double>>& optimum_of_count = fit.optimum_of_count;

  // Runs DE on `pop` (already filled), polishes the best member and returns it.
  auto optimize_and_polish = [&](Likelihood& lik, const Model& model, std::vector<double>& pop,
                                 const std::string& stage) {
    const int n = int(pop.size()) / model.L.dim();
    std::vector<double> fit;
    lik.evaluate(pop, n, fit);
    optimize(lik, model, pop, fit, opt.optimizer_generations, rng, progress,
             stage + " optimization");
    const int best = int(std::max_element(fit.begin(), fit.end()) - fit.begin());
    std::vector<double> x(pop.begin() + std::size_t(best) * model.L.dim(),
                          pop.begin() + std::size_t(best + 1) * model.L.dim());
    const long long before = lik.evaluations;
    const double polished = polish(lik, model, x, parameter_scales(x, model.L, baseline));
    std::ostringstream m;
    m << stage << ": ln posterior " << std::setprecision(10) << fit[best] << " (DE) -> " << polished
      << " (Nelder-Mead, " << lik.evaluations - before << " evaluations)";
    progress.message(m.str());
    return x;
  };

  // 0. Offsets, jitters and trend: DE from the per-instrument weighted means.
  std::vector<double> current;
  {
    const Model m0 = model_for(0);
    const int d0 = m0.L.dim();
    std::vector<double> start(d0, 0.0);
    std::vector<double> sw(m0.L.n_inst, 0), swv(m0.L.n_inst, 0);
    for (std::size_t k = 0; k < data.size(); ++k) {
      const double w = 1 / (data.sigma[k] * data.sigma[k]);
      sw[data.instrument[k]] += w;
      swv[data.instrument[k]] += w * data.velocity[k];
    }
    for (int i = 0; i < m0.L.n_inst; ++i) {
      start[m0.L.gamma(i)] = swv[i] / sw[i];
      start[m0.L.jitter(i)] = 1.0;
    }
    for (int i = 0; i < m0.L.n_extra(); ++i) start[m0.L.noise(i)] = noise[std::size_t(i)].start;
    const auto scales = parameter_scales(start, m0.L, baseline);
    std::vector<double> pop(std::size_t(opt.chains) * d0);
    for (int i = 0; i < opt.chains; ++i) {
      double* x = &pop[std::size_t(i) * d0];
      for (int d = 0; d < d0; ++d) x[d] = start[d] + (i == 0 ? 0.0 : 10 * scales[d] * gauss(rng));
      for (int q = 0; q < m0.L.n_inst; ++q) x[m0.L.jitter(q)] = std::fabs(x[m0.L.jitter(q)]);
      m0.apply_fixed(x);
    }
    auto lik = make_likelihood(obs, m0, opt);
    current = optimize_and_polish(*lik, m0, pop, "no planet");
    evaluations += lik->evaluations;
    optimum_of_count.push_back(current);
  }

  // 1. One planet at a time: periodogram of the residuals (or the prior on P), random search,
  //    DE optimization, Nelder-Mead polish.
  for (int p = 0; p < opt.planets; ++p) {
    const Model mo = model_for(p), mn = model_for(p + 1);
    const ParamLayout &Lo = mo.L, &Ln = mn.L;
    std::vector<double> t(data.size()), y(data.size()), w(data.size());
    for (std::size_t k = 0; k < data.size(); ++k) {
      const double dt = data.time[k] - epoch;
      double model = current[Lo.gamma(data.instrument[k])];
      for (int i = 0; i < Lo.n_trend; ++i) model += current[Lo.trend(i)] * std::pow(dt, i + 1);
      for (int j = 0; j < p; ++j)
        model += radial_velocity(mo.orbit(current.data(), j), data.time[k], epoch);
      for (int i = 0; i < Lo.n_act; ++i)
        model += current[Lo.activity(i)] * obs.activity[k * std::size_t(obs.n_act) + i];
      const double s = current[Lo.jitter(data.instrument[k])];
      t[k] = dt;
      y[k] = data.velocity[k] - model;
      w[k] = 1 / (data.sigma[k] * data.sigma[k] + s * s);
    }
    auto peaks = periodogram_peaks(opt.host_space, t, y, w, 1 / p_max, 1 / opt.period_min,
                                   periodogram_step(baseline), 3, baseline);
    if (noise_kind.predict) {
      // The peaks of the residuals less the noise model's conditional mean come first (under
      // activity the planet shows there), then the distinct ones of the residuals themselves (a
      // flexible GP can absorb a planet's signal before the planet is in the model).
      std::vector<double> prediction, cleaned = y;
      noise_kind.predict(obs, mo, current.data(), y, prediction);
      for (std::size_t k = 0; k < y.size(); ++k) cleaned[k] -= prediction[k];
      auto merged = periodogram_peaks(opt.host_space, t, cleaned, w, 1 / p_max, 1 / opt.period_min,
                                      periodogram_step(baseline), 3, baseline);
      for (const auto& pk : peaks) {
        bool distinct = true;
        for (const auto& q : merged)
          distinct = distinct && std::fabs(1 / pk.period - 1 / q.period) > 1.5 / baseline;
        if (distinct) merged.push_back(pk);
      }
      peaks = merged;
    }
    kosmos::Impl::require(!peaks.empty(), where, "no periodogram peak for planet ", p + 1);
    {
      std::ostringstream m;
      m << "planet " << p + 1 << ": periodogram peaks at";
      for (const auto& pk : peaks)
        m << " " << std::setprecision(6) << pk.period << " d (power " << std::setprecision(3)
          << pk.power << ")";
      progress.message(m.str());
    }
    result.periodogram_periods.push_back(peaks[0].period);
    double rms = 0;
    for (double v : y) rms += v * v / double(y.size());
    rms = std::sqrt(rms);
    // A prior on this planet's P (or Tc) replaces the periodogram's period (and phase).
    const Prior* p_prior = nullptr;
    const Prior* tc_prior = nullptr;
    for (const auto& bp : bound_priors)
      if (bp.index == p && (bp.target == target_P || bp.target == target_Tc))
        (bp.target == target_P ? p_prior : tc_prior) = &bp.prior;
    auto draw = [&](const Prior& pr) { return draw_prior(pr, rng, u, gauss); };

    const int nc = opt.random_candidates, dn = Ln.dim();
    std::vector<double> cand(std::size_t(nc) * dn);
    for (int c = 0; c < nc; ++c) {
      double* x = &cand[std::size_t(c) * dn];
      for (int j = 0; j < p; ++j)
        for (int q = 0; q < 5; ++q) x[5 * j + q] = current[5 * j + q];
      for (int i = 0; i < Ln.n_inst; ++i) {
        x[Ln.gamma(i)] = current[Lo.gamma(i)];
        x[Ln.jitter(i)] = current[Lo.jitter(i)];
      }
      for (int i = 0; i < Ln.n_trend; ++i) x[Ln.trend(i)] = current[Lo.trend(i)];
      for (int i = 0; i < Ln.n_extra(); ++i) x[Ln.noise(i)] = current[Lo.noise(i)];
      const Peak& pk = peaks[c % peaks.size()];
      double P, K, phase;
      if (p_prior) {
        P = draw(*p_prior);
        K = rms * (0.2 + 1.3 * u(rng));
        phase = kTwoPi * u(rng);
      } else {
        const double f = 1 / pk.period + (u(rng) - 0.5) / baseline;
        P = 1 / std::max(f, 1 / p_max);
        K = pk.amplitude * (0.7 + 0.8 * u(rng));
        phase = pk.phase + 0.5 * gauss(rng);
      }
      P = std::min(std::max(P, opt.period_min), p_max);
      const double e = 0.6 * u(rng) * u(rng), omega = kTwoPi * u(rng);
      // the periodogram's phase is the mean longitude of a circular orbit
      const double M0 = tc_prior
                            ? mean_anomaly_from_conjunction(P, e, omega, draw(*tc_prior), epoch)
                            : phase - omega;
      mn.set_orbit(x, p, Orbit{P, std::min(K, opt.k_max), e, omega, M0});
      mn.apply_fixed(x);
    }
    auto lik = make_likelihood(obs, mn, opt);
    std::vector<double> cand_fit;
    lik->evaluate(cand, nc, cand_fit);
    std::vector<int> order(nc);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + opt.chains, order.end(),
                      [&](int a, int b) { return cand_fit[a] > cand_fit[b]; });
    const auto scales = parameter_scales(cand, Ln, baseline);
    std::vector<double> pop(std::size_t(opt.chains) * dn, 0);
    for (int i = 0; i < opt.chains; ++i) {
      const double* src = &cand[std::size_t(order[i]) * dn];
      double* dst = &pop[std::size_t(i) * dn];
      for (int d = 0; d < dn; ++d) dst[d] = src[d];
      if (i > 0)  // diversity in the parameters carried over from the previous stage
        for (int d = 0; d < dn; ++d)
          if (d < 5 * p || d >= 5 * (p + 1)) dst[d] += 0.3 * scales[d] * gauss(rng);
      for (int q = 0; q < Ln.n_inst; ++q) dst[Ln.jitter(q)] = std::fabs(dst[Ln.jitter(q)]);
      mn.apply_fixed(dst);
    }
    std::ostringstream stage;
    stage << "planet " << p + 1;
    current = optimize_and_polish(*lik, mn, pop, stage.str());
    evaluations += lik->evaluations;
    optimum_of_count.push_back(current);
    const Orbit o = mn.orbit(current.data(), p);
    result.false_alarm.push_back(
        false_alarm_probability(gls_power(t, y, w, 1 / o.P), t, w, 1 / opt.period_min));
    std::ostringstream m;
    m << "planet " << p + 1 << ": P = " << std::setprecision(10) << o.P
      << " d, K = " << std::setprecision(6) << o.K << " m/s, e = " << std::setprecision(4) << o.e
      << ", false-alarm probability " << std::setprecision(3) << result.false_alarm.back();
    progress.message(m.str());
  }
  // 2. Model comparison: ln L at each count's polished optimum, BIC, AICc; the preferred count.
  const int count =
      compare ? compare_planet_counts(obs, model_for, optimum_of_count, opt, result, evaluations)
              : opt.planets;
  result.planets = count;
  fit.model = std::make_unique<Model>(model_for(count));
  fit.current = optimum_of_count[std::size_t(count)];
  result.n_free = fit.model->n_free();
}
}  // namespace Impl

SearchResult search(const RVData& data, const SearchOptions& opt) {
  using namespace Impl;
  kosmos::Impl::ScopedRegion region("kosmos::kepler::search");
  Progress progress(opt.progress);
  std::mt19937_64 rng(opt.seed);
  StarFit fit;
  fit.data = &data;
  optimize_star(fit, opt, rng, progress);
  const HostObservations obs(data, fit.epoch, opt);
  auto lik = make_likelihood(obs, *fit.model, opt);
  sample_stars({&fit}, *lik, opt, rng, progress);
  fit.evaluations += lik->evaluations;
  extend_unconverged({&fit}, opt, rng(), progress);
  choose_map(fit, opt, true);
  finish_star(fit, opt, rng);
  return std::move(fit.result);
}
}  // namespace kepler
}  // namespace kosmos
