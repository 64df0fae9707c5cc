// Batched chi^2 / log-likelihood against a long-double reference written in the true-anomaly
// form v = K [cos(nu + omega) + e cos omega]; mixed precision against double over Ford's Table 2
// distribution; fused vs separate layouts; the CUDA specialization against the generic path.
#include <kosmos/kepler/chi2.hpp>
#include <kosmos/kepler/rv_data.hpp>

#include <test_spaces.hpp>

#include "solver_reference.hpp"

#include <cmath>
#include <random>
#include <vector>

namespace {
using kosmos_test::kTwoPiL;
using kosmos_test::LD;

struct HostModels {
  int n_sys = 0, n_pl = 0, n_inst = 0, n_trend = 0;
  std::vector<double> P, K, e, omega, M0, offset, jitter;  // row-major (sys, pl) / (sys, inst)
  std::vector<double> trend;                               // (sys, n_trend): dvdt, curv
  int n_act = 0;
  std::vector<double> activity;  // (sys, n_act) coefficients of the activity indicators
};

// Ford 2009 Table 2: P log-uniform in [2 d, 10 yr), K log-uniform in [1, 500) m/s, e U[0, 0.99),
// omega, M0 U[0, 2pi).
HostModels table2_models(int n_sys, int n_pl, int n_inst, bool with_offsets, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  HostModels m;
  m.n_sys = n_sys;
  m.n_pl = n_pl;
  m.n_inst = n_inst;
  const double two_pi = 6.283185307179586;
  for (int i = 0; i < n_sys * n_pl; ++i) {
    m.P.push_back(2.0 * std::pow(3652.5 / 2.0, u(rng)));
    m.K.push_back(std::pow(500.0, u(rng)));
    m.e.push_back(0.99 * u(rng));
    m.omega.push_back(two_pi * u(rng));
    m.M0.push_back(two_pi * u(rng));
  }
  for (int i = 0; i < n_sys * n_inst; ++i) {
    m.offset.push_back(with_offsets ? 20 * (u(rng) - 0.5) : 0.0);
    m.jitter.push_back(with_offsets ? 5 * u(rng) : 0.0);
  }
  return m;
}

template <class Precision, class Space>
kosmos::kepler::Models<Precision, Space> to_device(const HostModels& h) {
  kosmos::kepler::Models<Precision, Space> m(h.n_sys, h.n_pl, h.n_inst, h.n_trend, h.n_act);
  kosmos::kepler::ModelsHostMirror<Precision, Space> mirror(m);
  for (int s = 0; s < h.n_sys; ++s) {
    for (int j = 0; j < h.n_pl; ++j) {
      const int i = s * h.n_pl + j;
      mirror.P(s, j) = h.P[i];
      mirror.K(s, j) = h.K[i];
      mirror.e(s, j) = h.e[i];
      mirror.omega(s, j) = h.omega[i];
      mirror.M0(s, j) = h.M0[i];
    }
    for (int j = 0; j < h.n_inst; ++j) {
      mirror.offset(s, j) = h.offset[s * h.n_inst + j];
      mirror.jitter(s, j) = h.jitter[s * h.n_inst + j];
    }
    for (int j = 0; j < h.n_trend; ++j) mirror.trend(s, j) = h.trend[s * h.n_trend + j];
    for (int j = 0; j < h.n_act; ++j) mirror.activity(s, j) = h.activity[s * h.n_act + j];
  }
  mirror.copy_to(m);
  return m;
}

kosmos::kepler::RVData hd164922(std::size_t max_points = 100000) {
  auto d = kosmos::kepler::read_rv_file(KOSMOS_DATA_DIR "/rv/hd164922_radvel.txt");
  if (d.size() > max_points) {
    d.time.resize(max_points);
    d.velocity.resize(max_points);
    d.sigma.resize(max_points);
    d.instrument.resize(max_points);
  }
  return d;
}

// E for any M in long double: reduced into [0, 2pi), then the solver tests' reference.
LD kepler_ld(LD M, LD e) {
  M = fmodl(M, kTwoPiL);
  if (M < 0) M += kTwoPiL;
  return kosmos_test::solve_reference(M, e);
}

// Reference chi^2 and ln L of system s, true-anomaly form, long double throughout; indicators:
// m.n_act activity values per observation (row-major).
void reference(const HostModels& m, int s, const kosmos::kepler::RVData& d, double epoch, LD& chi2,
               LD& loglike, const std::vector<double>& indicators = {}) {
  chi2 = 0;
  LD logs = 0;
  for (std::size_t k = 0; k < d.size(); ++k) {
    LD model = 0;
    for (int j = 0; j < m.n_pl; ++j) {
      const int i = s * m.n_pl + j;
      const LD e = m.e[i], w = m.omega[i];
      const LD M = kTwoPiL * ((LD(d.time[k]) - LD(epoch)) / LD(m.P[i])) + LD(m.M0[i]);
      const LD E = kepler_ld(M, e);
      const LD nu = 2 * atan2l(sqrtl(1 + e) * sinl(E / 2), sqrtl(1 - e) * cosl(E / 2));
      model += LD(m.K[i]) * (cosl(nu + w) + e * cosl(w));
    }
    const LD dt = LD(d.time[k]) - LD(epoch);
    for (int j = 0; j < m.n_trend; ++j) model += LD(m.trend[s * m.n_trend + j]) * powl(dt, j + 1);
    for (int j = 0; j < m.n_act; ++j)
      model += LD(m.activity[s * m.n_act + j]) * LD(indicators[k * m.n_act + j]);
    const int inst = d.instrument[k];
    const LD jit = m.jitter[s * m.n_inst + inst];
    const LD var = LD(d.sigma[k]) * d.sigma[k] + jit * jit;
    const LD r = LD(d.velocity[k]) - m.offset[s * m.n_inst + inst] - model;
    chi2 += r * r / var;
    logs += logl(2 * 3.14159265358979323846264338327950288L * var);
  }
  loglike = -0.5L * (chi2 + logs);
}

template <class Space>
kosmos::kepler::Observations<Space> observations(const kosmos::kepler::RVData& d, double epoch) {
  return kosmos::kepler::Observations<Space>(d.time, d.velocity, d.sigma, d.instrument,
                                             d.n_instruments(), epoch);
}

template <class Space>
class KeplerChi2Test : public ::testing::Test {};
TYPED_TEST_SUITE(KeplerChi2Test, kosmos_test::ExecutionSpaces, kosmos_test::SpaceName);

// Double precision, both layouts, both solvers, both amplitude conventions, with offsets and
// jitter, against the long-double reference.
template <class Space>
void check_double_against_reference() {
  using namespace kosmos::kepler;
  const auto data = hd164922();
  const double epoch = data.mid_time();
  const auto obs = observations<Space>(data, epoch);
  const int n_sys = 24;
  HostModels h = table2_models(n_sys, 3, data.n_instruments(), true, 17);
  h.e[5] = 0.999;  // extreme eccentricities
  h.e[7] = 0.0;
  std::vector<LD> ref_chi2(n_sys), ref_ll(n_sys);
  for (int s = 0; s < n_sys; ++s) reference(h, s, data, epoch, ref_chi2[s], ref_ll[s]);

  // Ford's (K', omega_F) for the same orbits.
  HostModels hk = h;
  for (std::size_t i = 0; i < h.K.size(); ++i) {
    hk.K[i] = k_prime_from_semi_amplitude(h.K[i], h.e[i]);
    hk.omega[i] = ford_omega_from_omega(h.omega[i]);
  }
  const auto models = to_device<Double, Space>(h);
  const auto models_k = to_device<Double, Space>(hk);
  Kokkos::View<double*, Space> chi2("chi2", n_sys), ll("ll", n_sys);
  for (auto layout : {Chi2Layout::fused, Chi2Layout::separate})
    for (auto solver : {Solver::Markley, Solver::Danby})
      for (auto amplitude : {Amplitude::semi_amplitude, Amplitude::k_prime}) {
        Chi2Options options;
        options.layout = layout;
        options.solver.solver = solver;
        options.amplitude = amplitude;
        Chi2Evaluator<Double, Space> evaluator(Space(), obs, options);
        evaluator.evaluate(amplitude == Amplitude::k_prime ? models_k : models, chi2, ll);
        auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chi2);
        auto hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ll);
        for (int s = 0; s < n_sys; ++s) {
          EXPECT_LE(std::fabs(double((hc(s) - ref_chi2[s]) / ref_chi2[s])), 1e-10)
              << layout_name(layout) << " " << solver_name(solver) << " system " << s;
          EXPECT_LE(std::fabs(double(hl(s) - ref_ll[s])),
                    1e-10 * std::fabs(double(ref_chi2[s])) + 1e-9)
              << layout_name(layout) << " " << solver_name(solver) << " system " << s;
        }
      }
}
TYPED_TEST(KeplerChi2Test, DoubleMatchesLongDoubleReference) {
  check_double_against_reference<TypeParam>();
}

