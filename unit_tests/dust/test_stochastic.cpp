// Stochastic heating (kosmos/dust/stochastic.hpp) on every enabled space: the Draine & Li (2001)
// heat capacities against laboratory values, P(T) of a tiny grain against the analytic
// single-photon limit, energy balance of the P(T) emission in the SED, the equilibrium limit of
// big grains against the equilibrium solver, the float emission against double, the zero field,
// and bad input.
#include "dust_test_problem.hpp"

#include <test_spaces.hpp>

#include <kosmos/dust/stochastic.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace {
using namespace dust_test;
using kosmos::dust::GrainMaterial;
using kosmos::dust::StochasticOptions;

constexpr double kBoltzmann = 1.380649e-23, kAvogadro = 6.02214076e23;

// Heat capacity per mole of atoms (J mol^-1 K^-1) of the Draine & Li (2001) model.
double molar_heat_capacity(GrainMaterial m, double t) {
  return kosmos::dust::heat_capacity_per_atom(m, t) * kAvogadro;
}

// Graphite at 298.15 K: C_p = 8.517 J mol^-1 K^-1 (NIST-JANAF / CRC Handbook); forsterite
// Mg2SiO4 (7 atoms): 118.6 J mol^-1 K^-1 (Robie & Hemingway 1995), i.e. 16.9 per mole of atoms.
// The model is a fit to such data (Draine & Li 2001, Figs. 1-2): 10 % and 15 %.
TEST(DustHeatCapacity, MatchesLaboratoryValuesAt298K) {
  EXPECT_NEAR(molar_heat_capacity(GrainMaterial::graphite, 298.15), 8.517, 0.10 * 8.517);
  EXPECT_NEAR(molar_heat_capacity(GrainMaterial::silicate, 298.15), 118.6 / 7, 0.15 * 118.6 / 7);
}

// Dulong-Petit at high temperature (3 k per atom), the 2-D Debye T^2 law of graphite at low T
// (C(2T)/C(T) = 4 for T << 863 K), and dE/dT = C between the two independent formulas.
TEST(DustHeatCapacity, LimitsAndConsistency) {
  for (auto m : {GrainMaterial::graphite, GrainMaterial::silicate}) {
    EXPECT_NEAR(kosmos::dust::heat_capacity_per_atom(m, 2e5) / kBoltzmann, 3.0, 1e-3);
    for (double t : {5.0, 30.0, 300.0, 2000.0}) {
      const double h = 1e-4 * t;
      const double de =
          (kosmos::dust::enthalpy_per_atom(m, t + h) - kosmos::dust::enthalpy_per_atom(m, t - h)) /
          (2 * h);
      EXPECT_NEAR(de / kosmos::dust::heat_capacity_per_atom(m, t), 1.0, 1e-6) << "T = " << t;
    }
  }
  const double c1 = kosmos::dust::heat_capacity_per_atom(GrainMaterial::graphite, 5.0);
  const double c2 = kosmos::dust::heat_capacity_per_atom(GrainMaterial::graphite, 10.0);
  EXPECT_NEAR(c2 / c1, 4.0, 0.01);
  EXPECT_THROW(kosmos::dust::enthalpy_per_atom(GrainMaterial::graphite, -1.0),
               kosmos::invalid_input);
}

// Graphite grains of the given radii (micron) in fields U x MMP83, nl wavelengths from the Lyman
// limit to 1000 micron; one grain per unit dust mass and unit cell masses, so the SED is per grain.
Problem field_problem(const std::vector<double>& radius_micron, const std::vector<double>& field,
                      int nl) {
  const auto t = kosmos::dust::read_draine_table(data_path("dust/draine_graphite_81.dat"));
  Problem p;
  const auto w = kosmos::dust::log_wavelength_grid(0.0912, 1000.0, nl);
  const auto d = kosmos::dust::bin_widths(w);
  for (int l = 0; l < nl; ++l) {
    p.wavelength.push_back(w[l] * 1e-6);
    p.width.push_back(d[l] * 1e-6);
  }
  for (double a : radius_micron) {
    p.radius.push_back(a * 1e-6);
    p.number_per_mass.push_back(1.0);
    p.sigma.push_back(kosmos::dust::absorption_cross_section(t, a, w));
  }
  for (double u : field) {
    p.dust_mass.push_back(1.0);
    std::vector<double> row;
    for (int l = 0; l < nl; ++l) row.push_back(u * kosmos::dust::mmp83_mean_intensity(w[l]));
    p.intensity.push_back(row);
  }
  return p;
}

struct StochasticResult {
  int nc, ns, nb;
  std::vector<double> temperature, sed_equilibrium, sed, probability, bin_temperature;
  std::vector<int> status;
  double t_eq(int c, int s) const { return temperature[c + std::size_t(nc) * s]; }
  double p(int c, int s, int j) const { return probability[(std::size_t(c) * ns + s) * nb + j]; }
  double tb(int c, int s, int j) const {
    return bin_temperature[(std::size_t(c) * ns + s) * nb + j];
  }
  int st(int c, int s) const { return status[std::size_t(c) * ns + s]; }
  double f(int c, int l, bool stochastic = true) const {
    return (stochastic ? sed : sed_equilibrium)[c + std::size_t(nc) * l];
  }
};

template <class V>
std::vector<double> to_host_double(const V& v) {
  const auto h = to_host(v);
  return std::vector<double>(h.begin(), h.end());
}

