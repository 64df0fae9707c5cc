// White noise + per-instrument jitter: the batched chi^2 kernels of chi2.hpp (Gaussian
// likelihood with variance sigma^2 + s^2 per observation).
#include <kosmos/kepler/chi2.hpp>
#include <kosmos/kepler/impl/de_mcmc.hpp>
#include <kosmos/kepler/impl/noise_model.hpp>
#include <kosmos/kepler/impl/sampler_driver.hpp>

#include <algorithm>
#include <map>

namespace kosmos {
namespace kepler {
namespace Impl {
template <class Precision, class Space>
class BatchLikelihood : public Likelihood {
 public:
  // models[s] with observations [begin[s], begin[s] + count[s]) of obs; one star: all of them.
  BatchLikelihood(const HostObservations& obs, std::vector<Model> models, std::vector<int> begin,
                  std::vector<int> count, const Chi2Options& options)
      : models_(std::move(models)),
        begin_(std::move(begin)),
        count_(std::move(count)),
        evaluator_(Space(), observations(obs), options) {
    for (const auto& m : models_) {
      n_pl_ = std::max(n_pl_, m.L.n_pl);  // stars of fewer planets: zero-amplitude rows
      n_inst_ = std::max(n_inst_, m.L.n_inst);
    }
    n_act_ = obs.n_act;  // the widest star's regressors (the others' padded with zeros)
  }

  static Observations<Space> observations(const HostObservations& obs) {
    Observations<Space> o(obs.t, obs.v, obs.sigma, obs.inst, obs.n_inst, obs.epoch);
    if (obs.n_act > 0) o.set_activity(obs.activity, obs.n_act);
    return o;
  }

  void evaluate_stars(const std::vector<const double*>& x, int rows, std::vector<double>& logpost,
                      std::vector<double>* loglike_out, std::vector<double>* chi2_out) override {
    const int n = int(models_.size()) * rows;
    Buffers& b = buffers(rows);
    auto& host = b.host;
    prior_.assign(n, 0.0);
    const Kokkos::DefaultHostExecutionSpace host_space;
    timed(host_space, timing.generation, [&] {
      host_for("kosmos::kepler::search::stage", std::size_t(n), [&](const std::size_t row) {
        const int r = int(row);
        const Model& model = models_[std::size_t(r / rows)];
        const ParamLayout& L = model.L;
        const double* xr = x[std::size_t(r / rows)] + std::size_t(r % rows) * L.dim();
        prior_[r] = model.log_prior(xr);
        model.stage(host, r, xr, prior_[r] > kNegInf);
      });
    });
    const Space space;
    timed(space, timing.transfers, [&] { host.copy_to(b.models); });
    timed(space, timing.likelihood, [&] { evaluator_.evaluate(b.models, b.chi2, b.ll); });
    Kokkos::View<double*, Kokkos::HostSpace> hl, hc;
    timed(space, timing.transfers, [&] {
      hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.ll);
      if (chi2_out) hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.chi2);
    });
    timed(host_space, timing.generation, [&] {
      logpost.resize(n);
      for (int r = 0; r < n; ++r)
        logpost[r] = prior_[r] > kNegInf && std::isfinite(hl(r)) ? hl(r) + prior_[r] : kNegInf;
      if (loglike_out) loglike_out->assign(hl.data(), hl.data() + n);
      if (chi2_out) chi2_out->assign(hc.data(), hc.data() + n);
    });
    evaluations += n;
  }

  void run_chains(const std::vector<StarFit*>& fits, const SearchOptions& opt, std::uint64_t seed,
                  Progress& progress) override {
    Buffers& b = buffers(opt.chains / 2);
    const Space space;
    run_de_mcmc<Space>(
        models_, fits, opt, seed, progress,
        [&](const DeMcmcChains<Space>& chains, int g, int part) {
          timed(space, timing.generation, [&] { chains.propose(g, part, b.models); });
          timed(space, timing.likelihood, [&] { evaluator_.evaluate(b.models, b.chi2, b.ll); });
          timed(space, timing.generation, [&] { chains.accept(g, part, b.ll); });
        });
  }

 private:
  // Device buffers per batch of `rows` rows per star (the DE population, Nelder-Mead's 1, 4 and
  // n + 1, a DE-MCMC half, ...).
  struct Buffers;
  Buffers& buffers(int rows) {
    const int n_stars = int(models_.size()), n = n_stars * rows;
    const ParamLayout& L0 = models_.front().L;
    Buffers& b = buffers_[rows];
    if (b.models.n_systems() != n) {
      // The survey layout also for one star: the same kernel (and sums) whatever the batch, and
      // on GPUs a system's observations spread over vector lanes.
      b.models = Models<Precision, Space>(n, n_pl_, n_inst_, L0.n_trend, n_act_);
      b.models.enable_observation_ranges();
      b.host = ModelsHostMirror<Precision, Space>(b.models);
      b.chi2 = Kokkos::View<double*, Space>("kosmos::kepler::search::chi2", n);
      b.ll = Kokkos::View<double*, Space>("kosmos::kepler::search::loglike", n);
      for (int r = 0; r < n; ++r) {
        b.host.obs_range(r, 0) = begin_[std::size_t(r / rows)];
        b.host.obs_range(r, 1) = count_[std::size_t(r / rows)];
      }
      // the ranges go to the device once; parameters are staged per batch
      Kokkos::deep_copy(b.models.obs_range, b.host.obs_range);
    }
    return b;
  }
  struct Buffers {
    Models<Precision, Space> models;
    ModelsHostMirror<Precision, Space> host;
    Kokkos::View<double*, Space> chi2, ll;
  };
  std::vector<Model> models_;
  std::vector<int> begin_, count_;
  int n_pl_ = 0, n_inst_ = 0, n_act_ = 0;
  Chi2Evaluator<Precision, Space> evaluator_;
  std::map<int, Buffers> buffers_;
  std::vector<double> prior_;
};

template <class Space>
std::unique_ptr<Likelihood> make_likelihood_on(const HostObservations& obs,
                                               std::vector<Model> models, std::vector<int> begin,
                                               std::vector<int> count, const SearchOptions& opt) {
  Chi2Options co;
  co.validate = false;  // every model is inside the prior (checked on the host)
  co.solver.solver = opt.solver;
  std::unique_ptr<Likelihood> lik;
  if (opt.mixed_precision)
    lik = std::make_unique<BatchLikelihood<Mixed, Space>>(obs, std::move(models), std::move(begin),
                                                          std::move(count), co);
  else
    lik = std::make_unique<BatchLikelihood<Double, Space>>(obs, std::move(models), std::move(begin),
                                                           std::move(count), co);
  lik->time_stages = opt.time_stages;
  return lik;
}
namespace {
std::unique_ptr<Likelihood> make_white_likelihood(const HostObservations& obs,
                                                  std::vector<Model> models, std::vector<int> begin,
                                                  std::vector<int> count,
                                                  const SearchOptions& opt) {
  if (opt.host_space)
    return make_likelihood_on<Kokkos::DefaultHostExecutionSpace>(
        obs, std::move(models), std::move(begin), std::move(count), opt);
  return make_likelihood_on<Kokkos::DefaultExecutionSpace>(obs, std::move(models), std::move(begin),
                                                           std::move(count), opt);
}
std::vector<HyperParameter> no_hyper_parameters(const RVData&, const SearchOptions&) {
  return {};
}
}  // namespace

const NoiseModel white_noise{"white",
                             "white noise: per-instrument jitter added in quadrature to each sigma",
                             &no_hyper_parameters, &make_white_likelihood, nullptr};
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
