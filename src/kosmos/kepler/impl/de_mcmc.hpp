// The DE-MCMC generation step (ter Braak 2006) as Kokkos kernels: the chains of many stars live
// in device Views; per half-generation one kernel draws every proposal of the active half, its
// ln prior and its staged model row, the batched likelihood runs, and a second kernel accepts or
// rejects. Random numbers: Kokkos' XorShift64 generator, one per (star, chain, half-generation,
// use), started from a hash of the seed and those indices, so the chains depend on the seed
// only, not on the thread count or the scheduling (a Random_XorShift64_Pool hands out
// per-thread states and would not).
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/kepler/impl/posterior.hpp>

#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <cstdint>
#include <type_traits>

namespace kosmos {
namespace kepler {
namespace Impl {

// SplitMix64's finalizer: a bijective 64-bit mix, so nearby counters give unrelated states.
KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The random stream of item i (a chain, a candidate) of one of n items of star `star`, numbered by
// the star's key (its index in the whole survey), not by its row in the batch.
KOKKOS_INLINE_FUNCTION std::uint64_t item_stream(std::uint64_t star, int n, int i) {
  return star * std::uint64_t(n) + std::uint64_t(i);
}

// Host batches smaller than this run inline: there a fork-join costs more than it saves (and on
// a busy machine each parallel region waits for descheduled threads).
constexpr int kMinParallelRows = 64;

// propose()'s `models` for a likelihood that reads the proposal rows itself (proposals()).
struct NoStaging {};

// Hands a proposal to a noise model that stages per-proposal state (the GP); nothing for white
// noise. An overload, not `if constexpr` in the kernel: nvcc refuses a device lambda whose first
// capture of a variable happens inside `if constexpr`.
template <class Spec, class ModelsT>
KOKKOS_INLINE_FUNCTION void stage_proposal(const Spec& m, const ModelsT& models, int r,
                                           const double* proposal, bool inside_prior) {
  m.stage(models, r, proposal, inside_prior);
}
template <class Spec>
KOKKOS_INLINE_FUNCTION void stage_proposal(const Spec&, const NoStaging&, int, const double*,
                                           bool) {}

// An alias jump of planet j of x (in place): its frequency f = 1 / P moved to a yearly alias
// (f +- 1 / 365.25 d), a daily one (f +- 1 / d), or mirrored to 1 - f with the orbit reversed
// in time (omega -> -omega, lambda -> -lambda: the same velocities at whole days about the
// epoch). Each move's reverse is drawn with the same probability (kind: 0-4), so the proposal is
// symmetric up to the Jacobian of ln P, whose log (ln f - ln f') it returns; a frequency <= 0
// leaves x outside the bounds.
KOKKOS_INLINE_FUNCTION double alias_jump(const ModelSpec& m, double* x, int j, int kind) {
  const double f = math::exp(-x[m.L.lnP(j)]);
  const double shifts[4] = {1 / 365.25, -1 / 365.25, 1.0, -1.0};
  const double g = kind < 4 ? f + shifts[kind] : 1 - f;
  if (!(g > 0)) {
    x[m.L.lnP(j)] = m.bounds.lnP_max + 1;
    return 0.0;
  }
  x[m.L.lnP(j)] = -math::log(g);
  if (kind == 4) {
    const bool e_free = math::isnan(m.e_fixed[j]), w_free = math::isnan(m.omega_fixed[j]);
    if (e_free && w_free) x[m.L.k(j)] = -x[m.L.k(j)];   // (h, k): omega -> -omega
    if (!e_free && w_free) x[m.L.h(j)] = -x[m.L.h(j)];  // the slot holds omega
    x[m.L.lambda(j)] = -x[m.L.lambda(j)];
  }
  return math::log(f / g);
}

template <class Space>
class DeMcmcChains {
  int n_stars_, chains_;
  std::uint64_t seed_;

 public:
  using Rows = Kokkos::View<double**, Kokkos::LayoutRight, Space>;
  using Column = Kokkos::View<double*, Space>;