// The equilibrium pipeline of p in precision T: the grains, T_eq, the equilibrium SED, and every
// species as a graphite StochasticSpecies.
template <class Space, class T>
struct Equilibrium {
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  DeviceProblem<T, Space> d;
  kosmos::dust::GrainModel<T, Space> g;
  Kokkos::View<T**, Kokkos::LayoutLeft, device> temperature, sed;
  std::vector<kosmos::dust::StochasticSpecies> species;

  explicit Equilibrium(const Problem& p)
      : d(p),
        g(d.prepare(kosmos::dust::SolverOptions())),
        temperature("T", p.nc(), p.ns()),
        sed("sed", p.nc(), p.nl()) {
    Kokkos::View<T**, Kokkos::LayoutLeft, device> heating("heating", p.nc(), p.ns());
    Kokkos::View<int**, Kokkos::LayoutLeft, device> status("eq_status", p.nc(), p.ns());
    kosmos::dust::dust_emission(Space(), g, d.intensity, d.dust_mass, heating, temperature, status,
                                sed);
    for (int s = 0; s < p.ns(); ++s)
      species.push_back({s, GrainMaterial::graphite, p.radius[std::size_t(s)] * 1e6});
  }
};

// The equilibrium pipeline in precision T (double by default), then P(T) and the SED with every
// species stochastic.
template <class Space, class T = double>
StochasticResult run_stochastic(const Problem& p, const StochasticOptions& o = StochasticOptions(),
                                int emission_batch = -1) {
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  Equilibrium<Space, T> e(p);
  const auto& d = e.d;
  const auto& g = e.g;
  const auto& temperature = e.temperature;
  const auto& sed = e.sed;
  const int nc = p.nc(), ns = p.ns();
  const auto m = kosmos::dust::prepare_stochastic(Space(), g, e.species, o);
  Kokkos::View<double***, Kokkos::LayoutRight, device> probability("P", nc, ns, o.bins),
      bins("T_bins", nc, ns, o.bins);
  Kokkos::View<int**, Kokkos::LayoutRight, device> status("status", nc, ns),
      emission_status("status2", nc, ns);
  kosmos::dust::temperature_distributions(Space(), g, m, d.intensity, temperature, probability,
                                          bins, status);
  StochasticResult r{nc,
                     ns,
                     o.bins,
                     to_host_double(temperature),
                     to_host_double(sed),
                     {},
                     to_host(probability),
                     to_host(bins),
                     to_host(status)};
  if (emission_batch >= 0) {  // the SED changes emission_batch cells at a time
    kosmos::dust::add_stochastic_emission(
        Space(), g, m, d.intensity, temperature, d.dust_mass, sed, emission_status,
        kosmos::dust::stochastic_emission_work<T>(Space(), m, emission_batch));
  } else {
    kosmos::dust::add_stochastic_emission(Space(), g, m, d.intensity, temperature, d.dust_mass, sed,
                                          emission_status);
  }
  r.sed = to_host_double(sed);
  EXPECT_EQ(to_host(emission_status), to_host(status));
  return r;
}

template <class Space>
class DustStochasticTest : public ::testing::Test {};
TYPED_TEST_SUITE(DustStochasticTest, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

// The photon search's answers for the bounds, computed on Space.
template <class Space, class Search, class X>
std::vector<int> first_photons_at_least(const Search& search, const X& x,
                                        const std::vector<double>& bounds) {
  const int nl = int(x.extent(0));
  Kokkos::View<double*, typename X::device_type> bound("bound", bounds.size());
  Kokkos::View<int*, typename X::device_type> found("found", bounds.size());
  auto bound_h = Kokkos::create_mirror_view(bound);
  for (std::size_t i = 0; i < bounds.size(); ++i) bound_h(i) = bounds[i];
  Kokkos::deep_copy(bound, bound_h);
  const kosmos::dust::Impl::PhotonEnergies<X> eps{x, nl};
  Kokkos::parallel_for(
      Kokkos::RangePolicy<Space>(0, bounds.size()),
      KOKKOS_LAMBDA(const int i) { found(i) = search.first_at_least(bound(i), eps, nl); });
  const auto found_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), found);
  return std::vector<int>(found_h.data(), found_h.data() + bounds.size());
}

// The recursion's photon search (impl/photon_search.hpp) against a linear search of the same
// energies: every photon's energy and its neighbouring doubles, the midpoints, energies below and
// above the grid, zero and negative. DL07's grid gets cells of one photon at most (no walk); a grid
// with photons closer than the finest cells, the walk after the lookup.
TYPED_TEST(DustStochasticTest, PhotonSearchMatchesLinearSearch) {
  using Space = TypeParam;
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  std::vector<double> close = kosmos::dust::log_wavelength_grid(0.1, 1000.0, 300);
  for (std::size_t l = 10; l < close.size(); l += 37) close[l] = close[l - 1] * (1 + 1e-6);
  for (const bool dl07 : {true, false}) {
    const std::vector<double> grid = dl07 ? kosmos::dust::default_wavelength_grid() : close;
    const int nl = int(grid.size());
    Kokkos::View<float*, device> x("x", nl);
    auto x_h = Kokkos::create_mirror_view(x);
    for (int l = 0; l < nl; ++l) x_h(l) = float(kosmos::dust::constants::c2 / (grid[l] * 1e-6));
    Kokkos::deep_copy(x, x_h);
    const auto search = kosmos::dust::Impl::build_photon_search<device>(Space(), x);
    EXPECT_EQ(search.one_per_cell, dl07) << nl << " wavelengths";
    const kosmos::dust::Impl::PhotonEnergies<decltype(x_h)> eps_h{x_h, nl};
    std::vector<double> bounds = {0.0, -1.0, eps_h(0) / 10, eps_h(nl - 1) * 10,
                                  std::numeric_limits<double>::infinity()};
    for (int k = 0; k < nl; ++k) {
      const double e = eps_h(k);
      for (double b : {e, std::nextafter(e, 0.0), std::nextafter(e, 2 * e)}) bounds.push_back(b);
      if (k + 1 < nl) bounds.push_back(0.5 * (e + eps_h(k + 1)));
    }
    const std::vector<int> found = first_photons_at_least<Space>(search, x, bounds);
    for (std::size_t i = 0; i < bounds.size(); ++i) {
      int k = 0;
      while (k < nl && eps_h(k) < bounds[i]) ++k;
      ASSERT_EQ(found[i], k) << "bound " << bounds[i] << " of " << nl << " wavelengths";
    }
  }
}

