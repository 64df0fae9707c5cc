// A survey's planet counts by evidence (survey_evidence): the survey's optimization stages; every
// star's counts by importance sampling, which decide the stars they can; the other stars' ladders
// of temperatures, whatever their counts, in the same kernel launches; ln Z per (star, count), each
// star's count by select_model's rule and its posterior.
#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/impl/de_mcmc.hpp>
#include <kosmos/kepler/impl/evidence.hpp>
#include <kosmos/kepler/impl/survey_search.hpp>

#include <chrono>
#include <cstdint>
#include <sstream>

namespace kosmos {
namespace kepler {
std::vector<ModelSelection> survey_evidence(const std::vector<RVData>& stars,
                                            const SearchOptions& options, const EvidenceOptions& ev,
                                            long long first_star) {
  using namespace Impl;
  constexpr const char* where = "kosmos::kepler::survey_evidence";
  kosmos::Impl::ScopedRegion region(where);
  const auto start = std::chrono::steady_clock::now();
  kosmos::Impl::require(!stars.empty(), where, "no stars");
  kosmos::Impl::require(first_star >= 0, where, "first_star = ", first_star, " < 0");
  kosmos::Impl::require(options.trend >= 0 && options.trend <= 2, where, "trend = ", options.trend,
                        ": a survey compares planet counts at one trend order (0, 1 or 2)");
  const int first = options.min_planets >= 0 ? options.min_planets : options.planets;
  // Each star's proper priors (select_model's defaults from its own data); the checks of every
  // star's runs before any work.
  std::vector<ModelSelection> out(stars.size());
  std::vector<SearchOptions> star_options(stars.size(), options);
  for (std::size_t s = 0; s < stars.size(); ++s) {
    try {
      check_evidence_options(stars[s], options, ev);
      out[s].evidence.default_priors = evidence_default_priors(stars[s], options);
      for (const auto& p : out[s].evidence.default_priors) star_options[s].priors.push_back(p);
      for (int c = first; c <= options.planets; ++c)
        check_ladder_model(stars[s], star_options[s], c);
    } catch (const kosmos::invalid_input& e) {  // which star of the survey
      throw kosmos::invalid_input(stars[s].path + ": " + e.what());
    }
  }
  SearchOptions all = options;  // the optimization stages fit every count compared
  all.min_planets = first < options.planets ? first : -1;
  Progress progress(options.progress);
  std::mt19937_64 rng(options.seed);
  std::vector<StarFit> fits(stars.size());
  const bool batched = optimize_survey(fits, stars, all, first_star, rng, progress);
  EvidenceResult::StageSeconds stages;
  auto lap = [clock = start]() mutable {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - clock).count();
    clock = now;
    return seconds;
  };
  stages.optimization = lap();
  auto ladders_of = [&](const std::vector<std::size_t>& which, int c) {
    std::vector<LadderStar> ladders;
    for (std::size_t s : which)
      ladders.push_back({&stars[s], &star_options[s], &fits[s].optimum_of_count[std::size_t(c)],
                         &fits[s].stream_rng, fits[s].stream, c});
    return ladders;
  };
  std::vector<std::size_t> every(stars.size());
  for (std::size_t s = 0; s < stars.size(); ++s) every[s] = s;

  // 1. Screening: every star's counts by importance sampling; the stars they decide keep that
  // count and sample only its posterior.
  const int n_counts = options.planets - first + 1;
  std::vector<std::size_t> screened, laddered;
  std::vector<std::string> why(stars.size());
  std::vector<std::vector<ImportanceRun>> estimates(stars.size());
  if (ev.screen_by_importance) {
    for (int c = first; c <= options.planets; ++c) {
      auto runs =
          importance_runs_of_count(ladders_of(every, c), ev, c,
                                   mix64(options.seed ^ mix64(0x15000000ULL + std::uint64_t(c))));
      for (std::size_t s = 0; s < stars.size(); ++s) {
        if (!runs[s].usable && why[s].empty())
          why[s] = std::to_string(c) + " planet(s): " + runs[s].reason;
        estimates[s].push_back(std::move(runs[s]));
      }
    }
    for (std::size_t s = 0; s < stars.size(); ++s) {
      EvidenceResult& z = out[s].evidence;
      if (why[s].empty() && !importance_decides(estimates[s], ev.log_odds_threshold))
        why[s] = "the importance estimates do not decide the count";
      if (why[s].empty()) {
        for (const auto& run : estimates[s]) z.counts.push_back(run.evidence);
        choose(z, ev, options.planets);
        z.decided_by = "importance";
        screened.push_back(s);
      } else {
        laddered.push_back(s);
      }
    }
    std::ostringstream m;
    m << "evidence: importance sampling decided " << screened.size() << " of " << stars.size()
      << " star(s)";
    progress.message(m.str());
  } else {
    laddered = every;
  }
  stages.importance = lap();