  // n_stars stars x `chains` chains (even) of parameter vectors up to `width` long.
  DeMcmcChains(int n_stars, int chains, int width, std::uint64_t seed)
      : n_stars_(n_stars),
        chains_(chains),
        seed_(seed),
        spec("kosmos::kepler::de_mcmc::spec", n_stars),
        sigma("kosmos::kepler::de_mcmc::sigma", n_stars, width),
        de_gamma("kosmos::kepler::de_mcmc::gamma", n_stars),
        beta("kosmos::kepler::de_mcmc::beta", n_stars),
        star_key("kosmos::kepler::de_mcmc::star_key", n_stars),
        kept_index("kosmos::kepler::de_mcmc::kept_index", n_stars),
        state("kosmos::kepler::de_mcmc::state", std::size_t(n_stars) * chains, width),
        lnpost("kosmos::kepler::de_mcmc::lnpost", std::size_t(n_stars) * chains),
        lnlike("kosmos::kepler::de_mcmc::lnlike", std::size_t(n_stars) * chains),
        accepted("kosmos::kepler::de_mcmc::accepted", std::size_t(n_stars) * chains),
        proposal_("kosmos::kepler::de_mcmc::proposal", std::size_t(n_stars) * chains / 2, width),
        proposal_prior_("kosmos::kepler::de_mcmc::proposal_prior",
                        std::size_t(n_stars) * chains / 2),
        proposal_log_jacobian_("kosmos::kepler::de_mcmc::proposal_log_jacobian",
                               std::size_t(n_stars) * chains / 2) {}

  // Filled by the caller before the first generation (prior terms: every star's, concatenated;
  // spec(s).term_begin indexes them): per star its model, the jitter scale of each parameter
  // and the DE step 2.38 / sqrt(2 free parameters); per (star, chain) row the start.
  Kokkos::View<ModelSpec*, Space> spec;
  Kokkos::View<PriorTerm*, Space> terms;
  Rows sigma;
  Column de_gamma;
  // Per star the inverse temperature of its target, prior x L^beta (1 unless tempered: then the
  // "stars" are ladders of temperatures, swap_temperatures exchanges chains within a ladder).
  Column beta;
  // Per star the number of its random streams: (star_key(s) x chains + chain) keys each chain's
  // draws. The batch position s unless the caller numbers its stars itself (a survey numbers them
  // in the whole survey, so that a star draws the same numbers in any batch or rank).
  Kokkos::View<std::uint64_t*, Space> star_key;
  // Per star its place among the stars whose kept generations keep the parameters (keep()), -1
  // for a star that keeps only ln L (a ladder's hotter temperatures).
  Kokkos::View<int*, Space> kept_index;
  Rows state;  // row star * chains + chain
  Column lnpost, lnlike;
  Kokkos::View<long long*, Space> accepted;

