// Equilibrium dust grain temperatures and emission SEDs (Jonsson & Primack 2010, New Astron. 15,
// 509): the paper's four stages as Kokkos kernels.
//
//   (1) prepare_grains:           sigma dlambda and the per-species emission weights      (kernel 1)
//   (2) heating:                  L_h = I (sigma dlambda)^T, a Kokkos Kernels GEMM        (kernel 2, Eq. 6)
//   (3) equilibrium_temperatures: solve Eq. 7 for T_{c,s} (Newton-Raphson or table)      (kernel 3)
//   (4) emission_sed:             L_{lambda,e;c,l} = m_c sum_s n_s sigma_{s,l} B(T_{c,s}) (kernel 4, Eq. 10)
//
// Units: SI throughout (wavelength and bin widths in m, cross sections in m^2, mean intensity
// I_lambda in W m^-2 m^-1 sr^-1, heating and emission in W sr^-1 per grain). The number of grains
// per unit dust mass n_s and the cell dust masses m_c share one (any) mass unit; the SED is then in
// W m^-1 sr^-1. Working precision T is float (the paper's GPU code) or double.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/dust/impl/solver.hpp>
#include <kosmos/dust/impl/validate.hpp>
#include <kosmos/dust/planck.hpp>

#include <KokkosBlas3_gemm.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace kosmos {
namespace dust {

enum class TemperatureMethod {
  newton,  // Newton-Raphson on Eq. 7 from the fitted guess of Eqs. 11-12 (the paper's GPU method)
  table    // linear interpolation in a per-species table of ln E versus ln T (sunrise's CPU method)
};

struct SolverOptions {
  double tolerance = 1e-3;        // stop when |emitted / absorbed - 1| <= tolerance (the paper: 0.1 %)
  double min_temperature = 3.0;   // K; heating below E(min_temperature) (zero included) gives this
  double max_temperature = 3000.0;
  double guess_floor = 5.0;       // K; the fitted guess is raised to this (the paper's 5 K floor)
  int max_iterations = 60;
  GuessCoefficients guess;        // Eqs. 11-12 coefficients (SI)
  TemperatureMethod method = TemperatureMethod::newton;
  int table_points = 2000;        // the sunrise table: 2000 points from 3 K to 1500 K
  double table_min_temperature = 3.0;
  double table_max_temperature = 1500.0;
  double reference_temperature = 30.0;  // per-species scale: E_s(T_ref) (keeps float in range)
  bool use_cuda_specialization = true;  // Kokkos::Cuda: hand-tuned kernels for stage 3 (Newton) and 4
  bool fast_exp = true;           // float in the CUDA specializations: __expf as in the paper
};

// Short name and meaning of each TemperatureStatus (CLI help, file headers, summaries).
inline const char* temperature_status_name(int status) {
  static const char* const names[temperature_status_count] = {
      "converged", "at floor", "at ceiling", "not converged", "invalid heating", "no heating", "above sublimation"};
  return status >= 0 && status < temperature_status_count ? names[status] : "unknown";
}
inline const char* temperature_status_meaning(int status) {
  static const char* const meanings[temperature_status_count] = {
      "energy balance met to the tolerance (or interpolated from the table)",
      "0 < heating < E(min_temperature): T = min_temperature, emits more than it absorbs",
      "heating > E(max_temperature), e.g. above the sublimation point: T = max_temperature, emits less",
      "max_iterations reached: T is the last iterate",
      "heating NaN or negative: T = NaN",
      "zero heating (zero field, or every I sigma dlambda underflowed): T = 0, no emission",
      "converged above the composition's sublimation temperature: the grain would not survive"};
  return status >= 0 && status < temperature_status_count ? meanings[status] : "unknown status";
}

// Stage 1 output: everything the later stages need about the grains on the wavelength grid,
// resident in ExecSpace's memory. Built by prepare_grains.
template <class T, class ExecSpace>
struct GrainModel {
  static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                "kosmos::dust::GrainModel: T must be float or double");
  using execution_space = ExecSpace;
  using device_type = Kokkos::Device<ExecSpace, typename ExecSpace::memory_space>;
  using matrix_type = Kokkos::View<T**, Kokkos::LayoutLeft, device_type>;
  using sed_matrix_type = Kokkos::View<T**, Kokkos::LayoutRight, device_type>;
  using vector_type = Kokkos::View<T*, device_type>;