// The enthalpy inverses of the P(T) kernel, computed on Space.
template <class Space, class Table, class Search>
std::vector<double> enthalpy_log_inverses(const Table& log_e, const Search& search, int q,
                                          double log_t0, double dlog_t,
                                          const std::vector<double>& energies) {
  Kokkos::View<double*, typename Table::device_type> e("e", energies.size()),
      log_t("log_t", energies.size());
  auto e_h = Kokkos::create_mirror_view(e);
  for (std::size_t i = 0; i < energies.size(); ++i) e_h(i) = energies[i];
  Kokkos::deep_copy(e, e_h);
  using row = decltype(Kokkos::subview(log_e, 0, Kokkos::ALL));
  using search_row = decltype(Kokkos::subview(search, 0, Kokkos::ALL));
  const kosmos::dust::Impl::LogTable<row, search_row> table{
      Kokkos::subview(log_e, q, Kokkos::ALL), log_t0, dlog_t, int(log_e.extent(1)),
      Kokkos::subview(search, q, Kokkos::ALL)};
  Kokkos::parallel_for(
      Kokkos::RangePolicy<Space>(0, energies.size()),
      KOKKOS_LAMBDA(const int i) { log_t(i) = table.log_inverse(e(i)); });
  const auto log_t_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), log_t);
  return std::vector<double>(log_t_h.data(), log_t_h.data() + energies.size());
}

// The kernel's inverse of ln E(ln T) (StochasticModel::enthalpy_search gives its search a few
// table points) against a linear search of the table, for a PAH-sized, a small and a big grain:
// every table point's energy and its neighbouring doubles, the midpoints, the search cells' edges,
// and energies below and above the table. The search table itself must bracket each cell.
TYPED_TEST(DustStochasticTest, EnthalpyInverseMatchesLinearSearch) {
  using Space = TypeParam;
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  const StochasticOptions o;
  const std::vector<std::pair<GrainMaterial, double>> grains = {{GrainMaterial::graphite, 0.00035},
                                                                {GrainMaterial::silicate, 0.003},
                                                                {GrainMaterial::graphite, 0.25}};
  const int nq = int(grains.size()), nk = o.table_points;
  Kokkos::View<double**, Kokkos::LayoutRight, device> log_e("log_e", nq, nk);
  auto log_e_h = Kokkos::create_mirror_view(log_e);
  for (int q = 0; q < nq; ++q) {
    const auto table = kosmos::dust::grain_log_enthalpy_table(grains[std::size_t(q)].first,
                                                              grains[std::size_t(q)].second, o);
    for (int k = 0; k < nk; ++k) log_e_h(q, k) = table[std::size_t(k)];
  }
  Kokkos::deep_copy(log_e, log_e_h);
  const auto search = kosmos::dust::Impl::enthalpy_search_table<device>(Space(), log_e_h);
  const auto search_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), search);
  const int cells = int(search.extent(1)) - 1;
  const double log_t0 = std::log(o.min_temperature);
  const double dlog_t = (std::log(o.max_temperature) - log_t0) / (nk - 1);
  for (int q = 0; q < nq; ++q) {
    const double first = log_e_h(q, 0), last = log_e_h(q, nk - 1);
    std::vector<double> energies = {std::exp(first) / 2, std::exp(last) * 2};
    for (int k = 0; k < nk; ++k) {
      const double e = std::exp(log_e_h(q, k));
      for (double b : {e, std::nextafter(e, 0.0), std::nextafter(e, 2 * e)}) energies.push_back(b);
      if (k + 1 < nk) energies.push_back(std::exp(0.5 * (log_e_h(q, k) + log_e_h(q, k + 1))));
    }
    for (int i = 0; i <= cells; ++i) {
      const double y = first + (last - first) * i / cells;
      // The cell's points bracket it: below its lower edge, at or above its upper edge.
      if (i > 0) {
        EXPECT_LT(log_e_h(q, search_h(q, i)), y) << "species " << q << " cell " << i;
      }
      if (i < cells) {
        EXPECT_GE(log_e_h(q, search_h(q, i + 1) + 1), first + (last - first) * (i + 1) / cells)
            << "species " << q << " cell " << i;
      }
      energies.push_back(std::exp(y));
    }
    const std::vector<double> found =
        enthalpy_log_inverses<Space>(log_e, search, q, log_t0, dlog_t, energies);
    for (std::size_t i = 0; i < energies.size(); ++i) {
      const double y = std::log(energies[i]);
      double expected = log_t0 + (nk - 1) * dlog_t;
      if (y <= first) {
        expected = log_t0;
      } else if (y < last) {
        int lo = 0;
        while (!(log_e_h(q, lo + 1) >= y)) ++lo;
        expected =
            log_t0 + (lo + (y - log_e_h(q, lo)) / (log_e_h(q, lo + 1) - log_e_h(q, lo))) * dlog_t;
      }
      // The device's logarithm may differ from the host's in its last bit.
      ASSERT_NEAR(found[i], expected, 1e-12 * std::fabs(expected) + 1e-12)
          << "species " << q << ", E = " << energies[i] << " J";
    }
  }
}

