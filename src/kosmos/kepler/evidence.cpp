#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/evidence.hpp>
#include <kosmos/kepler/impl/evidence.hpp>
#include <kosmos/kepler/impl/noise_model.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <map>
#include <random>
#include <sstream>

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
    for (int i = 0; i < L.n_extra(); ++i)
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
        case target_e:  // the radius of (h, k) (both free), the angle kept
          if (bp.index < L.n_pl && std::isnan(m.e_fixed[bp.index]) &&
              std::isnan(m.omega_fixed[bp.index]) && v >= 0 && v < m.bounds.e_max) {
            const double h = x[L.h(bp.index)], k = x[L.k(bp.index)], r = std::hypot(h, k);
            x[L.h(bp.index)] = r > 0 ? h / r * std::sqrt(v) : std::sqrt(v);
            x[L.k(bp.index)] = r > 0 ? k / r * std::sqrt(v) : 0.0;
          }
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

// Stepping-stone estimates of ln Z (Xie et al. 2011), one per group of kept rows: group(row,
// chain) in [0, groups) of each temperature's rows; Z_k+1 / Z_k = <L^(beta_k+1 - beta_k)> over
// the group's samples of temperature k (log-sum-exp).
// ladder: the fits of the temperatures beta, in order.
template <class Group>
std::vector<double> stepping_stones(const StarFit* ladder, const std::vector<double>& beta,
                                    int groups, const Group& group) {
  std::vector<double> ln_z(std::size_t(groups), 0.0);
  for (std::size_t k = 0; k + 1 < beta.size(); ++k) {
    const StarFit& fit = ladder[k];
    const double step = beta[k + 1] - beta[k];
    std::vector<double> top(std::size_t(groups), -HUGE_VAL), sum(std::size_t(groups), 0.0),
        count(std::size_t(groups), 0.0);
    for (std::size_t r = 0; r < fit.kept_loglike.size(); ++r) {
      const auto g = std::size_t(group(r, fit.result.sample_chain[r]));
      top[g] = std::max(top[g], step * fit.kept_loglike[r]);
    }
    for (std::size_t r = 0; r < fit.kept_loglike.size(); ++r) {
      const auto g = std::size_t(group(r, fit.result.sample_chain[r]));
      sum[g] += std::exp(step * fit.kept_loglike[r] - top[g]);
      count[g] += 1;
    }
    for (std::size_t g = 0; g < ln_z.size(); ++g) ln_z[g] += top[g] + std::log(sum[g] / count[g]);
  }
  return ln_z;
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

// The evidence of one ladder's kept samples (fits of the temperatures out.beta, in order).
void ladder_evidence(const StarFit* ladder, int chains, CountEvidence& out) {
  const int T = int(out.beta.size()), n = chains;
  // <ln L> and Var ln L per temperature: the thermodynamic integral (a cross-check).
  std::vector<double> loglike_variance;
  for (int k = 0; k < T; ++k) {
    const StarFit& fit = ladder[k];
    double sum = 0;
    for (double ll : fit.kept_loglike) sum += ll;
    const double mean = sum / double(fit.kept_loglike.size());
    out.mean_loglike.push_back(mean);
    double square = 0;
    for (double ll : fit.kept_loglike) square += (ll - mean) * (ll - mean);
    loglike_variance.push_back(square / double(fit.kept_loglike.size() - 1));
  }
  // Stepping stones over all samples; the Monte Carlo error from the spread of the same
  // estimate over each chain's samples; the drift between the first and second half of the kept
  // generations (a run still settling shows there, and moves ln Z more than the chains' spread
  // says) added in quadrature.
  out.ln_z = stepping_stones(ladder, out.beta, 1, [](std::size_t, int) { return 0; })[0];
  const auto per_chain =
      stepping_stones(ladder, out.beta, n, [](std::size_t, int chain) { return chain; });
  double chain_mean = 0, chain_spread = 0;
  for (double z : per_chain) chain_mean += z / n;
  for (double z : per_chain) chain_spread += (z - chain_mean) * (z - chain_mean) / (n - 1);
  const std::size_t rows = ladder[0].kept_loglike.size();
  const auto halves = stepping_stones(ladder, out.beta, 2,
                                      [rows](std::size_t r, int) { return r < rows / 2 ? 0 : 1; });
  out.ln_z_drift = halves[1] - halves[0];
  out.ln_z_error = std::sqrt(chain_spread / n + out.ln_z_drift * out.ln_z_drift);
  out.ln_z_ti = corrected_trapezoid(out.beta, out.mean_loglike, loglike_variance, 1);
}
}  // namespace

