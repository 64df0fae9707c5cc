// The table of the search's noise models (impl/noise_model.hpp) and the dispatch through it.
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/impl/noise_model.hpp>

namespace kosmos {
namespace kepler {
namespace Impl {
const std::vector<NoiseModel>& noise_models() {
  static const std::vector<NoiseModel> models = {white_noise, gp_sho_noise, gp_rotation_noise};
  return models;
}

const NoiseModel& noise_model(const std::string& name) {
  std::string names;
  for (const auto& m : noise_models()) {
    if (m.name == name) return m;
    names += std::string(names.empty() ? "" : ", ") + m.name;
  }
  throw invalid_input("kosmos::kepler::search: unknown noise model '" + name + "' (" + names + ")");
}

std::unique_ptr<Likelihood> make_likelihood(const HostObservations& obs, std::vector<Model> models,
                                            std::vector<int> begin, std::vector<int> count,
                                            const SearchOptions& opt) {
  return noise_model(opt.noise).make_likelihood(obs, std::move(models), std::move(begin),
                                                std::move(count), opt);
}
std::unique_ptr<Likelihood> make_likelihood(const HostObservations& obs, const Model& model,
                                            const SearchOptions& opt) {
  return make_likelihood(obs, {model}, {0}, {int(obs.t.size())}, opt);
}
std::unique_ptr<Likelihood> make_reporting_likelihood(const HostObservations& obs,
                                                      const Model& model, const SearchOptions& opt,
                                                      bool on_host) {
  SearchOptions reporting = opt;
  reporting.mixed_precision = false;
  reporting.host_space = opt.host_space || on_host;
  return make_likelihood(obs, model, reporting);
}
}  // namespace Impl

std::vector<std::string> noise_model_names() {
  std::vector<std::string> out;
  for (const auto& m : Impl::noise_models()) out.push_back(m.name);
  return out;
}
}  // namespace kepler
}  // namespace kosmos
