#include <kosmos/core/error.hpp>
#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/nbody/stability_map.hpp>

#include <cstdint>
#include <iomanip>
#include <sstream>
#include <utility>

namespace kosmos {
namespace nbody {

namespace {
constexpr double degree = 0.017453292519943295;
constexpr const char* map_where = "kosmos::nbody::stability_map";

bool is_angle(MapElement element) {
  return element == MapElement::inc || element == MapElement::Omega ||
         element == MapElement::omega || element == MapElement::M;
}
// An axis value as written (angles in degrees).
double shown(MapElement element, double value) {
  return is_angle(element) ? value / degree : value;
}
}  // namespace

const char* map_element_name(MapElement element) {
  switch (element) {
    case MapElement::a:
      return "a";
    case MapElement::e:
      return "e";
    case MapElement::inc:
      return "inc";
    case MapElement::Omega:
      return "Omega";
    case MapElement::omega:
      return "omega";
    case MapElement::M:
      return "M";
    case MapElement::mass:
      return "mass";
  }
  return "?";
}

MapAxis parse_map_axis(const std::string& spec) {
  std::vector<std::string> parts;
  std::stringstream in(spec);
  for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
  kosmos::Impl::require(parts.size() == 5, map_where, "axis '", spec,
                        "' is not ELEMENT:BODY:MIN:MAX:COUNT (e.g. a:2:1.3:1.7:40)");
  MapAxis axis;
  bool known = false;
  for (MapElement e : {MapElement::a, MapElement::e, MapElement::inc, MapElement::Omega,
                       MapElement::omega, MapElement::M, MapElement::mass})
    if (parts[0] == map_element_name(e)) {
      axis.element = e;
      known = true;
    }
  kosmos::Impl::require(known, map_where, "axis '", spec, "': element '", parts[0],
                        "' is not one of a, e, inc, Omega, omega, M, mass");
  double body = 0, count = 0;
  const bool numbers = io::parse_double(parts[1], body) && io::parse_double(parts[2], axis.min) &&
                       io::parse_double(parts[3], axis.max) && io::parse_double(parts[4], count);
  kosmos::Impl::require(numbers, map_where, "axis '", spec,
                        "': BODY, MIN, MAX, COUNT must be numbers");
  kosmos::Impl::require(body >= 1 && body == double(int(body)) && count >= 1 && count <= 1e7 &&
                            count == double(int(count)),
                        map_where, "axis '", spec,
                        "': BODY must be a planet (1, 2, ...) and COUNT an integer >= 1");
  axis.body = int(body);
  axis.count = int(count);
  if (is_angle(axis.element)) {
    axis.min *= degree;
    axis.max *= degree;
  }
  return axis;
}

HostEnsemble stability_map_ensemble(const HostEnsemble& base, int base_system,
                                    const StabilityMapSetup& setup) {
  const int n = base.n_bodies();
  kosmos::Impl::require(base_system >= 0 && base_system < base.n_systems(), map_where,
                        "base system ", base_system, " is not in the ensemble of ",
                        base.n_systems());
  for (const MapAxis* axis : {&setup.x, &setup.y}) {
    const char* name = map_element_name(axis->element);
    kosmos::Impl::require(axis->body >= 1 && axis->body < n, map_where, "axis ", name, " of body ",
                          axis->body, ": the base system's planets are bodies 1 to ", n - 1);
    kosmos::Impl::require(axis->count >= 1, map_where, "axis ", name, ": count ", axis->count,
                          " < 1");
    kosmos::Impl::require(std::isfinite(axis->min) && std::isfinite(axis->max), map_where, "axis ",
                          name, ": range ", axis->min, " to ", axis->max, " is not finite");
    const double lo = std::fmin(axis->min, axis->max), hi = std::fmax(axis->min, axis->max);
    kosmos::Impl::require(axis->element != MapElement::a || lo > 0, map_where, "axis a: ", lo,
                          " is not a bound orbit's semi-major axis (> 0)");
    kosmos::Impl::require(axis->element != MapElement::e || (lo >= 0 && hi < 1), map_where,
                          "axis e: ", lo, " to ", hi, " is not within [0, 1)");
    kosmos::Impl::require(axis->element != MapElement::mass || lo >= 0, map_where,
                          "axis mass: ", lo, " < 0");
  }
  const std::vector<OrbitalElements> elements = system_elements(base, base_system, setup.frame);
  std::vector<double> masses;
  for (int b = 1; b < n; ++b) masses.push_back(base.m(base_system, b));
  HostEnsemble map(setup.x.count * setup.y.count, n, 0);
  for (int iy = 0; iy < setup.y.count; ++iy)
    for (int ix = 0; ix < setup.x.count; ++ix) {
      std::vector<OrbitalElements> el = elements;
      std::vector<double> m = masses;
      for (const auto& [axis, k] : {std::pair<const MapAxis*, int>{&setup.x, ix}, {&setup.y, iy}}) {
        OrbitalElements& o = el[std::size_t(axis->body - 1)];
        const double value = axis->value(k);
        switch (axis->element) {
          case MapElement::a:
            o.a = value;
            break;
          case MapElement::e:
            o.e = value;
            break;
          case MapElement::inc:
            o.inc = value;
            break;
          case MapElement::Omega:
            o.Omega = value;
            break;
          case MapElement::omega:
            o.omega = value;
            break;
          case MapElement::M:
            o.M = value;
            break;
          case MapElement::mass:
            m[std::size_t(axis->body - 1)] = value;
            break;
        }
      }
      for (std::size_t p = 0; p < el.size(); ++p)
        kosmos::Impl::require(el[p].a > 0 && el[p].e >= 0 && el[p].e < 1, map_where, "planet ",
                              p + 1, " of the base system is not on a bound orbit (a ", el[p].a,
                              ", e ", el[p].e, "): the map varies bound orbits only");
      set_system_from_elements(map, ix + setup.x.count * iy, base.m(base_system, 0), m, el,
                               setup.frame);
    }
  return map;
}

void write_stability_map(const std::string& path, const StabilityMap& map) {
  const MapAxis &x = map.setup.x, &y = map.setup.y;
  const int points = x.count * y.count;
  kosmos::Impl::require(map.final_state.n_systems() == points && int(map.megno.size()) == points &&
                            int(map.lyapunov_time.size()) == points,
                        "kosmos::nbody::write_stability_map", "the map has ", points,
                        " points but ", map.final_state.n_systems(), " systems and ",
                        map.megno.size(), " MEGNO values");
  const char* frame = map.setup.frame == ElementFrame::jacobi ? "jacobi" : "heliocentric";
  if (io::is_hdf5_path(path)) {
    io::H5Writer out(path);
    std::vector<double> xs, ys, time;
    std::vector<std::string> state, reason;
    for (int k = 0; k < x.count; ++k) xs.push_back(shown(x.element, x.value(k)));
    for (int k = 0; k < y.count; ++k) ys.push_back(shown(y.element, y.value(k)));
    for (int s = 0; s < points; ++s) {
      time.push_back(map.final_state.time(s));
      state.push_back(state_name(map.final_state.state(s)));
      reason.push_back(reason_name(map.final_state.reason(s)));
    }
    const std::vector<std::size_t> grid = {std::size_t(y.count), std::size_t(x.count)};
    out.write("x", xs);
    out.write("y", ys);
    out.write<double>("megno", map.megno.data(), grid);
    out.write<double>("lyapunov_time", map.lyapunov_time.data(), grid);
    out.write<double>("time", time.data(), grid);
    out.write_strings("state", state);
    out.write_strings("reason", reason);
    out.attribute("/", "format", "kosmos-nbody-stability-map");
    out.attribute("/", "x_element", map_element_name(x.element));
    out.attribute("/", "x_body", (long long)x.body);
    out.attribute("/", "y_element", map_element_name(y.element));
    out.attribute("/", "y_body", (long long)y.body);
    out.attribute("/", "frame", frame);
    out.attribute("/", "units",
                  "angles in degrees, masses in solar masses, a in AU, time and "
                  "lyapunov_time in the nbody time unit (year / 2 pi); state and "
                  "reason per point, x fastest");
    out.commit();
    return;
  }
  io::write_atomically(path, [&](std::ostream& out) {
    out << "# kosmos nbody stability map (" << frame << " elements; angles in degrees, time and "
        << "lyapunov_time in year / 2 pi)\n# x: " << map_element_name(x.element) << " of body "
        << x.body << ", " << x.count << " values; y: " << map_element_name(y.element) << " of body "
        << y.body << ", " << y.count << " values\n"
        << "ix iy x y megno lyapunov_time state reason time\n"
        << std::setprecision(17);
    for (int iy = 0; iy < y.count; ++iy)
      for (int ix = 0; ix < x.count; ++ix) {
        const int s = ix + x.count * iy;
        out << ix << ' ' << iy << ' ' << shown(x.element, x.value(ix)) << ' '
            << shown(y.element, y.value(iy)) << ' ' << map.megno[std::size_t(s)] << ' '
            << map.lyapunov_time[std::size_t(s)] << ' ' << state_name(map.final_state.state(s))
            << ' ' << reason_name(map.final_state.reason(s)) << ' ' << map.final_state.time(s)
            << '\n';
      }
  });
}

}  // namespace nbody
}  // namespace kosmos