  // 2. The other stars' ladders, all their counts' temperatures in the same launches: first only
  // the counts whose importance estimate is missing (every count with planets where the estimates
  // exist but their margins leave the count open). A star that its ladders and its other counts'
  // estimates (margins included) then decide keeps that count and samples its posterior; the others
  // also ladder every count left but one estimated with no margin.
  std::vector<std::vector<TemperedRun>> runs(stars.size());
  for (auto& star_runs : runs) star_runs.resize(std::size_t(n_counts));
  std::vector<std::vector<char>> has_ladder(stars.size(), std::vector<char>(n_counts, 0));
  std::vector<std::vector<char>> needs(stars.size(), std::vector<char>(n_counts, 0));
  // Count i of star s: its ladder's ln Z (usable, no margin) where it has one, else its estimate.
  auto combined_run = [&](std::size_t s, int i) {
    if (!has_ladder[s][std::size_t(i)]) return estimates[s][std::size_t(i)];
    ImportanceRun run;
    run.evidence = runs[s][std::size_t(i)].evidence;
    run.usable = true;
    return run;
  };
  auto estimated_without_margin = [&](std::size_t s, int i) {
    return !estimates[s].empty() && estimates[s][std::size_t(i)].usable &&
           estimates[s][std::size_t(i)].margins.empty();
  };
  // Every ladder a pass needs (a star's counts in ascending order) in the same launches; the
  // device streams keyed on the seed and the pass only (each ladder's own by its star's index in
  // the survey and its count), so every part of a survey draws the same.
  auto ladder_needed = [&](int pass) {
    std::vector<std::size_t> which;
    std::vector<LadderStar> ladders;
    int fewest = options.planets, most = first;
    for (std::size_t s : laddered)
      for (int i = 0; i < n_counts; ++i)
        if (needs[s][std::size_t(i)] && !has_ladder[s][std::size_t(i)]) {
          which.push_back(s);
          ladders.push_back(ladders_of({s}, first + i).front());
          fewest = std::min(fewest, first + i);
          most = std::max(most, first + i);
        }
    if (ladders.empty()) return;
    std::mt19937_64 seed_source(
        mix64(options.seed ^ mix64(0x5eed0000ULL + 0x10000ULL * std::uint64_t(pass))));
    auto ladder_runs = tempered_runs_of_ladders(ladders, ev, seed_source);
    for (std::size_t k = 0; k < ladders.size(); ++k) {
      const std::size_t i = std::size_t(ladders[k].planets - first);
      runs[which[k]][i] = std::move(ladder_runs[k]);
      has_ladder[which[k]][i] = 1;
    }
    std::ostringstream m;
    m << "evidence: " << ladders.size() << " ladder(s) of " << fewest;
    if (most > fewest) m << " to " << most;
    m << " planet(s) x " << ev.temperatures << " temperatures sampled together";
    progress.message(m.str());
  };
  for (std::size_t s : laddered) {
    bool any_missing = false;
    for (int i = 0; i < n_counts && !estimates[s].empty(); ++i)
      any_missing = any_missing || !estimates[s][std::size_t(i)].usable;
    for (int i = 0; i < n_counts; ++i)
      needs[s][std::size_t(i)] =
          estimates[s].empty() ||
          (any_missing ? !estimates[s][std::size_t(i)].usable : first + i > 0);
  }
  ladder_needed(0);
  std::vector<std::size_t> fully_laddered;
  for (std::size_t s : laddered) {
    EvidenceResult& z = out[s].evidence;
    bool mixed = false;
    std::vector<ImportanceRun> combined;
    for (int i = 0; i < n_counts; ++i) {
      mixed = mixed || !has_ladder[s][std::size_t(i)];
      combined.push_back(combined_run(s, i));
    }
    if (mixed && importance_decides(combined, ev.log_odds_threshold)) {
      for (const auto& run : combined) z.counts.push_back(run.evidence);
      choose(z, ev, options.planets);
      z.decided_by = "importance and ladder: " + why[s];
      screened.push_back(s);
      continue;
    }
    for (int i = 0; i < n_counts; ++i) needs[s][std::size_t(i)] = !estimated_without_margin(s, i);
    fully_laddered.push_back(s);
  }
  laddered = fully_laddered;
  ladder_needed(1);

