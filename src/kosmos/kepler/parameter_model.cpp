// Parameter scales of the search's parameter vector.
#include <kosmos/kepler/impl/parameter_scale.hpp>
#include <kosmos/kepler/impl/search_model.hpp>

namespace kosmos {
namespace kepler {
namespace Impl {
std::vector<double> parameter_scales(const std::vector<double>& x, const ParamLayout& L,
                                     double baseline) {
  std::vector<double> s(L.dim());
  for (int d = 0; d < L.dim(); ++d) s[d] = parameter_scale(L, x.data(), d, baseline);
  return s;
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