Model ladder_model(const RVData& data, const SearchOptions& opt, int planets,
                   std::vector<BoundPrior>& priors) {
  const double p_max = opt.period_max > 0 ? opt.period_max : 2 * data.baseline();
  const double epoch = opt.epoch != 0 ? opt.epoch : data.mid_time();
  const PriorBounds bounds{std::log(opt.period_min), std::log(p_max), opt.k_max, opt.e_max,
                           opt.jitter_max};
  const auto noise = extra_parameters(data, opt);
  priors = bind_priors(opt.priors, data.instrument_names, std::max(planets, opt.planets), opt.trend,
                       noise);
  Model model({planets, data.n_instruments(), opt.trend}, bounds, epoch, priors, noise);
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
  return model;
}

void check_ladder_model(const RVData& data, const SearchOptions& opt, int planets) {
  std::vector<BoundPrior> priors;
  ladder_model(data, opt, planets, priors);
}

int ladder_chain_count(const Model& model, const SearchOptions& opt, const EvidenceOptions& ev) {
  const int chains = ev.ladder_chains > 0 ? std::min(ev.ladder_chains, opt.chains) : opt.chains;
  return std::max(chains, 2 * model.n_free() + 2);
}

namespace {
// A star's ladder model and the priors it was built with (draw_model's).
struct LadderModel {
  std::vector<BoundPrior> priors;
  Model model;
};

// tempered_runs_of_ladders for ladders of n chains each (models: theirs, in order), device
// streams from `seed`.
std::vector<TemperedRun> tempered_runs_of_group(const std::vector<LadderStar>& stars,
                                                const std::vector<const LadderModel*>& ladders,
                                                const EvidenceOptions& ev, std::uint64_t seed,
                                                int n) {
  SearchOptions opt = *stars.front().opt;
  opt.chains = n;
  const int T = ev.temperatures;
  std::vector<double> beta;
  for (int k = 0; k < T; ++k) beta.push_back(std::pow(double(k) / (T - 1), ev.ladder_power));
  // One "star" per (star, temperature), star-major: each star's observations repeated, each
  // copy about the star's epoch.
  HostObservations obs;
  std::vector<int> begin, count;
  std::vector<Model> models;
  std::vector<StarFit> fits(stars.size() * std::size_t(T));
  std::vector<StarFit*> pointers;
  std::vector<const double*> x;
  for (std::size_t s = 0; s < stars.size(); ++s) {
    const LadderStar& star = stars[s];
    const RVData& data = *star.data;
    const std::vector<double>& optimum = *star.optimum;
    std::mt19937_64& rng = *star.rng;
    const std::vector<BoundPrior>& priors = ladders[s]->priors;
    const Model& model = ladders[s]->model;
    const ParamLayout& L = model.L;
    const int dim = L.dim();
    const double epoch = model.epoch, baseline = data.baseline();
    kosmos::Impl::require(
        model.log_prior(optimum.data()) > kNegInf, kWhere, data.path,
        ": the best model found has ln posterior -inf: the priors exclude the searched models "
        "(check each prior's range against period_min, period_max, k_max and e_max)");
    for (int k = 0; k < T; ++k) {
      begin.push_back(int(obs.t.size()));
      count.push_back(int(data.size()));
      obs.append(data, epoch, opt);
      models.push_back(model);
      StarFit& fit = fits[s * std::size_t(T) + std::size_t(k)];
      fit.data = &data;
      fit.epoch = epoch;
      fit.baseline = baseline;
      fit.beta = beta[std::size_t(k)];
      fit.keep_parameters = k == T - 1;  // the posterior; the others feed only the evidence
      fit.stream = star.stream < 0 ? -1 : (star.stream * (kMaxPlanets + 1) + star.planets) * T + k;
      fit.result.n_free = model.n_free();
      // Orbits are narrow modes that chains drawn from the prior rarely find: the temperatures
      // with beta >= 1e-3 start at the search's optimum (scattered by a tenth of the parameter
      // scales), the hotter ones from the prior; swaps carry each population along the ladder.
      const bool at_optimum = !optimum.empty() && fit.beta >= 1e-3;
      const auto scales =
          at_optimum ? parameter_scales(optimum, L, baseline) : std::vector<double>();
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
      fit.sigma = parameter_scales(
          std::vector<double>(fit.chains.begin(), fit.chains.begin() + dim), L, baseline);
      for (int d = 0; d < dim; ++d)
        if (model.is_fixed(d)) fit.sigma[std::size_t(d)] = 0;
      pointers.push_back(&fit);
      x.push_back(fit.chains.data());
    }
  }
  auto lik = make_likelihood(obs, models, begin, count, opt);
  lik->temperature_ladder = T;
  std::vector<double> logpost, loglike;
  lik->evaluate_stars(x, n, logpost, &loglike, nullptr);
  for (std::size_t f = 0; f < fits.size(); ++f) {
    StarFit& fit = fits[f];
    for (int c = 0; c < n; ++c) {
      const std::size_t r = f * std::size_t(n) + std::size_t(c);
      kosmos::Impl::require(std::isfinite(logpost[r]), kWhere, fit.data->path,
                            ": a draw of the prior has ln posterior ", logpost[r],
                            " (a prior outside the bounds?)");
      const double prior = logpost[r] - loglike[r];
      fit.lnlike.push_back(loglike[r]);
      fit.lnpost.push_back(fit.beta * loglike[r] + prior);
    }
  }
  Progress quiet(nullptr);
  lik->run_chains(pointers, opt, seed, quiet);
  // Each ladder's stepping stones over its kept ln L (host threads).
  std::vector<CountEvidence> evidence(stars.size());
  host_for(
      "kosmos::kepler::evidence::stepping_stones", stars.size(),
      [&](const std::size_t s) {
        CountEvidence& out = evidence[s];
        out.planets = stars[s].planets;
        out.trend = models[s * std::size_t(T)].L.n_trend;
        out.beta = beta;
        ladder_evidence(&fits[s * std::size_t(T)], n, out);
      },
      2);
  std::vector<TemperedRun> runs;
  for (std::size_t s = 0; s < stars.size(); ++s) {
    StarFit* ladder = &fits[s * std::size_t(T)];
    const Model& model = models[s * std::size_t(T)];
    TemperedRun run{std::move(evidence[s]), std::move(ladder[T - 1])};
    run.cold.evaluations = lik->evaluations / (long long)stars.size();  // the shared launches
    run.cold.model = std::make_unique<Model>(model);
    run.cold.current = *stars[s].optimum;
    run.chains = n;
    runs.push_back(std::move(run));
  }
  return runs;
}
}  // namespace