// Linear and quadratic trends (RadVel's dvdt, curv about the epoch), with 0 and 2 planets, both
// layouts, double and mixed precision, against the long-double reference.
template <class Space>
void check_trend_against_reference() {
  using namespace kosmos::kepler;
  const auto data = hd164922();
  const double epoch = data.mid_time();
  const auto obs = observations<Space>(data, epoch);
  const int n_sys = 12;
  for (int n_pl : {0, 2})
    for (int n_trend : {1, 2}) {
      HostModels h = table2_models(n_sys, n_pl, data.n_instruments(), true, 23);
      h.n_trend = n_trend;
      std::mt19937_64 rng(5);
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      for (int i = 0; i < n_sys * n_trend; ++i)
        h.trend.push_back(i % n_trend == 0 ? 0.01 * u(rng) : 3e-6 * u(rng));
      const auto md = to_device<Double, Space>(h);
      const auto mm = to_device<Mixed, Space>(h);
      Kokkos::View<double*, Space> chi2("chi2", n_sys), ll("ll", n_sys);
      for (auto layout : {Chi2Layout::fused, Chi2Layout::separate})
        for (bool mixed : {false, true}) {
          Chi2Options options;
          options.layout = layout;
          if (mixed)
            Chi2Evaluator<Mixed, Space>(Space(), obs, options).evaluate(mm, chi2, ll);
          else
            Chi2Evaluator<Double, Space>(Space(), obs, options).evaluate(md, chi2, ll);
          auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chi2);
          for (int s = 0; s < n_sys; ++s) {
            LD rc, rl;
            reference(h, s, data, epoch, rc, rl);
            EXPECT_LE(std::fabs(double((hc(s) - rc) / rc)), mixed ? 1e-4 : 1e-10)
                << layout_name(layout) << " n_pl " << n_pl << " n_trend " << n_trend << " mixed "
                << mixed << " system " << s;
          }
        }
    }
}
TYPED_TEST(KeplerChi2Test, TrendsAndZeroPlanetsMatchReference) {
  check_trend_against_reference<TypeParam>();
}

