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
  double gm_planet = 0;  // fixed point of the mass function; m / M_star < 1 converges fast
  for (int it = 0; it < 60; ++it) {
    const double next = factor * std::pow(gm_star + gm_planet, 2.0 / 3.0);
    if (next == gm_planet) break;
    gm_planet = next;
  }
  PlanetMass m;
  m.msini_jupiter = gm_planet / kGMJupiter;
  m.msini_earth = gm_planet / kGMEarth;
  m.a_au = std::cbrt((gm_star + gm_planet) * P * P / (kTwoPi * kTwoPi)) / kAu;
  return m;
}

std::vector<PeriodMode> period_modes(const std::vector<double>& periods, double baseline) {
  kosmos::Impl::require(baseline > 0, "kosmos::kepler::period_modes", "baseline ", baseline,
                        " must be > 0");
  std::vector<double> f;
  for (double p : periods)
    if (p > 0 && std::isfinite(p)) f.push_back(1 / p);
  if (f.empty()) return {};
  std::sort(f.begin(), f.end());
  const double gap = 0.3 / baseline, min_weight = 0.02;
  std::vector<std::size_t> begin{0};  // group g: [begin[g], begin[g + 1])
  for (std::size_t i = 1; i < f.size(); ++i)
    if (f[i] - f[i - 1] > gap) begin.push_back(i);
  begin.push_back(f.size());
  // Small groups (tails of a broad peak) join the neighbour across the smaller gap.
  for (;;) {
    std::size_t smallest = 0;
    for (std::size_t g = 1; g + 1 < begin.size(); ++g)
      if (begin[g + 1] - begin[g] < begin[smallest + 1] - begin[smallest]) smallest = g;
    const std::size_t groups = begin.size() - 1;
    if (groups == 1 ||
        double(begin[smallest + 1] - begin[smallest]) >= min_weight * double(f.size()))
      break;
    const double left = smallest > 0 ? f[begin[smallest]] - f[begin[smallest] - 1] : HUGE_VAL;
    const double right =
        smallest + 1 < groups ? f[begin[smallest + 1]] - f[begin[smallest + 1] - 1] : HUGE_VAL;
    begin.erase(begin.begin() + std::ptrdiff_t(left <= right ? smallest : smallest + 1));
  }
  std::vector<PeriodMode> modes;
  for (std::size_t g = 0; g + 1 < begin.size(); ++g) {
    std::vector<double> p;
    for (std::size_t i = begin[g + 1]; i-- > begin[g];) p.push_back(1 / f[i]);  // ascending P
    PeriodMode m;
    m.period = Impl::sorted_percentile(p, 0.5);
    m.lower = Impl::sorted_percentile(p, 0.158655);
    m.upper = Impl::sorted_percentile(p, 0.841345);
    m.weight = double(p.size()) / double(f.size());
    modes.push_back(m);
  }
  std::sort(modes.begin(), modes.end(),
            [](const PeriodMode& a, const PeriodMode& b) { return a.weight > b.weight; });
  return modes;
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

// The MAP (the polished optimum, or a sample above it, polished again), derived columns and
// summaries of one star after sampling.
// refine: polish a sample above the MAP (and evaluate the MAP again); otherwise the MAP is the
// best of the start and the samples, its chi^2 from its ln L (the survey benchmark's path).
void finish_star(StarFit& fit, const SearchOptions& opt, std::mt19937_64& rng, bool refine) {
  const RVData& data = *fit.data;
  const Model& model = *fit.model;
  const ParamLayout& L = model.L;
  const int dim = L.dim(), n = opt.chains;
  const double epoch = fit.epoch;
  SearchResult& result = fit.result;
  std::vector<double>& current = fit.current;
  const auto& kept = fit.kept;
  std::unique_ptr<Likelihood> lik;
  if (refine || L.n_noise > 0)
    lik = make_likelihood(HostObservations(data, epoch, opt), model, opt);
  result.acceptance = double(fit.accepted) / std::max(1LL, fit.proposed);
  double map_loglike = fit.start_lnlike;
  {
    std::size_t top = 0;
    for (std::size_t r = 1; r < kept.size(); ++r)
      if (kept[r][dim] > kept[top][dim]) top = r;
    if (!kept.empty() && kept[top][dim] > fit.start_lnpost) {
      current.assign(kept[top], kept[top] + dim);
      map_loglike = kept[top][dim + 1];
      if (refine) polish(*lik, model, current, parameter_scales(current, L, fit.baseline));
    }
  }
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
  auto derived = [&](const double* x, double loglike, double m_star) {
    std::vector<double> out;
    for (int j = 0; j < L.n_pl; ++j) {
      const Orbit o = model.orbit(x, j);
      out.push_back(o.P);
      out.push_back(o.K);
      out.push_back(o.e);
      out.push_back(near(o.omega * 180 / (kTwoPi / 2), map_w[j], 360));
      out.push_back(near(o.M0 * 180 / (kTwoPi / 2), map_m0[j], 360));
      out.push_back(
          near(conjunction_from_mean_anomaly(o.P, o.e, o.omega, o.M0, epoch), map_tc[j], o.P));
      out.push_back(near(periastron_from_mean_anomaly(o.P, o.M0, epoch), map_tp[j], o.P));
      if (masses) {
        const PlanetMass pm = minimum_mass(o, m_star);
        out.push_back(pm.msini_jupiter);
        out.push_back(pm.msini_earth);
        out.push_back(pm.a_au);
      }
    }
    for (int i = 0; i < L.n_inst; ++i) out.push_back(x[L.gamma(i)]);
    for (int i = 0; i < L.n_inst; ++i) out.push_back(x[L.jitter(i)]);
    for (int i = 0; i < L.n_trend; ++i) out.push_back(x[L.trend(i)]);
    for (int i = 0; i < L.n_extra(); ++i) out.push_back(model.noise_value(x, i));
    out.push_back(loglike);
    return out;
  };
  std::normal_distribution<double> mass_draw(opt.stellar_mass, opt.stellar_mass_sigma);
  for (std::size_t r = 0; r < kept.size(); ++r) {
    double m_star = opt.stellar_mass;
    if (masses && opt.stellar_mass_sigma > 0) do
        m_star = mass_draw(rng);
      while (!(m_star > 0));
    result.samples.push_back(derived(kept[r], kept[r][dim + 1], m_star));
  }
  // Angles were unwrapped around the MAP; shift each angle column by whole turns so that its
  // median lies in [0, 360) (the MAP value moves with it).
  std::vector<double> map_row;
  if (lik) {  // the noise model's own chi^2 (white: with the jitters)
    std::vector<double> f, ll, c2;
    lik->evaluate(current, 1, f, &ll, &c2);
    result.best_loglike = ll[0];
    result.best_chi2 = c2[0];
  } else {  // ln L = -(chi^2 + sum ln(2 pi (sigma^2 + s^2))) / 2
    double log_var = 0;
    for (std::size_t k = 0; k < data.size(); ++k) {
      const double s = current[L.jitter(data.instrument[k])];
      log_var += std::log(kTwoPi * (data.sigma[k] * data.sigma[k] + s * s));
    }
    result.best_loglike = map_loglike;
    result.best_chi2 = -2 * map_loglike - log_var;
  }
  map_row = derived(current.data(), result.best_loglike, opt.stellar_mass);
  const std::vector<std::size_t> chain_major = rows_chain_after_chain(result.sample_chain, n);
  const std::size_t n_cols = result.columns.size();
  std::vector<double> draws(chain_major.size()), sorted;
  for (std::size_t c = 0; c < n_cols; ++c) {
    const std::string& name = result.columns[c];
    for (std::size_t k = 0; k < draws.size(); ++k) draws[k] = result.samples[chain_major[k]][c];
    if (name.rfind("omega_deg_", 0) == 0 || name.rfind("M0_deg_", 0) == 0) {
      const double turn = 360 * std::floor(unsorted_percentile(draws, 0.5) / 360);
      for (auto& row : result.samples) row[c] -= turn;
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
    const std::string name = std::string("P_") + letters[std::size_t(j)];
    const std::size_t c = std::size_t(
        std::find(result.columns.begin(), result.columns.end(), name) - result.columns.begin());
    std::vector<double> periods;
    for (const auto& row : result.samples) periods.push_back(row[c]);
    result.period_modes.push_back(period_modes(periods, fit.baseline));
    const auto& modes = result.period_modes.back();
    if (modes.size() < 2) continue;
    std::ostringstream m;
    m << name << " is multimodal (aliases?): " << modes.size() << " modes,";
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
  result.likelihood_evaluations = fit.evaluations + (lik ? lik->evaluations : 0);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - fit.start).count();
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
