// Stability maps: a grid over two orbital elements of a planetary system (e.g. a and e of one
// planet), one system per grid point made from a base system by changing those two elements
// (the others, and every other planet, as in the base), integrated as one ensemble with MEGNO;
// per point <Y> (2: quasi-periodic, growing: chaotic), the Lyapunov time and the final state.
#pragma once

#include <kosmos/nbody/elements.hpp>
#include <kosmos/nbody/integrate.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace kosmos {
namespace nbody {

// The elements a map can vary (of one planet, in the map's frame), and the planet's mass.
enum class MapElement { a, e, inc, Omega, omega, M, mass };

// One axis of a map: `count` evenly spaced values from `min` to `max` (both included; one value:
// min) of `element` of body `body` (1 = the first planet). Angles in radians, masses in solar
// masses.
struct MapAxis {
  MapElement element = MapElement::a;
  int body = 1;
  double min = 0, max = 0;
  int count = 1;
  double value(int k) const { return count > 1 ? min + (max - min) * k / (count - 1) : min; }
};

// "ELEMENT:BODY:MIN:MAX:COUNT", ELEMENT one of a, e, inc, Omega, omega, M (angles in degrees) and
// mass (solar masses), e.g. "a:2:1.3:1.7:40"; invalid_input naming what is wrong.
MapAxis parse_map_axis(const std::string& spec);
// "a", "e", "inc", "Omega", "omega", "M", "mass".
const char* map_element_name(MapElement element);

struct StabilityMapSetup {
  MapAxis x, y;
  ElementFrame frame = ElementFrame::jacobi;
};

// The map's systems: grid point (ix, iy) is system ix + x.count * iy, system `base_system` of
// `base` (its masses and elements in setup.frame) with the two elements set. invalid_input for an
// axis outside the system (body not a planet, count < 1, a non-finite bound, a <= 0, e outside
// [0, 1), a negative mass).
HostEnsemble stability_map_ensemble(const HostEnsemble& base, int base_system,
                                    const StabilityMapSetup& setup);

struct StabilityMap {
  StabilityMapSetup setup;
  HostEnsemble final_state;                  // one system per grid point (ix + nx iy)
  std::vector<double> megno, lyapunov_time;  // per point (lyapunov_time inf: not chaotic)
  IntegrationReport report;
};

// Integrates the map's systems on `space` to `destination` with `options` (MEGNO on; every
// integrator that supports it: whfast, ias15).
template <class ExecSpace>
StabilityMap run_stability_map(const ExecSpace& space, const HostEnsemble& base, int base_system,
                               const StabilityMapSetup& setup, IntegrateOptions options,
                               double destination) {
  StabilityMap map;
  map.setup = setup;
  options.megno = true;
  auto dev =
      clone<typename ExecSpace::memory_space>(stability_map_ensemble(base, base_system, setup));
  map.report = integrate(space, dev, destination, options);
  map.final_state = clone<Kokkos::HostSpace>(dev);
  map.megno = map.report.megno;
  for (double l : map.report.lyapunov) map.lyapunov_time.push_back(l > 0 ? 1 / l : INFINITY);
  return map;
}

// Writes the map: HDF5 when io::is_hdf5_path (datasets x [nx], y [ny], megno, lyapunov_time, time
// [ny, nx], state, reason [ny, nx]; root attributes x_element, x_body, y_element, y_body, frame),
// else text: '#' lines naming the axes, a line of column names (ix iy x y megno lyapunov_time
// state reason time), one line per point, x fastest. Angles in degrees in both.
void write_stability_map(const std::string& path, const StabilityMap& map);

}  // namespace nbody
}  // namespace kosmos
