#include <kosmos/dust/size_distribution.hpp>

#include <kosmos/core/error.hpp>

#include <algorithm>
#include <cmath>

namespace kosmos {
namespace dust {
namespace {
constexpr double kAmuGram = 1.66053906660e-24;
constexpr double kPi = 3.14159265358979323846;
constexpr double kCmPerMicron = 1e-4;

// Simpson's rule in ln a of f(a) a over [lo, hi] (micron): integrals of dn/da-like functions.
template <class F>
double integrate_log(double lo, double hi, F f, int intervals = 400) {
  if (!(hi > lo)) return 0;
  const double u0 = std::log(lo), h = (std::log(hi) - u0) / intervals;
  double sum = 0;
  for (int i = 0; i <= intervals; ++i) {
    const double a = std::exp(u0 + i * h);
    const double w = (i == 0 || i == intervals) ? 1 : (i % 2 ? 4 : 2);
    sum += w * f(a) * a;
  }
  return sum * h / 3;
}

// WD01 Eq. 6 curvature term F(a; beta, a_t).
double curvature(double a, double beta, double a_t) {
  return beta >= 0 ? 1 + beta * a / a_t : 1 / (1 - beta * a / a_t);
}
}  // namespace

const MaterialProperties& material_properties(GrainMaterial material) {
  static const MaterialProperties graphite{"graphite", 2.24, 12.011};
  static const MaterialProperties silicate{"silicate", 3.5,
                                           (24.305 + 55.845 + 28.0855 + 4 * 15.999) / 7};
  return material == GrainMaterial::graphite ? graphite : silicate;
}

GrainMaterial parse_grain_material(const std::string& name) {
  if (name == "graphite") return GrainMaterial::graphite;
  if (name == "silicate") return GrainMaterial::silicate;
  throw invalid_input("kosmos::dust: grain material '" + name + "' is not graphite or silicate");
}

SizeDistributionModel parse_size_distribution_model(const std::string& name) {
  if (name == "mrn") return SizeDistributionModel::mrn;
  if (name == "wd01") return SizeDistributionModel::wd01;
  throw invalid_input("kosmos::dust: size distribution '" + name + "' is not mrn or wd01");
}

Wd01Parameters wd01_milky_way_31(GrainMaterial material) {
  if (material == GrainMaterial::graphite) return {-1.54, -0.165, 0.0107, 0.428, 9.99e-12, 6.0e-5};
  return {-2.21, 0.300, 0.164, 0.1, 1.00e-13, 0.0};
}

void model_radius_range(SizeDistributionModel model, double& a_min, double& a_max) {
  if (model == SizeDistributionModel::mrn) {
    a_min = 0.005;
    a_max = 0.25;
  } else {
    a_min = 3.5e-4;
    a_max = 10.0;
  }
}

double grain_mass_g(GrainMaterial material, double a_micron) {
  const double a = a_micron * kCmPerMicron;
  return 4.0 / 3.0 * kPi * a * a * a * material_properties(material).density_g_cm3;
}

double wd01_per_h(const Wd01Parameters& p, GrainMaterial material, double a) {
  double a_min, a_max;
  model_radius_range(SizeDistributionModel::wd01, a_min, a_max);
  if (a < a_min || a > a_max) return 0;
  const double a_cm = a * kCmPerMicron;
  // Eqs. 4-5: C/a (a/a_t)^alpha F(a; beta, a_t), exponential cut-off above a_t.
  double per_cm = p.c / a_cm * std::pow(a / p.a_t, p.alpha) * curvature(a, p.beta, p.a_t);
  if (a > p.a_t) per_cm *= std::exp(-std::pow((a - p.a_t) / p.a_c, 3));
  if (material == GrainMaterial::graphite && p.b_c > 0) {
    // Eqs. 2-3: two log-normals holding b_C carbon atoms per H (75 % at 3.5 A, 25 % at 30 A).
    const double sigma = 0.4, rho = material_properties(material).density_g_cm3;
    const double m_c = material_properties(material).atom_mass_amu * kAmuGram;
    const double a0[2] = {3.5e-8, 30e-8}, fraction[2] = {0.75, 0.25};  // cm
    for (int i = 0; i < 2; ++i) {
      const double b = 3 / std::pow(2 * kPi, 1.5) * std::exp(-4.5 * sigma * sigma) /
                       (rho * std::pow(a0[i], 3) * sigma) * fraction[i] * p.b_c * m_c /
                       (1 + std::erf(3 * sigma / std::sqrt(2.0) +
                                     std::log(a0[i] / 3.5e-8) / (sigma * std::sqrt(2.0))));
      const double z = std::log(a_cm / a0[i]) / sigma;
      per_cm += b / a_cm * std::exp(-0.5 * z * z);
    }
  }
  return per_cm * kCmPerMicron;
}

double size_distribution_per_h(SizeDistributionModel model, GrainMaterial material, double a) {
  if (model == SizeDistributionModel::wd01)
    return wd01_per_h(wd01_milky_way_31(material), material, a);
  double a_min, a_max;
  model_radius_range(model, a_min, a_max);
  if (a < a_min || a > a_max) return 0;
  const double amplitude =
      std::pow(10.0, material == GrainMaterial::graphite ? -25.13 : -25.11);  // cm^2.5
  return amplitude * std::pow(a * kCmPerMicron, -3.5) * kCmPerMicron;
}

double dust_mass_per_h(SizeDistributionModel model, GrainMaterial material) {
  double a_min, a_max;
  model_radius_range(model, a_min, a_max);
  return integrate_log(
      a_min, a_max,
      [&](double a) {
        return grain_mass_g(material, a) * size_distribution_per_h(model, material, a);
      },
      20000);
}

SizeDistribution binned_size_distribution(SizeDistributionModel model, GrainMaterial material,
                                          const std::vector<double>& radius) {
  const char* where = "kosmos::dust::binned_size_distribution";
  kosmos::Impl::require(radius.size() >= 2, where, "need at least 2 radii, got ", radius.size());
  for (std::size_t i = 0; i < radius.size(); ++i)
    kosmos::Impl::require(
        radius[i] > 0 && std::isfinite(radius[i]) && (i == 0 || radius[i] > radius[i - 1]), where,
        "radius[", i, "] = ", radius[i], " micron: radii must be positive and increasing");
  double a_min, a_max;
  model_radius_range(model, a_min, a_max);
  // The end bins take the mass of the model's grains beyond the grid: only up to a factor 3 away.
  kosmos::Impl::require(radius.front() <= 3 * a_min && radius.back() >= a_max / 3, where,
                        "the radius grid [", radius.front(), ", ", radius.back(),
                        "] micron does not cover the model's range [", a_min, ", ", a_max,
                        "] micron to within a factor 3");
  SizeDistribution out;
  for (std::size_t i = 0; i < radius.size(); ++i) {
    double lo = i == 0 ? std::min(a_min, radius[0]) : std::sqrt(radius[i - 1] * radius[i]);
    double hi =
        i + 1 == radius.size() ? std::max(a_max, radius[i]) : std::sqrt(radius[i] * radius[i + 1]);
    lo = std::max(lo, a_min);
    hi = std::min(hi, a_max);
    const double mass = integrate_log(lo, hi, [&](double a) {
      return grain_mass_g(material, a) * size_distribution_per_h(model, material, a);
    });
    if (!(mass > 0)) continue;
    out.radius_micron.push_back(radius[i]);
    out.number_per_mass.push_back(mass / grain_mass_g(material, radius[i]));
  }
  return out;
}

double normalize_to_dust_mass(std::vector<SizeDistribution>& per_h,
                              const std::vector<GrainMaterial>& materials) {
  kosmos::Impl::require(per_h.size() == materials.size(), "kosmos::dust::normalize_to_dust_mass",
                        per_h.size(), " size distributions for ", materials.size(), " materials");
  double mass_g = 0;
  for (std::size_t k = 0; k < per_h.size(); ++k)
    for (std::size_t i = 0; i < per_h[k].radius_micron.size(); ++i)
      mass_g += per_h[k].number_per_mass[i] * grain_mass_g(materials[k], per_h[k].radius_micron[i]);
  for (auto& sd : per_h)
    for (auto& n : sd.number_per_mass) n /= mass_g * 1e-3;
  return mass_g;
}
}  // namespace dust
}  // namespace kosmos
