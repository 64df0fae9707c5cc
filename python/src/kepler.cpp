// kosmos._kosmos.kepler: batched Kepler solver, RV model, chi^2, search and survey.
#include "common.hpp"

#include <algorithm>
#include <cmath>

#include <kosmos/kepler/chi2.hpp>
#include <kosmos/kepler/evidence.hpp>
#include <kosmos/kepler/rv.hpp>
#include <kosmos/kepler/rv_data.hpp>
#include <kosmos/kepler/search.hpp>
#include <kosmos/kepler/solver.hpp>

namespace kosmos_python {
namespace kk = kosmos::kepler;

// v(k) = sum over the planets (rows of orbits: P, K, e, omega, M0) of kk::radial_velocity at t(k).
// A named functor (nvcc's extended lambdas may not live in functions of an unnamed namespace).
struct RVModel {
  Kokkos::View<const double*, Memory> t;
  Kokkos::View<const double**, Kokkos::LayoutRight, Memory> orbits;
  Kokkos::View<double*, Memory> v;
  double epoch;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t k) const {
    double sum = 0;
    for (std::size_t p = 0; p < orbits.extent(0); ++p) {
      kk::Orbit o;
      o.P = orbits(p, 0);
      o.K = orbits(p, 1);
      o.e = orbits(p, 2);
      o.omega = orbits(p, 3);
      o.M0 = orbits(p, 4);
      sum += kk::radial_velocity(o, t(k), epoch);
    }
    v(k) = sum;
  }
};