  matrix_type sigma_dlambda;    // (L, S): sigma_{s,l} dlambda_l, the GEMM operand
  matrix_type emission_weight;  // (L, S): 2hc^2 sigma dlambda / lambda^5 / scale_s
  // (S, L): n_s sigma_{s,l} 2hc^2 / lambda^5, a species' wavelengths contiguous (the P(T) emission
  // reads a species' row across a team's threads; the equilibrium SED reads one weight a warp).
  sed_matrix_type sed_weight;
  vector_type x;                // (L): hc / (k lambda)
  vector_type scale;            // (S): E_s(reference_temperature), W sr^-1
  vector_type number_per_mass;  // (S): n_s, grains per unit dust mass
  vector_type guess_offset;     // (S): log10(scale) + alpha1 log10 a + alpha2 log10^2 a
  Kokkos::View<T**, Kokkos::LayoutRight, device_type> log_emission_table;  // (S, K) when method == table
  Impl::TableParams<T> table{};

  KOKKOS_INLINE_FUNCTION int wavelengths() const { return int(x.extent(0)); }
  KOKKOS_INLINE_FUNCTION int species() const { return int(scale.extent(0)); }
};

namespace Impl {
template <class T>
SolverParams<T> solver_params(const SolverOptions& o) {
  SolverParams<T> p;
  p.tolerance = T(o.tolerance);
  p.min_t = T(o.min_temperature);
  p.max_t = T(o.max_temperature);
  p.log_min_t = T(std::log(o.min_temperature));
  p.log_max_t = T(std::log(o.max_temperature));
  p.log10_guess_floor = T(std::log10(o.guess_floor));
  p.k = T(o.guess.k);
  p.beta1 = T(o.guess.beta1);
  p.beta2 = T(o.guess.beta2);
  p.max_iterations = o.max_iterations;
  return p;
}

template <class T>
void check_options(const SolverOptions& o) {
  const char* where = "kosmos::dust::SolverOptions";
  const double eps = double(std::numeric_limits<T>::epsilon());
  kosmos::Impl::require(o.tolerance >= 64 * eps && o.tolerance < 1, where, "tolerance = ", o.tolerance,
                        " must lie in [64 eps, 1) = [", 64 * eps, ", 1) for this precision");
  kosmos::Impl::require(o.min_temperature > 0 && o.min_temperature < o.max_temperature &&
                            std::isfinite(o.max_temperature),
                        where, "temperature range [", o.min_temperature, ", ", o.max_temperature,
                        "] K is empty or not positive");
  kosmos::Impl::require(o.guess_floor > 0 && std::isfinite(o.guess_floor), where, "guess_floor = ", o.guess_floor);
  kosmos::Impl::require(o.max_iterations >= 1, where, "max_iterations = ", o.max_iterations, " must be >= 1");
  kosmos::Impl::require(o.reference_temperature > 0 && std::isfinite(o.reference_temperature), where,
                        "reference_temperature = ", o.reference_temperature);
  if (o.method == TemperatureMethod::table) {
    kosmos::Impl::require(o.table_points >= 2, where, "table_points = ", o.table_points, " must be >= 2");
    kosmos::Impl::require(o.table_min_temperature >= o.min_temperature &&
                              o.table_max_temperature <= o.max_temperature &&
                              o.table_min_temperature < o.table_max_temperature,
                          where, "table range [", o.table_min_temperature, ", ", o.table_max_temperature,
                          "] K must be increasing and inside [min_temperature, max_temperature]");
  }
}

// Stage 1 for one species per team: sigma dlambda, the scaled emission weights and SED weights.
template <class T, class ExecSpace, class Wave, class Width, class Sigma, class Radius, class Number>
void prepare_kernel(const ExecSpace& space, const GrainModel<T, ExecSpace>& g, const Wave& wavelength,
                    const Width& dlambda, const Sigma& sigma, const Radius& radius,
                    const Number& number_per_mass, const SolverOptions& o) {
  const int nl = int(wavelength.extent(0)), ns = int(radius.extent(0));
  const double t_ref = o.reference_temperature, a1 = o.guess.alpha1, a2 = o.guess.alpha2;
  auto sd = g.sigma_dlambda;
  auto ew = g.emission_weight;
  auto sw = g.sed_weight;
  auto x = g.x;
  auto scale = g.scale;
  auto number = g.number_per_mass;
  auto offset = g.guess_offset;
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename team_policy::member_type;
  Kokkos::parallel_for(
      "kosmos::dust::prepare_grains", team_policy(space, ns, Kokkos::AUTO),
      KOKKOS_LAMBDA(const member& team) {
        const int s = team.league_rank();
        double e_ref = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, nl),
            [&](const int l, double& sum) {
              const double lam = double(wavelength(l));
              const double l2 = lam * lam;
              const double c1l = constants::c1 / (l2 * l2 * lam);
              const double sdl = double(sigma(s, l)) * double(dlambda(l));
              sd(l, s) = T(sdl);
              sw(s, l) = T(double(number_per_mass(s)) * double(sigma(s, l)) * c1l);
              if (s == 0) x(l) = T(constants::c2 / lam);
              sum += c1l * sdl * planck_occupation(constants::c2 / (lam * t_ref));
            },
            e_ref);
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nl), [&](const int l) {
          const double lam = double(wavelength(l));
          const double l2 = lam * lam;
          ew(l, s) = T(constants::c1 / (l2 * l2 * lam) * double(sigma(s, l)) * double(dlambda(l)) / e_ref);
        });
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          const double la = math::log10(double(radius(s)));
          scale(s) = T(e_ref);
          number(s) = T(number_per_mass(s));
          offset(s) = T(math::log10(e_ref) + a1 * la + a2 * la * la);
        });
      });
}