// A 10 Angstrom graphite grain (~470 C atoms) in the MMP83 field absorbs a photon about every
// few 1e4 s and cools in seconds: the single-photon limit (Guhathakurta & Draine 1989, Sect. IV;
// Draine & Li 2001, Sect. 6) holds, where the grain cools from E_0 + eps along dE/dt = -4 pi L(T),
// so P(T) dT = N(eps > E(T)) C(T) / L(T) dT with N the absorbed photon rate. The probability of
// T > T_x from the kernel against that integral evaluated here in long double (photon rates,
// Planck sums and the T quadrature independent of the kernel; only C(T) is shared): 5 %.
TYPED_TEST(DustStochasticTest, TinyGrainMatchesSinglePhotonLimit) {
  const Problem p = field_problem({0.001}, {1.0}, 241);
  StochasticOptions o;
  o.bins = 200;
  const auto r = run_stochastic<TypeParam>(p, o);
  ASSERT_EQ(r.st(0, 0), kosmos::dust::stochastic_ok);
  const double atoms = kosmos::dust::grain_atoms(GrainMaterial::graphite, 0.001) - 2;
  auto photons_above = [&](LD e) {
    LD n = 0;
    for (int l = 0; l < p.nl(); ++l) {
      const LD eps = 6.62607015e-34L * 299792458.0L / p.wavelength[l];
      if (eps > e) n += LD(p.intensity[0][l]) * p.sigma[0][l] * p.width[l] / eps;
    }
    return n;
  };
  auto density = [&](LD t) {
    const LD e = atoms * kosmos::dust::enthalpy_per_atom(GrainMaterial::graphite, double(t));
    return photons_above(e) * atoms *
           kosmos::dust::heat_capacity_per_atom(GrainMaterial::graphite, double(t)) /
           emission_ref(p, 0, t);
  };
  // int_{t_x}^{3000 K} P dT by Simpson in ln T on one grid from 30 K, cumulated from the top.
  const int n = 1200;
  const LD u0 = std::log(LD(30)), h = (std::log(LD(3000)) - u0) / n;
  std::vector<LD> integrand(n + 1), above_ref(n + 1, 0);
  for (int i = 0; i <= n; ++i) integrand[i] = density(std::exp(u0 + i * h)) * std::exp(u0 + i * h);
  for (int i = n - 2; i >= 0; i -= 2)
    above_ref[i] =
        above_ref[i + 2] + h / 3 * (integrand[i] + 4 * integrand[i + 1] + integrand[i + 2]);
  for (int i_x : {0, 180, 360, 560}) {  // T_x = 30, 60, 120, 250 K
    const double t_x = double(std::exp(u0 + i_x * h));
    const LD ref = above_ref[i_x];
    // The kernel's P(T > t_x): bins above, the straddling bin by its log-T share.
    double above = 0;
    for (int j = 0; j < r.nb; ++j) {
      const double lo = j ? std::sqrt(r.tb(0, 0, j - 1) * r.tb(0, 0, j)) : r.tb(0, 0, 0);
      const double hi = j + 1 < r.nb ? std::sqrt(r.tb(0, 0, j) * r.tb(0, 0, j + 1)) : r.tb(0, 0, j);
      if (lo >= t_x)
        above += r.p(0, 0, j);
      else if (hi > t_x)
        above += r.p(0, 0, j) * std::log(hi / t_x) / std::log(hi / lo);
    }
    EXPECT_NEAR(above / double(ref), 1.0, 0.05)
        << "T_x = " << t_x << " K: P(T > T_x) = " << above << ", limit " << double(ref);
  }
}

// Energy balance: the SED with P(T) emission integrates to the absorbed power (long-double
// reference of Eq. 6) for tiny to big grains and fields 1 to 1e3 x MMP83: 1e-3.
TYPED_TEST(DustStochasticTest, EmissionBalancesAbsorption) {
  const Problem p = field_problem({0.001, 0.003, 0.01, 0.03, 0.1}, {1.0, 1e3}, 161);
  const auto r = run_stochastic<TypeParam>(p);
  for (int c = 0; c < p.nc(); ++c) {
    LD emitted = 0, absorbed = 0;
    for (int s = 0; s < p.ns(); ++s) absorbed += heating_ref(p, c, s);
    for (int l = 0; l < p.nl(); ++l) emitted += LD(r.f(c, l)) * p.width[l];
    EXPECT_NEAR(double(emitted / absorbed), 1.0, 1e-3) << "cell " << c;
    for (int s = 0; s < p.ns(); ++s)
      EXPECT_EQ(r.st(c, s), kosmos::dust::stochastic_ok) << c << ", " << s;
  }
  // Stochastic heating moves emission of the tiny grains to short wavelengths: at 10 micron the
  // SED exceeds the equilibrium one (the 3-25 micron excess).
  int l10 = 0;
  while (p.wavelength[l10] < 10e-6) ++l10;
  EXPECT_GT(r.f(0, l10), 10 * r.f(0, l10, false));
}