  // Proposals for the half `part` (0: chains [0, chains / 2), 1: the rest) of every star from
  // the other half: x_i + gamma (x_a - x_b) + 1e-3 sigma N(0, 1), gamma = 1 every tenth
  // generation (mode jumps); their ln prior, and their model rows staged into `models` (row
  // star * chains / 2 + i). Every tenth generation (offset by five) instead an alias jump of one
  // planet (alias_jump).
  template <class ModelsT>
  void propose(int generation, int part, const ModelsT& models) const {
    const int chains = chains_, half = chains_ / 2, base = part * half, other = half - base;
    const bool mode_jump = generation % 10 == 9, alias = generation % 10 == 4;
    const std::uint64_t key = stream(generation, part, 0);
    const auto spec_ = spec;
    const auto terms_ = terms;
    const auto sigma_ = sigma;
    const auto de_gamma_ = de_gamma;
    const auto state_ = state;
    const auto proposal = proposal_;
    const auto proposal_prior = proposal_prior_;
    const auto proposal_log_jacobian = proposal_log_jacobian_;
    const auto star_key_ = star_key;
    launch(
        "kosmos::kepler::de_mcmc::propose", n_stars_ * half, KOKKOS_LAMBDA(const int r) {
          const int s = r / half, c = base + r % half, row = s * chains + c;
          const ModelSpec m = spec_(s);
          Kokkos::Random_XorShift64<Space> rand(mix64(key ^ item_stream(star_key_(s), chains, c)),
                                                0);
          const int a = other + int(rand.urand(std::uint32_t(half)));
          int b = a;
          while (b == a) b = other + int(rand.urand(std::uint32_t(half)));
          const double gamma = mode_jump ? 1.0 : de_gamma_(s);
          const int dim = m.L.dim();
          proposal_log_jacobian(r) = 0;
          if (alias && m.L.n_pl > 0) {
            for (int d = 0; d < dim; ++d) proposal(r, d) = state_(row, d);
            proposal_log_jacobian(r) = alias_jump(
                m, &proposal(r, 0), int(rand.urand(std::uint32_t(m.L.n_pl))), int(rand.urand(5u)));
          } else {
            for (int d = 0; d < dim; ++d)
              proposal(r, d) = state_(row, d) +
                               gamma * (state_(s * chains + a, d) - state_(s * chains + b, d)) +
                               1e-3 * sigma_(s, d) * rand.normal();
          }
          const double lp = m.log_prior(terms_.data(), &proposal(r, 0));
          proposal_prior(r) = lp;
          stage_proposal(m, models, r, &proposal(r, 0), lp > negative_infinity());
        });
  }

  // Metropolis step for the half `part` given the proposals' ln L (-inf outside the prior or
  // where ln L is not finite).
  void accept(int generation, int part, const Column& proposal_lnlike) const {
    const int chains = chains_, half = chains_ / 2, base = part * half;
    const std::uint64_t key = stream(generation, part, 1);
    const auto beta_ = beta;
    const auto spec_ = spec;
    const auto state_ = state;
    const auto lnpost_ = lnpost;
    const auto lnlike_ = lnlike;
    const auto accepted_ = accepted;
    const auto proposal = proposal_;
    const auto proposal_prior = proposal_prior_;
    const auto proposal_log_jacobian = proposal_log_jacobian_;
    const auto star_key_ = star_key;
    launch(
        "kosmos::kepler::de_mcmc::accept", n_stars_ * half, KOKKOS_LAMBDA(const int r) {
          const int s = r / half, c = base + r % half, row = s * chains + c;
          const double ll = proposal_lnlike(r), prior = proposal_prior(r);
          const double lp = prior > negative_infinity() && math::isfinite(ll)
                                ? beta_(s) * ll + prior
                                : negative_infinity();
          Kokkos::Random_XorShift64<Space> rand(mix64(key ^ item_stream(star_key_(s), chains, c)),
                                                0);
          if (!(math::log(rand.drand()) < lp - lnpost_(row) + proposal_log_jacobian(r))) return;
          ++accepted_(row);
          lnpost_(row) = lp;
          lnlike_(row) = ll;
          const int dim = spec_(s).L.dim();
          for (int d = 0; d < dim; ++d) state_(row, d) = proposal(r, d);
        });
  }

