// Survey mode: many stars optimized together (optimize_stars) or one at a time, then one DE-MCMC
// for all of them, whatever their planet counts, in shared kernel launches; survey_from starts
// that DE-MCMC from given models.
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/impl/de_mcmc.hpp>
#include <kosmos/kepler/impl/noise_model.hpp>
#include <kosmos/kepler/impl/search_stages.hpp>
#include <kosmos/kepler/impl/survey_search.hpp>
#include <kosmos/kepler/impl/warnings.hpp>

#include <kosmos/core/threads.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

namespace kosmos {
namespace kepler {
namespace Impl {
// Each star's summaries (finish_star) on helper threads while the caller goes on (the next
// extension round or planet count), as background work that yields to the thread driving the
// device (summaries use no Kokkos). Stars queue as their samples become final; wait() finishes the
// queue and rethrows the first exception a star raised.
class BackgroundSummaries {
 public:
  explicit BackgroundSummaries(const SearchOptions& opt) : opt_(opt) {}
  BackgroundSummaries(const BackgroundSummaries&) = delete;
  BackgroundSummaries& operator=(const BackgroundSummaries&) = delete;

  // Queues the stars (with their generators); the first call starts the helper threads.
  void add(const std::vector<StarFit*>& fits, std::vector<std::mt19937_64> rng) {
    auto batch = std::make_unique<Batch>();
    batch->fits = fits;
    batch->rng = std::move(rng);
    batch->left = fits.size();
    batch->start = std::chrono::steady_clock::now();
    {
      const std::lock_guard<std::mutex> lock(lock_);
      for (std::size_t s = 0; s < fits.size(); ++s) queue_.push_back({batch.get(), s});
      batches_.push_back(std::move(batch));
    }
    changed_.notify_all();
    if (pool_.empty()) {
      const int workers = std::max(1, Kokkos::DefaultHostExecutionSpace().concurrency() - 1);
      for (int w = 0; w < workers; ++w)
        pool_.push_back(kosmos::Impl::start_helper_thread([this] { work(); }));
    }
  }

  void wait() {
    close();
    if (error_) std::rethrow_exception(error_);
  }

  ~BackgroundSummaries() { close(); }

 private:
  struct Batch {
    std::vector<StarFit*> fits;
    std::vector<std::mt19937_64> rng;
    std::size_t left = 0;  // stars not yet summarized (under lock_)
    std::chrono::steady_clock::time_point start;
  };

  void close() {
    {
      const std::lock_guard<std::mutex> lock(lock_);
      closed_ = true;
    }
    changed_.notify_all();
    for (auto& t : pool_) t.join();
    pool_.clear();
  }

  void work() {
    kosmos::Impl::run_as_background();
    for (;;) {
      std::pair<Batch*, std::size_t> item;
      {
        std::unique_lock<std::mutex> lock(lock_);
        changed_.wait(lock, [&] { return closed_ || !queue_.empty(); });
        if (queue_.empty()) return;  // closed and done
        item = queue_.front();
        queue_.pop_front();
      }
      Batch& batch = *item.first;
      try {
        finish_star(*batch.fits[item.second], opt_, batch.rng[item.second]);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(lock_);
        if (!error_) error_ = std::current_exception();
      }
      const std::lock_guard<std::mutex> lock(lock_);
      if (--batch.left == 0) {  // the batch's wall, from its queueing to its last star
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - batch.start).count();
        for (StarFit* fit : batch.fits) fit->result.sampler_timing.summaries = seconds;
      }
    }
  }