std::vector<TemperedRun> tempered_runs_of_ladders(const std::vector<LadderStar>& stars,
                                                  const EvidenceOptions& ev,
                                                  std::mt19937_64& seed_source) {
  // Ladders of as many chains share the launches: a ladder's chain count, like its streams,
  // depends on its own model alone.
  std::vector<LadderModel> ladders;
  std::map<int, std::vector<std::size_t>> groups;
  for (std::size_t s = 0; s < stars.size(); ++s) {
    std::vector<BoundPrior> priors;
    Model model = ladder_model(*stars[s].data, *stars[s].opt, stars[s].planets, priors);
    groups[ladder_chain_count(model, *stars[s].opt, ev)].push_back(s);
    ladders.push_back({std::move(priors), std::move(model)});
  }
  const std::uint64_t seed = seed_source();
  std::vector<TemperedRun> runs(stars.size());
  for (const auto& group : groups) {
    std::vector<LadderStar> members;
    std::vector<const LadderModel*> models;
    for (std::size_t s : group.second) {
      members.push_back(stars[s]);
      models.push_back(&ladders[s]);
    }
    auto group_runs = tempered_runs_of_group(members, models, ev, seed, group.first);
    for (std::size_t k = 0; k < group.second.size(); ++k)
      runs[group.second[k]] = std::move(group_runs[k]);
  }
  return runs;
}

void check_evidence_options(const RVData& data, const SearchOptions& opt,
                            const EvidenceOptions& ev) {
  kosmos::Impl::require(data.size() >= 2 && data.baseline() > 0, kWhere,
                        "need observations spanning some time");
  kosmos::Impl::require(
      ev.temperatures >= 3 && ev.ladder_power > 0 && ev.log_odds_threshold >= 0 &&
          ev.importance_draws >= 256,
      kWhere, "temperatures = ", ev.temperatures, ", ladder_power = ", ev.ladder_power,
      ", log_odds_threshold = ", ev.log_odds_threshold,
      ", importance_draws = ", ev.importance_draws, ": need >= 3, > 0, >= 0 and >= 256");
  kosmos::Impl::require(ev.ladder_chains >= 0 && ev.ladder_chains % 2 == 0, kWhere,
                        "ladder_chains = ", ev.ladder_chains, ": need an even count >= 0");
  kosmos::Impl::require(
      opt.planets >= 0 && opt.planets <= kMaxPlanets && opt.min_planets < opt.planets, kWhere,
      "planets = ", opt.planets, ", min_planets = ", opt.min_planets);
  kosmos::Impl::require(opt.steps >= 4 * opt.thin && opt.burn >= 0, kWhere, "steps = ", opt.steps,
                        " with thin = ", opt.thin, " keeps under 4 samples per chain");
}