namespace {

kk::Solver solver_from_name(const std::string& name) {
  if (name == "markley") return kk::Solver::Markley;
  if (name == "danby") return kk::Solver::Danby;
  throw kosmos::invalid_input("kosmos.kepler: solver must be 'markley' or 'danby', not '" + name +
                              "'");
}

// E (and sin E, cos E, nu where given with extent n) of M, e; status per element.
template <class T>
void solve(py::handle M_in, py::handle e_in, py::handle E_in, py::handle sin_in, py::handle cos_in,
           py::handle nu_in, py::handle status_in, const std::string& solver, int max_iterations,
           double tolerance) {
  const std::string where = "kosmos.kepler.solve";
  auto M = as_array<T>(M_in, where, "M", 1);
  const py::ssize_t n = M.shape(0);
  auto e = as_array<T>(e_in, where, "e", 1, {n});
  auto E = as_array<T>(E_in, where, "E", 1, {n});
  auto status = as_array<std::uint8_t>(status_in, where, "status", 1, {n});
  // Optional outputs: None (skipped: extent 0) or an array of extent n.
  auto optional = [&](py::handle h, const char* name) {
    return h.is_none() ? py::array_t<T>(0) : as_array<T>(h, where, name, 1, {n});
  };
  auto s = optional(sin_in, "sinE"), c = optional(cos_in, "cosE"), nu = optional(nu_in, "nu");
  Bound<const T*> bM(M, true), be(e, true);
  Bound<T*> bE(E, false), bs(s, false), bc(c, false), bnu(nu, false);
  Bound<std::uint8_t*> bst(status, false);
  kk::SolverOptions options;
  options.solver = solver_from_name(solver);
  options.max_iterations = max_iterations;
  options.tolerance = tolerance;
  {
    py::gil_scoped_release unlocked;
    kk::solve(Space(), bM.device, be.device, bE.device, bs.device, bc.device, bnu.device,
              bst.device, options);
    Space().fence();
  }
  for (const auto* b : {&bE, &bs, &bc, &bnu}) b->to_host();
  bst.to_host();
}

// Sum over planets of the Keplerian velocity (kk::radial_velocity, RadVel conventions) at times t:
// orbits (n_pl, 5) rows P, K, e, omega [rad], M0 [rad] at `epoch`; out (n) overwritten.
void rv_model(py::handle t_in, py::handle orbits_in, double epoch, py::handle out_in) {
  const std::string where = "kosmos.kepler.rv_model";
  auto t = as_array<double>(t_in, where, "t", 1);
  const py::ssize_t n = t.shape(0);
  auto orbits = as_array<double>(orbits_in, where, "orbits", 2, {-1, 5});
  auto out = as_array<double>(out_in, where, "out", 1, {n});
  const int n_pl = int(orbits.shape(0));
  for (int p = 0; p < n_pl; ++p) {
    const auto o = orbits.unchecked<2>();
    kosmos::Impl::require(o(p, 0) > 0 && std::isfinite(o(p, 0)), where.c_str(), "P of planet ", p,
                          " is ", o(p, 0), ", must be finite and > 0");
    kosmos::Impl::require(o(p, 2) >= 0 && o(p, 2) < 1, where.c_str(), "e of planet ", p, " is ",
                          o(p, 2), ", outside [0, 1)");
  }
  Bound<const double*> bt(t, true);
  Bound<const double**> bo(orbits, true);
  Bound<double*> bv(out, false);
  {
    py::gil_scoped_release unlocked;
    Kokkos::parallel_for("kosmos::python::rv_model",
                         Kokkos::RangePolicy<Space>(Space(), 0, bt.device.extent(0)),
                         RVModel{bt.device, bo.device, bv.device, epoch});
    Space().fence();
  }
  bv.to_host();
}

// t, v, sigma (n) float64 and instrument (n) int32 of one data set, checked, as vectors.
struct RVColumns {
  std::vector<double> t, v, sigma;
  std::vector<int> instrument;
};
RVColumns rv_columns(const std::string& where, py::handle t_in, py::handle v_in,
                     py::handle sigma_in, py::handle inst_in) {
  auto t = as_array<double>(t_in, where, "t", 1);
  const py::ssize_t n = t.shape(0);
  auto v = as_array<double>(v_in, where, "v", 1, {n});
  auto sigma = as_array<double>(sigma_in, where, "sigma", 1, {n});
  auto inst = as_array<int>(inst_in, where, "instrument", 1, {n});
  return {{t.data(), t.data() + n},
          {v.data(), v.data() + n},
          {sigma.data(), sigma.data() + n},
          {inst.data(), inst.data() + n}};
}

// chi^2 and ln L (double precision) of n_sys models against one data set: P, K, e, omega, M0
// (n_sys, n_pl); offset, jitter (n_sys, n_instruments); trend (n_sys, 0..2).
void chi2(py::handle t_in, py::handle v_in, py::handle sigma_in, py::handle inst_in,
          int n_instruments, double epoch, py::handle P_in, py::handle K_in, py::handle e_in,
          py::handle omega_in, py::handle M0_in, py::handle offset_in, py::handle jitter_in,
          py::handle trend_in, py::handle chi2_in, py::handle loglike_in,
          const std::string& solver) {
  const std::string where = "kosmos.kepler.chi2";
  auto data = rv_columns(where, t_in, v_in, sigma_in, inst_in);
  auto P = as_array<double>(P_in, where, "P", 2);
  const py::ssize_t n_sys = P.shape(0), n_pl = P.shape(1);
  auto K = as_array<double>(K_in, where, "K", 2, {n_sys, n_pl});
  auto e = as_array<double>(e_in, where, "e", 2, {n_sys, n_pl});
  auto omega = as_array<double>(omega_in, where, "omega", 2, {n_sys, n_pl});
  auto M0 = as_array<double>(M0_in, where, "M0", 2, {n_sys, n_pl});
  auto offset = as_array<double>(offset_in, where, "offset", 2, {n_sys, n_instruments});
  auto jitter = as_array<double>(jitter_in, where, "jitter", 2, {n_sys, n_instruments});
  auto trend = as_array<double>(trend_in, where, "trend", 2, {n_sys, -1});
  auto chi2_out = as_array<double>(chi2_in, where, "chi2", 1, {n_sys});
  auto loglike_out = as_array<double>(loglike_in, where, "loglike", 1, {n_sys});
  kk::Observations<Space> obs(data.t, data.v, data.sigma, data.instrument, n_instruments, epoch);
  Bound<double**> bP(P, true), bK(K, true), be(e, true), bw(omega, true), bM(M0, true),
      boff(offset, true), bj(jitter, true), btr(trend, true);
  Bound<double*> bc(chi2_out, false), bl(loglike_out, false);
  kk::Models<kk::Double, Space> models;
  models.P = bP.device;
  models.K = bK.device;
  models.e = be.device;
  models.omega = bw.device;
  models.M0 = bM.device;
  models.offset = boff.device;
  models.jitter = bj.device;
  models.trend = btr.device;
  kk::Chi2Options options;
  options.solver.solver = solver_from_name(solver);
  {
    py::gil_scoped_release unlocked;
    kk::chi2(Space(), obs, models, bc.device, bl.device, options);
    Space().fence();
  }
  bc.to_host();
  bl.to_host();
}

kk::RVData rv_data(py::handle t_in, py::handle v_in, py::handle sigma_in, py::handle inst_in,
                   const std::vector<std::string>& names, const std::string& path) {
  const std::string where = "kosmos.kepler.fit";
  auto columns = rv_columns(where, t_in, v_in, sigma_in, inst_in);
  const auto n = py::ssize_t(columns.t.size());
  kk::RVData d;
  d.path = path;
  d.time = std::move(columns.t);
  d.velocity = std::move(columns.v);
  d.sigma = std::move(columns.sigma);
  d.instrument = std::move(columns.instrument);
  d.instrument_names = names;
  for (py::ssize_t k = 0; k < n; ++k) {
    kosmos::Impl::require(d.instrument[k] >= 0 && d.instrument[k] < int(names.size()),
                          where.c_str(), "instrument[", k, "] = ", d.instrument[k],
                          " is outside [0, ", names.size(), ")");
    kosmos::Impl::require(k == 0 || d.time[k] >= d.time[k - 1], where.c_str(), "t[", k,
                          "] = ", d.time[k], " is before t[", k - 1, "]: sort the data by time");
  }
  return d;
}

py::dict read_rv_file(const std::string& path) {
  auto d = kk::read_rv_file(path);
  py::dict out;
  out["t"] = py::array_t<double>(py::ssize_t(d.size()), d.time.data());
  out["v"] = py::array_t<double>(py::ssize_t(d.size()), d.velocity.data());
  out["sigma"] = py::array_t<double>(py::ssize_t(d.size()), d.sigma.data());
  out["instrument"] = py::array_t<int>(py::ssize_t(d.size()), d.instrument.data());
  out["instrument_names"] = d.instrument_names;
  return out;
}

kk::SearchOptions search_options(const py::dict& o) {
  kk::SearchOptions so;
  for (auto item : o) {
    const std::string key = py::str(item.first);
    const py::handle value = item.second;
    if (key == "planets")
      so.planets = value.cast<int>();
    else if (key == "min_planets")
      so.min_planets = value.cast<int>();
    else if (key == "trend")
      so.trend = value.cast<int>();
    else if (key == "priors")
      for (const auto& spec : value.cast<std::vector<std::string>>())
        so.priors.push_back(kk::parse_prior(spec, "priors"));
    else if (key == "bic_threshold")
      so.bic_threshold = value.cast<double>();
    else if (key == "stellar_mass")
      so.stellar_mass = value.cast<double>();
    else if (key == "stellar_mass_sigma")
      so.stellar_mass_sigma = value.cast<double>();
    else if (key == "chains")
      so.chains = value.cast<int>();
    else if (key == "burn")
      so.burn = value.cast<int>();
    else if (key == "steps")
      so.steps = value.cast<int>();
    else if (key == "thin")
      so.thin = value.cast<int>();
    else if (key == "max_extensions")
      so.max_extensions = value.cast<int>();
    else if (key == "target_rhat")
      so.target_rhat = value.cast<double>();
    else if (key == "generations")
      so.optimizer_generations = value.cast<int>();
    else if (key == "candidates")
      so.random_candidates = value.cast<int>();
    else if (key == "period_min")
      so.period_min = value.cast<double>();
    else if (key == "period_max")
      so.period_max = value.cast<double>();
    else if (key == "k_max")
      so.k_max = value.cast<double>();
    else if (key == "e_max")
      so.e_max = value.cast<double>();
    else if (key == "jitter_max")
      so.jitter_max = value.cast<double>();
    else if (key == "epoch")
      so.epoch = value.cast<double>();
    else if (key == "mixed_precision")
      so.mixed_precision = value.cast<bool>();
    else if (key == "solver")
      so.solver = solver_from_name(value.cast<std::string>());
    else if (key == "noise")
      so.noise = value.cast<std::string>();
    else if (key == "seed")
      so.seed = value.cast<std::uint64_t>();
    else if (key == "progress") {
      if (!value.is_none()) {
        py::function f = py::reinterpret_borrow<py::function>(value);
        so.progress = [f](const std::string& message) {
          py::gil_scoped_acquire locked;
          f(message);
        };
      }
    } else
      throw kosmos::invalid_input("kosmos.kepler.fit: unknown option '" + key + "'");
  }
  return so;
}

py::list orbits_list(const std::vector<kk::Orbit>& orbits) {
  py::list l;
  for (const auto& o : orbits)
    l.append(py::dict(py::arg("P") = o.P, py::arg("K") = o.K, py::arg("e") = o.e,
                      py::arg("omega") = o.omega, py::arg("M0") = o.M0));
  return l;
}

py::dict result_dict(const kk::SearchResult& r) {
  py::dict d;
  const py::ssize_t rows = py::ssize_t(r.samples.size()), cols = py::ssize_t(r.columns.size());
  py::array_t<double> samples({rows, cols});
  if (rows > 0) std::copy(r.samples.data(), r.samples.data() + rows * cols, samples.mutable_data());
  d["samples"] = samples;
  d["columns"] = r.columns;
  d["chain"] = py::array_t<int>(rows, r.sample_chain.data());
  py::list summary;
  for (const auto& p : r.summary)
    summary.append(py::dict(py::arg("name") = p.name, py::arg("map") = p.best,
                            py::arg("median") = p.median, py::arg("lower") = p.lower,
                            py::arg("upper") = p.upper, py::arg("ess") = p.ess,
                            py::arg("rhat") = p.rhat));
  d["summary"] = summary;
  py::list comparison;
  for (const auto& c : r.comparison)
    comparison.append(py::dict(py::arg("planets") = c.planets, py::arg("n_free") = c.n_free,
                               py::arg("loglike") = c.loglike, py::arg("bic") = c.bic,
                               py::arg("aicc") = c.aicc,
                               py::arg("orbits") = orbits_list(c.orbits)));
  d["comparison"] = comparison;
  d["comparison_rule"] = r.comparison_rule;
  d["epoch"] = r.epoch;
  d["planets"] = r.planets;
  d["trend"] = r.trend;
  d["n_obs"] = r.n_obs;
  d["instruments"] = r.instruments;
  d["periodogram_periods"] = r.periodogram_periods;
  d["false_alarm"] = r.false_alarm;
  py::list modes;
  for (const auto& planet : r.period_modes) {
    py::list per_planet;
    for (const auto& mode : planet)
      per_planet.append(py::dict(py::arg("period") = mode.period, py::arg("lower") = mode.lower,
                                 py::arg("upper") = mode.upper, py::arg("weight") = mode.weight));
    modes.append(per_planet);
  }
  d["period_modes"] = modes;
  d["warnings"] = r.warnings;
  d["map_orbits"] = orbits_list(r.best_orbits);
  d["map_offsets"] = r.best_offsets;
  d["map_jitters"] = r.best_jitters;
  d["map_trend"] = r.best_trend;
  d["map_loglike"] = r.best_loglike;
  d["map_chi2"] = r.best_chi2;
  d["n_free"] = r.n_free;
  d["max_rhat"] = r.max_rhat;
  d["min_ess"] = r.min_ess;
  d["acceptance"] = r.acceptance;
  d["generations"] = r.generations;
  d["extensions"] = r.extensions;
  d["seconds"] = r.seconds;
  d["likelihood_evaluations"] = r.likelihood_evaluations;
  return d;
}

py::dict fit(py::handle t, py::handle v, py::handle sigma, py::handle instrument,
             const std::vector<std::string>& names, const py::dict& options) {
  const auto data = rv_data(t, v, sigma, instrument, names, "<arrays>");
  const auto so = search_options(options);
  kk::SearchResult r;
  {
    py::gil_scoped_release unlocked;
    r = kk::search(data, so);
  }
  return result_dict(r);
}

kk::EvidenceOptions evidence_options(const py::dict& o) {
  kk::EvidenceOptions ev;
  for (auto item : o) {
    const std::string key = py::str(item.first);
    if (key == "temperatures")
      ev.temperatures = item.second.cast<int>();
    else if (key == "ladder_power")
      ev.ladder_power = item.second.cast<double>();
    else if (key == "odds_threshold")
      ev.log_odds_threshold = item.second.cast<double>();
    else if (key == "screen_by_importance")
      ev.screen_by_importance = item.second.cast<bool>();
    else if (key == "importance_draws")
      ev.importance_draws = item.second.cast<int>();
    else if (key == "ladder_chains")
      ev.ladder_chains = item.second.cast<int>();
    else
      throw kosmos::invalid_input("kosmos.kepler.evidence: unknown option '" + key + "'");
  }
  return ev;
}

// ln Z per model (trend order major, then planets), the supported model and the rule.
py::dict evidence_dict(const kk::EvidenceResult& z) {
  py::list counts;
  for (const auto& c : z.counts)
    counts.append(py::dict(
        py::arg("planets") = c.planets, py::arg("trend") = c.trend, py::arg("ln_z") = c.ln_z,
        py::arg("ln_z_error") = c.ln_z_error, py::arg("ln_z_drift") = c.ln_z_drift,
        py::arg("ln_z_ti") = c.ln_z_ti, py::arg("probability") = c.probability,
        py::arg("beta") = py::array_t<double>(py::ssize_t(c.beta.size()), c.beta.data()),
        py::arg("mean_loglike") =
            py::array_t<double>(py::ssize_t(c.mean_loglike.size()), c.mean_loglike.data()),
        py::arg("method") = c.method, py::arg("ln_z_margin") = c.ln_z_margin,
        py::arg("importance_ess") = c.importance_ess));
  py::list priors;
  for (const auto& p : z.default_priors)
    priors.append(py::make_tuple(p.parameter, kk::prior_kind_name(p.kind), p.a, p.b));
  return py::dict(py::arg("counts") = counts, py::arg("preferred") = z.preferred,
                  py::arg("preferred_trend") = z.preferred_trend,
                  py::arg("top_of_range") = z.top_of_range, py::arg("rule") = z.rule,
                  py::arg("default_priors") = priors, py::arg("decided_by") = z.decided_by,
                  py::arg("seconds") = z.seconds);
}

// kk::select_model (`kosmos rv --planets auto --trend auto`): the evidence table and the
// supported model's posterior; without `with_posterior` kk::planet_count_evidence: the table alone.
py::dict model_evidence(py::handle t, py::handle v, py::handle sigma, py::handle instrument,
                        const std::vector<std::string>& names, const py::dict& options,
                        const py::dict& ev_options, bool with_posterior) {
  const auto data = rv_data(t, v, sigma, instrument, names, "<arrays>");
  const auto so = search_options(options);
  const auto ev = evidence_options(ev_options);
  kk::ModelSelection s;
  {
    py::gil_scoped_release unlocked;
    if (with_posterior)
      s = kk::select_model(data, so, ev);
    else
      s.evidence = kk::planet_count_evidence(data, so, ev);
  }
  py::dict d;
  d["evidence"] = evidence_dict(s.evidence);
  if (with_posterior) d["posterior"] = result_dict(s.posterior);
  return d;
}

// Baluev's (2008) false-alarm probability of a GLS peak of `power` (kk::false_alarm_probability).
double false_alarm_probability(double power, py::handle t_in, py::handle w_in, double f_max) {
  const std::string where = "kosmos.kepler.false_alarm_probability";
  auto t = as_array<double>(t_in, where, "t", 1);
  auto w = as_array<double>(w_in, where, "weights", 1, {t.shape(0)});
  return kk::false_alarm_probability(power, {t.data(), t.data() + t.shape(0)},
                                     {w.data(), w.data() + w.shape(0)}, f_max);
}

// stars: (t, v, sigma, instrument, names) tuples. With evidence options (not None) each star's
// count by evidence (kk::survey_evidence): {"posterior": ..., "evidence": ...} per star.
py::list survey(const py::list& stars, const py::dict& options, const py::object& ev_options) {
  std::vector<kk::RVData> data;
  for (auto star : stars) {
    auto s = star.cast<py::tuple>();
    data.push_back(rv_data(s[0], s[1], s[2], s[3], s[4].cast<std::vector<std::string>>(),
                           "star " + std::to_string(data.size())));
  }
  const auto so = search_options(options);
  py::list out;
  if (ev_options.is_none()) {
    std::vector<kk::SearchResult> results;
    {
      py::gil_scoped_release unlocked;
      results = kk::survey(data, so);
    }
    for (const auto& r : results) out.append(result_dict(r));
    return out;
  }
  const auto ev = evidence_options(ev_options.cast<py::dict>());
  std::vector<kk::ModelSelection> selections;
  {
    py::gil_scoped_release unlocked;
    selections = kk::survey_evidence(data, so, ev);
  }
  for (const auto& s : selections) {
    py::dict d;
    d["evidence"] = evidence_dict(s.evidence);
    d["posterior"] = result_dict(s.posterior);
    out.append(d);
  }
  return out;
}
}  // namespace

