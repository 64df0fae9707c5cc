// P(T) of very small grains against an independent single-grain Monte Carlo of photon heating
// with exact continuous cooling: the grain's enthalpy walks down its cooling curve between photon
// arrivals (exponential waits at the absorbed photon rate) and jumps by each absorbed photon's
// energy; the band powers are the time averages of sum_l sigma dlambda B over the walk. The
// cooling curve, its time and band-emission integrals are tabulated here on 4000 temperatures from
// this test's own sums over the cross sections (only the Draine & Li heat capacity, the physics
// input, comes from the library). The measured errors of the transition-matrix P(T) in the
// 3-6, 6-12 and 12-25 micron bands are printed for 128, 512 and 2048 bins, and for the bins that
// refine_bins reaches by doubling each species' from 128 until the band powers change by less than 1 %; the
// bands that hold >= 1e-3 of a grain's power must be within 2 % at every bin count.
#include "dust_test_problem.hpp"

#include <kosmos/dust/stochastic.hpp>

#include <test_spaces.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {
using namespace dust_test;
using kosmos::dust::GrainMaterial;

constexpr int kBands = 3;
constexpr double kBandEdges[kBands + 1] = {3.0, 6.0, 12.0, 25.0};  // micron
// Bands below this share of a grain's power are printed, not checked (refine_bins' rule).
constexpr double kSignificantShare = 1e-3;

int band_of(double lambda_m) {
  const double w = lambda_m * 1e6;
  for (int b = 0; b < kBands; ++b)
    if (w >= kBandEdges[b] && w < kBandEdges[b + 1]) return b;
  return -1;
}

// Band powers sum_{l in band} sigma dlambda B(T) (W sr^-1), and the total, of species s.
std::vector<double> band_powers(const Problem& p, int s, double t) {
  std::vector<double> out(kBands + 1, 0.0);
  for (int l = 0; l < p.nl(); ++l) {
    const double lam = p.wavelength[std::size_t(l)];
    const double planck =
        1.1910429723971884e-16 / std::pow(lam, 5) / std::expm1(1.4387768775039337e-2 / (lam * t));
    const double e = p.sigma[std::size_t(s)][std::size_t(l)] * p.width[std::size_t(l)] * planck;
    const int b = band_of(p.wavelength[std::size_t(l)]);
    if (b >= 0) out[std::size_t(b)] += e;
    out[kBands] += e;
  }
  return out;
}