// One star: the optimization stages of counts first..opt.planets at opt.trend, then each count's
// tempered run.
std::vector<TemperedRun> tempered_runs(const RVData& data, const SearchOptions& opt,
                                       const EvidenceOptions& ev, std::mt19937_64& rng,
                                       StarFit& star, Progress& progress) {
  const int first = opt.min_planets >= 0 ? opt.min_planets : opt.planets;
  SearchOptions all = opt;
  all.min_planets = first < opt.planets ? first : -1;
  star.data = &data;
  optimize_star(star, all, rng, progress);
  std::vector<TemperedRun> runs;
  for (int c = first; c <= opt.planets; ++c) {
    const LadderStar ladder{&data, &opt, &star.optimum_of_count[std::size_t(c)], &rng, -1, c};
    runs.push_back(std::move(tempered_runs_of_ladders({ladder}, ev, rng)[0]));
    std::ostringstream m;
    m << "evidence: " << c << " planet(s), trend " << opt.trend << ": ln Z = " << std::fixed
      << std::setprecision(2) << runs.back().evidence.ln_z << " +- "
      << runs.back().evidence.ln_z_error;
    progress.message(m.str());
  }
  return runs;
}

std::size_t preferred_index(const std::vector<CountEvidence>& counts, const std::vector<double>& z,
                            double log_odds_threshold) {
  // The largest ln Z less twice its error: a simpler model within the threshold of it (counted
  // with twice its own error) is preferred; an uncertain evidence keeps the simpler model.
  double top_low = -HUGE_VAL;
  for (std::size_t i = 0; i < counts.size(); ++i)
    top_low = std::max(top_low, z[i] - 2 * counts[i].ln_z_error);
  std::size_t best = counts.size();
  for (std::size_t i = 0; i < counts.size(); ++i)
    if (z[i] + 2 * counts[i].ln_z_error >= top_low - log_odds_threshold &&
        (best == counts.size() || counts[i].planets < counts[best].planets ||
         (counts[i].planets == counts[best].planets && counts[i].trend < counts[best].trend)))
      best = i;
  return best;
}

void choose(EvidenceResult& result, const EvidenceOptions& ev, int largest_count) {
  double top = -HUGE_VAL;
  for (const auto& c : result.counts) top = std::max(top, c.ln_z);
  double norm = 0;
  for (const auto& c : result.counts) norm += std::exp(c.ln_z - top);
  for (auto& c : result.counts) c.probability = std::exp(c.ln_z - top) / norm;
  std::vector<double> z;
  for (const auto& c : result.counts) z.push_back(c.ln_z);
  const CountEvidence* best =
      &result.counts[preferred_index(result.counts, z, ev.log_odds_threshold)];
  result.preferred = best->planets;
  result.preferred_trend = best->trend;
  result.top_of_range = best->planets == largest_count && result.counts.size() > 1 &&
                        result.counts.front().planets < largest_count;
  std::ostringstream rule;
  rule << "the fewest planets (then the lowest trend order) whose ln Z + 2 sigma is within "
       << ev.log_odds_threshold << " of the largest ln Z - 2 sigma (ln odds; equal prior odds)";
  result.rule = rule.str();
}

std::vector<Prior> evidence_default_priors(const RVData& data, const SearchOptions& options) {
  std::vector<Prior> out;
  const double v_min = *std::min_element(data.velocity.begin(), data.velocity.end());
  const double v_max = *std::max_element(data.velocity.begin(), data.velocity.end());
  const double range = v_max - v_min + 10 * *std::max_element(data.sigma.begin(), data.sigma.end());
  const double span = data.baseline();
  auto given = [&](const std::string& name) {
    return std::any_of(options.priors.begin(), options.priors.end(),
                       [&](const Prior& p) { return p.parameter == name; });
  };
  auto add = [&](const std::string& name, double lower, double upper) {
    if (given(name)) return;
    std::ostringstream spec;
    spec << std::setprecision(10) << name << " uniform " << lower << " " << upper;
    out.push_back(parse_prior(spec.str(), kWhere));
  };
  for (int i = 0; i < data.n_instruments(); ++i) {
    double sw = 0, swv = 0;
    for (std::size_t k = 0; k < data.size(); ++k)
      if (data.instrument[k] == i) {
        sw += 1 / (data.sigma[k] * data.sigma[k]);
        swv += data.velocity[k] / (data.sigma[k] * data.sigma[k]);
      }
    add("gamma_" + data.instrument_names[std::size_t(i)], swv / sw - range, swv / sw + range);
  }
  if (options.trend != 0) add("dvdt", -2 * range / span, 2 * range / span);
  if (options.trend == kAutoTrend || options.trend == 2)
    add("curv", -8 * range / (span * span), 8 * range / (span * span));
  return out;
}