// In float (the tool's --precision float) the P(T) emission is evaluated in float: the SED agrees
// with the double run to 5e-5 wherever it is above 1e-36 of its peak (and 1e-30, inside float's
// normal range), deep into the Wien tail where the hot bins' P_j n(u_j) underflow in float, from
// 10 A grains to 0.1 micron (the equilibrium stages' own float error included; on CUDA the float
// sums take __expf and __fdividef, StochasticOptions::fast_exp).
TYPED_TEST(DustStochasticTest, FloatEmissionMatchesDouble) {
  const Problem p = field_problem({0.001, 0.003, 0.01, 0.03, 0.1}, {1.0, 1e3}, 161);
  const auto d = run_stochastic<TypeParam>(p);
  const auto f = run_stochastic<TypeParam, float>(p);
  for (int c = 0; c < p.nc(); ++c) {
    double peak = 0;
    for (int l = 0; l < p.nl(); ++l) peak = std::max(peak, d.f(c, l));
    int compared = 0;
    for (int l = 0; l < p.nl(); ++l) {
      if (!(d.f(c, l) > 1e-36 * peak && d.f(c, l) > 1e-30)) continue;
      ++compared;
      EXPECT_NEAR(f.f(c, l) / d.f(c, l), 1.0, 5e-5)
          << "cell " << c << " wavelength " << p.wavelength[l] * 1e6 << " micron";
    }
    EXPECT_GT(compared, p.nl() / 2) << "cell " << c;
    for (int s = 0; s < p.ns(); ++s) EXPECT_EQ(f.st(c, s), d.st(c, s)) << c << ", " << s;
  }
}

// On Cuda: the recursion's rows finished by a warp (CudaWarpBlockWalk) against one thread
// (SerialBlockWalk, the generic path): the same sums in the same order, so the same P(T) to the
// last bit but for the rescales of steep P(T) (big grains), which scale a sum at another point of
// its additions. 300 bins: the last block of rows is partial. Elsewhere both runs take the
// generic path.
TYPED_TEST(DustStochasticTest, WarpWalkMatchesSerialWalk) {
  const Problem p = field_problem({0.001, 0.003, 0.01, 0.03, 0.1, 0.3}, {1.0, 1e3, 1e5}, 161);
  for (int bins : {64, 300}) {
    StochasticOptions warp, serial;
    warp.bins = serial.bins = bins;
    serial.use_cuda_specialization = false;
    const auto a = run_stochastic<TypeParam>(p, warp), b = run_stochastic<TypeParam>(p, serial);
    EXPECT_EQ(a.status, b.status) << bins << " bins";
    for (int c = 0; c < p.nc(); ++c)
      for (int s = 0; s < p.ns(); ++s)
        for (int j = 0; j < bins; ++j)
          EXPECT_LE(std::fabs(a.p(c, s, j) - b.p(c, s, j)), 1e-13 * b.p(c, s, j))
              << bins << " bins, cell " << c << ", species " << s << ", bin " << j;
  }
}

// The species' changes are added to the SED in species order whatever the batch of cells and the
// order in which teams finish: batches of 1 and 2 of 5 cells give the one-batch SED bit for bit.
TYPED_TEST(DustStochasticTest, EmissionDoesNotDependOnTheBatch) {
  const Problem p = field_problem({0.001, 0.003, 0.01}, {1.0, 10.0, 100.0, 1e3, 1e4}, 81);
  const auto whole = run_stochastic<TypeParam>(p);
  for (int batch : {1, 2}) {
    const auto parts = run_stochastic<TypeParam>(p, StochasticOptions(), batch);
    EXPECT_EQ(parts.sed, whole.sed) << "batches of " << batch << " cells";
  }
  EXPECT_THROW(run_stochastic<TypeParam>(p, StochasticOptions(), 0), kosmos::invalid_input);
}

// add_stochastic_emission's overload that also stores P(T) (one solve for both) gives
// temperature_distributions' P(T) and the plain overload's SED, bit for bit, over two batches.
// StochasticOptions::emission_node_spacing: with a node at every wavelength (a spacing below the
// grid's step) the SED is the exact one to 1e-12 (S goes through its logarithm); with a node every
// 4 wavelengths (0.04 in ln lambda on a 1201-point grid: steps of 0.0096) and every 8 (0.08) it
// stays within 5e-6 and 1e-4 of it wherever it is above 1e-6 of its peak, and within 1e-4 and 1e-3
// down to 1e-20 (the Wien tail), for 10 A to 0.03 micron grains in fields 1 to 1e5 x MMP83; energy
// still balances.
TYPED_TEST(DustStochasticTest, EmissionFromNodesMatchesEveryWavelength) {
  const Problem p = field_problem({0.001, 0.003, 0.01, 0.03}, {1.0, 1e3, 1e5}, 1201);
  StochasticOptions o;
  o.bins = 96;
  const auto exact = run_stochastic<TypeParam>(p, o);
  o.emission_node_spacing = 0.005;
  const auto every = run_stochastic<TypeParam>(p, o);
  ASSERT_EQ(every.sed.size(), exact.sed.size());
  for (std::size_t i = 0; i < exact.sed.size(); ++i)
    EXPECT_NEAR(every.sed[i], exact.sed[i], 1e-12 * std::fabs(exact.sed[i])) << "value " << i;
  const struct { double spacing, near, far; } cases[] = {{0.04, 5e-6, 1e-4}, {0.08, 1e-4, 1e-3}};
  for (const auto& k : cases) {
    o.emission_node_spacing = k.spacing;
    const auto nodes = run_stochastic<TypeParam>(p, o);
    EXPECT_EQ(nodes.status, exact.status);
    for (int c = 0; c < p.nc(); ++c) {
      double peak = 0, worst_near = 0, worst_far = 0;
      LD emitted = 0, reference = 0;
      for (int l = 0; l < p.nl(); ++l) peak = std::max(peak, exact.f(c, l));
      for (int l = 0; l < p.nl(); ++l) {
        const double error = std::fabs(nodes.f(c, l) / exact.f(c, l) - 1);
        if (exact.f(c, l) > 1e-6 * peak) worst_near = std::max(worst_near, error);
        if (exact.f(c, l) > 1e-20 * peak) worst_far = std::max(worst_far, error);
        emitted += LD(nodes.f(c, l)) * p.width[l];
        reference += LD(exact.f(c, l)) * p.width[l];
      }
      EXPECT_LE(worst_near, k.near) << "spacing " << k.spacing << ", cell " << c;
      EXPECT_LE(worst_far, k.far) << "spacing " << k.spacing << ", cell " << c;
      EXPECT_NEAR(double(emitted / reference), 1.0, 1e-5)
          << "spacing " << k.spacing << ", cell " << c;
    }
  }
}