  stages.ladders = lap();
  // The stars whose preferred count has a ladder take its beta = 1 chains as their posterior;
  // the others (their count estimated by importance alone) sample it below.
  std::vector<std::size_t> with_cold;
  for (const std::size_t s : laddered) {
    EvidenceResult& z = out[s].evidence;
    for (int i = 0; i < n_counts; ++i) z.counts.push_back(combined_run(s, i).evidence);
    choose(z, ev, options.planets);
    z.decided_by = ev.screen_by_importance ? "ladder: " + why[s] : "ladder";
    if (has_ladder[s][std::size_t(z.preferred - first)])
      with_cold.push_back(s);
    else
      screened.push_back(s);
  }

  // 3. The screened stars' posteriors: their count's beta = 1 chains, as survey() samples them.
  std::vector<StarFit*> sampled;
  for (std::size_t s : screened) {
    StarFit& fit = fits[s];
    const int preferred = out[s].evidence.preferred;
    std::vector<BoundPrior> priors;
    fit.model = std::make_unique<Model>(ladder_model(stars[s], star_options[s], preferred, priors));
    fit.current = fit.optimum_of_count[std::size_t(preferred)];
    fit.result.planets = preferred;
    fit.result.n_free = fit.model->n_free();
    fit.result.comparison.clear();
    fit.result.comparison_rule.clear();
    sampled.push_back(&fit);
  }
  if (!sampled.empty()) {
    auto posteriors = sample_together(sampled, options, progress, !batched);
    for (std::size_t i = 0; i < screened.size(); ++i)
      out[screened[i]].posterior = std::move(posteriors[i]);
  }
  stages.posteriors = lap();

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (std::size_t s : every) out[s].evidence.seconds = seconds / double(stars.size());
  laddered = with_cold;
  std::vector<StarFit*> colds;
  std::vector<SearchOptions> cold_options;  // with the ladders' chain count
  for (const std::size_t s : laddered) {
    EvidenceResult& z = out[s].evidence;
    long long evaluations = fits[s].evaluations;
    for (int i = 0; i < n_counts; ++i)
      if (has_ladder[s][std::size_t(i)]) evaluations += runs[s][std::size_t(i)].cold.evaluations;
    TemperedRun& run = runs[s][std::size_t(z.preferred - first)];
    StarFit& cold = run.cold;
    cold_options.push_back(star_options[s]);
    cold_options.back().chains = run.chains;
    // chain 0 started at the optimum: the MAP unless a sample beats it
    cold.start_lnpost = cold.lnpost[0];
    prepare_tempered_posterior(cold, fits[s].result, evaluations, start);
    colds.push_back(&cold);
  }
  choose_maps(colds, options, !batched);
  auto finish = [&](const std::size_t i) {
    const std::size_t s = laddered[i];
    finish_star(*colds[i], cold_options[i], fits[s].stream_rng);
    out[s].posterior = std::move(colds[i]->result);
  };
  host_for("kosmos::kepler::survey_evidence::finish", laddered.size(), finish, 2);
  stages.summaries = lap();
  for (auto& selection : out) selection.evidence.survey_stages = stages;
  return out;
}
}  // namespace kepler
}  // namespace kosmos
