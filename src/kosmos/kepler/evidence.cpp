#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/evidence.hpp>
#include <kosmos/kepler/impl/noise_model.hpp>
#include <kosmos/kepler/impl/search_stages.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

namespace kosmos {
namespace kepler {
namespace Impl {
namespace {
constexpr const char* kWhere = "kosmos::kepler::planet_count_evidence";

// A draw of the prior: each free slot from its user prior where one constrains it directly (P,
// K, offsets, jitters, trend, noise), else uniformly within the base prior's bounds (ln P, K,
// (h, k) in the disk of radius sqrt(e_max), lambda in [0, 2 pi), jitters, noise); other user
// prior terms (e, omega, Tc) act through the DE-MCMC's burn-in at beta = 0. Redrawn until inside
// the prior (100 attempts).
std::vector<double> draw_model(const Model& m, const std::vector<BoundPrior>& priors,
                               std::mt19937_64& rng) {
  const ParamLayout& L = m.L;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::vector<double> x(std::size_t(L.dim()), 0.0);
  for (int attempt = 0; attempt < 100; ++attempt) {
    for (int j = 0; j < L.n_pl; ++j) {
      x[L.lnP(j)] = m.bounds.lnP_min + (m.bounds.lnP_max - m.bounds.lnP_min) * u(rng);
      x[L.K(j)] = m.bounds.k_max * u(rng);
      const double radius = std::sqrt(m.bounds.e_max * u(rng)), angle = kTwoPi * u(rng);
      const bool e_free = std::isnan(m.e_fixed[j]), w_free = std::isnan(m.omega_fixed[j]);
      x[L.h(j)] = e_free && w_free ? radius * std::cos(angle)
                  : e_free         ? m.bounds.e_max * u(rng)
                                   : kTwoPi * u(rng);
      x[L.k(j)] = radius * std::sin(angle);
      x[L.lambda(j)] = kTwoPi * u(rng);
    }
    for (int i = 0; i < L.n_inst; ++i) x[L.jitter(i)] = m.bounds.s_max * u(rng);
    for (int i = 0; i < L.n_noise; ++i)
      x[L.noise(i)] = m.noise_lower[i] + (m.noise_upper[i] - m.noise_lower[i]) * u(rng);
    for (const auto& bp : priors) {
      if (bp.prior.kind == Prior::fixed) continue;
      const double v = draw_prior(bp.prior, rng, u, gauss);
      switch (bp.target) {
        case target_P:
          if (bp.index < L.n_pl && v > 0) x[L.lnP(bp.index)] = std::log(v);
          break;
        case target_K:
          if (bp.index < L.n_pl) x[L.K(bp.index)] = v;
          break;
        case target_gamma:
          x[L.gamma(bp.index)] = v;
          break;
        case target_jitter:
          x[L.jitter(bp.index)] = v;
          break;
        case target_dvdt:
        case target_curv:
          if (L.n_trend > (bp.target == target_dvdt ? 0 : 1))
            x[L.trend(bp.target == target_dvdt ? 0 : 1)] = v;
          break;
        case target_noise:
          x[L.noise(bp.index)] = m.noise_log[bp.index] ? std::log(v) : v;
          break;
        default:
          break;
      }
    }
    m.apply_fixed(x.data());
    if (m.log_prior(x.data()) > kNegInf) break;
  }
  return x;
}

// The trapezoid rule of <ln L> over beta with the end-point correction of Friel, Hurn & Wyse
// (2014): d<ln L>/d beta = Var(ln L), so each interval h loses h^2 / 12 (V_b - V_a) (the
// Euler-Maclaurin term). step 2: every other temperature (and the last).
double corrected_trapezoid(const std::vector<double>& beta, const std::vector<double>& mean,
                           const std::vector<double>& var, std::size_t step) {
  double sum = 0;
  auto interval = [&](std::size_t a, std::size_t b) {
    const double h = beta[b] - beta[a];
    sum += 0.5 * h * (mean[a] + mean[b]) - h * h / 12 * (var[b] - var[a]);
  };
  std::size_t previous = 0;
  for (std::size_t k = step; k < beta.size(); k += step) {
    interval(previous, k);
    previous = k;
  }
  if (previous + 1 != beta.size()) interval(previous, beta.size() - 1);
  return sum;
}
}  // namespace

CountEvidence count_evidence(const RVData& data, const SearchOptions& opt,
                             const EvidenceOptions& ev, int planets, std::mt19937_64& rng) {
  const double baseline = data.baseline();
  const double p_max = opt.period_max > 0 ? opt.period_max : 2 * baseline;
  const double epoch = opt.epoch != 0 ? opt.epoch : data.mid_time();
  const PriorBounds bounds{std::log(opt.period_min), std::log(p_max), opt.k_max, opt.e_max,
                           opt.jitter_max};
  const auto noise = noise_model(opt.noise).hyper_parameters(data, opt);
  const auto priors = bind_priors(opt.priors, data.instrument_names, planets, opt.trend, noise);
  const Model model({planets, data.n_instruments(), opt.trend}, bounds, epoch, priors, noise);
  const ParamLayout& L = model.L;
  // Proper priors: the offsets and trend coefficients have no bounds of their own.
  auto has_prior = [&](PriorTarget target, int index) {
    for (const auto& bp : priors)
      if (bp.target == target && bp.index == index && bp.prior.kind != Prior::fixed) return true;
    return false;
  };
  for (int i = 0; i < L.n_inst; ++i)
    kosmos::Impl::require(model.is_fixed(L.gamma(i)) || has_prior(target_gamma, i), kWhere,
                          "the evidence needs a proper prior on gamma_", data.instrument_names[i],
                          " (e.g. \"gamma_", data.instrument_names[i], " uniform -100 100\")");
  for (int i = 0; i < L.n_trend; ++i)
    kosmos::Impl::require(
        model.is_fixed(L.trend(i)) || has_prior(i == 0 ? target_dvdt : target_curv, 0), kWhere,
        "the evidence needs a proper prior on ", i == 0 ? "dvdt" : "curv");
  kosmos::Impl::require(opt.chains >= 2 * model.n_free() + 2 && opt.chains % 2 == 0, kWhere,
                        "chains = ", opt.chains,
                        " must be even and >= 2 x parameters + 2 = ", 2 * model.n_free() + 2);

  const int T = ev.temperatures, n = opt.chains, dim = L.dim();
  // The optimum of this count by the search's optimization stages (no sampling).
  std::vector<double> optimum;
  if (planets > 0) {
    SearchOptions single = opt;
    single.planets = planets;
    single.min_planets = -1;
    single.progress = nullptr;
    StarFit star;
    star.data = &data;
    Progress quiet(nullptr);
    optimize_star(star, single, rng, quiet);
    optimum = star.current;
  }
  CountEvidence out;
  out.planets = planets;
  for (int k = 0; k < T; ++k) out.beta.push_back(std::pow(double(k) / (T - 1), ev.ladder_power));
  // One "star" per temperature: the observations repeated, each copy about the epoch.
  HostObservations obs;
  obs.n_inst = data.n_instruments();
  std::vector<int> begin, count;
  for (int k = 0; k < T; ++k) {
    begin.push_back(int(obs.t.size()));
    count.push_back(int(data.size()));
    for (std::size_t i = 0; i < data.size(); ++i) {
      obs.t.push_back(data.time[i] - epoch);
      obs.v.push_back(data.velocity[i]);
      obs.sigma.push_back(data.sigma[i]);
      obs.inst.push_back(data.instrument[i]);
    }
  }
  auto lik = make_likelihood(obs, std::vector<Model>(std::size_t(T), model), begin, count, opt);
  lik->swap_temperatures = true;
  std::vector<StarFit> fits(static_cast<std::size_t>(T));
  std::vector<StarFit*> pointers;
  std::vector<const double*> x;
  for (int k = 0; k < T; ++k) {
    StarFit& fit = fits[std::size_t(k)];
    fit.data = &data;
    fit.epoch = epoch;
    fit.baseline = baseline;
    fit.beta = out.beta[std::size_t(k)];
    fit.result.n_free = model.n_free();
    // Orbits are narrow modes that chains drawn from the prior rarely find: the temperatures
    // with beta >= 1e-3 start at the search's optimum (scattered by a tenth of the parameter
    // scales), the hotter ones from the prior; swaps carry each population along the ladder.
    const bool at_optimum = !optimum.empty() && fit.beta >= 1e-3;
    const auto scales = at_optimum ? parameter_scales(optimum, L, baseline) : std::vector<double>();
    std::normal_distribution<double> g(0.0, 1.0);
    for (int c = 0; c < n; ++c) {
      auto draw = draw_model(model, priors, rng);
      if (at_optimum)
        for (int attempt = 0; attempt < 100; ++attempt) {
          for (int d = 0; d < dim; ++d)
            draw[std::size_t(d)] =
                optimum[std::size_t(d)] + (c == 0 ? 0.0 : 0.1 * scales[std::size_t(d)] * g(rng));
          model.apply_fixed(draw.data());
          if (model.log_prior(draw.data()) > kNegInf) break;
          draw = optimum;
        }
      fit.chains.insert(fit.chains.end(), draw.begin(), draw.end());
    }
    fit.sigma = parameter_scales(std::vector<double>(fit.chains.begin(), fit.chains.begin() + dim),
                                 L, baseline);
    for (int d = 0; d < dim; ++d)
      if (model.is_fixed(d)) fit.sigma[std::size_t(d)] = 0;
    pointers.push_back(&fit);
    x.push_back(fit.chains.data());
  }
  std::vector<double> logpost, loglike;
  lik->evaluate_stars(x, n, logpost, &loglike, nullptr);
  for (int k = 0; k < T; ++k) {
    StarFit& fit = fits[std::size_t(k)];
    for (int c = 0; c < n; ++c) {
      const std::size_t r = std::size_t(k) * n + std::size_t(c);
      kosmos::Impl::require(std::isfinite(logpost[r]), kWhere, data.path,
                            ": a draw of the prior has ln posterior ", logpost[r],
                            " (a prior outside the bounds?)");
      const double prior = logpost[r] - loglike[r];
      fit.lnlike.push_back(loglike[r]);
      fit.lnpost.push_back(fit.beta * loglike[r] + prior);
    }
  }
  Progress quiet(nullptr);
  lik->run_chains(pointers, opt, rng(), quiet);
  // <ln L> per temperature and the Monte Carlo variance of that mean (from the chains' means).
  std::vector<double> variance(std::size_t(T), 0.0), loglike_variance;
  for (int k = 0; k < T; ++k) {
    const StarFit& fit = fits[std::size_t(k)];
    std::vector<double> chain_sum(std::size_t(n), 0.0);
    std::vector<int> chain_count(std::size_t(n), 0);
    double sum = 0;
    for (std::size_t r = 0; r < fit.kept.size(); ++r) {
      const double ll = fit.kept[r][std::size_t(dim) + 1];
      sum += ll;
      chain_sum[std::size_t(fit.result.sample_chain[r])] += ll;
      ++chain_count[std::size_t(fit.result.sample_chain[r])];
    }
    const double mean = sum / double(fit.kept.size());
    out.mean_loglike.push_back(mean);
    double square = 0;
    for (const auto& row : fit.kept)
      square += (row[std::size_t(dim) + 1] - mean) * (row[std::size_t(dim) + 1] - mean);
    loglike_variance.push_back(square / double(fit.kept.size() - 1));
    double spread = 0;
    for (int c = 0; c < n; ++c) {
      const double m = chain_sum[std::size_t(c)] / chain_count[std::size_t(c)];
      spread += (m - mean) * (m - mean) / (n - 1);
    }
    variance[std::size_t(k)] = spread / n;
  }
  out.ln_z = corrected_trapezoid(out.beta, out.mean_loglike, loglike_variance, 1);
  const double coarse = corrected_trapezoid(out.beta, out.mean_loglike, loglike_variance, 2);
  double mc = 0;  // trapezoid weights squared times the variances
  for (int k = 0; k < T; ++k) {
    const double left = k > 0 ? out.beta[std::size_t(k)] - out.beta[std::size_t(k - 1)] : 0.0;
    const double right = k + 1 < T ? out.beta[std::size_t(k + 1)] - out.beta[std::size_t(k)] : 0.0;
    const double w = 0.5 * (left + right);
    mc += w * w * variance[std::size_t(k)];
  }
  out.ln_z_error = std::sqrt(mc + (out.ln_z - coarse) * (out.ln_z - coarse));
  return out;
}
}  // namespace Impl

double EvidenceResult::log_odds(int a, int b) const {
  const CountEvidence *za = nullptr, *zb = nullptr;
  for (const auto& c : counts) {
    if (c.planets == a) za = &c;
    if (c.planets == b) zb = &c;
  }
  kosmos::Impl::require(za && zb, "kosmos::kepler::EvidenceResult::log_odds", "counts ", a, " and ",
                        b, " were not both compared");
  return za->ln_z - zb->ln_z;
}

EvidenceResult planet_count_evidence(const RVData& data, const SearchOptions& opt,
                                     const EvidenceOptions& ev) {
  using namespace Impl;
  const auto start = std::chrono::steady_clock::now();
  kosmos::Impl::require(data.size() >= 2 && data.baseline() > 0, kWhere,
                        "need observations spanning some time");
  kosmos::Impl::require(ev.temperatures >= 3 && ev.ladder_power > 0, kWhere,
                        "temperatures = ", ev.temperatures, ", ladder_power = ", ev.ladder_power,
                        ": need >= 3 and > 0");
  kosmos::Impl::require(
      opt.planets >= 0 && opt.planets <= kMaxPlanets && opt.min_planets < opt.planets, kWhere,
      "planets = ", opt.planets, ", min_planets = ", opt.min_planets);
  kosmos::Impl::require(opt.steps >= 4 * opt.thin && opt.burn >= 0, kWhere, "steps = ", opt.steps,
                        " with thin = ", opt.thin, " keeps under 4 samples per chain");
  std::mt19937_64 rng(opt.seed);
  EvidenceResult result;
  const int first = opt.min_planets >= 0 ? opt.min_planets : opt.planets;
  for (int c = first; c <= opt.planets; ++c)
    result.counts.push_back(count_evidence(data, opt, ev, c, rng));
  double top = -HUGE_VAL;
  for (const auto& c : result.counts)
    if (c.ln_z > top) {
      top = c.ln_z;
      result.preferred = c.planets;
    }
  double norm = 0;
  for (const auto& c : result.counts) norm += std::exp(c.ln_z - top);
  for (auto& c : result.counts) c.probability = std::exp(c.ln_z - top) / norm;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}
}  // namespace kepler
}  // namespace kosmos
