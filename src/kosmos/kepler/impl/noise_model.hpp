// The noise models of the search, one registration each in noise_models.cpp: a model's
// hyper-parameters (sampled after the trend), its batched likelihood (white noise:
// likelihood_white.cpp) and optionally its prediction of the residuals, which the periodogram of
// the next planet removes. A new noise model is a new file plus one line in that table.
#pragma once

#include <kosmos/kepler/impl/likelihood.hpp>

#include <memory>
#include <string>
#include <vector>

namespace kosmos {
namespace kepler {
namespace Impl {
struct NoiseModel {
  const char* name;
  const char* description;
  // The hyper-parameters for one star (bounds and starting values from its data); at most
  // kMaxNoise.
  std::vector<HyperParameter> (*hyper_parameters)(const RVData& data, const SearchOptions& opt);
  // The batched likelihood of models[s] against observations [begin[s], begin[s] + count[s]).
  std::unique_ptr<Likelihood> (*make_likelihood)(const HostObservations& obs,
                                                 std::vector<Model> models, std::vector<int> begin,
                                                 std::vector<int> count, const SearchOptions& opt);
  // The noise's conditional mean at the observations given the residuals of model x (one star's
  // observations, times about obs.epoch); null: zero (white noise).
  void (*predict)(const HostObservations& obs, const Model& model, const double* x,
                  const std::vector<double>& residual, std::vector<double>& prediction);
};

// The registered model of that name; kosmos::invalid_input listing the names otherwise.
const NoiseModel& noise_model(const std::string& name);

// The registered models (noise_models.cpp).
const std::vector<NoiseModel>& noise_models();

// The registered models: one file each, one line in the table of noise_models.cpp.
extern const NoiseModel white_noise;        // likelihood_white.cpp
extern const NoiseModel gp_sho_noise;       // likelihood_gp.cpp
extern const NoiseModel gp_rotation_noise;  // likelihood_gp.cpp
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
