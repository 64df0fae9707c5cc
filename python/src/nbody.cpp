// kosmos._kosmos.nbody: ensembles of few-body systems (Swarm-NG layout) built from arrays, orbital
// elements or RV posteriors; integration, energies, momenta, elements and stability summaries.
#include "common.hpp"

#include <kosmos/nbody/nbody.hpp>
#include <kosmos/nbody/stability_map.hpp>

#include <cmath>
#include <type_traits>

namespace kosmos_python {
namespace {
namespace nb = kosmos::nbody;
using DeviceEnsemble = nb::Ensemble<Memory>;

nb::ElementFrame frame_from(const std::string& name) {
  return nb::element_frame_from_name(name);
}

// An ensemble on the execution space's memory. Its chunked layout (systems interleaved in chunks
// of 16) differs from numpy's (system, body, component): states come in and out as copies.
class PyEnsemble : public Resource {
 public:
  explicit PyEnsemble(const nb::HostEnsemble& host) : ens_(nb::clone<Memory>(host)) {}

  // masses (S, N), positions and velocities (S, N, 3), optional time (S).
  static PyEnsemble* from_arrays(py::handle m_in, py::handle x_in, py::handle v_in,
                                 py::handle t_in) {
    const std::string where = "kosmos.nbody.Ensemble";
    auto m = as_array<double>(m_in, where, "masses", 2);
    const py::ssize_t S = m.shape(0), N = m.shape(1);
    auto x = as_array<double>(x_in, where, "positions", 3, {S, N, 3});
    auto v = as_array<double>(v_in, where, "velocities", 3, {S, N, 3});
    nb::HostEnsemble h(static_cast<int>(S), static_cast<int>(N));
    const auto mm = m.unchecked<2>();
    const auto xx = x.unchecked<3>(), vv = v.unchecked<3>();
    for (int s = 0; s < S; ++s)
      for (int b = 0; b < N; ++b) {
        h.m(s, b) = mm(s, b);
        for (int c = 0; c < 3; ++c) {
          h.x(s, b, c) = xx(s, b, c);
          h.v(s, b, c) = vv(s, b, c);
        }
      }
    if (!t_in.is_none()) {
      auto t = as_array<double>(t_in, where, "time", 1, {S});
      for (int s = 0; s < S; ++s) h.time(s) = t.at(s);
    }
    return new PyEnsemble(h);
  }

  // star_mass (S), planet masses (S, P), elements (S, P, 6): a, e, inc, Omega, omega, M [rad].
  static PyEnsemble* from_elements(py::handle star_in, py::handle m_in, py::handle el_in,
                                   const std::string& frame) {
    const std::string where = "kosmos.nbody.Ensemble.from_elements";
    auto star = as_array<double>(star_in, where, "star_mass", 1);
    const py::ssize_t S = star.shape(0);
    auto m = as_array<double>(m_in, where, "planet_masses", 2, {S, -1});
    const py::ssize_t P = m.shape(1);
    auto el = as_array<double>(el_in, where, "elements", 3, {S, P, 6});
    nb::HostEnsemble h(static_cast<int>(S), static_cast<int>(P) + 1);
    const auto e = el.unchecked<3>();
    for (int s = 0; s < S; ++s) {
      std::vector<double> masses(m.data(s, 0), m.data(s, 0) + P);
      std::vector<nb::OrbitalElements> elements(static_cast<std::size_t>(P));
      for (int p = 0; p < P; ++p)
        elements[std::size_t(p)] = {e(s, p, 0), e(s, p, 1), e(s, p, 2),
                                    e(s, p, 3), e(s, p, 4), e(s, p, 5)};
      nb::set_system_from_elements(h, s, star.at(s), masses, elements, frame_from(frame));
    }
    return new PyEnsemble(h);
  }