// ln E_s(T_k) for the interpolation table, summed in double.
template <class T, class ExecSpace>
void build_table(const ExecSpace& space, GrainModel<T, ExecSpace>& g, const SolverOptions& o) {
  const int nk = o.table_points, ns = g.species(), nl = g.wavelengths();
  g.log_emission_table = decltype(g.log_emission_table)(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kosmos::dust::log_emission_table"), ns, nk);
  const double log_t0 = std::log(o.table_min_temperature);
  const double dlog_t = (std::log(o.table_max_temperature) - log_t0) / double(nk - 1);
  g.table.log_t0 = T(log_t0);
  g.table.dlog_t = T(dlog_t);
  g.table.points = nk;
  auto table = g.log_emission_table;
  auto w = g.emission_weight;
  auto x = g.x;
  Kokkos::parallel_for(
      "kosmos::dust::build_table",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, std::int64_t(ns) * nk),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const int s = int(i / nk), k = int(i % nk);
        const double inv_t = math::exp(-(log_t0 + k * dlog_t));
        double e = 0;
        for (int l = 0; l < nl; ++l) e += double(w(l, s)) * planck_occupation(double(x(l)) * inv_t);
        table(s, k) = T(math::log(e));
      });
}

// Stage 3 functor: one species per team, one (cell, species) per thread. The species' weights
// (Newton) or table are staged in team scratch; the *Global tags read them from the GrainModel
// instead, for grids whose weights or tables do not fit the scratch.
template <class T, class ExecSpace, class Heating, class Temperature, class Status>
struct TemperatureFunctor {
  struct NewtonTag {};
  struct NewtonGlobalTag {};
  struct TableTag {};
  struct TableGlobalTag {};
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename team_policy::member_type;
  using scratch_view =
      Kokkos::View<T*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  GrainModel<T, ExecSpace> g;
  Heating heating;
  Temperature temperature;
  Status status;
  SolverParams<T> p;
  int n_cells, chunk, chunks_per_species;

  KOKKOS_INLINE_FUNCTION int species_of(const member& team) const { return team.league_rank() / chunks_per_species; }