  // Parallel tempering: the stars are ladders of `ladder` temperatures (star l * ladder + k:
  // temperature k of ladder l, ascending in beta; one ladder per star and model of a survey, or
  // one model of one star). After generation g, chain c of temperature k and chain c of k + 1 of
  // the same ladder (k of the parity of g) exchange states with probability
  // min(1, exp((beta_k - beta_k+1) (lnL_k+1 - lnL_k))).
  void swap_temperatures(int generation, int ladder) const {
    const int chains = chains_, parity = generation % 2;
    const int per_ladder = (ladder - parity) / 2;
    const int pairs = (n_stars_ / ladder) * per_ladder;
    if (pairs <= 0) return;
    const std::uint64_t key = stream(generation, 0, 2);
    const auto beta_ = beta;
    const auto spec_ = spec;
    const auto state_ = state;
    const auto lnpost_ = lnpost;
    const auto lnlike_ = lnlike;
    const auto star_key_ = star_key;
    launch(
        "kosmos::kepler::de_mcmc::swap", pairs * chains, KOKKOS_LAMBDA(const int w) {
          const int pair = w / chains, c = w % chains;
          const int k = (pair / per_ladder) * ladder + parity + 2 * (pair % per_ladder);
          const int a = k * chains + c, b = (k + 1) * chains + c;
          const double la = lnlike_(a), lb = lnlike_(b), ba = beta_(k), bb = beta_(k + 1);
          Kokkos::Random_XorShift64<Space> rand(mix64(key ^ item_stream(star_key_(k), chains, c)),
                                                0);
          if (!(math::log(rand.drand()) < (ba - bb) * (lb - la))) return;
          const double prior_a = lnpost_(a) - ba * la, prior_b = lnpost_(b) - bb * lb;
          const int dim = spec_(k).L.dim();
          for (int d = 0; d < dim; ++d) {
            const double x = state_(a, d);
            state_(a, d) = state_(b, d);
            state_(b, d) = x;
          }
          lnlike_(a) = lb;
          lnlike_(b) = la;
          lnpost_(a) = ba * lb + prior_b;
          lnpost_(b) = bb * la + prior_a;
        });
  }

  // Copies every chain's ln L into loglike(slot, row), and the chains of the stars that keep
  // their parameters (kept_index(s) >= 0: the star's place among them) into
  // kept(slot, kept_index(s) x chains + chain, :): the parameters, then ln posterior and ln L
  // after the star's last parameter.
  void keep(const Kokkos::View<double***, Kokkos::LayoutRight, Space>& kept,
            const Kokkos::View<double**, Kokkos::LayoutRight, Space>& loglike, int slot) const {
    const auto spec_ = spec;
    const auto kept_index_ = kept_index;
    const auto state_ = state;
    const auto lnpost_ = lnpost;
    const auto lnlike_ = lnlike;
    const int chains = chains_;
    launch(
        "kosmos::kepler::de_mcmc::keep", n_stars_ * chains, KOKKOS_LAMBDA(const int row) {
          const int s = row / chains, index = kept_index_(s);
          loglike(slot, row) = lnlike_(row);
          if (index < 0) return;
          const int to = index * chains + row % chains, dim = spec_(s).L.dim();
          for (int d = 0; d < dim; ++d) kept(slot, to, d) = state_(row, d);
          kept(slot, to, dim) = lnpost_(row);
          kept(slot, to, dim + 1) = lnlike_(row);
        });
  }

  // The current half-generation's proposals (row star * chains / 2 + i) and their ln prior.
  const Rows& proposals() const { return proposal_; }
  const Column& proposal_priors() const { return proposal_prior_; }

 private:
  // body(i) for i in [0, n) on Space; small batches in a host space inline.
  template <class Body>
  static void launch(const char* label, int n, const Body& body) {
    if constexpr (kosmos::Impl::is_host_space<Space>()) {
      if (n < kMinParallelRows) {
        for (int i = 0; i < n; ++i) body(i);
        return;
      }
    }
    Kokkos::parallel_for(
        label,
        kosmos::Impl::non_blocking_policy(Kokkos::RangePolicy<Space, Kokkos::IndexType<int>>(0, n)),
        body);
  }

  // The random stream of one half-generation's use (0: proposals, 1: acceptance); the row is
  // mixed in per work item.
  std::uint64_t stream(int generation, int part, int use) const {
    return mix64(seed_ ^ mix64((std::uint64_t(generation) * 2 + std::uint64_t(part)) * 2 +
                               std::uint64_t(use)));
  }

  Rows proposal_;
  Column proposal_prior_, proposal_log_jacobian_;
};

}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