// Activity indicators as regressors (v += sum_i c_i x_i), with a trend and 2 planets, both
// layouts, against the long-double reference; coefficients without indicators are refused.
template <class Space>
void check_activity_against_reference() {
  using namespace kosmos::kepler;
  const auto data = hd164922();
  const double epoch = data.mid_time();
  auto obs = observations<Space>(data, epoch);
  const int n_sys = 12, n_act = 3;
  std::mt19937_64 rng(41);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> indicators;  // an S-index-, a FWHM- and a BIS-like column
  for (std::size_t k = 0; k < data.size(); ++k)
    indicators.insert(indicators.end(), {0.02 * std::sin(0.05 * data.time[k]) + 0.005 * u(rng),
                                         0.3 * u(rng), 8 * u(rng)});
  obs.set_activity(indicators, n_act);
  HostModels h = table2_models(n_sys, 2, data.n_instruments(), true, 43);
  h.n_trend = 1;
  h.n_act = n_act;
  for (int s = 0; s < n_sys; ++s) {
    h.trend.push_back(1e-3 * u(rng));
    h.activity.insert(h.activity.end(), {400 * u(rng), 20 * u(rng), 2 * u(rng)});
  }
  const auto models = to_device<Double, Space>(h);
  Kokkos::View<double*, Space> chi2("chi2", n_sys), ll("ll", n_sys);
  for (auto layout : {Chi2Layout::fused, Chi2Layout::separate}) {
    Chi2Options options;
    options.layout = layout;
    Chi2Evaluator<Double, Space>(Space(), obs, options).evaluate(models, chi2, ll);
    auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chi2);
    auto hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ll);
    for (int s = 0; s < n_sys; ++s) {
      LD rc, rl;
      reference(h, s, data, epoch, rc, rl, indicators);
      EXPECT_LE(std::fabs(double((hc(s) - rc) / rc)), 1e-9) << layout_name(layout) << " " << s;
      EXPECT_LE(std::fabs(double((hl(s) - rl) / rl)), 1e-9) << layout_name(layout) << " " << s;
    }
  }
  HostModels without = h;
  without.n_act = 0;
  const auto models_without = to_device<Double, Space>(without);
  Chi2Evaluator<Double, Space> evaluator(Space(), obs);
  EXPECT_THROW(evaluator.evaluate(models_without, chi2, ll), kosmos::invalid_input);
  indicators[7] = std::nan("");
  EXPECT_THROW(obs.set_activity(indicators, n_act), kosmos::invalid_input);
}
TYPED_TEST(KeplerChi2Test, ActivityRegressorsMatchReference) {
  check_activity_against_reference<TypeParam>();
}