  // Solves the team's cells with solve(l_scaled) -> SolveResult.
  template <class Solve>
  KOKKOS_INLINE_FUNCTION void solve_cells(const member& team, int s, const Solve& solve) const {
    const int c0 = (team.league_rank() % chunks_per_species) * chunk;
    const int c1 = c0 + chunk < n_cells ? c0 + chunk : n_cells;
    const T inv_scale = T(1) / g.scale(s);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, c0, c1), [&](const int c) {
      const auto r = solve(T(heating(c, s)) * inv_scale);
      temperature(c, s) = r.temperature;
      status(c, s) = r.status;
    });
  }

  template <class W, class X>
  KOKKOS_INLINE_FUNCTION void newton(const member& team, int s, const W& w, const X& x) const {
    const T offset = g.guess_offset(s);
    const int nl = g.wavelengths();
    solve_cells(team, s, [&](const T l_scaled) {
      return solve_newton(w, x, nl, l_scaled, initial_guess(p, l_scaled, offset), p, LibraryExp());
    });
  }

  template <class Table>
  KOKKOS_INLINE_FUNCTION void table(const member& team, int s, const Table& log_e) const {
    const auto w = Kokkos::subview(g.emission_weight, Kokkos::ALL, s);
    solve_cells(team, s, [&](const T l_scaled) {
      return solve_table(log_e, g.table, w, g.x, g.wavelengths(), l_scaled, p, LibraryExp());
    });
  }

  KOKKOS_INLINE_FUNCTION void operator()(NewtonTag, const member& team) const {
    const int s = species_of(team), nl = g.wavelengths();
    scratch_view w(team.team_scratch(0), nl), x(team.team_scratch(0), nl);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nl), [&](const int l) {
      w(l) = g.emission_weight(l, s);
      x(l) = g.x(l);
    });
    team.team_barrier();
    newton(team, s, w, x);
  }

  KOKKOS_INLINE_FUNCTION void operator()(NewtonGlobalTag, const member& team) const {
    const int s = species_of(team);
    newton(team, s, Kokkos::subview(g.emission_weight, Kokkos::ALL, s), g.x);
  }

  KOKKOS_INLINE_FUNCTION void operator()(TableTag, const member& team) const {
    const int s = species_of(team), nk = g.table.points;
    scratch_view log_e(team.team_scratch(0), nk);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nk), [&](const int k) { log_e(k) = g.log_emission_table(s, k); });
    team.team_barrier();
    table(team, s, log_e);
  }

  KOKKOS_INLINE_FUNCTION void operator()(TableGlobalTag, const member& team) const {
    const int s = species_of(team);
    table(team, s, Kokkos::subview(g.log_emission_table, s, Kokkos::ALL));
  }
};

template <class Space>
struct HasCudaSpecialization : std::false_type {};
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS) && defined(KOKKOS_ENABLE_CUDA)
template <>
struct HasCudaSpecialization<Kokkos::Cuda> : std::true_type {};
#endif

template <class GM, class V>
void check_device_view(const char* where, const V&) {
  static_assert(Kokkos::SpaceAccessibility<typename GM::execution_space, typename V::memory_space>::accessible,
                "kosmos::dust: a View is not accessible from the GrainModel's execution space");
  (void)where;
}
}  // namespace Impl
}  // namespace dust
}  // namespace kosmos

#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS)
#include <kosmos/dust/temperature_cuda.hpp>
#endif

namespace kosmos {
namespace dust {

// ---------------------------------------------------------------------------------------------
// Stage 1. Inputs (any value type, read in double): wavelength (L, m, strictly increasing), dlambda
// (L, m), sigma (S, L, m^2), radius (S, m), number_per_mass (S, grains per unit dust mass).
// All must be finite and > 0. Builds the interpolation table when options.method == table.
template <class T, class ExecSpace, class Wave, class Width, class Sigma, class Radius, class Number>
GrainModel<T, ExecSpace> prepare_grains(const ExecSpace& space, const Wave& wavelength, const Width& dlambda,
                                        const Sigma& sigma, const Radius& radius, const Number& number_per_mass,
                                        const SolverOptions& options = SolverOptions()) {
  static_assert(Wave::rank == 1 && Width::rank == 1 && Radius::rank == 1 && Number::rank == 1,
                "kosmos::dust::prepare_grains: wavelength, dlambda, radius, number_per_mass must be rank 1");
  static_assert(Sigma::rank == 2, "kosmos::dust::prepare_grains: sigma must be rank 2 (species, wavelength)");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename Wave::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Width::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Sigma::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Radius::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Number::memory_space>::accessible,
                "kosmos::dust::prepare_grains: the Views must be accessible from the execution space");
  const char* where = "kosmos::dust::prepare_grains";
  Impl::check_options<T>(options);
  const std::size_t nl = wavelength.extent(0), ns = radius.extent(0);
  kosmos::Impl::require(nl >= 1, where, "the wavelength grid is empty");
  kosmos::Impl::require(ns >= 1, where, "there are no grain species");
  kosmos::Impl::require_extent(where, "dlambda", dlambda, 0, nl);
  kosmos::Impl::require_extent(where, "number_per_mass", number_per_mass, 0, ns);
  kosmos::Impl::require_extent(where, "sigma", sigma, 0, ns);
  kosmos::Impl::require_extent(where, "sigma", sigma, 1, nl);
  Impl::require_positive(space, where, "wavelength", wavelength);
  Impl::require_increasing(space, where, "wavelength", wavelength);
  Impl::require_positive(space, where, "dlambda", dlambda);
  Impl::require_positive(space, where, "radius", radius);
  Impl::require_positive(space, where, "number_per_mass", number_per_mass);
  Impl::require_positive_2d(space, where, "sigma", sigma);

