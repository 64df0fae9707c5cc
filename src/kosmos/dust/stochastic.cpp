#include <kosmos/dust/stochastic.hpp>

#include <cmath>

namespace kosmos {
namespace dust {
namespace {
// I_n(u) = int_0^u t^n / (e^t - 1) dt (n = 2, 3), to double precision: for u < 1 the Bernoulli
// series of t^(n-1) t / (e^t - 1), otherwise n! zeta(n+1) minus the tail
// int_u^inf t^n e^(-kt) dt = e^(-ku) sum_m n!/(n-m)! u^(n-m) / k^(m+1) summed over k.
double debye_integral(int n, double u) {
  if (u < 1) {
    static const double bernoulli_over_factorial[] = {1.0,
                                                      -0.5,
                                                      1.0 / 12,
                                                      0,
                                                      -1.0 / 720,
                                                      0,
                                                      1.0 / 30240,
                                                      0,
                                                      -1.0 / 1209600,
                                                      0,
                                                      1.0 / 47900160,
                                                      0,
                                                      -691.0 / 1307674368000.0};
    double sum = 0;
    for (int j = 0; j < 13; ++j) sum += bernoulli_over_factorial[j] * std::pow(u, n + j) / (n + j);
    return sum;
  }
  double sum = n == 2 ? 2 * 1.2020569031595942 : 6.4939394022668291;  // n! zeta(n + 1)
  const int terms = int(42 / u) + 1;
  for (int k = 1; k <= terms; ++k) {
    double poly = 0, falling = 1;  // n! / (n - m)!
    for (int m = 0; m <= n; ++m) {
      poly += falling * std::pow(u, n - m) / std::pow(double(k), m + 1);
      falling *= n - m;
    }
    sum -= std::exp(-k * u) * poly;
  }
  return sum;
}

// Draine & Li (2001) Eq. 10: f_n(x) = n int_0^1 y^n dy / (exp(y/x) - 1) = n x^(n+1) I_n(1/x), and
// its derivative f_n'(x) = n (n+1) x^n I_n(1/x) - n u / (e^u - 1) with u = 1/x.
double debye_f(int n, double x) {
  return n * std::pow(x, n + 1) * debye_integral(n, 1 / x);
}
double debye_f_prime(int n, double x) {
  const double u = 1 / x;
  return n * (n + 1) * std::pow(x, n) * debye_integral(n, u) -
         (u > 700 ? 0.0 : n * u / std::expm1(u));
}

// Draine & Li (2001, ApJ 551, 807) heat capacities as families of Debye modes per atom:
// graphite Eq. 9, C/((N_C - 2) k) = f_2'(T / 863 K) + 2 f_2'(T / 2504 K) (out-of-plane, in-plane);
// silicate Eq. 11, C/((N - 2) k) = 2 f_2'(T / 500 K) + f_3'(T / 1500 K).
struct ModeFamily {
  int dimension;
  double debye_temperature, multiplicity;
};
void mode_families(GrainMaterial material, ModeFamily (&f)[2]) {
  if (material == GrainMaterial::graphite) {
    f[0] = {2, 863.0, 1.0};
    f[1] = {2, 2504.0, 2.0};
  } else {
    f[0] = {2, 500.0, 2.0};
    f[1] = {3, 1500.0, 1.0};
  }
}
}  // namespace

double enthalpy_per_atom(GrainMaterial material, double temperature) {
  kosmos::Impl::require(temperature > 0 && std::isfinite(temperature),
                        "kosmos::dust::enthalpy_per_atom", "temperature = ", temperature,
                        " K must be positive");
  ModeFamily f[2];
  mode_families(material, f);
  double e = 0;
  for (const auto& m : f)
    e += m.multiplicity * m.debye_temperature *
         debye_f(m.dimension, temperature / m.debye_temperature);
  return constants::boltzmann_k * e;
}

double heat_capacity_per_atom(GrainMaterial material, double temperature) {
  kosmos::Impl::require(temperature > 0 && std::isfinite(temperature),
                        "kosmos::dust::heat_capacity_per_atom", "temperature = ", temperature,
                        " K must be positive");
  ModeFamily f[2];
  mode_families(material, f);
  double c = 0;
  for (const auto& m : f)
    c += m.multiplicity * debye_f_prime(m.dimension, temperature / m.debye_temperature);
  return constants::boltzmann_k * c;
}

double grain_atoms(GrainMaterial material, double radius_micron) {
  return grain_mass_g(material, radius_micron) /
         (material_properties(material).atom_mass_amu * 1.66053906660e-24);
}

std::vector<double> grain_log_enthalpy_table(GrainMaterial material, double radius_micron,
                                             const StochasticOptions& o) {
  const double modes = grain_atoms(material, radius_micron) - 2;
  kosmos::Impl::require(modes > 0, "kosmos::dust::grain_log_enthalpy_table", "a ",
                        material_properties(material).name, " grain of radius ", radius_micron,
                        " micron has fewer than 3 atoms");
  std::vector<double> table(std::size_t(o.table_points));
  const double log_t0 = std::log(o.min_temperature);
  const double dlog_t = (std::log(o.max_temperature) - log_t0) / (o.table_points - 1);
  for (int k = 0; k < o.table_points; ++k)
    table[std::size_t(k)] =
        std::log(modes * enthalpy_per_atom(material, std::exp(log_t0 + k * dlog_t)));
  return table;
}
std::vector<double> grain_log_enthalpy_table(const HeatCapacityTable& heat, double radius_micron,
                                             const StochasticOptions& o) {
  std::vector<double> table(std::size_t(o.table_points));
  const double log_t0 = std::log(o.min_temperature);
  const double dlog_t = (std::log(o.max_temperature) - log_t0) / (o.table_points - 1);
  for (int k = 0; k < o.table_points; ++k) table[std::size_t(k)] = std::exp(log_t0 + k * dlog_t);
  table = table_enthalpies(heat, radius_micron, table);
  for (auto& e : table) e = std::log(e);
  return table;
}
}  // namespace dust
}  // namespace kosmos