// Time-averaged band powers of one grain in the field of cell c by Monte Carlo.
std::vector<double> monte_carlo_bands(const Problem& p, int c, int s, double radius_micron,
                                      int photons) {
  const double modes = kosmos::dust::grain_atoms(GrainMaterial::graphite, radius_micron) - 2;
  const int nk = 4000;
  const double t_lo = 2.0, t_hi = 3000.0;
  std::vector<double> energy(nk), time(nk), emitted(std::size_t(nk) * (kBands + 1));
  std::vector<double> cooling(nk), band(std::size_t(nk) * (kBands + 1));
  for (int k = 0; k < nk; ++k) {
    const double t = t_lo * std::pow(t_hi / t_lo, double(k) / (nk - 1));
    energy[std::size_t(k)] = modes * kosmos::dust::enthalpy_per_atom(GrainMaterial::graphite, t);
    const auto pw = band_powers(p, s, t);
    cooling[std::size_t(k)] = pw[kBands];
    for (int b = 0; b <= kBands; ++b)
      band[std::size_t(k) * (kBands + 1) + std::size_t(b)] = pw[std::size_t(b)];
  }
  // time(k): cooling time from energy k down to the bottom; emitted(k, b): what it emits meanwhile.
  time[0] = 0;
  for (int b = 0; b <= kBands; ++b) emitted[std::size_t(b)] = 0;
  for (int k = 1; k < nk; ++k) {
    const double de = energy[std::size_t(k)] - energy[std::size_t(k - 1)];
    time[std::size_t(k)] =
        time[std::size_t(k - 1)] +
        0.5 * de * (1 / cooling[std::size_t(k)] + 1 / cooling[std::size_t(k - 1)]);
    for (int b = 0; b <= kBands; ++b) {
      const std::size_t i = std::size_t(k) * (kBands + 1) + std::size_t(b), j = i - (kBands + 1);
      emitted[i] =
          emitted[j] +
          0.5 * de * (band[i] / cooling[std::size_t(k)] + band[j] / cooling[std::size_t(k - 1)]);
    }
  }
  // Photon energies and cumulative absorption rates (per sr, as the cooling).
  std::vector<double> eps(std::size_t(p.nl())), rate_cum(std::size_t(p.nl()) + 1, 0.0);
  for (int l = 0; l < p.nl(); ++l) {
    eps[std::size_t(l)] = 6.62607015e-34 * 299792458.0 / p.wavelength[std::size_t(l)];
    rate_cum[std::size_t(l) + 1] =
        rate_cum[std::size_t(l)] + p.intensity[std::size_t(c)][std::size_t(l)] *
                                       p.sigma[std::size_t(s)][std::size_t(l)] *
                                       p.width[std::size_t(l)] / eps[std::size_t(l)];
  }
  const double rate = rate_cum.back();
  // Position of energy e in the tables (fractional index).
  auto at_energy = [&](double e) {
    if (e <= energy[0]) return 0.0;
    const auto it = std::upper_bound(energy.begin(), energy.end(), e);
    if (it == energy.end()) return double(nk - 1);
    const int k = int(it - energy.begin());
    return k - 1 +
           (e - energy[std::size_t(k - 1)]) / (energy[std::size_t(k)] - energy[std::size_t(k - 1)]);
  };
  auto interpolate = [](const std::vector<double>& v, double x, int stride, int offset) {
    const int k = std::min(int(x), int(v.size() / std::size_t(stride)) - 2);
    const double f = x - k;
    return (1 - f) * v[std::size_t(k) * std::size_t(stride) + std::size_t(offset)] +
           f * v[std::size_t(k + 1) * std::size_t(stride) + std::size_t(offset)];
  };
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> sum(kBands + 1, 0.0);
  double total_time = 0, x = 0;  // x: fractional table index of the grain's energy
  const int burn_in = photons / 20;
  for (int n = 0; n < photons + burn_in; ++n) {
    const double wait = -std::log(1 - uniform(rng)) / rate;
    // Cool for `wait`: down the cooling curve to the time index t(x) - wait (the bottom: stays).
    const double t_now = interpolate(time, x, 1, 0), t_next = t_now - wait;
    double x_next = 0;
    if (t_next > 0) {
      const auto it = std::upper_bound(time.begin(), time.end(), t_next);
      const int k = int(it - time.begin());
      x_next =
          k - 1 +
          (t_next - time[std::size_t(k - 1)]) / (time[std::size_t(k)] - time[std::size_t(k - 1)]);
    }
    if (n >= burn_in) {
      for (int b = 0; b <= kBands; ++b)
        sum[std::size_t(b)] +=
            interpolate(emitted, x, kBands + 1, b) - interpolate(emitted, x_next, kBands + 1, b);
      total_time += wait;
    }
    // Absorb a photon drawn from the absorbed photon spectrum.
    const double u = uniform(rng) * rate;
    const int l = std::min(
        p.nl() - 1,
        std::max(
            0, int(std::upper_bound(rate_cum.begin(), rate_cum.end(), u) - rate_cum.begin()) - 1));
    const double e_next =
        (x_next <= 0 ? energy[0] : interpolate(energy, x_next, 1, 0)) + eps[std::size_t(l)];
    x = at_energy(e_next);
  }
  for (auto& v : sum) v /= total_time;
  return sum;
}

template <class Space>
class DustStochasticMonteCarloTest : public ::testing::Test {};
TYPED_TEST_SUITE(DustStochasticMonteCarloTest, kosmos_test::ExecutionSpaces,
                 kosmos_test::SpaceName);