  GrainModel<T, ExecSpace> g;
  auto alloc = [&](const char* label) {
    return Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label));
  };
  g.sigma_dlambda = typename GrainModel<T, ExecSpace>::matrix_type(alloc("kosmos::dust::sigma_dlambda"), nl, ns);
  g.emission_weight = typename GrainModel<T, ExecSpace>::matrix_type(alloc("kosmos::dust::emission_weight"), nl, ns);
  g.sed_weight = typename GrainModel<T, ExecSpace>::sed_matrix_type(alloc("kosmos::dust::sed_weight"), ns, nl);
  g.x = typename GrainModel<T, ExecSpace>::vector_type(alloc("kosmos::dust::x"), nl);
  g.scale = typename GrainModel<T, ExecSpace>::vector_type(alloc("kosmos::dust::scale"), ns);
  g.number_per_mass = typename GrainModel<T, ExecSpace>::vector_type(alloc("kosmos::dust::number_per_mass"), ns);
  g.guess_offset = typename GrainModel<T, ExecSpace>::vector_type(alloc("kosmos::dust::guess_offset"), ns);
  Impl::prepare_kernel(space, g, wavelength, dlambda, sigma, radius, number_per_mass, options);
  // The per-species scale must be representable and the SED weights must not overflow T.
  Impl::require_positive(space, where, "emission scale E_s(T_ref) (cross sections too small for this precision?)", g.scale);
  Impl::require_positive_2d(space, where,
                            "SED weight n_s sigma 2hc^2/lambda^5 (overflow: choose a larger mass unit or double)",
                            g.sed_weight, true);
  if (options.method == TemperatureMethod::table) Impl::build_table(space, g, options);
  return g;
}

template <class T, class Wave, class Width, class Sigma, class Radius, class Number>
GrainModel<T, typename Sigma::execution_space> prepare_grains(const Wave& wavelength, const Width& dlambda,
                                                              const Sigma& sigma, const Radius& radius,
                                                              const Number& number_per_mass,
                                                              const SolverOptions& options = SolverOptions()) {
  return prepare_grains<T>(typename Sigma::execution_space(), wavelength, dlambda, sigma, radius,
                           number_per_mass, options);
}

// Checks the cell inputs: intensity (C, L) finite and >= 0, dust_mass (C) finite and > 0. Messages
// number the cells from first_cell (for a chunk of a longer set).
template <class ExecSpace, class Intensity, class Mass>
void validate_cells(const ExecSpace& space, const Intensity& intensity, const Mass& dust_mass, int n_wavelengths,
                    std::int64_t first_cell = 0) {
  static_assert(Intensity::rank == 2 && Mass::rank == 1,
                "kosmos::dust::validate_cells: intensity (cell, wavelength) and dust_mass (cell)");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename Intensity::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Mass::memory_space>::accessible,
                "kosmos::dust::validate_cells: the Views must be accessible from the execution space");
  const char* where = "kosmos::dust::validate_cells";
  kosmos::Impl::require_extent(where, "intensity", intensity, 1, std::size_t(n_wavelengths));
  kosmos::Impl::require_extent(where, "dust_mass", dust_mass, 0, intensity.extent(0));
  std::int64_t first_invalid = 0;
  Impl::find_invalid_cell(space, intensity, dust_mass, Kokkos::Min<std::int64_t>(first_invalid));
  if (first_invalid < std::int64_t(intensity.size() + dust_mass.size()))
    throw invalid_input(
        Impl::invalid_cell_message(where, intensity, dust_mass, first_invalid, first_cell));
}