void bind_kepler(py::module_& parent) {
  auto m = parent.def_submodule("kepler", "kosmos::kepler (Ford 2009)");
  m.def("solve", &solve<double>, py::arg("M"), py::arg("e"), py::arg("E"), py::arg("sinE"),
        py::arg("cosE"), py::arg("nu"), py::arg("status"), py::arg("solver"),
        py::arg("max_iterations"), py::arg("tolerance"));
  m.def("solve_float32", &solve<float>, py::arg("M"), py::arg("e"), py::arg("E"), py::arg("sinE"),
        py::arg("cosE"), py::arg("nu"), py::arg("status"), py::arg("solver"),
        py::arg("max_iterations"), py::arg("tolerance"));
  m.def("rv_model", &rv_model, py::arg("t"), py::arg("orbits"), py::arg("epoch"), py::arg("out"));
  m.def("chi2", &chi2, py::arg("t"), py::arg("v"), py::arg("sigma"), py::arg("instrument"),
        py::arg("n_instruments"), py::arg("epoch"), py::arg("P"), py::arg("K"), py::arg("e"),
        py::arg("omega"), py::arg("M0"), py::arg("offset"), py::arg("jitter"), py::arg("trend"),
        py::arg("chi2"), py::arg("loglike"), py::arg("solver"));
  m.def("read_rv_file", &read_rv_file, py::arg("path"));
  m.def("fit", &fit, py::arg("t"), py::arg("v"), py::arg("sigma"), py::arg("instrument"),
        py::arg("instrument_names"), py::arg("options"));
  m.def("survey", &survey, py::arg("stars"), py::arg("options"),
        py::arg("evidence_options") = py::none());
  m.def("evidence", &model_evidence, py::arg("t"), py::arg("v"), py::arg("sigma"),
        py::arg("instrument"), py::arg("instrument_names"), py::arg("options"),
        py::arg("evidence_options"), py::arg("with_posterior"));
  m.def("false_alarm_probability", &false_alarm_probability, py::arg("power"), py::arg("t"),
        py::arg("weights"), py::arg("f_max"));
  m.def("noise_model_names", &kk::noise_model_names);
  m.attr("auto_trend") = kk::kAutoTrend;
  m.def(
      "minimum_mass",
      [](double P, double K, double e, double stellar_mass) {
        kk::Orbit o;
        o.P = P;
        o.K = K;
        o.e = e;
        const auto pm = kk::minimum_mass(o, stellar_mass);
        return py::dict(py::arg("msini_jupiter") = pm.msini_jupiter,
                        py::arg("msini_earth") = pm.msini_earth, py::arg("a_au") = pm.a_au);
      },
      py::arg("P"), py::arg("K"), py::arg("e"), py::arg("stellar_mass"));
}
}  // namespace kosmos_python