// Survey layout: three "stars" (slices of the HD 164922 set, each with its own epoch and local
// instrument numbering) concatenated; every model reads only its star's slice. Each model's
// chi^2 and ln L must match the long-double reference on that star alone.
template <class Space>
void check_observation_ranges() {
  using namespace kosmos::kepler;
  const auto all = hd164922();
  const std::size_t cuts[4] = {0, 90, 240, all.size()};
  std::vector<RVData> stars(3);
  std::vector<double> epochs, t, v, sig;
  std::vector<int> inst, begin, count;
  for (int s = 0; s < 3; ++s) {
    RVData& d = stars[std::size_t(s)];
    for (std::size_t k = cuts[s]; k < cuts[s + 1]; ++k) {
      d.time.push_back(all.time[k]);
      d.velocity.push_back(all.velocity[k]);
      d.sigma.push_back(all.sigma[k]);
      d.instrument.push_back(all.instrument[k]);  // indices 0..2 of every star's own columns
    }
    d.instrument_names = all.instrument_names;
    epochs.push_back(d.mid_time());
    begin.push_back(int(t.size()));
    count.push_back(int(d.size()));
    for (std::size_t k = 0; k < d.size(); ++k) {
      t.push_back(d.time[k] - epochs.back());
      v.push_back(d.velocity[k]);
      sig.push_back(d.sigma[k]);
      inst.push_back(d.instrument[k]);
    }
  }
  const Observations<Space> obs(t, v, sig, inst, all.n_instruments(), 0.0);
  const int per_star = 5, n_sys = 3 * per_star;
  HostModels h = table2_models(n_sys, 2, all.n_instruments(), true, 31);
  h.n_trend = 1;
  for (int s = 0; s < n_sys; ++s) h.trend.push_back(1e-3 * (s - 7));
  Models<Double, Space> models(n_sys, 2, all.n_instruments(), 1);
  models.enable_observation_ranges();
  {
    ModelsHostMirror<Double, Space> mirror(models);
    const auto tmp = to_device<Double, Space>(h);
    Kokkos::deep_copy(mirror.P, tmp.P);
    Kokkos::deep_copy(mirror.K, tmp.K);
    Kokkos::deep_copy(mirror.e, tmp.e);
    Kokkos::deep_copy(mirror.omega, tmp.omega);
    Kokkos::deep_copy(mirror.M0, tmp.M0);
    Kokkos::deep_copy(mirror.offset, tmp.offset);
    Kokkos::deep_copy(mirror.jitter, tmp.jitter);
    Kokkos::deep_copy(mirror.trend, tmp.trend);
    for (int s = 0; s < n_sys; ++s) {
      mirror.obs_range(s, 0) = begin[std::size_t(s / per_star)];
      mirror.obs_range(s, 1) = count[std::size_t(s / per_star)];
    }
    mirror.copy_to(models);
  }
  Kokkos::View<double*, Space> chi2("chi2", n_sys), ll("ll", n_sys);
  Chi2Evaluator<Double, Space>(Space(), obs).evaluate(models, chi2, ll);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chi2);
  auto hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ll);
  for (int s = 0; s < n_sys; ++s) {
    LD rc, rl;
    reference(h, s, stars[std::size_t(s / per_star)], epochs[std::size_t(s / per_star)], rc, rl);
    EXPECT_LE(std::fabs(double((hc(s) - rc) / rc)), 1e-10) << "system " << s;
    EXPECT_LE(std::fabs(double(hl(s) - rl)), 1e-10 * std::fabs(double(rc)) + 1e-9)
        << "system " << s;
  }
  // A range past the end is named; the separate layout refuses ranges.
  auto hr = Kokkos::create_mirror_view(models.obs_range);
  Kokkos::deep_copy(hr, models.obs_range);
  hr(2, 1) = int(t.size()) + 1;
  Kokkos::deep_copy(models.obs_range, hr);
  using Evaluator = Chi2Evaluator<Double, Space>;
  Evaluator fused(Space(), obs);
  EXPECT_THROW(fused.evaluate(models, chi2, ll), kosmos::invalid_input);
  Chi2Options options;
  options.layout = Chi2Layout::separate;
  Evaluator separate(Space(), obs, options);
  hr(2, 1) = 5;
  Kokkos::deep_copy(models.obs_range, hr);
  EXPECT_THROW(separate.evaluate(models, chi2, ll), kosmos::invalid_input);
}
TYPED_TEST(KeplerChi2Test, ObservationRangesMatchPerStarReference) {
  check_observation_ranges<TypeParam>();
}

