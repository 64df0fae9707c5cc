#include <kosmos/kepler/impl/optimize.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace kosmos {
namespace kepler {
namespace Impl {
void optimize(Likelihood& lik, const Model& model, std::vector<double>& pop,
              std::vector<double>& fit, int generations, std::mt19937_64& rng, Progress& progress,
              const std::string& stage) {
  const ParamLayout& L = model.L;
  const int dim = L.dim(), n = int(fit.size());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> pick(0, n - 1), pick_dim(0, dim - 1);
  std::vector<double> trial(pop.size()), trial_fit;
  progress.reset();
  for (int g = 0; g < generations; ++g) {
    const int best = int(std::max_element(fit.begin(), fit.end()) - fit.begin());
    for (int i = 0; i < n; ++i) {
      int a, b;
      do a = pick(rng);
      while (a == i);
      do b = pick(rng);
      while (b == i || b == a);
      const double F = 0.4 + 0.5 * u(rng), CR = 0.9;
      const int jr = pick_dim(rng);
      for (int d = 0; d < dim; ++d) {
        const double xi = pop[std::size_t(i) * dim + d];
        trial[std::size_t(i) * dim + d] =
            (d == jr || u(rng) < CR)
                ? xi + F * (pop[std::size_t(best) * dim + d] - xi) +
                      F * (pop[std::size_t(a) * dim + d] - pop[std::size_t(b) * dim + d])
                : xi;
      }
      // jitters fold back into [0, ...): |s|
      for (int q = 0; q < L.n_inst; ++q)
        trial[std::size_t(i) * dim + L.jitter(q)] =
            std::fabs(trial[std::size_t(i) * dim + L.jitter(q)]);
      model.apply_fixed(&trial[std::size_t(i) * dim]);
    }
    lik.evaluate(trial, n, trial_fit);
    for (int i = 0; i < n; ++i)
      if (trial_fit[i] > fit[i]) {
        fit[i] = trial_fit[i];
        std::copy(trial.begin() + std::size_t(i) * dim, trial.begin() + std::size_t(i + 1) * dim,
                  pop.begin() + std::size_t(i) * dim);
      }
    std::ostringstream extra;
    extra << ", best ln L = " << std::fixed << std::setprecision(2)
          << *std::max_element(fit.begin(), fit.end());
    progress.step(stage, g + 1, generations, extra.str());
  }
}

double polish(Likelihood& lik, const Model& model, std::vector<double>& x,
              const std::vector<double>& scales) {
  const int dim = model.L.dim();
  std::vector<int> free;
  for (int d = 0; d < dim; ++d)
    if (!model.is_fixed(d)) free.push_back(d);
  const int n = int(free.size());
  std::vector<double> f;
  lik.evaluate(x, 1, f);
  double best = f[0];
  if (n == 0 || !std::isfinite(best)) return best;
  const double alpha = 1, beta = 1 + 2.0 / n, gamma = 0.75 - 0.5 / n, delta = 1 - 1.0 / n;
  auto point = [&](const std::vector<double>& base, const std::vector<double>& y) {
    std::vector<double> p = base;
    for (int i = 0; i < n; ++i) p[free[i]] = y[i];
    return p;
  };
  for (int restart = 0; restart < 5; ++restart) {
    // Simplex: x and x + scale along each free parameter; values are -ln posterior.
    std::vector<std::vector<double>> simplex(n + 1, std::vector<double>(n));
    for (int i = 0; i <= n; ++i)
      for (int q = 0; q < n; ++q) simplex[i][q] = x[free[q]] + (i == q + 1 ? scales[free[q]] : 0.0);
    std::vector<double> batch(std::size_t(n + 1) * dim);
    for (int i = 0; i <= n; ++i) {
      const auto p = point(x, simplex[i]);
      std::copy(p.begin(), p.end(), batch.begin() + std::size_t(i) * dim);
    }
    lik.evaluate(batch, n + 1, f);
    std::vector<double> value(n + 1);
    for (int i = 0; i <= n; ++i) value[i] = -f[i];
    std::vector<int> order(n + 1);
    for (int it = 0; it < 400 * n; ++it) {
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int a, int b) { return value[a] < value[b]; });
      const int lo = order[0], hi = order[n], second = order[n - 1];
      if (value[hi] - value[lo] < 1e-7)
        break;  // ln posterior resolved far below its 1-sigma scale of 0.5
      std::vector<double> centroid(n, 0.0);
      for (int i = 0; i <= n; ++i)
        if (i != hi)
          for (int q = 0; q < n; ++q) centroid[q] += simplex[i][q] / n;
      std::vector<std::vector<double>> trial(4, std::vector<double>(n));
      const double coef[4] = {alpha, alpha * beta, alpha * gamma,
                              -gamma};  // reflect, expand, outside, inside
      batch.assign(std::size_t(4) * dim, 0.0);
      for (int t = 0; t < 4; ++t) {
        for (int q = 0; q < n; ++q)
          trial[t][q] = centroid[q] + coef[t] * (centroid[q] - simplex[hi][q]);
        const auto p = point(x, trial[t]);
        std::copy(p.begin(), p.end(), batch.begin() + std::size_t(t) * dim);
      }
      lik.evaluate(batch, 4, f);
      const double fr = -f[0], fe = -f[1], foc = -f[2], fic = -f[3];
      int accept = -1;
      if (fr < value[lo])
        accept = fe < fr ? 1 : 0;
      else if (fr < value[second])
        accept = 0;
      else if (fr < value[hi])
        accept = foc <= fr ? 2 : 0;
      else if (fic < value[hi])
        accept = 3;
      if (accept >= 0) {
        simplex[hi] = trial[accept];
        value[hi] = -f[accept];
        continue;
      }
      // Shrink towards the best point.
      batch.assign(std::size_t(n) * dim, 0.0);
      int r = 0;
      for (int i = 0; i <= n; ++i) {
        if (i == lo) continue;
        for (int q = 0; q < n; ++q)
          simplex[i][q] = simplex[lo][q] + delta * (simplex[i][q] - simplex[lo][q]);
        const auto p = point(x, simplex[i]);
        std::copy(p.begin(), p.end(), batch.begin() + std::size_t(r++) * dim);
      }
      lik.evaluate(batch, n, f);
      r = 0;
      for (int i = 0; i <= n; ++i)
        if (i != lo) value[i] = -f[r++];
    }
    const int lo = int(std::min_element(value.begin(), value.end()) - value.begin());
    const double gain = -value[lo] - best;
    if (gain > 0) {
      best = -value[lo];
      x = point(x, simplex[lo]);
    }
    if (!(gain >= 1e-4)) break;
  }
  return best;
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
