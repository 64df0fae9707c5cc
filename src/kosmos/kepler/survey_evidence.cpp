// A survey's planet counts by evidence (survey_evidence): the survey's optimization stages, then
// per planet count every star's ladder of temperatures in the same kernel launches, ln Z per
// (star, count), each star's count by select_model's rule and its posterior.
#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/core/validation.hpp>
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
  std::vector<std::vector<TemperedRun>> runs(stars.size());
  for (int c = first; c <= options.planets; ++c) {
    std::vector<LadderStar> ladders;
    for (std::size_t s = 0; s < stars.size(); ++s)
      ladders.push_back({&stars[s], &star_options[s], &fits[s].optimum_of_count[std::size_t(c)],
                         &fits[s].stream_rng, fits[s].stream});
    // The device streams of count c: keyed on the seed and the count only (each star's own by its
    // index in the survey), so every part of a survey draws the same.
    std::mt19937_64 seed_source(mix64(options.seed ^ mix64(0x5eed0000ULL + std::uint64_t(c))));
    auto count_runs = tempered_runs_of_count(ladders, ev, c, seed_source);
    for (std::size_t s = 0; s < stars.size(); ++s) runs[s].push_back(std::move(count_runs[s]));
    std::ostringstream m;
    m << "evidence: " << c << " planet(s): " << stars.size() << " star(s) x " << ev.temperatures
      << " temperatures sampled together";
    progress.message(m.str());
  }

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto finish = [&](const std::size_t s) {
    EvidenceResult& z = out[s].evidence;
    long long evaluations = fits[s].evaluations;
    for (auto& run : runs[s]) {
      z.counts.push_back(run.evidence);
      evaluations += run.cold.evaluations;
    }
    choose(z, ev, options.planets);
    z.seconds = seconds / double(stars.size());  // its share of the shared launches
    StarFit& cold = runs[s][std::size_t(z.preferred - first)].cold;
    // chain 0 started at the optimum: the MAP unless a sample beats it
    cold.start_lnpost = cold.lnpost[0];
    cold.start_lnlike = cold.lnlike[0];
    out[s].posterior = tempered_posterior(cold, fits[s].result, evaluations, start, star_options[s],
                                          fits[s].stream_rng, !batched);
  };
  for_each_star("kosmos::kepler::survey_evidence::finish", stars.size(), finish, !batched);
  return out;
}
}  // namespace kepler
}  // namespace kosmos