template <class Precision, class Space>
std::vector<double> run_chi2(const kosmos::kepler::Observations<Space>& obs, const HostModels& h,
                             kosmos::kepler::Chi2Layout layout, bool generic = false) {
  kosmos::kepler::Chi2Options options;
  options.layout = layout;
  kosmos::kepler::Chi2Evaluator<Precision, Space> evaluator(Space(), obs, options);
  const auto models = to_device<Precision, Space>(h);
  Kokkos::View<double*, Space> chi2("chi2", h.n_sys);
  if (generic)
    evaluator.evaluate_generic(models, chi2, Kokkos::View<double*, Space>());
  else
    evaluator.evaluate(models, chi2);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chi2);
  return std::vector<double>(hc.data(), hc.data() + h.n_sys);
}

// Table 2's other accuracy rows: max absolute error and L1 norm sum |d chi^2| / sum chi^2.
void absolute_and_l1(const std::vector<double>& a, const std::vector<double>& ref, double& max_abs,
                     double& l1) {
  double num = 0, den = 0;
  max_abs = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    max_abs = std::max(max_abs, std::fabs(a[i] - ref[i]));
    num += std::fabs(a[i] - ref[i]);
    den += ref[i];
  }
  l1 = num / den;
}

double max_relative_error(const std::vector<double>& a, const std::vector<double>& ref) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::fabs(a[i] - ref[i]) / ref[i]);
  return worst;
}

// Ford 2009 Table 2: mixed precision within 1.3e-4 (max fractional error) of double, fused and
// separate layouts agree. n_sys = 30720 on the GPU, 2048 on CPUs.
template <class Space>
void check_mixed_precision_table2() {
  using namespace kosmos::kepler;
  const auto data = hd164922(256);
  const auto obs = observations<Space>(data, data.mid_time());
  const int n_sys = kosmos_test::is_device_space<Space>() ? 30720 : 2048;
  const HostModels h = table2_models(n_sys, 4, data.n_instruments(), false, 2009);
  const auto dbl = run_chi2<Double, Space>(obs, h, Chi2Layout::fused);
  const auto dbl_sep = run_chi2<Double, Space>(obs, h, Chi2Layout::separate);
  const auto mixed = run_chi2<Mixed, Space>(obs, h, Chi2Layout::fused);
  const auto mixed_sep = run_chi2<Mixed, Space>(obs, h, Chi2Layout::separate);
  const auto mixed_generic = run_chi2<Mixed, Space>(obs, h, Chi2Layout::fused, true);
  const auto single = run_chi2<Single, Space>(obs, h, Chi2Layout::fused);
  const double e_mixed = max_relative_error(mixed, dbl), e_sep = max_relative_error(mixed_sep, dbl),
               e_generic = max_relative_error(mixed_generic, dbl),
               e_single = max_relative_error(single, dbl);
  std::printf(
      "[kepler] Table 2, n_sys = %d: max fractional chi^2 error vs double: mixed fused %.3g, mixed "
      "separate %.3g, mixed generic %.3g, single %.3g\n",
      n_sys, e_mixed, e_sep, e_generic, e_single);
  double abs_mixed, l1_mixed, abs_single, l1_single;
  absolute_and_l1(mixed, dbl, abs_mixed, l1_mixed);
  absolute_and_l1(single, dbl, abs_single, l1_single);
  std::printf(
      "[kepler] Table 2: max absolute chi^2 error mixed %.3g, single %.3g; L1 norm mixed %.3g, "
      "single %.3g\n",
      abs_mixed, abs_single, l1_mixed, l1_single);
  EXPECT_LE(e_mixed, 1.3e-4);
  EXPECT_LE(e_sep, 1.3e-4);
  EXPECT_LE(e_generic, 1.3e-4);
  EXPECT_LE(max_relative_error(dbl_sep, dbl), 1e-12);
  EXPECT_LE(max_relative_error(mixed_sep, mixed_generic), 1e-5);
  // Single precision for the phase is what the paper warns about: clearly worse than mixed.
  EXPECT_GT(e_single, e_mixed);
}
TYPED_TEST(KeplerChi2Test, MixedPrecisionWithinPaperBound) {
  check_mixed_precision_table2<TypeParam>();
}

