// After sampling: the MAP, derived columns (angles, Tc, Tp, m sin i, a), posterior summaries.
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/impl/diagnostics.hpp>
#include <kosmos/kepler/impl/optimize.hpp>
#include <kosmos/kepler/impl/search_stages.hpp>
#include <kosmos/kepler/impl/warnings.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace kosmos {
namespace kepler {
namespace Impl {
constexpr double kGMSun = 1.3271244e20, kGMJupiter = 1.26686534e17,
                 kGMEarth = 3.986004e14;  // m^3/s^2 (IAU)
constexpr double kAu = 1.495978707e11;    // m
}  // namespace Impl

PlanetMass minimum_mass(const Orbit& o, double stellar_mass) {
  using namespace Impl;
  kosmos::Impl::require(stellar_mass > 0 && o.P > 0 && o.K >= 0 && o.e >= 0 && o.e < 1,
                        "kosmos::kepler::minimum_mass",
                        "need stellar mass > 0, P > 0, K >= 0, 0 <= e < 1 (got ", stellar_mass,
                        ", ", o.P, ", ", o.K, ", ", o.e, ")");
  const double gm_star = stellar_mass * kGMSun, P = o.P * 86400.0, K = o.K, e = o.e;
  const double factor = K * std::sqrt((1 - e) * (1 + e)) * std::cbrt(P / kTwoPi);
  // The mass function G m = factor (G (M + m))^(2/3): with y = cbrt(G (M + m)), the one positive
  // root of y^3 - factor y^2 - G M, by Newton from y = factor + cbrt(G M) (above the root, where
  // the cubic is convex: the iterates fall monotonically; no pow per step, every m / M).
  double y = factor + std::cbrt(gm_star);
  for (;;) {
    const double next = y - (y * y * y - factor * y * y - gm_star) / (y * (3 * y - 2 * factor));
    if (!(next < y)) break;
    y = next;
  }
  const double gm_planet = factor * y * y;
  PlanetMass m;
  m.msini_jupiter = gm_planet / kGMJupiter;
  m.msini_earth = gm_planet / kGMEarth;
  m.a_au = std::cbrt((gm_star + gm_planet) * P * P / (kTwoPi * kTwoPi)) / kAu;
  return m;
}

namespace Impl {
namespace {
// period_modes of periods in ascending order (all positive and finite).
std::vector<PeriodMode> sorted_period_modes(const std::vector<double>& periods, double baseline) {
  if (periods.empty()) return {};
  // Groups in frequency: f[i] = 1 / periods[size - 1 - i] ascends.
  const std::size_t size = periods.size();
  auto f = [&](std::size_t i) { return 1 / periods[size - 1 - i]; };
  const double gap = 0.3 / baseline, min_weight = 0.02;
  std::vector<std::size_t> begin{0};  // group g: [begin[g], begin[g + 1])
  for (std::size_t i = 1; i < size; ++i)
    if (f(i) - f(i - 1) > gap) begin.push_back(i);
  begin.push_back(size);
  // Small groups (tails of a broad peak) join the neighbour across the smaller gap.
  for (;;) {
    std::size_t smallest = 0;
    for (std::size_t g = 1; g + 1 < begin.size(); ++g)
      if (begin[g + 1] - begin[g] < begin[smallest + 1] - begin[smallest]) smallest = g;
    const std::size_t groups = begin.size() - 1;
    if (groups == 1 || double(begin[smallest + 1] - begin[smallest]) >= min_weight * double(size))
      break;
    const double left = smallest > 0 ? f(begin[smallest]) - f(begin[smallest] - 1) : HUGE_VAL;
    const double right =
        smallest + 1 < groups ? f(begin[smallest + 1]) - f(begin[smallest + 1] - 1) : HUGE_VAL;
    begin.erase(begin.begin() + std::ptrdiff_t(left <= right ? smallest : smallest + 1));
  }
  std::vector<PeriodMode> modes;
  for (std::size_t g = 0; g + 1 < begin.size(); ++g) {
    const std::vector<double> p(periods.begin() + std::ptrdiff_t(size - begin[g + 1]),
                                periods.begin() + std::ptrdiff_t(size - begin[g]));  // ascending
    PeriodMode m;
    m.period = sorted_percentile(p, 0.5);
    m.lower = sorted_percentile(p, 0.158655);
    m.upper = sorted_percentile(p, 0.841345);
    m.weight = double(p.size()) / double(size);
    modes.push_back(m);
  }
  std::sort(modes.begin(), modes.end(),
            [](const PeriodMode& a, const PeriodMode& b) { return a.weight > b.weight; });
  return modes;
}
}  // namespace
}  // namespace Impl

std::vector<PeriodMode> period_modes(const std::vector<double>& periods, double baseline) {
  kosmos::Impl::require(baseline > 0, "kosmos::kepler::period_modes", "baseline ", baseline,
                        " must be > 0");
  std::vector<double> p;
  for (double x : periods)
    if (x > 0 && std::isfinite(x)) p.push_back(x);
  std::sort(p.begin(), p.end());
  return Impl::sorted_period_modes(p, baseline);
}

const ParameterSummary& SearchResult::get(const std::string& column) const {
  for (const auto& s : summary)
    if (s.name == column) return s;
  throw invalid_input("kosmos::kepler::SearchResult::get: no column '" + column + "'");
}

namespace Impl {
namespace {
// sorted_percentile of the values sorted, by selection instead of a sort.
double unsorted_percentile(std::vector<double> v, double q) {
  const double pos = q * double(v.size() - 1);
  const std::size_t i = std::size_t(pos);
  const double f = pos - double(i);
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(i), v.end());
  if (i + 1 == v.size()) return v[i];
  const double above = *std::min_element(v.begin() + std::ptrdiff_t(i) + 1, v.end());
  return v[i] * (1 - f) + above * f;
}
}  // namespace

// Per column of finish_star (in its order): whether only fixed parameters determine it (P, K, e,
// omega from their slots or fixed elements; M0 from a fixed Tc with P, e, omega fixed; Tp from P
// and M0; masses and a from P, K, e and a certain stellar mass). ln L is never fixed.
std::vector<bool> fixed_columns(const Model& model, bool masses, bool uncertain_mass) {
  const ParamLayout& L = model.L;
  std::vector<bool> out;
  for (int j = 0; j < L.n_pl; ++j) {
    const bool P = model.is_fixed(L.lnP(j)), K = model.is_fixed(L.K(j));
    const bool e = !std::isnan(model.e_fixed[j]), w = !std::isnan(model.omega_fixed[j]);
    const bool tc = !std::isnan(model.tc_fixed[j]);
    const bool M0 = tc && P && e && w;
    out.insert(out.end(), {P, K, e, w, M0, tc, P && M0});
    if (masses) out.insert(out.end(), 3, P && K && e && !uncertain_mass);
  }
  for (int i = 0; i < L.n_inst; ++i) out.push_back(model.is_fixed(L.gamma(i)));
  for (int i = 0; i < L.n_inst; ++i) out.push_back(model.is_fixed(L.jitter(i)));
  for (int i = 0; i < L.n_trend; ++i) out.push_back(model.is_fixed(L.trend(i)));
  for (int i = 0; i < L.n_extra(); ++i) out.push_back(model.is_fixed(L.noise(i)));
  out.push_back(false);  // ln L
  return out;
}

namespace {
// fit.current: the best of the chains' start and the kept samples; true when a sample beat the
// start.
bool take_best_sample(StarFit& fit) {
  const int dim = fit.model->L.dim();
  const auto& kept = fit.kept;
  std::size_t top = 0;
  for (std::size_t r = 1; r < kept.size(); ++r)
    if (kept[r][dim] > kept[top][dim]) top = r;
  if (kept.empty() || !(kept[top][dim] > fit.start_lnpost)) return false;
  fit.current.assign(kept[top].data(), kept[top].data() + dim);
  return true;
}
}  // namespace

void choose_map(StarFit& fit, const SearchOptions& opt, bool refine) {
  const Model& model = *fit.model;
  const std::unique_ptr<Likelihood> lik =
      make_reporting_likelihood(HostObservations(*fit.data, fit.epoch, opt), model, opt, !refine);
  if (take_best_sample(fit) && refine)
    polish(*lik, model, fit.current, parameter_scales(fit.current, model.L, fit.baseline));
  std::vector<double> logpost, loglike, chi2;
  lik->evaluate(fit.current, 1, logpost, &loglike, &chi2);
  fit.result.best_loglike = loglike[0];
  fit.result.best_chi2 = chi2[0];
  fit.evaluations += lik->evaluations;
}

void choose_maps(const std::vector<StarFit*>& fits, const SearchOptions& opt, bool refine) {
  if (fits.empty()) return;
  if (refine) {
    for (StarFit* fit : fits) choose_map(*fit, opt, refine);
    return;
  }
  std::vector<const double*> x;
  for (StarFit* fit : fits) {
    take_best_sample(*fit);
    x.push_back(fit->current.data());
  }
  SearchOptions reporting = opt;  // as make_reporting_likelihood's
  reporting.mixed_precision = false;
  const auto lik = stars_likelihood(fits, reporting);
  std::vector<double> logpost, loglike, chi2;
  lik->evaluate_stars(x, 1, logpost, &loglike, &chi2);
  for (std::size_t s = 0; s < fits.size(); ++s) {
    fits[s]->result.best_loglike = loglike[s];
    fits[s]->result.best_chi2 = chi2[s];
    fits[s]->evaluations += 1;
  }
}

void finish_star(StarFit& fit, const SearchOptions& opt, std::mt19937_64& rng) {
  const RVData& data = *fit.data;
  const Model& model = *fit.model;
  const ParamLayout& L = model.L;
  const int dim = L.dim(), n = opt.chains;
  const double epoch = fit.epoch;
  SearchResult& result = fit.result;
  const std::vector<double>& current = fit.current;
  const auto& kept = fit.kept;
  result.acceptance = double(fit.accepted) / std::max(1LL, fit.proposed);
  // Derived columns; ln L (not the posterior) as the last.
  const std::string letters = "bcdefghi";
  const bool masses = opt.stellar_mass > 0;
  for (int j = 0; j < L.n_pl; ++j) {
    for (const char* q : {"P", "K", "e", "omega_deg", "M0_deg", "Tc", "Tp"})
      result.columns.push_back(std::string(q) + "_" + letters[j]);
    if (masses)
      for (const char* q : {"msini_jup", "msini_earth", "a_au"})
        result.columns.push_back(std::string(q) + "_" + letters[j]);
  }
  for (const auto& name : data.instrument_names) result.columns.push_back("gamma_" + name);
  for (const auto& name : data.instrument_names) result.columns.push_back("jitter_" + name);
  if (L.n_trend >= 1) result.columns.push_back("dvdt");
  if (L.n_trend >= 2) result.columns.push_back("curv");
  for (const auto& name : model.noise_names) result.columns.push_back(name);
  result.columns.push_back("lnL");
  const std::vector<bool> column_fixed = fixed_columns(model, masses, opt.stellar_mass_sigma > 0);
  std::vector<double> map_w(L.n_pl), map_m0(L.n_pl), map_tc(L.n_pl), map_tp(L.n_pl);
  for (int j = 0; j < L.n_pl; ++j) {
    const Orbit o = model.orbit(current.data(), j);
    map_w[j] = o.omega * 180 / (kTwoPi / 2);
    map_m0[j] = o.M0 * 180 / (kTwoPi / 2);
    map_tc[j] = conjunction_from_mean_anomaly(o.P, o.e, o.omega, o.M0, epoch);
    map_tp[j] = periastron_from_mean_anomaly(o.P, o.M0, epoch);
  }
  auto near = [](double value, double center, double period) {
    return value + period * std::round((center - value) / period);
  };
  const std::size_t n_cols = result.columns.size();
  // One row of the columns above, written to out.
  auto derived = [&](const double* x, double loglike, double m_star, double* out) {
    for (int j = 0; j < L.n_pl; ++j) {
      const Orbit o = model.orbit(x, j);
      *out++ = o.P;
      *out++ = o.K;
      *out++ = o.e;
      *out++ = near(o.omega * 180 / (kTwoPi / 2), map_w[j], 360);
      *out++ = near(o.M0 * 180 / (kTwoPi / 2), map_m0[j], 360);
      *out++ = near(conjunction_from_mean_anomaly(o.P, o.e, o.omega, o.M0, epoch), map_tc[j], o.P);
      *out++ = near(periastron_from_mean_anomaly(o.P, o.M0, epoch), map_tp[j], o.P);
      if (masses) {
        const PlanetMass pm = minimum_mass(o, m_star);
        *out++ = pm.msini_jupiter;
        *out++ = pm.msini_earth;
        *out++ = pm.a_au;
      }
    }
    for (int i = 0; i < L.n_inst; ++i) *out++ = x[L.gamma(i)];
    for (int i = 0; i < L.n_inst; ++i) *out++ = x[L.jitter(i)];
    for (int i = 0; i < L.n_trend; ++i) *out++ = x[L.trend(i)];
    for (int i = 0; i < L.n_extra(); ++i) *out++ = model.noise_value(x, i);
    *out = loglike;
  };
  // The rows (result.samples, in kept order) and each column's draws chain after chain (the
  // diagnostics' order) in one pass.
  const std::size_t rows = kept.size();
  const std::vector<std::size_t> chain_major = rows_chain_after_chain(result.sample_chain, n);
  std::vector<std::size_t> position(rows);
  for (std::size_t k = 0; k < rows; ++k) position[chain_major[k]] = k;
  std::vector<double> by_column(n_cols * rows);
  std::normal_distribution<double> mass_draw(opt.stellar_mass, opt.stellar_mass_sigma);
  result.samples = RowTable(rows, n_cols);
  for (std::size_t r = 0; r < rows; ++r) {
    double m_star = opt.stellar_mass;
    if (masses && opt.stellar_mass_sigma > 0) do
        m_star = mass_draw(rng);
      while (!(m_star > 0));
    const RowView<double> row = result.samples[r];
    derived(kept[r].data(), kept[r][dim + 1], m_star, row.data());
    for (std::size_t c = 0; c < n_cols; ++c) by_column[c * rows + position[r]] = row[c];
  }
  std::vector<double> map_row(n_cols);
  derived(current.data(), result.best_loglike, opt.stellar_mass, map_row.data());
  std::vector<double> draws, sorted;
  std::vector<std::vector<double>> sorted_periods;  // per planet, for its modes
  for (std::size_t c = 0; c < n_cols; ++c) {
    const std::string& name = result.columns[c];
    draws.assign(by_column.begin() + std::ptrdiff_t(c * rows),
                 by_column.begin() + std::ptrdiff_t((c + 1) * rows));
    // Angles were unwrapped around the MAP; shift each angle column by whole turns so that its
    // median lies in [0, 360) (the MAP value moves with it).
    if (name.rfind("omega_deg_", 0) == 0 || name.rfind("M0_deg_", 0) == 0) {
      const double turn = 360 * std::floor(unsorted_percentile(draws, 0.5) / 360);
      for (const RowView<double> row : result.samples) row[c] -= turn;
      for (auto& v : draws) v -= turn;
      map_row[c] -= turn;
    }
    ParameterSummary s;
    s.name = name;
    s.best = map_row[c];
    s.fixed = column_fixed[c];
    if (s.fixed) {
      sorted = draws;
      std::sort(sorted.begin(), sorted.end());
      s.rhat = s.ess = s.ess_tail = std::numeric_limits<double>::quiet_NaN();
    } else {
      const RankDiagnostics d = rank_diagnostics(draws, std::size_t(n), true, &sorted);
      s.rhat = d.rhat;
      s.ess = d.ess_bulk;
      s.ess_tail = d.ess_tail;
    }
    s.median = sorted_percentile(sorted, 0.5);
    s.lower = sorted_percentile(sorted, 0.158655);
    s.upper = sorted_percentile(sorted, 0.841345);
    result.summary.push_back(s);
    if (name.size() == 3 && name.compare(0, 2, "P_") == 0) sorted_periods.push_back(sorted);
  }
  result.max_rhat = 0;
  result.min_ess = kInf;
  for (const auto& s : result.summary) {  // NaN (too few samples) stays NaN; fixed ones skipped
    if (s.fixed) continue;
    result.max_rhat = std::isnan(s.rhat) ? s.rhat : std::max(result.max_rhat, s.rhat);
    const double ess = std::isnan(s.ess) || std::isnan(s.ess_tail) ? s.ess + s.ess_tail
                                                                   : std::min(s.ess, s.ess_tail);
    result.min_ess = std::isnan(ess) ? ess : std::min(result.min_ess, ess);
  }
  append(result.warnings,
         bound_pileup_warnings(result, opt.period_min,
                               opt.period_max > 0 ? opt.period_max : 2 * fit.baseline, opt));
  // Alias modes of each period: the median of P is no summary of several.
  for (int j = 0; j < L.n_pl; ++j) {
    std::vector<double>& periods = sorted_periods[std::size_t(j)];
    periods.erase(std::remove_if(periods.begin(), periods.end(),
                                 [](double p) { return !(p > 0 && std::isfinite(p)); }),
                  periods.end());
    result.period_modes.push_back(sorted_period_modes(periods, fit.baseline));
    const auto& modes = result.period_modes.back();
    if (modes.size() < 2) continue;
    std::ostringstream m;
    m << "P_" << letters[std::size_t(j)] << " is multimodal (aliases?): " << modes.size()
      << " modes,";
    for (const auto& mode : modes)
      m << " " << std::setprecision(8) << mode.period << " d (weight " << std::setprecision(2)
        << mode.weight << ")";
    m << "; its median and interval span them: report the modes";
    result.warnings.push_back(m.str());
  }
  for (int j = 0; j < L.n_pl; ++j) result.best_orbits.push_back(model.orbit(current.data(), j));
  for (int i = 0; i < L.n_inst; ++i) {
    result.best_offsets.push_back(current[L.gamma(i)]);
    result.best_jitters.push_back(current[L.jitter(i)]);
  }
  for (int i = 0; i < L.n_trend; ++i) result.best_trend.push_back(current[L.trend(i)]);
  result.likelihood_evaluations = fit.evaluations;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - fit.start).count();
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