  static PyEnsemble* generate(int systems, int bodies, double planet_mass, double alpha,
                              unsigned long long seed) {
    return new PyEnsemble(
        nb::generate_planetary_ensemble(systems, bodies, planet_mass, alpha, seed));
  }

  // One system per posterior sample (columns P_x, K_x, e_x, omega_deg_x, M0_deg_x per planet).
  static PyEnsemble* from_rv_posterior(int planets, const std::vector<std::string>& columns,
                                       py::handle samples_in, double star_mass, double inclination,
                                       const std::string& frame, int max_samples) {
    auto samples = as_array<double>(samples_in, "kosmos.nbody.stability", "samples", 2,
                                    {-1, py::ssize_t(columns.size())});
    nb::RVPosterior post;
    post.planets = planets;
    post.columns = columns;
    for (py::ssize_t r = 0; r < samples.shape(0); ++r)
      post.samples.emplace_back(samples.data(r, 0), samples.data(r, 0) + samples.shape(1));
    nb::StabilitySetup setup;
    setup.star_mass = star_mass;
    setup.inclination = inclination;
    setup.frame = frame_from(frame);
    setup.max_samples = max_samples;
    return new PyEnsemble(nb::ensemble_from_rv_posterior(post, setup));
  }

  static PyEnsemble* read_rv_posterior(const std::string& path, double star_mass,
                                       double inclination, const std::string& frame,
                                       int max_samples) {
    nb::StabilitySetup setup;
    setup.star_mass = star_mass;
    setup.inclination = inclination;
    setup.frame = frame_from(frame);
    setup.max_samples = max_samples;
    return new PyEnsemble(nb::ensemble_from_rv_posterior(nb::read_rv_posterior(path), setup));
  }

  void release() override { ens_ = DeviceEnsemble(); }

  int systems() const { return ens_.n_systems(); }
  int bodies() const { return ens_.n_bodies(); }

  nb::HostEnsemble host() const {
    require_alive("kosmos.nbody.Ensemble");
    return nb::clone<Kokkos::HostSpace>(ens_);
  }

  // (S, N, 3) positions or velocities, or (S, N) masses: copies in numpy's layout.
  py::array_t<double> bodies_array(int what) const {
    const auto h = host();
    const py::ssize_t S = h.n_systems(), N = h.n_bodies();
    py::array_t<double> out =
        what == 2 ? py::array_t<double>({S, N}) : py::array_t<double>({S, N, py::ssize_t(3)});
    double* o = out.mutable_data();
    for (int s = 0; s < S; ++s)
      for (int b = 0; b < N; ++b) {
        if (what == 2) {
          *o++ = h.m(s, b);
          continue;
        }
        for (int c = 0; c < 3; ++c) *o++ = what == 0 ? h.x(s, b, c) : h.v(s, b, c);
      }
    return out;
  }

  template <class T>
  py::array_t<T> system_array(const Kokkos::View<T*, Memory>& view) const {
    require_alive("kosmos.nbody.Ensemble");
    py::array_t<T> out(py::ssize_t(view.extent(0)));
    Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> o(out.mutable_data(),
                                                                   view.extent(0));
    Kokkos::deep_copy(o, view);
    return out;
  }
  py::array_t<double> time() const { return system_array(ens_.time); }
  py::array_t<int> state() const { return system_array(ens_.state); }
  py::array_t<int> reason() const { return system_array(ens_.reason); }

