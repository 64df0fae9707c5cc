// The search's optimizers on the batched likelihood: differential evolution and a batched
// Nelder-Mead polish.
#pragma once

#include <kosmos/kepler/impl/likelihood.hpp>

#include <random>
#include <string>
#include <vector>

namespace kosmos {
namespace kepler {
namespace Impl {
// Differential-evolution optimization (current-to-best/1/bin, dithered F) of ln L.
// pop: n rows of parameters (fixed entries set), fit: their ln posterior; both updated.
void optimize(Likelihood& lik, const Model& model, std::vector<double>& pop,
              std::vector<double>& fit, int generations, std::mt19937_64& rng, Progress& progress,
              const std::string& stage);

// Nelder-Mead (adaptive coefficients of Gao & Han 2012) on the free parameters of `x`, maximizing
// ln posterior; each iteration's four trial points (reflection, expansion, both contractions)
// are one batched evaluation. Restarts from the best point until a restart gains < 1e-4.
// Returns the maximum; x holds its parameters.
double polish(Likelihood& lik, const Model& model, std::vector<double>& x,
              const std::vector<double>& scales);
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