TYPED_TEST(DustStochasticTest, EmissionWithDistributionsMatchesSeparateCalls) {
  using device = Kokkos::Device<TypeParam, typename TypeParam::memory_space>;
  const Problem p = field_problem({0.001, 0.003, 0.01, 0.1}, {1.0, 1e3, 1e5}, 81);
  const auto separate = run_stochastic<TypeParam>(p);
  Equilibrium<TypeParam, double> e(p);
  const StochasticOptions o;
  const int nc = p.nc(), ns = p.ns();
  const auto m = kosmos::dust::prepare_stochastic(TypeParam(), e.g, e.species, o);
  Kokkos::View<double***, Kokkos::LayoutRight, device> probability("P", nc, ns, o.bins),
      bins("T_bins", nc, ns, o.bins);
  Kokkos::View<int**, Kokkos::LayoutRight, device> status("status", nc, ns);
  kosmos::dust::add_stochastic_emission(
      TypeParam(), e.g, m, e.d.intensity, e.temperature, e.d.dust_mass, e.sed, status,
      kosmos::dust::stochastic_emission_work<double>(TypeParam(), m, 2), probability, bins);
  EXPECT_EQ(to_host(probability), separate.probability);
  EXPECT_EQ(to_host(bins), separate.bin_temperature);
  EXPECT_EQ(to_host(status), separate.status);
  EXPECT_EQ(to_host_double(e.sed), separate.sed);
  Kokkos::View<double***, Kokkos::LayoutRight, device> short_p("P", nc, ns, o.bins - 1);
  EXPECT_THROW(
      kosmos::dust::add_stochastic_emission(
          TypeParam(), e.g, m, e.d.intensity, e.temperature, e.d.dust_mass, e.sed, status,
          kosmos::dust::stochastic_emission_work<double>(TypeParam(), m, 2), short_p, bins),
      kosmos::invalid_input);
}

// Big grains: P(T) collapses onto the equilibrium temperature of the Newton solver (mean within
// 1 %, standard deviation below 3 %, 99 % of P within 5 % of T_eq), up to 5 micron, with the
// absorbed power re-emitted (1e-3, against the long-double heating) and status ok (grains of 1-5
// micron were flagged with a false 1-2 % energy surplus before).
TYPED_TEST(DustStochasticTest, BigGrainsReachTheEquilibriumLimit) {
  const Problem p = field_problem({0.1, 0.25, 1.0, 2.5, 5.0}, {1.0, 100.0}, 161);
  const auto r = run_stochastic<TypeParam>(p);
  for (int c = 0; c < p.nc(); ++c) {
    LD emitted = 0, absorbed = 0;
    for (int s = 0; s < p.ns(); ++s) absorbed += heating_ref(p, c, s);
    for (int l = 0; l < p.nl(); ++l) emitted += LD(r.f(c, l)) * p.width[l];
    EXPECT_NEAR(double(emitted / absorbed), 1.0, 1e-3) << "cell " << c;
    for (int s = 0; s < p.ns(); ++s) {
      EXPECT_EQ(r.st(c, s), kosmos::dust::stochastic_ok)
          << "cell " << c << " radius " << p.radius[s];
      const double t_eq = r.t_eq(c, s);
      double mean = 0, second = 0, near = 0;
      for (int j = 0; j < r.nb; ++j) {
        mean += r.p(c, s, j) * r.tb(c, s, j);
        second += r.p(c, s, j) * r.tb(c, s, j) * r.tb(c, s, j);
        if (std::fabs(r.tb(c, s, j) / t_eq - 1) < 0.05) near += r.p(c, s, j);
      }
      const double sd = std::sqrt(std::max(0.0, second - mean * mean));
      EXPECT_NEAR(mean / t_eq, 1.0, 0.01) << "cell " << c << " radius " << p.radius[s];
      EXPECT_LT(sd / t_eq, 0.03) << "cell " << c << " radius " << p.radius[s];
      EXPECT_GT(near, 0.99) << "cell " << c << " radius " << p.radius[s];
    }
  }
}