// Stage 2: heating(c, s) = sum_l intensity(c, l) sigma_dlambda(l, s) through KokkosBlas::gemm
// (cuBLAS on CUDA). intensity and heating: LayoutLeft T Views in ExecSpace's memory.
template <class T, class ExecSpace, class Intensity, class Heating>
void heating(const ExecSpace& space, const GrainModel<T, ExecSpace>& g, const Intensity& intensity,
             const Heating& heating_out) {
  static_assert(Intensity::rank == 2 && Heating::rank == 2, "kosmos::dust::heating: rank-2 Views");
  static_assert(std::is_same<typename Intensity::array_layout, Kokkos::LayoutLeft>::value &&
                    std::is_same<typename Heating::array_layout, Kokkos::LayoutLeft>::value,
                "kosmos::dust::heating: intensity and heating must be LayoutLeft (GEMM operands)");
  static_assert(std::is_same<typename Intensity::non_const_value_type, T>::value &&
                    std::is_same<typename Heating::value_type, T>::value,
                "kosmos::dust::heating: intensity and heating must hold the GrainModel's precision T");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename Intensity::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Heating::memory_space>::accessible,
                "kosmos::dust::heating: the Views must be accessible from the execution space");
  const char* where = "kosmos::dust::heating";
  kosmos::Impl::require_extent(where, "intensity", intensity, 1, std::size_t(g.wavelengths()));
  kosmos::Impl::require_extent(where, "heating", heating_out, 0, intensity.extent(0));
  kosmos::Impl::require_extent(where, "heating", heating_out, 1, std::size_t(g.species()));
  using device = typename GrainModel<T, ExecSpace>::device_type;
  Kokkos::View<const T**, Kokkos::LayoutLeft, device> a(intensity);
  Kokkos::View<T**, Kokkos::LayoutLeft, device> c(heating_out);
  kosmos::Impl::ScopedRegion region("kosmos::dust::heating");
  // Kokkos Kernels 3.4's gemm has no execution-space argument: it runs on the space's default
  // instance, so order it after `space`'s earlier work and before its later work.
  space.fence();
  KokkosBlas::gemm("N", "N", T(1), a, g.sigma_dlambda, T(0), c);
  ExecSpace().fence();
}

// Stage 3: temperature(c, s) and status(c, s) (TemperatureStatus) from heating(c, s).
// Generic Kokkos path; equilibrium_temperatures dispatches to the CUDA specialization when enabled.
template <class T, class ExecSpace, class Heating, class Temperature, class Status>
void equilibrium_temperatures_generic(const ExecSpace& space, const GrainModel<T, ExecSpace>& g,
                                      const Heating& heating_in, const Temperature& temperature,
                                      const Status& status, const SolverOptions& options = SolverOptions()) {
  using functor = Impl::TemperatureFunctor<T, ExecSpace, Heating, Temperature, Status>;
  const int nc = int(heating_in.extent(0)), ns = g.species(), nl = g.wavelengths();
  if (nc == 0) return;
  const bool table = options.method == TemperatureMethod::table;
  const char* where = "kosmos::dust::equilibrium_temperatures";
  kosmos::Impl::require(!table || g.log_emission_table.extent(0) == std::size_t(ns), where,
                        "method == table but the GrainModel was prepared without a table");
  const int team_size = kosmos::Impl::is_host_space<ExecSpace>() ? 1 : 128;
  const int chunk = kosmos::Impl::is_host_space<ExecSpace>() ? 64 : team_size;
  const int chunks = (nc + chunk - 1) / chunk;
  const std::size_t scratch =
      table ? functor::scratch_view::shmem_size(g.table.points) : 2 * functor::scratch_view::shmem_size(nl);
  // Grids whose per-species data exceed the team scratch read it from global memory instead.
  const bool in_scratch = scratch <= std::size_t(Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0));
  functor f{g, heating_in, temperature, status, Impl::solver_params<T>(options), nc, chunk, chunks};
  // non_blocking_policy here and in stage 4: EmissionPipeline queues them on several instances.
  auto launch = [&](const char* label, auto tag, std::size_t bytes) {
    using policy = Kokkos::TeamPolicy<ExecSpace, decltype(tag)>;
    Kokkos::parallel_for(label,
                         kosmos::Impl::non_blocking_policy(policy(space, ns * chunks, team_size))
                             .set_scratch_size(0, Kokkos::PerTeam(bytes)),
                         f);
  };
  if (table && in_scratch) launch("kosmos::dust::temperatures_table", typename functor::TableTag(), scratch);
  if (table && !in_scratch) launch("kosmos::dust::temperatures_table_global", typename functor::TableGlobalTag(), 0);
  if (!table && in_scratch) launch("kosmos::dust::temperatures_newton", typename functor::NewtonTag(), scratch);
  if (!table && !in_scratch) launch("kosmos::dust::temperatures_newton_global", typename functor::NewtonGlobalTag(), 0);
}

