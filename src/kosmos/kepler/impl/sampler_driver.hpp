// The DE-MCMC generations of every star's chains on the execution space (Likelihood::
// run_chains of each noise model): uploads the starting chains, runs burn-in and kept generations
// (half_generation(chains, g, part) proposes, evaluates and accepts the half `part` of every
// star's chains), copies kept generations back in blocks of up to ~64 MiB, counts acceptances.
#pragma once

#include <kosmos/kepler/impl/de_mcmc.hpp>
#include <kosmos/kepler/impl/likelihood.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <sstream>

namespace kosmos {
namespace kepler {
namespace Impl {
template <class Space, class HalfGeneration>
void Likelihood::run_de_mcmc(const std::vector<Model>& models, const std::vector<StarFit*>& fits,
                             const SearchOptions& opt, std::uint64_t seed, Progress& progress,
                             const HalfGeneration& half_generation) {
  const int n_stars = int(models.size()), n = opt.chains;
  int width = 1;
  for (const auto& m : models) width = std::max(width, m.L.dim());
  DeMcmcChains<Space> chains(n_stars, n, width, seed);
  // Each star's place among those whose kept generations keep the parameters (-1: ln L only).
  std::vector<int> kept_index_host(std::size_t(n_stars), -1);
  int n_keeping = 0;
  for (int s = 0; s < n_stars; ++s)
    if (fits[std::size_t(s)]->keep_parameters) kept_index_host[std::size_t(s)] = n_keeping++;
  {  // upload: models with their prior terms, scales and starting chains
    auto spec = Kokkos::create_mirror_view(chains.spec);
    auto sigma = Kokkos::create_mirror_view(chains.sigma);
    auto gamma = Kokkos::create_mirror_view(chains.de_gamma);
    auto beta = Kokkos::create_mirror_view(chains.beta);
    auto star_key = Kokkos::create_mirror_view(chains.star_key);
    auto kept_index = Kokkos::create_mirror_view(chains.kept_index);
    auto state = Kokkos::create_mirror_view(chains.state);
    auto lnpost = Kokkos::create_mirror_view(chains.lnpost);
    auto lnlike = Kokkos::create_mirror_view(chains.lnlike);
    std::vector<PriorTerm> terms;
    for (int s = 0; s < n_stars; ++s) {
      const StarFit& fit = *fits[std::size_t(s)];
      const Model& m = models[std::size_t(s)];
      const int dim = m.L.dim();
      spec(s) = m;
      spec(s).term_begin = int(terms.size());
      terms.insert(terms.end(), m.terms.begin(), m.terms.end());
      gamma(s) = 2.38 / std::sqrt(2.0 * std::max(1, fit.result.n_free));
      beta(s) = fit.beta;
      star_key(s) = fit.stream < 0 ? std::uint64_t(s) : std::uint64_t(fit.stream);
      kept_index(s) = kept_index_host[std::size_t(s)];
      for (int d = 0; d < dim; ++d) sigma(s, d) = fit.sigma[std::size_t(d)];
      for (int c = 0; c < n; ++c) {
        const int row = s * n + c;
        for (int d = 0; d < dim; ++d) state(row, d) = fit.chains[std::size_t(c) * dim + d];
        lnpost(row) = fit.lnpost[std::size_t(c)];
        lnlike(row) = fit.lnlike[std::size_t(c)];
      }
    }
    chains.terms = Kokkos::View<PriorTerm*, Space>("kosmos::kepler::de_mcmc::terms",
                                                   std::max<std::size_t>(1, terms.size()));
    auto terms_host = Kokkos::create_mirror_view(chains.terms);
    std::copy(terms.begin(), terms.end(), terms_host.data());
    timed(Space(), timing.transfers, [&] {
      Kokkos::deep_copy(chains.spec, spec);
      Kokkos::deep_copy(chains.terms, terms_host);
      Kokkos::deep_copy(chains.sigma, sigma);
      Kokkos::deep_copy(chains.de_gamma, gamma);
      Kokkos::deep_copy(chains.beta, beta);
      Kokkos::deep_copy(chains.star_key, star_key);
      Kokkos::deep_copy(chains.kept_index, kept_index);
      Kokkos::deep_copy(chains.state, state);
      Kokkos::deep_copy(chains.lnpost, lnpost);
      Kokkos::deep_copy(chains.lnlike, lnlike);
    });
  }
  // Kept generations go to the device in blocks of up to ~64 MiB, then to the host: every
  // chain's ln L, the parameters only of the stars that keep them.
  const int n_keep = opt.steps / opt.thin + (opt.steps % opt.thin ? 1 : 0);
  const std::size_t generation_bytes =
      sizeof(double) * n * (std::size_t(n_keeping) * (width + 2) + std::size_t(n_stars));
  const int block = int(std::max<std::size_t>(
      1, std::min<std::size_t>(std::size_t(n_keep), (std::size_t(64) << 20) / generation_bytes)));
  Kokkos::View<double***, Kokkos::LayoutRight, Space> kept("kosmos::kepler::de_mcmc::kept", block,
                                                           std::size_t(n_keeping) * n, width + 2);
  Kokkos::View<double**, Kokkos::LayoutRight, Space> kept_loglike(
      "kosmos::kepler::de_mcmc::kept_loglike", block, std::size_t(n_stars) * n);
  auto kept_host = Kokkos::create_mirror_view(kept);
  auto kept_loglike_host = Kokkos::create_mirror_view(kept_loglike);
  // Room for this run's kept rows at once (reserving block by block reallocates every time).
  for (int s = 0; s < n_stars; ++s) {
    StarFit& fit = *fits[std::size_t(s)];
    const std::size_t rows = fit.kept_loglike.size() + std::size_t(n_keep) * n;
    if (fit.keep_parameters)
      fit.kept.reserve(rows, std::size_t(models[std::size_t(s)].L.dim()) + 2);
    fit.kept_loglike.reserve(rows);
    fit.result.sample_chain.reserve(rows);
  }
  int filled = 0;
  auto flush = [&] {
    const auto flush_start = std::chrono::steady_clock::now();
    timed(Space(), timing.transfers, [&] {
      Kokkos::deep_copy(kept_host, kept);
      Kokkos::deep_copy(kept_loglike_host, kept_loglike);
    });
    timed(Kokkos::DefaultHostExecutionSpace(), timing.generation, [&] {
      host_for("kosmos::kepler::de_mcmc::unpack", std::size_t(n_stars), [&](const std::size_t s) {
        StarFit& fit = *fits[s];
        const int dim = models[s].L.dim(), index = kept_index_host[s];
        for (int slot = 0; slot < filled; ++slot)
          for (int c = 0; c < n; ++c) {
            if (index >= 0)
              fit.kept.append(&kept_host(slot, std::size_t(index) * n + std::size_t(c), 0),
                              std::size_t(dim) + 2);
            fit.kept_loglike.push_back(
                kept_loglike_host(slot, s * std::size_t(n) + std::size_t(c)));
            fit.result.sample_chain.push_back(c);
          }
      });
    });
    filled = 0;
    timing.kept_rows +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - flush_start).count();
  };
  const Space space;
  const int generations = opt.burn + opt.steps;
  progress.reset();
  for (int g = 0; g < generations; ++g) {
    for (int part = 0; part < 2; ++part) {
      half_generation(chains, g, part);
    }
    if (temperature_ladder > 0)
      timed(space, timing.generation, [&] { chains.swap_temperatures(g, temperature_ladder); });
    evaluations += std::int64_t(n_stars) * n;
    if (g >= opt.burn && (g - opt.burn) % opt.thin == 0) {
      timed(space, timing.generation, [&] { chains.keep(kept, kept_loglike, filled); });
      if (++filled == block) flush();
    }
    const bool burn_in = g < opt.burn;
    const long long done = burn_in ? g + 1 : g + 1 - opt.burn,
                    total = burn_in ? opt.burn : opt.steps;
    std::string extra;
    if (n_stars == 1 && progress.due(done, total)) {  // the single search reports its chains
      auto accepted = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chains.accepted);
      auto lnpost = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chains.lnpost);
      long long sum = 0;
      for (int c = 0; c < n; ++c) sum += accepted(c);
      std::ostringstream o;
      o << ", acceptance " << std::fixed << std::setprecision(2)
        << double(sum) / (double(g + 1) * n)
        << ", best ln posterior = " << *std::max_element(lnpost.data(), lnpost.data() + n);
      extra = o.str();
    }
    progress.step(burn_in ? "DE-MCMC burn-in" : "DE-MCMC sampling", done, total, extra);
    if (g + 1 == opt.burn) progress.reset();
  }
  if (filled > 0) flush();
  auto accepted = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chains.accepted);
  // The chains' last state: an extension round continues from it.
  auto state = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chains.state);
  auto lnpost = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chains.lnpost);
  auto lnlike = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chains.lnlike);
  for (int s = 0; s < n_stars; ++s) {
    StarFit& fit = *fits[std::size_t(s)];
    const int dim = models[std::size_t(s)].L.dim();
    for (int c = 0; c < n; ++c) {
      const int row = s * n + c;
      fit.accepted += accepted(row);
      for (int d = 0; d < dim; ++d) fit.chains[std::size_t(c) * dim + d] = state(row, d);
      fit.lnpost[std::size_t(c)] = lnpost(row);
      fit.lnlike[std::size_t(c)] = lnlike(row);
    }
    fit.proposed += (long long)generations * n;
    fit.result.generations += generations;
  }
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
