// Kernels of the dust module on every enabled space, against long-double references: energy
// balance, grey grains in blackbody fields, bisection, float vs double SEDs, the integrated SED
// (energy conservation of Eq. 10), the table method, input errors and the floor/ceiling cases.
#include "dust_test_problem.hpp"

#include <test_spaces.hpp>

#include <limits>

namespace {
using namespace dust_test;
using kosmos::dust::SolverOptions;
using kosmos::dust::TemperatureMethod;

template <class Space>
class DustTest : public ::testing::Test {};
TYPED_TEST_SUITE(DustTest, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

// The graphite problem shared by several tests: 161 wavelengths, 21 sizes, 24 cells.
const Problem& graphite() {
  static const Problem p = graphite_problem(161, 4, 24);
  return p;
}

// Bisection temperatures of graphite(), computed once per process.
double reference_temperature(int c, int s) {
  static const std::vector<double> t = [] {
    const auto& p = graphite();
    std::vector<double> out;
    for (int cc = 0; cc < p.nc(); ++cc)
      for (int ss = 0; ss < p.ns(); ++ss) out.push_back(bisect_temperature(p, ss, heating_ref(p, cc, ss)));
    return out;
  }();
  return t[std::size_t(c) * graphite().ns() + s];
}

// A grey grain (constant sigma) in I = B(T_rad): Eq. 6 and Eq. 7 are the same sum, so T = T_rad.
Problem grey_problem(const std::vector<double>& t_rad) {
  Problem p;
  const auto w = kosmos::dust::log_wavelength_grid(0.0912, 1000.0, 400);
  const auto d = kosmos::dust::bin_widths(w);
  for (std::size_t l = 0; l < w.size(); ++l) {
    p.wavelength.push_back(w[l] * 1e-6);
    p.width.push_back(d[l] * 1e-6);
  }
  for (double a : {1e-8, 1e-7, 1e-6}) {
    p.radius.push_back(a);
    p.number_per_mass.push_back(1e15);
    p.sigma.emplace_back(w.size(), M_PI * a * a);
  }
  for (double t : t_rad) {
    p.dust_mass.push_back(1.0);
    std::vector<double> row;
    for (std::size_t l = 0; l < w.size(); ++l) row.push_back(double(planck(p.wavelength[l], t)));
    p.intensity.push_back(row);
  }
  return p;
}

// bound applies where the method is exact up to interpolation; above the table (1500 K) the table
// method falls back to Newton and tolerance / 3 applies.
template <class T, class Space>
void check_grey(TemperatureMethod method, double tolerance, double bound) {
  const std::vector<double> t_rad = {4.0, 10.0, 20.0, 75.0, 300.0, 1000.0, 2500.0};
  const auto p = grey_problem(t_rad);
  SolverOptions o;
  o.method = method;
  o.tolerance = tolerance;
  const auto r = run<T, Space>(p, o);
  for (int c = 0; c < p.nc(); ++c)
    for (int s = 0; s < p.ns(); ++s) {
      EXPECT_EQ(r.st(c, s), kosmos::dust::status_converged) << "T_rad " << t_rad[c];
      const double b = method == TemperatureMethod::table && t_rad[c] > 1500 ? tolerance / 3 : bound;
      EXPECT_NEAR(double(r.t(c, s)) / t_rad[c], 1.0, b) << "T_rad " << t_rad[c] << " species " << s;
    }
}

TYPED_TEST(DustTest, GreyGrainReachesRadiationTemperature) {
  using Space = TypeParam;
  // |E/L - 1| <= tol and dlnE/dlnT >= 4 - 1 for a grey grain bound |T/T_rad - 1| by tol / 3.
  check_grey<double, Space>(TemperatureMethod::newton, 1e-3, 1e-3 / 3);
  check_grey<double, Space>(TemperatureMethod::newton, 1e-10, 1e-10);
  check_grey<float, Space>(TemperatureMethod::newton, 1e-3, 1e-3 / 3);
  check_grey<float, Space>(TemperatureMethod::newton, 1e-5, 1e-5);
  check_grey<double, Space>(TemperatureMethod::table, 1e-3, 2e-5);  // interpolation error only
}

// Energy balance against the long-double sums and the bisection reference temperature.
template <class T, class Space>
void check_energy_balance(TemperatureMethod method) {
  const auto& p = graphite();
  SolverOptions o;
  o.method = method;
  const auto r = run<T, Space>(p, o);
  const double slack = std::is_same<T, float>::value ? 2e-5 : 1e-12;
  const double tol = method == TemperatureMethod::newton ? o.tolerance : 1e-4;
  for (int c = 0; c < p.nc(); ++c)
    for (int s = 0; s < p.ns(); ++s) {
      ASSERT_EQ(r.st(c, s), kosmos::dust::status_converged) << c << "," << s;
      const LD l_h = heating_ref(p, c, s);
      EXPECT_NEAR(double(r.l_h(c, s) / l_h), 1.0, (std::is_same<T, float>::value ? 3e-5 : 1e-13));
      const LD e = emission_ref(p, s, LD(r.t(c, s)));
      EXPECT_LE(std::fabs(double(e / l_h - 1)), tol + slack) << "cell " << c << " species " << s << " T " << r.t(c, s);
      const double t_ref = reference_temperature(c, s);
      EXPECT_LE(std::fabs(double(r.t(c, s)) / t_ref - 1), tol + slack) << "cell " << c << " species " << s;
      EXPECT_GT(t_ref, o.min_temperature);
      EXPECT_LT(t_ref, 2000.0);
    }
}

TYPED_TEST(DustTest, EnergyBalanceNewtonDouble) { check_energy_balance<double, TypeParam>(TemperatureMethod::newton); }
TYPED_TEST(DustTest, EnergyBalanceNewtonFloat) { check_energy_balance<float, TypeParam>(TemperatureMethod::newton); }
TYPED_TEST(DustTest, EnergyBalanceTable) {
  check_energy_balance<double, TypeParam>(TemperatureMethod::table);
  check_energy_balance<float, TypeParam>(TemperatureMethod::table);
}

// Eq. 10 conserves energy: sum_l sed(c,l) dlambda_l = m_c sum_s n_s E_s(T_cs) ~ m_c sum_s n_s L_h.
template <class T, class Space>
void check_sed_conservation() {
  const auto& p = graphite();
  const auto r = run<T, Space>(p);
  for (int c = 0; c < p.nc(); ++c) {
    LD emitted = 0, absorbed = 0, from_t = 0;
    for (int l = 0; l < p.nl(); ++l) emitted += LD(r.f(c, l)) * LD(p.width[l]);
    for (int s = 0; s < p.ns(); ++s) {
      absorbed += LD(p.dust_mass[c]) * LD(p.number_per_mass[s]) * heating_ref(p, c, s);
      from_t += LD(p.dust_mass[c]) * LD(p.number_per_mass[s]) * emission_ref(p, s, LD(r.t(c, s)));
    }
    const double eps = std::is_same<T, float>::value ? 2e-5 : 1e-12;
    EXPECT_NEAR(double(emitted / from_t), 1.0, eps) << "cell " << c;
    EXPECT_NEAR(double(emitted / absorbed), 1.0, 1e-3 + eps) << "cell " << c;
  }
}
TYPED_TEST(DustTest, SedConservesEnergy) {
  check_sed_conservation<double, TypeParam>();
  check_sed_conservation<float, TypeParam>();
}

// The paper's criterion: float SED within 0.1 % of double for lambda > 20 micron (SED-weighted mean
// over cells of the ratio, per wavelength, as in its Fig. 1).
TYPED_TEST(DustTest, FloatSedMatchesDoubleLongward20Micron) {
  using Space = TypeParam;
  const auto& p = graphite();
  const auto rf = run<float, Space>(p);
  const auto rd = run<double, Space>(p);
  int checked = 0;
  for (int l = 0; l < p.nl(); ++l) {
    if (p.wavelength[l] <= 20e-6) continue;
    double weighted = 0, weight = 0;
    for (int c = 0; c < p.nc(); ++c) {
      ASSERT_TRUE(std::isfinite(rf.f(c, l)));
      weighted += rd.f(c, l) * (double(rf.f(c, l)) / rd.f(c, l) - 1);
      weight += rd.f(c, l);
    }
    EXPECT_LT(std::fabs(weighted / weight), 1e-3) << "lambda " << p.wavelength[l];
    ++checked;
  }
  EXPECT_GT(checked, 40);
}

// A zero field: status no_heating, T = 0 and exactly zero emission; a huge field: the ceiling.
TYPED_TEST(DustTest, ZeroFieldEmitsNothingAndHugeFieldHitsTheCeiling) {
  using Space = TypeParam;
  auto p = graphite_problem(81, 10, 3);
  std::fill(p.intensity[0].begin(), p.intensity[0].end(), 0.0);
  for (auto& v : p.intensity[2]) v *= 1e30;  // far above 3000 K
  for (auto method : {TemperatureMethod::newton, TemperatureMethod::table}) {
    SolverOptions o;
    o.method = method;
    const auto r = run<double, Space>(p, o);
    const auto rf = run<float, Space>(p, o);
    for (int s = 0; s < p.ns(); ++s) {
      EXPECT_EQ(r.st(0, s), kosmos::dust::status_no_heating);
      EXPECT_EQ(rf.st(0, s), kosmos::dust::status_no_heating);
      EXPECT_EQ(r.t(0, s), 0.0);
      EXPECT_EQ(rf.t(0, s), 0.0f);
      EXPECT_EQ(r.st(1, s), kosmos::dust::status_converged);
      EXPECT_EQ(r.st(2, s), kosmos::dust::status_at_ceiling);
      EXPECT_EQ(r.t(2, s), o.max_temperature);
    }
    for (int l = 0; l < p.nl(); ++l) {
      EXPECT_EQ(r.f(0, l), 0.0) << l;
      EXPECT_EQ(rf.f(0, l), 0.0f) << l;
    }
  }
}

// Stage 3 alone on given heating values: each one the solver must classify without a solve.
template <class T, class Space>
void check_heating_extremes(TemperatureMethod method) {
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  const auto p = graphite_problem(81, 20, 1);
  DeviceProblem<T, Space> d(p);
  SolverOptions o;
  o.method = method;
  const auto g = d.prepare(o);
  const T big = std::numeric_limits<T>::max(), inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN(), tiny = std::numeric_limits<T>::denorm_min();
  const std::vector<T> heating = {T(0), big, T(0.5) * big, inf, nan, T(-1), tiny};
  const std::vector<int> expected = {kosmos::dust::status_no_heating,      kosmos::dust::status_at_ceiling,
                                     kosmos::dust::status_at_ceiling,      kosmos::dust::status_at_ceiling,
                                     kosmos::dust::status_invalid_heating, kosmos::dust::status_invalid_heating,
                                     kosmos::dust::status_at_floor};
  const int nc = int(heating.size()), ns = p.ns();
  Kokkos::View<T**, Kokkos::LayoutLeft, device> heat("heating", nc, ns), temperature("T", nc, ns);
  Kokkos::View<int**, Kokkos::LayoutLeft, device> status("status", nc, ns);
  auto h = Kokkos::create_mirror_view(heat);
  for (int c = 0; c < nc; ++c)
    for (int s = 0; s < ns; ++s) h(c, s) = heating[c];
  Kokkos::deep_copy(heat, h);
  kosmos::dust::equilibrium_temperatures(Space(), g, heat, temperature, status, o);
  const auto ht = to_host(temperature);
  const auto hs = to_host(status);
  for (int c = 0; c < nc; ++c)
    for (int s = 0; s < ns; ++s) {
      const std::size_t i = c + std::size_t(nc) * s;
      EXPECT_EQ(hs[i], expected[c]) << "heating " << heating[c] << " species " << s;
      const T t_expected = expected[c] == kosmos::dust::status_no_heating   ? T(0)
                           : expected[c] == kosmos::dust::status_at_ceiling ? T(o.max_temperature)
                           : expected[c] == kosmos::dust::status_at_floor   ? T(o.min_temperature)
                                                                            : nan;
      if (std::isnan(t_expected)) {
        EXPECT_TRUE(std::isnan(ht[i])) << "heating " << heating[c];
      } else {
        EXPECT_EQ(ht[i], t_expected) << "heating " << heating[c];
      }
    }
}

TYPED_TEST(DustTest, FiniteHugeHeatingIsTheCeilingNotAnOverflow) {
  for (auto method : {TemperatureMethod::newton, TemperatureMethod::table}) {
    check_heating_extremes<double, TypeParam>(method);
    check_heating_extremes<float, TypeParam>(method);
  }
}

// Grids whose per-species weights (Newton) or tables exceed the team scratch fall back to reading
// them from global memory; the temperatures still balance the long-double emission and heating.
template <class T, class Space>
void check_global_fallback(TemperatureMethod method, int nl, int table_points) {
  const auto p = graphite_problem(nl, 40, 3);
  SolverOptions o;
  o.method = method;
  o.table_points = table_points;
  const std::size_t per_species = method == TemperatureMethod::newton ? 2 * std::size_t(nl) * sizeof(T)
                                                                      : std::size_t(table_points) * sizeof(T);
  ASSERT_GT(per_species, std::size_t(Kokkos::TeamPolicy<Space>::scratch_size_max(0)))
      << "the problem must exceed the scratch to test the fallback";
  const auto r = run<T, Space>(p, o);
  const double tol = method == TemperatureMethod::newton ? o.tolerance : 1e-4;
  for (int c = 0; c < p.nc(); ++c)
    for (int s = 0; s < p.ns(); ++s) {
      ASSERT_EQ(r.st(c, s), kosmos::dust::status_converged) << c << "," << s;
      const LD l_h = heating_ref(p, c, s);
      EXPECT_LE(std::fabs(double(emission_ref(p, s, LD(r.t(c, s))) / l_h - 1)), tol + 2e-5) << c << "," << s;
    }
}

TYPED_TEST(DustTest, BeyondTheScratchFallsBackToGlobalMemory) {
  check_global_fallback<double, TypeParam>(TemperatureMethod::newton, 3200, 0);
  check_global_fallback<float, TypeParam>(TemperatureMethod::newton, 6400, 0);
  check_global_fallback<double, TypeParam>(TemperatureMethod::table, 161, 8000);
}

// Stage 2 (GEMM) alone against the long-double sum, on a non-square problem.
TYPED_TEST(DustTest, HeatingGemmMatchesReference) {
  using Space = TypeParam;
  const auto p = graphite_problem(97, 3, 37, 5);
  const auto r = run<double, Space>(p);
  for (int c = 0; c < p.nc(); ++c)
    for (int s = 0; s < p.ns(); ++s)
      EXPECT_NEAR(double(r.l_h(c, s) / heating_ref(p, c, s)), 1.0, 1e-13) << c << "," << s;
}

TYPED_TEST(DustTest, TableAndNewtonAgree) {
  using Space = TypeParam;
  const auto& p = graphite();
  SolverOptions tight;
  tight.tolerance = 1e-9;
  SolverOptions table;
  table.method = TemperatureMethod::table;
  const auto rn = run<double, Space>(p, tight);
  const auto rt = run<double, Space>(p, table);
  for (int c = 0; c < p.nc(); ++c)
    for (int s = 0; s < p.ns(); ++s) EXPECT_NEAR(rt.t(c, s) / rn.t(c, s), 1.0, 2e-5) << c << "," << s;
}

// On Cuda: the hand-tuned kernel against the generic Kokkos path (both must meet the tolerance,
// so their temperatures agree to about the tolerance).
template <class T, class Space>
void check_specialization_matches_generic() {
  const auto& p = graphite();
  SolverOptions special, generic;
  generic.use_cuda_specialization = false;
  const auto a = run<T, Space>(p, special);
  const auto b = run<T, Space>(p, generic);
  for (int c = 0; c < p.nc(); ++c)
    for (int s = 0; s < p.ns(); ++s) {
      EXPECT_EQ(a.st(c, s), b.st(c, s));
      EXPECT_NEAR(double(a.t(c, s)) / double(b.t(c, s)), 1.0, 1e-3) << c << "," << s;
    }
}
// Stage 4 alone from the same temperatures: specialization (fast exp for float) against generic.
template <class T, class Space>
void check_sed_specialization_matches_generic() {
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  const auto& p = graphite();
  DeviceProblem<T, Space> d(p);
  SolverOptions special, generic;
  generic.use_cuda_specialization = false;
  const auto g = d.prepare(generic);
  const int nc = p.nc(), ns = p.ns(), nl = p.nl();
  Kokkos::View<T**, Kokkos::LayoutLeft, device> heat("heating", nc, ns), temperature("T", nc, ns), a("a", nc, nl),
      b("b", nc, nl);
  Kokkos::View<int**, Kokkos::LayoutLeft, device> status("status", nc, ns);
  kosmos::dust::heating(Space(), g, d.intensity, heat);
  kosmos::dust::equilibrium_temperatures(Space(), g, heat, temperature, status, generic);
  kosmos::dust::emission_sed(Space(), g, temperature, d.dust_mass, a, special);
  kosmos::dust::emission_sed(Space(), g, temperature, d.dust_mass, b, generic);
  const auto ha = to_host(a), hb = to_host(b);
  const double rel = std::is_same<T, float>::value ? 2e-4 : 1e-13;
  for (int c = 0; c < nc; ++c) {
    double peak = 0;
    for (int l = 0; l < nl; ++l) peak = std::max(peak, double(hb[c + std::size_t(nc) * l]));
    for (int l = 0; l < nl; ++l) {
      const double x = ha[c + std::size_t(nc) * l], y = hb[c + std::size_t(nc) * l];
      EXPECT_LE(std::fabs(x - y), rel * y + 1e-6 * peak) << "cell " << c << " wavelength " << l;
    }
  }
}

TYPED_TEST(DustTest, CudaSpecializationMatchesGenericPath) {
  KOSMOS_SKIP_WITHOUT_CUDA_SPECIALIZATION(kosmos::dust::Impl::HasCudaSpecialization<TypeParam>::value,
                                          TypeParam);
  check_specialization_matches_generic<float, TypeParam>();
  check_specialization_matches_generic<double, TypeParam>();
  check_sed_specialization_matches_generic<float, TypeParam>();
  check_sed_specialization_matches_generic<double, TypeParam>();
}

// ---- bad input --------------------------------------------------------------------------------
template <class Fn>
void expect_invalid(Fn&& fn, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one mentioning '" << fragment << "'";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TYPED_TEST(DustTest, BadInputGetsAClearError) {
  using Space = TypeParam;
  const auto base = graphite_problem(41, 20, 6);
  auto run_it = [](const Problem& p) { run<double, Space>(p); };
  {
    auto p = base;
    p.intensity[3][7] = -1.0;
    expect_invalid([&] { run_it(p); }, "intensity(3, 7) = -1 must be finite and >= 0");
  }
  {
    auto p = base;
    p.intensity[4][2] = std::numeric_limits<double>::quiet_NaN();
    expect_invalid([&] { run_it(p); }, "intensity(4, 2) = nan");
  }
  {
    auto p = base;
    p.sigma[1][5] = 0.0;
    expect_invalid([&] { run_it(p); }, "sigma(1, 5) = 0 must be finite and > 0");
  }
  {
    auto p = base;
    p.sigma[0][3] = -2e-20;
    expect_invalid([&] { run_it(p); }, "sigma(0, 3)");
  }
  {
    auto p = base;
    p.dust_mass[2] = 0.0;
    expect_invalid([&] { run_it(p); }, "dust_mass(2) = 0 must be finite and > 0");
  }
  {
    auto p = base;
    p.dust_mass[5] = -3.0;
    expect_invalid([&] { run_it(p); }, "dust_mass(5) = -3");
  }
  {
    auto p = base;
    p.number_per_mass[1] = 0.0;
    expect_invalid([&] { run_it(p); }, "number_per_mass(1) = 0");
  }
  {
    auto p = base;
    std::swap(p.wavelength[10], p.wavelength[11]);
    expect_invalid([&] { run_it(p); }, "wavelength must be strictly increasing, but wavelength(11)");
  }
  {
    auto p = base;
    p.width[0] = std::numeric_limits<double>::infinity();
    expect_invalid([&] { run_it(p); }, "dlambda(0) = inf");
  }
  // Mismatched grids: cross sections for a different number of wavelengths.
  {
    DeviceProblem<double, Space> d(base);
    Kokkos::View<double**, Kokkos::LayoutLeft, typename DeviceProblem<double, Space>::device> sigma("s", base.ns(),
                                                                                                  base.nl() + 1);
    expect_invalid([&] { kosmos::dust::prepare_grains<double>(Space(), d.wavelength, d.width, sigma, d.radius, d.number); },
                   "sigma.extent(1) is 42, expected 41");
    const auto g = d.prepare(SolverOptions());
    Kokkos::View<double**, Kokkos::LayoutLeft, typename DeviceProblem<double, Space>::device> intensity(
        "i", base.nc(), base.nl() - 1),
        heating("h", base.nc(), base.ns());
    expect_invalid([&] { kosmos::dust::heating(Space(), g, intensity, heating); },
                   "intensity.extent(1) is 40, expected 41");
  }
  // Bad options.
  {
    SolverOptions o;
    o.tolerance = 1e-9;
    expect_invalid([&] { run<float, Space>(base, o); }, "tolerance = ");
    SolverOptions o2;
    o2.min_temperature = 10;
    o2.max_temperature = 5;
    expect_invalid([&] { run<double, Space>(base, o2); }, "temperature range");
  }
}
}  // namespace

namespace {
// The paper's claim for its fitted guess (Eqs. 11-12): at most 7 Newton iterations for graphite and
// silicate below 1000 K. Our iteration is Newton in ln T from the same guess; allow 5 (measured: 3; the count
// includes the final verifying evaluation).
template <class T>
void check_iteration_counts(const char* table) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  const auto p = graphite_problem(241, 2, 48, 3, table);
  DeviceProblem<double, Host> d(p);
  SolverOptions o;
  const auto g = kosmos::dust::prepare_grains<T>(Host(), d.wavelength, d.width, d.sigma, d.radius, d.number, o);
  const auto params = kosmos::dust::Impl::solver_params<T>(o);
  int worst = 0;
  for (int s = 0; s < p.ns(); ++s) {
    const auto w = Kokkos::subview(g.emission_weight, Kokkos::ALL, s);
    for (int c = 0; c < p.nc(); ++c) {
      const T l_scaled = T(heating_ref(p, c, s) / g.scale(s));
      const T guess = kosmos::dust::Impl::initial_guess(params, l_scaled, g.guess_offset(s));
      const auto r = kosmos::dust::Impl::solve_newton(w, g.x, p.nl(), l_scaled, guess, params, kosmos::dust::LibraryExp());
      ASSERT_EQ(r.status, kosmos::dust::status_converged);
      worst = std::max(worst, r.iterations);
      // The guess itself is within a factor 2 of the answer.
      EXPECT_LT(std::fabs(std::log(double(guess) / double(r.temperature))), std::log(2.0)) << table << " " << s;
    }
  }
  EXPECT_LE(worst, 5) << table;
}
}  // namespace

TEST(DustNewton, FittedGuessNeedsFewIterations) {
  check_iteration_counts<double>("dust/draine_graphite_81.dat");
  check_iteration_counts<float>("dust/draine_graphite_81.dat");
  check_iteration_counts<double>("dust/draine_suvsilicate_81.dat");
}