// A zero field: status no_heating, P(T) all in the lowest bin, the SED as the equilibrium stage
// left it.
TYPED_TEST(DustStochasticTest, ZeroFieldKeepsTheSed) {
  const Problem p = field_problem({0.001, 0.1}, {0.0, 1.0}, 81);
  const auto r = run_stochastic<TypeParam>(p);
  for (int s = 0; s < p.ns(); ++s) {
    EXPECT_EQ(r.st(0, s), kosmos::dust::stochastic_no_heating);
    EXPECT_EQ(r.p(0, s, 0), 1.0);
    EXPECT_EQ(r.st(1, s), kosmos::dust::stochastic_ok);
  }
  for (int l = 0; l < p.nl(); ++l) EXPECT_EQ(r.f(0, l), r.f(0, l, false));
}

// Fields of 1e12 x MMP83 drive grains to the 3000 K top of the bins: P(T) stays a finite
// distribution and the energy lost above the top is reported (energy_imbalance), never hidden.
TYPED_TEST(DustStochasticTest, HugeFieldIsFlaggedNotNan) {
  const Problem p = field_problem({0.001, 0.01, 0.1}, {1e12}, 81);
  const auto r = run_stochastic<TypeParam>(p);
  for (int s = 0; s < p.ns(); ++s) {
    double sum = 0;
    for (int j = 0; j < r.nb; ++j) sum += r.p(0, s, j);
    EXPECT_NEAR(sum, 1.0, 1e-12) << "radius " << p.radius[s];
    // equilibrium is at its 3000 K ceiling: the grains cannot emit all they absorb below 3000 K
    EXPECT_EQ(r.t_eq(0, s), 3000.0);
    EXPECT_EQ(r.st(0, s), kosmos::dust::stochastic_energy_imbalance);
    EXPECT_LE(r.tb(0, s, r.nb - 1), 3000.0 * (1 + 1e-12));
  }
  for (int l = 0; l < p.nl(); ++l) EXPECT_TRUE(std::isfinite(r.f(0, l)));
}

// A model with per-species bins (set_species_bins) gives each species the P(T) of a model of that
// species alone at its bins, bit for bit, padded to the most bins with probability 0 at its top
// bin's temperature; its SED is the equilibrium SED plus each lone species' change of it.
TYPED_TEST(DustStochasticTest, PerSpeciesBinsMatchLoneSpeciesModels) {
  using Space = TypeParam;
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  const std::vector<int> species_bins{64, 16, 32};
  const Problem p = field_problem({0.001, 0.002, 0.005}, {1.0, 100.0}, 81);
  const Equilibrium<Space, double> e(p);
  const auto& d = e.d;
  const auto& g = e.g;
  const auto& temperature = e.temperature;
  const auto& equilibrium_sed = e.sed;
  const auto& species = e.species;
  const int nc = p.nc(), ns = p.ns(), nl = p.nl(), most = 64;
  // P(T), bin temperatures, status and the SED of `model` over its selected species.
  const auto run = [&](const kosmos::dust::StochasticModel<Space>& model, int selected) {
    const int nb = model.options.bins;
    Kokkos::View<double***, Kokkos::LayoutRight, device> probability("P", nc, selected, nb),
        bins("T_bins", nc, selected, nb);
    Kokkos::View<int**, Kokkos::LayoutRight, device> status("status", nc, selected);
    Kokkos::View<double**, Kokkos::LayoutLeft, device> sed("sed", nc, nl);
    Kokkos::deep_copy(sed, equilibrium_sed);
    kosmos::dust::temperature_distributions(Space(), g, model, d.intensity, temperature,
                                            probability, bins, status);
    kosmos::dust::add_stochastic_emission(Space(), g, model, d.intensity, temperature, d.dust_mass,
                                          sed, status);
    return std::make_tuple(to_host(probability), to_host(bins), to_host(status), to_host(sed));
  };
  auto model = kosmos::dust::prepare_stochastic(Space(), g, species);
  kosmos::dust::set_species_bins(Space(), model, species_bins);
  EXPECT_EQ(model.options.bins, most);
  const auto all = run(model, ns);
  auto expected_sed = to_host(equilibrium_sed);
  for (int s = 0; s < ns; ++s) {
    StochasticOptions o;
    o.bins = species_bins[std::size_t(s)];
    const auto lone =
        run(kosmos::dust::prepare_stochastic(Space(), g, {species[std::size_t(s)]}, o), 1);
    for (int c = 0; c < nc; ++c) {
      EXPECT_EQ(std::get<2>(all)[std::size_t(c * ns + s)], std::get<2>(lone)[std::size_t(c)]);
      for (int j = 0; j < most; ++j) {
        const std::size_t k = std::size_t((c * ns + s) * most + j),
                          own = std::size_t(c * o.bins + std::min(j, o.bins - 1));
        EXPECT_EQ(std::get<0>(all)[k], j < o.bins ? std::get<0>(lone)[own] : 0.0)
            << "cell " << c << " species " << s << " bin " << j;
        EXPECT_EQ(std::get<1>(all)[k], std::get<1>(lone)[own])
            << "cell " << c << " species " << s << " bin " << j;
      }
    }
    for (std::size_t k = 0; k < expected_sed.size(); ++k)
      expected_sed[k] += std::get<3>(lone)[k] - to_host(equilibrium_sed)[k];
  }
  for (std::size_t k = 0; k < expected_sed.size(); ++k)
    EXPECT_NEAR(std::get<3>(all)[k], expected_sed[k], 1e-12 * std::fabs(expected_sed[k]))
        << "cell " << k % std::size_t(nc) << " wavelength " << k / std::size_t(nc);
  EXPECT_THROW(kosmos::dust::set_species_bins(Space(), model, {64, 4, 32}), kosmos::invalid_input);
  EXPECT_THROW(kosmos::dust::set_species_bins(Space(), model, {64, 32}), kosmos::invalid_input);
  // A work space made before the bins changed no longer fits the model.
  const auto work = kosmos::dust::stochastic_emission_work<double>(Space(), model, nc);
  kosmos::dust::set_species_bins(Space(), model, std::vector<int>(std::size_t(ns), 2 * most));
  Kokkos::View<int**, Kokkos::LayoutRight, device> status("status", nc, ns);
  Kokkos::View<double**, Kokkos::LayoutLeft, device> sed("sed", nc, nl);
  EXPECT_THROW(kosmos::dust::add_stochastic_emission(Space(), g, model, d.intensity, temperature,
                                                     d.dust_mass, sed, status, work),
               kosmos::invalid_input);
  // Nor does one made without emission nodes fit a model with them; the error names the nodes.
  kosmos::dust::StochasticOptions with_nodes;
  with_nodes.emission_node_spacing = 0.04;
  const auto nodes_model = kosmos::dust::prepare_stochastic(Space(), g, species, with_nodes);
  const auto plain_work = kosmos::dust::stochastic_emission_work<double>(
      Space(), kosmos::dust::prepare_stochastic(Space(), g, species), nc);
  try {
    kosmos::dust::add_stochastic_emission(Space(), g, nodes_model, d.intensity, temperature,
                                          d.dust_mass, sed, status, plain_work);
    ADD_FAILURE() << "accepted a work space without emission nodes";
  } catch (const kosmos::invalid_input& error) {
    EXPECT_NE(std::string(error.what()).find("emission nodes"), std::string::npos) << error.what();
  }
}