// The hand-tuned CUDA chi^2 (mixed, fused) against the generic Kokkos kernel on the same models.
template <class Space>
void check_specialization_matches_generic() {
  using namespace kosmos::kepler;
  const auto data = hd164922(256);
  const auto obs = observations<Space>(data, data.mid_time());
  const HostModels h = table2_models(30720, 4, data.n_instruments(), false, 2009);
  const auto mixed = run_chi2<Mixed, Space>(obs, h, Chi2Layout::fused);
  const auto mixed_generic = run_chi2<Mixed, Space>(obs, h, Chi2Layout::fused, true);
  EXPECT_LE(max_relative_error(mixed, mixed_generic), 2.6e-4);
}
TYPED_TEST(KeplerChi2Test, CudaSpecializationMatchesGenericPath) {
  KOSMOS_SKIP_WITHOUT_CUDA_SPECIALIZATION(
      kosmos::kepler::Impl::HasCudaSpecialization<TypeParam>::value, TypeParam);
  check_specialization_matches_generic<TypeParam>();
}

// Log-likelihood of the specialization with offsets and jitter (Mixed), against double.
template <class Space>
void check_mixed_loglike() {
  using namespace kosmos::kepler;
  const auto data = hd164922();
  const auto obs = observations<Space>(data, data.mid_time());
  const int n_sys = 512;
  HostModels h = table2_models(n_sys, 2, data.n_instruments(), true, 5);
  for (auto& k : h.K)
    k = k / 50;  // near-fitting amplitudes: chi^2 ~ n_obs, ln L dominated by the log term
  Chi2Evaluator<Double, Space> ed(Space(), obs);
  Chi2Evaluator<Mixed, Space> em(Space(), obs);
  const auto md = to_device<Double, Space>(h);
  const auto mm = to_device<Mixed, Space>(h);
  Kokkos::View<double*, Space> c1("c1", n_sys), l1("l1", n_sys), c2("c2", n_sys), l2("l2", n_sys),
      c3("c3", n_sys), l3("l3", n_sys);
  ed.evaluate(md, c1, l1);
  em.evaluate(mm, c2, l2);
  em.evaluate_generic(mm, c3, l3);
  auto hl1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), l1);
  auto hl2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), l2);
  auto hl3 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), l3);
  for (int s = 0; s < n_sys; ++s) {
    EXPECT_LE(std::fabs(hl2(s) - hl1(s)), 1e-4 * std::fabs(hl1(s))) << s;
    EXPECT_LE(std::fabs(hl3(s) - hl1(s)), 1e-4 * std::fabs(hl1(s))) << s;
  }
}
// Observations staged through several scratch tiles (and several systems per team) give the
// same result as one tile, for both layouts.
template <class Space>
void check_tiling() {
  using namespace kosmos::kepler;
  const auto data = hd164922();
  const auto obs = observations<Space>(data, data.mid_time());
  const int n_sys = 300;  // not a multiple of the systems per team
  const HostModels h = table2_models(n_sys, 3, data.n_instruments(), true, 8);
  const auto models = to_device<Double, Space>(h);
  for (auto layout : {Chi2Layout::fused, Chi2Layout::separate}) {
    Chi2Options one, tiled;
    one.layout = tiled.layout = layout;
    tiled.max_tile = 64;  // 401 observations: 7 tiles, the last one partial
    Chi2Evaluator<Double, Space> e1(Space(), obs, one), e2(Space(), obs, tiled);
    Kokkos::View<double*, Space> c1("c1", n_sys), c2("c2", n_sys), l1("l1", n_sys), l2("l2", n_sys);
    e1.evaluate_generic(models, c1, l1);
    e2.evaluate_generic(models, c2, l2);
    auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c1);
    auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c2);
    auto g1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), l1);
    auto g2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), l2);
    for (int s = 0; s < n_sys; ++s) {
      EXPECT_LE(std::fabs(h1(s) - h2(s)), 1e-12 * h1(s)) << layout_name(layout) << " " << s;
      EXPECT_LE(std::fabs(g1(s) - g2(s)), 1e-12 * std::fabs(g1(s)))
          << layout_name(layout) << " " << s;
    }
  }
}
TYPED_TEST(KeplerChi2Test, TiledObservationsAgree) {
  check_tiling<TypeParam>();
}