TYPED_TEST(DustStochasticMonteCarloTest, BandPowersApproachTheMonteCarloAsBinsDouble) {
  using Space = TypeParam;
  using device = Kokkos::Device<Space, typename Space::memory_space>;
  auto p = graphite_problem(301, 8, 1, 3);  // radii 0.001, 0.0025, ... micron
  for (int l = 0; l < p.nl(); ++l)
    p.intensity[0][std::size_t(l)] =
        kosmos::dust::mmp83_mean_intensity(p.wavelength[std::size_t(l)] * 1e6);
  DeviceProblem<double, Space> d(p);
  const kosmos::dust::SolverOptions o;
  const auto g = d.prepare(o);
  Kokkos::View<double**, Kokkos::LayoutLeft, device> heat("heat", 1, p.ns()),
      t_eq("t_eq", 1, p.ns());
  Kokkos::View<int**, Kokkos::LayoutLeft, device> eq_status("eq_status", 1, p.ns());
  kosmos::dust::heating(Space(), g, d.intensity, heat);
  kosmos::dust::equilibrium_temperatures(Space(), g, heat, t_eq, eq_status, o);
  const std::vector<int> species = {0, 1, 2};  // 10, 25 and 63 Angstrom
  std::vector<kosmos::dust::StochasticSpecies> small;
  for (int s : species)
    small.push_back({s, GrainMaterial::graphite, p.radius[std::size_t(s)] * 1e6});
  static std::vector<std::vector<double>> mc;  // the same walk for every space
  if (mc.empty())
    for (int s : species)
      mc.push_back(monte_carlo_bands(p, 0, s, p.radius[std::size_t(s)] * 1e6, 400000));
  for (std::size_t q = 0; q < small.size(); ++q) {
    // The walk conserves energy: its time-averaged emission is the absorbed power.
    EXPECT_NEAR(mc[q][kBands] / double(heating_ref(p, 0, species[q])), 1.0, 5e-3) << q;
  }
  // Worst |P(T) band power / Monte Carlo - 1| of the model's P(T), printed per band.
  auto worst_error = [&](const kosmos::dust::StochasticModel<Space>& m) {
    const int bins = m.options.bins;
    Kokkos::View<double***, Kokkos::LayoutRight, device> prob("p", 1, small.size(), bins),
        tb("tb", 1, small.size(), bins);
    Kokkos::View<int**, Kokkos::LayoutRight, device> status("status", 1, small.size());
    kosmos::dust::temperature_distributions(Space(), g, m, d.intensity, t_eq, prob, tb, status);
    const auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), prob);
    const auto ht = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tb);
    double worst = 0;
    for (std::size_t q = 0; q < small.size(); ++q) {
      std::vector<double> pt(kBands + 1, 0.0);
      for (int j = 0; j < bins; ++j) {
        const auto bp = band_powers(p, species[q], ht(0, q, j));
        for (int b = 0; b <= kBands; ++b) pt[std::size_t(b)] += hp(0, q, j) * bp[std::size_t(b)];
      }
      for (int b = 0; b < kBands; ++b) {
        const double err = pt[std::size_t(b)] / mc[q][std::size_t(b)] - 1,
                     share = mc[q][std::size_t(b)] / mc[q][kBands];
        std::printf("a = %.4f micron, %g-%g micron, %4d bins: P(T) / Monte Carlo - 1 = %+.4f (%.1e "
                    "of the grain's power)\n",
                    p.radius[std::size_t(species[q])] * 1e6, kBandEdges[b], kBandEdges[b + 1], bins,
                    err, share);
        // A band with a negligible share (the Wien tail of a bigger grain) is not an observable.
        if (share >= kSignificantShare) worst = std::max(worst, std::fabs(err));
      }
    }
    return worst;
  };
  // Midpoint bins are second order: 128 bins already within 2 %, and every count above.
  for (int bins : {128, 512, 2048}) {
    kosmos::dust::StochasticOptions so;
    so.bins = bins;
    EXPECT_LE(worst_error(kosmos::dust::prepare_stochastic(Space(), g, small, so)), 0.02) << bins;
  }
  // Bins doubled from 128 until no band power changes by 1 %: within 2 % of the Monte Carlo, at
  // a bin count a survey can afford.
  kosmos::dust::BinRefinement r;
  const auto refined = kosmos::dust::refine_bins(
      Space(), g, small, d.intensity, t_eq, kosmos::dust::StochasticOptions(),
      {{3.0, 6.0}, {6.0, 12.0}, {12.0, 25.0}}, 0.01, 8192, &r);
  std::printf("refined: at most %d bins, last change %.4f; per species:", r.bins, r.change);
  for (const int b : r.species_bins) std::printf(" %d", b);
  std::printf("\n");
  EXPECT_TRUE(r.converged);
  EXPECT_LE(r.bins, 512);
  EXPECT_EQ(refined.options.bins, r.bins);
  ASSERT_EQ(r.species_bins.size(), small.size());
  EXPECT_EQ(*std::max_element(r.species_bins.begin(), r.species_bins.end()), r.bins);
  EXPECT_LE(worst_error(refined), 0.02);
}
}  // namespace