  // energy (S) into `out`, computed where the ensemble lives.
  void energy(py::handle out_in) const {
    require_alive("kosmos.nbody.Ensemble.energy");
    auto out = as_array<double>(out_in, "kosmos.nbody.Ensemble.energy", "out", 1, {systems()});
    Bound<double*> b(out, false);
    nb::energy(Space(), ens_, Kokkos::View<double*, Memory>(b.device));
    Space().fence();
    b.to_host();
  }
  void momenta(py::handle out_in) const {
    require_alive("kosmos.nbody.Ensemble.momenta");
    auto out = as_array<double>(out_in, "kosmos.nbody.Ensemble.momenta", "out", 2, {systems(), 6});
    Bound<double**, Kokkos::LayoutRight> b(out, false);
    Kokkos::View<double**, Memory> result("kosmos::python::momenta", systems(), 6);
    nb::momenta(Space(), ens_, result);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), result);
    for (int s = 0; s < systems(); ++s)
      for (int c = 0; c < 6; ++c) b.host(s, c) = h(s, c);
  }
  // (S, N - 1, 6) elements a, e, inc, Omega, omega, M of the planets in `frame`.
  py::array_t<double> elements(const std::string& frame) const {
    const auto h = host();
    const auto f = frame_from(frame);
    const py::ssize_t S = h.n_systems(), P = h.n_bodies() - 1;
    py::array_t<double> out({S, P, py::ssize_t(6)});
    double* o = out.mutable_data();
    for (int s = 0; s < S; ++s)
      for (const auto& el : nb::system_elements(h, s, f))
        for (double value : {el.a, el.e, el.inc, el.Omega, el.omega, el.M}) *o++ = value;
    return out;
  }

  py::dict integrate(double destination, const py::dict& settings) {
    require_alive("kosmos.nbody.Ensemble.integrate");
    const nb::IntegrateOptions o = integrate_options(settings, bodies());
    nb::IntegrationReport r;
    {
      py::gil_scoped_release unlocked;
      r = nb::integrate(Space(), ens_, destination, o);
    }
    return report_dict(r);
  }

  // The options of integrate() (keyword names as in kosmos.nbody.Ensemble.integrate).
  static nb::IntegrateOptions integrate_options(const py::dict& settings, int n_bodies) {
    nb::IntegrateOptions o;
    auto& c = o.integrator;
    auto& mon = o.monitor;
    for (auto item : settings) {
      const std::string key = py::str(item.first);
      const py::handle v = item.second;
      if (key == "integrator")
        c.method = nb::method_from_name(v.cast<std::string>());
      else if (key == "dt")
        c.dt = v.cast<double>();
      else if (key == "tau")
        c.tau = v.cast<double>();
      else if (key == "tolerance")
        c.tolerance = v.cast<double>();
      else if (key == "corrector")
        c.corrector = v.cast<int>();
      else if (key == "epsilon")
        c.epsilon = v.cast<double>();
      else if (key == "changeover_hill")
        c.changeover_hill = v.cast<double>();
      else if (key == "steps_per_launch")
        c.steps_per_launch = v.cast<int>();
      else if (key == "max_iterations")
        c.max_iterations = v.cast<long long>();
      else if (key == "energy_limit")
        mon.energy_error_limit = v.cast<double>();
      else if (key == "close_encounter")
        mon.close_encounter_hill = v.cast<double>();
      else if (key == "ejection")
        mon.ejection_distance = v.cast<double>();
      else if (key == "crossing_orbits")
        mon.crossing_orbits = v.cast<bool>();
      else if (key == "radius") {
        const auto r = v.cast<std::vector<double>>();
        kosmos::Impl::require(r.size() == 1 || int(r.size()) == n_bodies, "kosmos.nbody.integrate",
                              "radius has ", r.size(), " values, expected 1 or ", n_bodies);
        for (int b = 0; b < n_bodies; ++b) mon.radius[b] = r.size() == 1 ? r[0] : r[std::size_t(b)];
      } else if (key == "on_collision")
        mon.on_collision = nb::collision_response_from_name(v.cast<std::string>());
      else if (key == "coordinates") {
        const auto name = v.cast<std::string>();
        kosmos::Impl::require(
            name == "jacobi" || name == "democratic_heliocentric" || name == "whds",
            "kosmos.nbody.integrate", "coordinates '", name,
            "' is not jacobi, democratic_heliocentric or whds");
        c.coordinates = name == "jacobi" ? nb::WHCoordinates::jacobi
                        : name == "whds" ? nb::WHCoordinates::whds
                                         : nb::WHCoordinates::democratic_heliocentric;
      } else if (key == "megno")
        o.megno = v.cast<bool>();
      else if (key == "megno_seed")
        o.megno_seed = v.cast<unsigned long long>();
      else if (key == "megno_state")
        o.megno_state = v.cast<std::vector<double>>();
      else
        throw kosmos::invalid_input("kosmos.nbody.integrate: unknown option '" + key + "'");
    }
    return o;
  }