TYPED_TEST(KeplerChi2Test, MixedLogLikelihoodMatchesDouble) {
  check_mixed_loglike<TypeParam>();
}

template <class Space, class Fn>
void expect_invalid(const Fn& fn, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "accepted bad input, expected '" << fragment << "'";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

template <class Space>
void check_bad_models() {
  using namespace kosmos::kepler;
  const auto data = hd164922(50);
  const auto obs = observations<Space>(data, data.mid_time());
  const HostModels good = table2_models(8, 2, data.n_instruments(), true, 3);
  Kokkos::View<double*, Space> chi2("chi2", 8), short_chi2("chi2", 7);
  Chi2Evaluator<Double, Space> ev(Space(), obs);
  auto with = [&](auto change) {
    HostModels h = good;
    change(h);
    return to_device<Double, Space>(h);
  };
  EXPECT_NO_THROW(ev.evaluate(to_device<Double, Space>(good), chi2));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto m_e = with([](HostModels& h) { h.e[3 * 2 + 1] = 1.0; });
  expect_invalid<Space>([&] { ev.evaluate(m_e, chi2); }, "e(3, 1) = 1 is outside [0, 1)");
  auto m_en = with([](HostModels& h) { h.e[2] = -0.25; });
  expect_invalid<Space>([&] { ev.evaluate(m_en, chi2); }, "e(1, 0) = -0.25 is outside [0, 1)");
  auto m_p = with([](HostModels& h) { h.P[5] = 0.0; });
  expect_invalid<Space>([&] { ev.evaluate(m_p, chi2); }, "P(2, 1) = 0 must be finite and > 0");
  auto m_k = with([&](HostModels& h) { h.K[0] = nan; });
  expect_invalid<Space>([&] { ev.evaluate(m_k, chi2); }, "K(0, 0) = nan");
  auto m_w = with([&](HostModels& h) { h.omega[4] = std::numeric_limits<double>::infinity(); });
  expect_invalid<Space>([&] { ev.evaluate(m_w, chi2); }, "omega(2, 0) = inf is not finite");
  auto m_j = with([](HostModels& h) { h.jitter[1] = -1.0; });
  expect_invalid<Space>([&] { ev.evaluate(m_j, chi2); }, "jitter(0, 1) = -1");
  expect_invalid<Space>([&] { ev.evaluate(to_device<Double, Space>(good), short_chi2); },
                        "chi2.extent(0) is 7, expected 8");
  HostModels two_inst = good;
  two_inst.n_inst = 2;
  two_inst.offset.resize(16);
  two_inst.jitter.resize(16);
  expect_invalid<Space>([&] { ev.evaluate(to_device<Double, Space>(two_inst), chi2); },
                        "models have 2 instruments, the observations 3");
  // Observations
  auto bad_sigma = data;
  bad_sigma.sigma[7] = 0.0;
  expect_invalid<Space>([&] { observations<Space>(bad_sigma, 0.0); },
                        "sigma(7) = 0 must be finite and > 0");
  auto bad_v = data;
  bad_v.velocity[3] = nan;
  expect_invalid<Space>([&] { observations<Space>(bad_v, 0.0); },
                        "velocity(3) = nan is not finite");
  expect_invalid<Space>([&] { Observations<Space>({}, {}, {}, {}, 1, 0.0); },
                        "no observations (empty data)");
  expect_invalid<Space>(
      [&] {
        Observations<Space>({1.0, 2.0}, {1.0}, {1.0, 1.0}, {0, 0}, 1, 0.0);
      },
      "velocity has 1 entries, time has 2");
  expect_invalid<Space>([&] { Observations<Space>({1.0}, {1.0}, {1.0}, {4}, 2, 0.0); },
                        "instrument(0) = 4 is outside [0, 2)");
}
TYPED_TEST(KeplerChi2Test, BadInputIsNamed) {
  check_bad_models<TypeParam>();
}

TEST(KeplerRV, EccentricAnomalyFormMatchesTrueAnomalyForm) {
  using namespace kosmos::kepler;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < 20000; ++i) {
    Orbit o{1 + 1000 * u(rng), 100 * u(rng), 0.999 * u(rng), 6.283185307179586 * u(rng),
            6.283185307179586 * u(rng)};
    const double t = 2450000 + 8000 * u(rng), epoch = 2454000;
    const LD M = kTwoPiL * ((LD(t) - epoch) / LD(o.P)) + o.M0;
    const LD E = kepler_ld(M, o.e);
    const LD nu = 2 * atan2l(sqrtl(1 + LD(o.e)) * sinl(E / 2), sqrtl(1 - LD(o.e)) * cosl(E / 2));
    const LD ref = LD(o.K) * (cosl(nu + o.omega) + o.e * cosl(o.omega));
    // conditioning near periastron at high e: dv/dM ~ K (1 + e)^2 / (1 - e^2)^(3/2)
    const double cond = (1 + o.e) * (1 + o.e) / std::pow((1 - o.e) * (1 + o.e), 1.5);
    EXPECT_NEAR(radial_velocity(o, t, epoch), double(ref), 1e-12 * o.K * cond * 1000) << i;
    Orbit f = o;
    f.K = k_prime_from_semi_amplitude(o.K, o.e);
    f.omega = ford_omega_from_omega(o.omega);
    EXPECT_NEAR(radial_velocity(f, t, epoch, Amplitude::k_prime), double(ref),
                1e-12 * o.K * cond * 1000)
        << i;
    EXPECT_NEAR(semi_amplitude_from_k_prime(f.K, o.e), o.K, 1e-12 * o.K);
    EXPECT_NEAR(omega_from_ford_omega(f.omega), o.omega, 1e-12);
  }
}