  const SearchOptions& opt_;
  std::mutex lock_;
  std::condition_variable changed_;
  std::deque<std::pair<Batch*, std::size_t>> queue_;
  std::vector<std::unique_ptr<Batch>> batches_;
  bool closed_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> pool_;
};

// The DE-MCMC of many prepared stars of one planet count in shared launches (extended for stars
// not converged); each star, once its samples are final, gets its MAP (choose_maps, here: it
// launches kernels) and goes to the background summaries with a generator from its own stream
// (or drawn from rng).
void sample_group(const std::vector<StarFit*>& fits, const SearchOptions& opt, std::mt19937_64& rng,
                  Progress& progress, bool refine, BackgroundSummaries& background) {
  {
    auto lik = stars_likelihood(fits, opt);
    sample_stars(fits, *lik, opt, rng, progress);
    for (StarFit* fit : fits)
      fit->evaluations += lik->evaluations / (long long)fits.size();  // the shared launches, evenly
  }
  // One draw for the extension rounds whatever their number, then the stars' generators: a
  // star's numbers do not depend on the stars beside it, on this rank or another.
  const std::uint64_t extension_seed = rng();
  std::vector<std::mt19937_64> star_rng(fits.size());
  for (std::size_t s = 0; s < fits.size(); ++s)
    star_rng[s].seed(fits[s]->stream < 0 ? rng() : fits[s]->stream_rng());
  extend_unconverged(fits, opt, extension_seed, progress, [&](const std::vector<std::size_t>& done) {
    std::vector<StarFit*> done_fits;
    std::vector<std::mt19937_64> done_rng;
    for (const std::size_t s : done) {
      done_fits.push_back(fits[s]);
      done_rng.push_back(star_rng[s]);
    }
    choose_maps(done_fits, opt, refine);
    background.add(done_fits, std::move(done_rng));
  });
}

bool optimize_survey(std::vector<StarFit>& fits, const std::vector<RVData>& stars,
                     const SearchOptions& opt, long long first_star, std::mt19937_64& rng,
                     Progress& progress) {
  for (std::size_t s = 0; s < stars.size(); ++s) {
    fits[s].data = &stars[s];
    fits[s].stream = first_star + (long long)s;
    fits[s].stream_rng.seed(mix64(opt.seed ^ mix64(std::uint64_t(fits[s].stream))));
  }
  if (batched_search_supports(opt)) {
    optimize_stars(fits, opt, rng(), progress);
    return true;
  }
  Progress quiet(nullptr);
  for (std::size_t s = 0; s < stars.size(); ++s) {
    try {
      optimize_star(fits[s], opt, fits[s].stream_rng, quiet);
    } catch (const kosmos::invalid_input& e) {  // which star of the survey
      throw kosmos::invalid_input(stars[s].path + ": " + e.what());
    }
    std::ostringstream m;
    m << "optimized " << s + 1 << "/" << stars.size() << ": " << stars[s].path;
    progress.message(m.str());
  }
  return false;
}

std::vector<SearchResult> sample_together(const std::vector<StarFit*>& fits,
                                          const SearchOptions& opt, Progress& progress,
                                          bool refine) {
  BackgroundSummaries background(opt);
  int fewest = kMaxPlanets, most = 0;
  for (const StarFit* fit : fits) {
    fewest = std::min(fewest, fit->model->L.n_pl);
    most = std::max(most, fit->model->L.n_pl);
  }
  std::ostringstream m;
  m << "sampling " << fits.size() << " star(s) with " << fewest;
  if (most > fewest) m << " to " << most;
  m << " planet(s) together";
  progress.message(m.str());
  std::mt19937_64 rng(mix64(opt.seed ^ mix64(0x636f756e74ULL)));
  sample_group(fits, opt, rng, progress, refine, background);
  background.wait();
  std::vector<SearchResult> out;
  for (StarFit* fit : fits) out.push_back(std::move(fit->result));
  return out;
}
}  // namespace Impl

std::vector<SearchResult> survey(const std::vector<RVData>& stars, const SearchOptions& opt,
                                 long long first_star) {
  using namespace Impl;
  kosmos::Impl::ScopedRegion region("kosmos::kepler::survey");
  kosmos::Impl::require(!stars.empty(), "kosmos::kepler::survey", "no stars");
  kosmos::Impl::require(first_star >= 0, "kosmos::kepler::survey", "first_star = ", first_star,
                        " < 0");
  Progress progress(opt.progress);
  std::mt19937_64 rng(opt.seed);
  std::vector<StarFit> fits(stars.size());
  const auto start = std::chrono::steady_clock::now();
  const bool batched = optimize_survey(fits, stars, opt, first_star, rng, progress);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // batched: the MAP is the batched polish's optimum or a better sample (no per-star polish
  // after sampling)
  auto results = sample_together(pointers(fits), opt, progress, !batched);
  for (auto& r : results) r.sampler_timing.optimization = seconds;
  return results;
}

std::vector<SearchResult> survey_from(const std::vector<RVData>& stars,
                                      const std::vector<StartModel>& starts,
                                      const SearchOptions& opt) {
  using namespace Impl;
  constexpr const char* where = "kosmos::kepler::survey_from";
  kosmos::Impl::ScopedRegion region(where);
  kosmos::Impl::require(!stars.empty() && starts.size() == stars.size(), where, stars.size(),
                        " stars and ", starts.size(), " starting models");
  require_extension_options(opt, where);
  Progress progress(opt.progress);
  std::vector<StarFit> fits(stars.size());
  for (std::size_t s = 0; s < stars.size(); ++s) {
    const RVData& d = stars[s];
    const StartModel& st = starts[s];
    StarFit& fit = fits[s];
    fit.data = &d;
    fit.start = std::chrono::steady_clock::now();
    fit.epoch = opt.epoch != 0 ? opt.epoch : d.mid_time();
    fit.baseline = d.baseline();
    const double p_max = opt.period_max > 0 ? opt.period_max : 2 * fit.baseline;
    const PriorBounds bounds{std::log(opt.period_min), std::log(p_max), opt.k_max, opt.e_max,
                             opt.jitter_max};
    const int n_pl = int(st.orbits.size());
    kosmos::Impl::require(st.offsets.size() == std::size_t(d.n_instruments()) &&
                              st.jitters.size() == std::size_t(d.n_instruments()) &&
                              st.trend.size() == std::size_t(opt.trend),
                          where, "star ", s,
                          ": the start needs one offset and jitter per instrument and ", opt.trend,
                          " trend coefficient(s)");
    const auto noise = extra_parameters(d, opt);
    const auto bound_priors = bind_priors(opt.priors, d.instrument_names, n_pl, opt.trend, noise);
    fit.model = std::make_unique<Model>(ParamLayout{n_pl, d.n_instruments(), opt.trend}, bounds,
                                        fit.epoch, bound_priors, noise);
    append(fit.result.warnings, truncated_prior_warnings(bound_priors, opt.period_min, p_max, opt));
    append(fit.result.warnings, unit_warnings(d));
    const ParamLayout& L = fit.model->L;
    fit.current.assign(L.dim(), 0.0);
    for (int j = 0; j < n_pl; ++j)
      fit.model->set_orbit(fit.current.data(), j, st.orbits[std::size_t(j)]);
    for (int i = 0; i < L.n_inst; ++i) {
      fit.current[L.gamma(i)] = st.offsets[std::size_t(i)];
      fit.current[L.jitter(i)] = st.jitters[std::size_t(i)];
    }
    for (int i = 0; i < L.n_trend; ++i) fit.current[L.trend(i)] = st.trend[std::size_t(i)];
    for (int i = 0; i < L.n_extra(); ++i) fit.current[L.noise(i)] = noise[std::size_t(i)].start;
    fit.model->apply_fixed(fit.current.data());
    kosmos::Impl::require(fit.model->log_prior(fit.current.data()) > kNegInf, where, "star ", s,
                          ": the starting model lies outside the prior");
    fit.result.epoch = fit.epoch;
    fit.result.n_obs = int(d.size());
    fit.result.trend = opt.trend;
    fit.result.planets = n_pl;
    fit.result.instruments = d.instrument_names;
    fit.result.n_free = fit.model->n_free();
    kosmos::Impl::require(opt.chains >= 2 * fit.result.n_free + 2 && opt.chains % 2 == 0, where,
                          "chains = ", opt.chains,
                          " must be even and >= 2 x parameters + 2 = ", 2 * fit.result.n_free + 2);
  }
  return sample_together(pointers(fits), opt, progress, false);
}
}  // namespace kepler
}  // namespace kosmos