template <class T, class ExecSpace, class Heating, class Temperature, class Status>
void equilibrium_temperatures(const ExecSpace& space, const GrainModel<T, ExecSpace>& g, const Heating& heating_in,
                              const Temperature& temperature, const Status& status,
                              const SolverOptions& options = SolverOptions()) {
  static_assert(Heating::rank == 2 && Temperature::rank == 2 && Status::rank == 2,
                "kosmos::dust::equilibrium_temperatures: heating, temperature, status must be rank 2 (cell, species)");
  static_assert(std::is_same<typename Temperature::value_type, T>::value,
                "kosmos::dust::equilibrium_temperatures: temperature must hold the GrainModel's precision T");
  static_assert(std::is_same<typename Status::value_type, int>::value,
                "kosmos::dust::equilibrium_temperatures: status must hold int");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename Heating::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Temperature::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Status::memory_space>::accessible,
                "kosmos::dust::equilibrium_temperatures: the Views must be accessible from the execution space");
  const char* where = "kosmos::dust::equilibrium_temperatures";
  Impl::check_options<T>(options);
  const std::size_t nc = heating_in.extent(0);
  kosmos::Impl::require_extent(where, "heating", heating_in, 1, std::size_t(g.species()));
  kosmos::Impl::require_extent(where, "temperature", temperature, 0, nc);
  kosmos::Impl::require_extent(where, "temperature", temperature, 1, std::size_t(g.species()));
  kosmos::Impl::require_extent(where, "status", status, 0, nc);
  kosmos::Impl::require_extent(where, "status", status, 1, std::size_t(g.species()));
  kosmos::Impl::ScopedRegion region("kosmos::dust::equilibrium_temperatures");
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS)
  if constexpr (Impl::HasCudaSpecialization<ExecSpace>::value) {
    // The hand-tuned kernel keeps the weights in shared memory; larger grids take the generic path.
    if (options.use_cuda_specialization && options.method == TemperatureMethod::newton &&
        Impl::cuda_newton_fits<T>(g.wavelengths())) {
      Impl::equilibrium_temperatures_cuda(space, g, heating_in, temperature, status, options);
      return;
    }
  }
#endif
  equilibrium_temperatures_generic(space, g, heating_in, temperature, status, options);
}

// Stage 4, Eq. 10: sed(c, l) = dust_mass(c) sum_s n_s sigma_{s,l} B(lambda_l, temperature(c, s)).
// Generic Kokkos path; emission_sed dispatches to the CUDA specialization when enabled.
template <class T, class ExecSpace, class Temperature, class Mass, class Sed>
void emission_sed_generic(const ExecSpace& space, const GrainModel<T, ExecSpace>& g, const Temperature& temperature,
                          const Mass& dust_mass, const Sed& sed) {
  const std::int64_t nc = std::int64_t(temperature.extent(0)), nl = g.wavelengths();
  const int ns = g.species();
  // Consecutive threads write consecutive SED elements: cells (LayoutLeft) or wavelengths (LayoutRight).
  constexpr bool wavelength_fastest = std::is_same<typename Sed::array_layout, Kokkos::LayoutRight>::value;
  auto sw = g.sed_weight;
  auto x = g.x;
  Kokkos::parallel_for(
      "kosmos::dust::emission_sed",
      kosmos::Impl::non_blocking_policy(
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, nc * nl)),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t c = wavelength_fastest ? i / nl : i % nc;
        const int l = int(wavelength_fastest ? i % nl : i / nc);
        const T xl = x(l);
        T sum = 0;
        for (int s = 0; s < ns; ++s) sum += sw(s, l) * planck_occupation(xl / T(temperature(c, s)));
        sed(c, l) = T(dust_mass(c)) * sum;
      });
}

template <class T, class ExecSpace, class Temperature, class Mass, class Sed>
void emission_sed(const ExecSpace& space, const GrainModel<T, ExecSpace>& g, const Temperature& temperature,
                  const Mass& dust_mass, const Sed& sed, const SolverOptions& options = SolverOptions()) {
  static_assert(Temperature::rank == 2 && Mass::rank == 1 && Sed::rank == 2,
                "kosmos::dust::emission_sed: temperature (cell, species), dust_mass (cell), sed (cell, wavelength)");
  static_assert(std::is_same<typename Sed::value_type, T>::value,
                "kosmos::dust::emission_sed: sed must hold the GrainModel's precision T");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename Temperature::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Mass::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Sed::memory_space>::accessible,
                "kosmos::dust::emission_sed: the Views must be accessible from the execution space");
  const char* where = "kosmos::dust::emission_sed";
  const std::size_t nc = temperature.extent(0);
  kosmos::Impl::require_extent(where, "temperature", temperature, 1, std::size_t(g.species()));
  kosmos::Impl::require_extent(where, "dust_mass", dust_mass, 0, nc);
  kosmos::Impl::require_extent(where, "sed", sed, 0, nc);
  kosmos::Impl::require_extent(where, "sed", sed, 1, std::size_t(g.wavelengths()));
  kosmos::Impl::ScopedRegion region("kosmos::dust::emission_sed");