void prepare_tempered_posterior(StarFit& cold, const SearchResult& optimization,
                                long long evaluations,
                                std::chrono::steady_clock::time_point start) {
  SearchResult result = optimization;
  result.sample_chain = std::move(cold.result.sample_chain);
  result.comparison.clear();
  result.comparison_rule.clear();
  result.planets = cold.model->L.n_pl;
  result.n_free = cold.model->n_free();
  cold.result = std::move(result);
  cold.start = start;
  cold.evaluations = evaluations;
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

const CountEvidence& EvidenceResult::get(int planets, int trend) const {
  for (const auto& c : counts)
    if (c.planets == planets && c.trend == trend) return c;
  throw invalid_input("kosmos::kepler::EvidenceResult::get: no model of " +
                      std::to_string(planets) + " planet(s) and trend " + std::to_string(trend));
}

EvidenceResult planet_count_evidence(const RVData& data, const SearchOptions& opt,
                                     const EvidenceOptions& ev) {
  using namespace Impl;
  const auto start = std::chrono::steady_clock::now();
  check_evidence_options(data, opt, ev);
  kosmos::Impl::require(opt.trend >= 0 && opt.trend <= 2, kWhere, "trend = ", opt.trend,
                        " (kAutoTrend: select_model)");
  std::mt19937_64 rng(opt.seed);
  EvidenceResult result;
  StarFit star;
  Progress progress(opt.progress);
  for (auto& run : tempered_runs(data, opt, ev, rng, star, progress))
    result.counts.push_back(run.evidence);
  choose(result, ev, opt.planets);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

ModelSelection select_model(const RVData& data, const SearchOptions& options,
                            const EvidenceOptions& ev) {
  using namespace Impl;
  kosmos::Impl::ScopedRegion region("kosmos::kepler::select_model");
  const auto start = std::chrono::steady_clock::now();
  check_evidence_options(data, options, ev);
  kosmos::Impl::require(options.trend >= kAutoTrend && options.trend <= 2, kWhere,
                        "trend = ", options.trend, " is not 0, 1, 2 or kAutoTrend");
  ModelSelection out;
  SearchOptions opt = options;
  // Proper priors on the offsets and trend where the user gave none.
  out.evidence.default_priors = evidence_default_priors(data, options);
  std::vector<int> trends;
  if (options.trend == kAutoTrend)
    trends = {0, 1, 2};
  else
    trends = {options.trend};
  std::mt19937_64 rng(opt.seed);
  Progress progress(opt.progress);
  std::vector<TemperedRun> runs;
  std::vector<StarFit> stars(trends.size());  // the optimization stages' results per trend
  std::vector<SearchOptions> trend_options;
  for (std::size_t q = 0; q < trends.size(); ++q) {
    SearchOptions o = opt;
    o.trend = trends[q];
    for (const auto& p : out.evidence.default_priors)
      if ((p.parameter != "dvdt" || o.trend >= 1) && (p.parameter != "curv" || o.trend >= 2))
        o.priors.push_back(p);
    trend_options.push_back(o);
    for (auto& run : tempered_runs(data, o, ev, rng, stars[q], progress)) {
      out.evidence.counts.push_back(run.evidence);
      runs.push_back(std::move(run));
    }
  }
  choose(out.evidence, ev, opt.planets);
  std::size_t chosen = 0;
  while (out.evidence.counts[chosen].planets != out.evidence.preferred ||
         out.evidence.counts[chosen].trend != out.evidence.preferred_trend)
    ++chosen;
  std::size_t q = 0;
  while (trends[q] != out.evidence.preferred_trend) ++q;
  long long evaluations = 0;  // every model's optimization and tempered run
  for (const auto& run : runs) evaluations += run.cold.evaluations;
  for (const auto& star : stars) evaluations += star.evaluations;
  StarFit& cold = runs[chosen].cold;
  prepare_tempered_posterior(cold, stars[q].result, evaluations, start);
  SearchOptions cold_options = trend_options[q];
  cold_options.chains = runs[chosen].chains;
  choose_map(cold, cold_options, true);
  finish_star(cold, cold_options, rng);
  out.posterior = std::move(cold.result);
  out.evidence.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}
}  // namespace kepler
}  // namespace kosmos