  static py::dict report_dict(const nb::IntegrationReport& r) {
    py::dict d;
    d["systems"] = r.systems;
    d["reached_destination"] = r.reached_destination;
    d["stopped"] = r.stopped;
    d["disabled"] = r.disabled;
    d["unfinished"] = r.unfinished;
    d["launches"] = r.launches;
    d["steps"] = r.steps;
    d["seconds"] = r.seconds;
    if (!r.megno.empty()) {  // MEGNO runs: per system <Y>, Lyapunov estimate and time
      const auto n = py::ssize_t(r.megno.size());
      py::array_t<double> lyapunov_time(n);
      for (py::ssize_t s = 0; s < n; ++s)
        lyapunov_time.mutable_at(s) =
            r.lyapunov[std::size_t(s)] > 0 ? 1 / r.lyapunov[std::size_t(s)] : INFINITY;
      d["megno"] = py::array_t<double>(n, r.megno.data());
      d["lyapunov"] = py::array_t<double>(n, r.lyapunov.data());
      d["lyapunov_time"] = lyapunov_time;
      d["megno_state"] =
          py::array_t<double>(py::ssize_t(r.megno_state.size()), r.megno_state.data());
    }
    return d;
  }

  // nb::run_stability_map on system `base_system` of this ensemble (left as it is): axes as
  // "ELEMENT:BODY:MIN:MAX:COUNT" (angles in degrees). The grid's values come back (ny, nx).
  py::dict stability_map(int base_system, const std::string& x_spec, const std::string& y_spec,
                         const std::string& frame, double destination,
                         const py::dict& settings) const {
    const char* where = "kosmos.nbody.stability_map";
    kosmos::Impl::require(base_system >= 0 && base_system < systems(), where, "system ",
                          base_system, " is outside [0, ", systems(), ")");
    kosmos::Impl::require(destination > 0 && std::isfinite(destination), where, "destination ",
                          destination, " must be finite and > 0");
    nb::StabilityMapSetup setup;
    setup.x = nb::parse_map_axis(x_spec);
    setup.y = nb::parse_map_axis(y_spec);
    setup.frame = frame_from(frame);
    const auto options = integrate_options(settings, bodies());
    const auto base = host();
    nb::StabilityMap map;
    {
      py::gil_scoped_release unlocked;
      map = nb::run_stability_map(Space(), base, base_system, setup, options, destination);
    }
    const py::ssize_t nx = setup.x.count, ny = setup.y.count;
    auto axis = [](const nb::MapAxis& a) {
      py::array_t<double> values(a.count);
      for (int k = 0; k < a.count; ++k) values.mutable_at(k) = a.value(k);
      return values;
    };
    auto grid = [&](auto value_of) {
      py::array_t<std::decay_t<decltype(value_of(0))>> out({ny, nx});
      auto o = out.template mutable_unchecked<2>();
      for (py::ssize_t iy = 0; iy < ny; ++iy)
        for (py::ssize_t ix = 0; ix < nx; ++ix) o(iy, ix) = value_of(int(ix + nx * iy));
      return out;
    };
    const auto& fin = map.final_state;
    py::dict d;
    d["x"] = axis(setup.x);
    d["y"] = axis(setup.y);
    d["x_element"] = nb::map_element_name(setup.x.element);
    d["y_element"] = nb::map_element_name(setup.y.element);
    d["x_body"] = setup.x.body;
    d["y_body"] = setup.y.body;
    d["megno"] = grid([&](int s) { return map.megno[std::size_t(s)]; });
    d["lyapunov_time"] = grid([&](int s) { return map.lyapunov_time[std::size_t(s)]; });
    d["time"] = grid([&](int s) { return fin.time(s); });
    d["state"] = grid([&](int s) { return fin.state(s); });
    d["reason"] = grid([&](int s) { return fin.reason(s); });
    d["report"] = report_dict(map.report);
    d["final_state"] = py::cast(new PyEnsemble(fin), py::return_value_policy::take_ownership);
    return d;
  }