#if defined(KOSMOS_ENABLE_CUDA_SPECIALIZATIONS)
  if constexpr (Impl::HasCudaSpecialization<ExecSpace>::value) {
    if (options.use_cuda_specialization) {
      Impl::emission_sed_cuda(space, g, temperature, dust_mass, sed, options);
      return;
    }
  }
#endif
  (void)options;
  emission_sed_generic(space, g, temperature, dust_mass, sed);
}

template <class T, class ExecSpace, class Temperature, class Mass, class Sed>
void emission_sed(const GrainModel<T, ExecSpace>& g, const Temperature& temperature, const Mass& dust_mass,
                  const Sed& sed, const SolverOptions& options = SolverOptions()) {
  emission_sed(ExecSpace(), g, temperature, dust_mass, sed, options);
}
template <class T, class ExecSpace, class Heating, class Temperature, class Status>
void equilibrium_temperatures(const GrainModel<T, ExecSpace>& g, const Heating& heating_in,
                              const Temperature& temperature, const Status& status,
                              const SolverOptions& options = SolverOptions()) {
  equilibrium_temperatures(ExecSpace(), g, heating_in, temperature, status, options);
}
template <class T, class ExecSpace, class Intensity, class Heating>
void heating(const GrainModel<T, ExecSpace>& g, const Intensity& intensity, const Heating& heating_out) {
  heating(ExecSpace(), g, intensity, heating_out);
}
}  // namespace dust
}  // namespace kosmos

namespace kosmos {
namespace dust {
// Wall-clock seconds of stages 2-4 (heating includes input validation); dust_emission fills it in,
// fencing after every stage, only when one is passed.
struct StageTimes {
  double heating = 0, temperature = 0, sed = 0;
};

// Stages 2-4 for a batch of cells, with input validation (validate_cells) unless validate is false:
// intensity (C, L) and heating (C, S) LayoutLeft T Views, dust_mass (C), temperature and status
// (C, S), sed (C, L). heating is workspace and holds L_h afterwards.
template <class T, class ExecSpace, class Intensity, class Mass, class Heating, class Temperature, class Status,
          class Sed>
void dust_emission(const ExecSpace& space, const GrainModel<T, ExecSpace>& g, const Intensity& intensity,
                   const Mass& dust_mass, const Heating& heating_work, const Temperature& temperature,
                   const Status& status, const Sed& sed, const SolverOptions& options = SolverOptions(),
                   bool validate = true, StageTimes* times = nullptr) {
  using clock = std::chrono::steady_clock;
  auto since = clock::now();
  auto lap = [&](double StageTimes::*stage) {
    if (!times) return;
    space.fence();
    const auto now = clock::now();
    times->*stage = std::chrono::duration<double>(now - since).count();
    since = now;
  };
  if (validate) validate_cells(space, intensity, dust_mass, g.wavelengths());
  heating(space, g, intensity, heating_work);
  lap(&StageTimes::heating);
  equilibrium_temperatures(space, g, heating_work, temperature, status, options);
  lap(&StageTimes::temperature);
  emission_sed(space, g, temperature, dust_mass, sed, options);
  lap(&StageTimes::sed);
}
}  // namespace dust
}  // namespace kosmos

namespace kosmos {
namespace dust {
template <class Intensity, class Mass>
void validate_cells(const Intensity& intensity, const Mass& dust_mass, int n_wavelengths) {
  validate_cells(typename Intensity::execution_space(), intensity, dust_mass, n_wavelengths);
}
template <class T, class ExecSpace, class Intensity, class Mass, class Heating, class Temperature, class Status,
          class Sed>
void dust_emission(const GrainModel<T, ExecSpace>& g, const Intensity& intensity, const Mass& dust_mass,
                   const Heating& heating_work, const Temperature& temperature, const Status& status, const Sed& sed,
                   const SolverOptions& options = SolverOptions(), bool validate = true) {
  dust_emission(ExecSpace(), g, intensity, dust_mass, heating_work, temperature, status, sed, options, validate);
}
}  // namespace dust
}  // namespace kosmos