// Zero heating is no_heating whatever T_eq says (T = 0 included); positive heating without a
// positive T_eq is invalid_heating with a NaN P(T).
TYPED_TEST(DustStochasticTest, StatusesWithoutEquilibriumTemperature) {
  using Space = TypeParam;
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  const Problem p = field_problem({0.001}, {0.0, 1.0}, 41);
  DeviceProblem<double, Space> d(p);
  const auto g = d.prepare(kosmos::dust::SolverOptions());
  const auto m =
      kosmos::dust::prepare_stochastic(Space(), g, {{0, GrainMaterial::graphite, 0.001}});
  const int nb = m.options.bins;
  Kokkos::View<double**, Kokkos::LayoutLeft, device> temperature("T", 2, 1);  // zeros
  Kokkos::View<double***, Kokkos::LayoutRight, device> probability("P", 2, 1, nb),
      bins("T_bins", 2, 1, nb);
  Kokkos::View<int**, Kokkos::LayoutRight, device> status("status", 2, 1);
  kosmos::dust::temperature_distributions(Space(), g, m, d.intensity, temperature, probability,
                                          bins, status);
  const auto st = to_host(status);
  const auto prob = to_host(probability);
  EXPECT_EQ(st[0], kosmos::dust::stochastic_no_heating);
  EXPECT_EQ(prob[0], 1.0);
  EXPECT_EQ(st[1], kosmos::dust::stochastic_invalid_heating);
  EXPECT_TRUE(std::isnan(prob[std::size_t(nb)]));
}

TYPED_TEST(DustStochasticTest, RejectsBadInput) {
  using Space = TypeParam;
  const Problem p = field_problem({0.001}, {1.0}, 41);
  DeviceProblem<double, Space> d(p);
  const auto g = d.prepare(kosmos::dust::SolverOptions());
  StochasticOptions o;
  o.bins = 4;
  EXPECT_THROW(
      kosmos::dust::prepare_stochastic(Space(), g, {{0, GrainMaterial::graphite, 0.001}}, o),
      kosmos::invalid_input);
  EXPECT_THROW(kosmos::dust::prepare_stochastic(Space(), g, {{1, GrainMaterial::graphite, 0.001}}),
               kosmos::invalid_input);
  for (double spacing : {-0.01, 2.0, std::numeric_limits<double>::quiet_NaN()}) {
    StochasticOptions bad;
    bad.emission_node_spacing = spacing;
    try {
      kosmos::dust::prepare_stochastic(Space(), g, {{0, GrainMaterial::graphite, 0.001}}, bad);
      ADD_FAILURE() << "accepted emission_node_spacing " << spacing;
    } catch (const kosmos::invalid_input& e) {
      EXPECT_NE(std::string(e.what()).find("emission_node_spacing = "), std::string::npos)
          << e.what();
    }
  }
  const auto m =
      kosmos::dust::prepare_stochastic(Space(), g, {{0, GrainMaterial::graphite, 0.001}});
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  Kokkos::View<double**, Kokkos::LayoutLeft, device> temperature("T", 1, 1), sed("sed", 1, 41);
  Kokkos::View<int**, Kokkos::LayoutLeft, device> status("status", 2, 1);
  try {
    kosmos::dust::add_stochastic_emission(Space(), g, m, d.intensity, temperature, d.dust_mass, sed,
                                          status);
    FAIL() << "no exception";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("status.extent(0) is 2, expected 1"), std::string::npos)
        << e.what();
  }
}
}  // namespace