TEST(KeplerRV, TimeConventions) {
  using namespace kosmos::kepler;
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < 2000; ++i) {
    const double P = 1 + 2000 * u(rng), e = 0.95 * u(rng), w = 6.283185307179586 * u(rng);
    const double epoch = 2455000, tc = 2450000 + 10000 * u(rng), tp = 2450000 + 10000 * u(rng);
    // At t = tc the true anomaly is pi/2 - omega (star at conjunction: planet in front).
    const double M0 = mean_anomaly_from_conjunction(P, e, w, tc, epoch);
    const LD M = kTwoPiL * ((LD(tc) - epoch) / LD(P)) + M0;
    const LD E = kepler_ld(M, e);
    const LD nu = 2 * atan2l(sqrtl(1 + LD(e)) * sinl(E / 2), sqrtl(1 - LD(e)) * cosl(E / 2));
    LD d = fmodl(nu - (kTwoPiL / 4 - w), kTwoPiL);
    if (d > kTwoPiL / 2) d -= kTwoPiL;
    if (d < -kTwoPiL / 2) d += kTwoPiL;
    EXPECT_LE(double(fabsl(d)) * (1 - e) * (1 - e), 1e-9) << "P " << P << " e " << e << " w " << w;
    // Round trip: the conjunction nearest the epoch is tc + n P.
    const double tc2 = conjunction_from_mean_anomaly(P, e, w, M0, epoch);
    const double n = (tc2 - tc) / P;
    EXPECT_NEAR(n, std::round(n), 1e-8);
    EXPECT_LE(std::fabs(tc2 - epoch), 0.5 * P + 1e-9);
    // Periastron: M(tp) = 0.
    const double M0p = mean_anomaly_from_periastron(P, tp, epoch);
    LD Mp = fmodl(kTwoPiL * ((LD(tp) - epoch) / LD(P)) + M0p, kTwoPiL);
    if (Mp > kTwoPiL / 2) Mp -= kTwoPiL;
    if (Mp < -kTwoPiL / 2) Mp += kTwoPiL;
    EXPECT_LE(double(fabsl(Mp)), 1e-9);
    const double tp2 = periastron_from_mean_anomaly(P, M0p, epoch);
    EXPECT_NEAR((tp2 - tp) / P, std::round((tp2 - tp) / P), 1e-8);
  }
}
}  // namespace