  py::dict stability_summary(double destination) const {
    const auto s = nb::summarize_stability(host(), destination);
    return py::dict(py::arg("samples") = s.samples, py::arg("survived") = s.survived,
                    py::arg("close_encounters") = s.close_encounters,
                    py::arg("ejections") = s.ejections, py::arg("collisions") = s.collisions,
                    py::arg("other_stops") = s.other_stops, py::arg("failures") = s.failures,
                    py::arg("unfinished") = s.unfinished, py::arg("fraction") = s.fraction());
  }

 private:
  DeviceEnsemble ens_;
};
}  // namespace

void bind_nbody(py::module_& parent) {
  auto m = parent.def_submodule("nbody", "kosmos::nbody (Dindar et al. 2013, Swarm-NG)");
  py::class_<PyEnsemble>(m, "Ensemble")
      .def_static("from_arrays", &PyEnsemble::from_arrays, py::arg("masses"), py::arg("positions"),
                  py::arg("velocities"), py::arg("time"))
      .def_static("from_elements", &PyEnsemble::from_elements, py::arg("star_mass"),
                  py::arg("planet_masses"), py::arg("elements"), py::arg("frame"))
      .def_static("generate", &PyEnsemble::generate, py::arg("systems"), py::arg("bodies"),
                  py::arg("planet_mass"), py::arg("alpha"), py::arg("seed"))
      .def_static("from_rv_posterior", &PyEnsemble::from_rv_posterior, py::arg("planets"),
                  py::arg("columns"), py::arg("samples"), py::arg("star_mass"),
                  py::arg("inclination"), py::arg("frame"), py::arg("max_samples"))
      .def_static("read_rv_posterior", &PyEnsemble::read_rv_posterior, py::arg("path"),
                  py::arg("star_mass"), py::arg("inclination"), py::arg("frame"),
                  py::arg("max_samples"))
      .def_property_readonly("systems", &PyEnsemble::systems)
      .def_property_readonly("bodies", &PyEnsemble::bodies)
      .def("bodies_array", &PyEnsemble::bodies_array, py::arg("what"))
      .def("time", &PyEnsemble::time)
      .def("state", &PyEnsemble::state)
      .def("reason", &PyEnsemble::reason)
      .def("energy", &PyEnsemble::energy, py::arg("out"))
      .def("momenta", &PyEnsemble::momenta, py::arg("out"))
      .def("elements", &PyEnsemble::elements, py::arg("frame"))
      .def("integrate", &PyEnsemble::integrate, py::arg("destination"), py::arg("settings"))
      .def("stability_summary", &PyEnsemble::stability_summary, py::arg("destination"))
      .def("stability_map", &PyEnsemble::stability_map, py::arg("base_system"), py::arg("x"),
           py::arg("y"), py::arg("frame"), py::arg("destination"), py::arg("settings"));
  m.def("reason_name", &nb::reason_name);
  m.def("state_name", &nb::state_name);
  m.attr("days_per_time_unit") = nb::days_per_time_unit;
  m.attr("megno_state_sums") = int(nb::megno_state_sums);
  m.def("planet_mass_from_rv", &nb::planet_mass_from_rv, py::arg("K"), py::arg("P_days"),
        py::arg("e"), py::arg("star_mass"), py::arg("sin_i"));
}
}  // namespace kosmos_python
