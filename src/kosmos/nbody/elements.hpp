// Keplerian orbital elements <-> Cartesian states, and planetary systems built from or reduced to
// elements, on the host. Units: G = 1 (AU, solar masses, year = 2 pi), angles in radians.
//
// An orbit of gravitational parameter mu: semi-major axis a (> 0 bound, < 0 unbound),
// eccentricity e, inclination i to the reference (x, y) plane, longitude of the ascending node
// Omega (from +x), argument of pericentre omega, mean anomaly M (M = e sinh H - H when e > 1).
//
// Frames of a system (body 0 the star, bodies 1..n-1 the planets):
//  - heliocentric: planet k relative to the star, mu = m_0 + m_k;
//  - jacobi: planet k relative to the centre of mass of bodies 0..k-1,
//    mu = m_0 + m_1 + ... + m_k (the frame in which RV fits and WHFast-class maps are written).
// Systems built from elements are shifted to the barycentric frame (centre of mass at rest at
// the origin).
#pragma once

#include <kosmos/nbody/ensemble.hpp>

#include <string>
#include <vector>

namespace kosmos {
namespace nbody {

struct OrbitalElements {
  double a = 1, e = 0, inc = 0, Omega = 0, omega = 0, M = 0;
};

enum class ElementFrame { heliocentric, jacobi };

// "heliocentric" or "jacobi".
ElementFrame element_frame_from_name(const std::string& name);

// Position and velocity (relative to the attracting centre) of a bound orbit (a > 0, 0 <= e < 1).
void elements_to_state(double mu, const OrbitalElements& el, double r[3], double v[3]);

// Elements of a relative state (any conic except radial and parabolic ones). For e = 0 the
// pericentre is put at the node, for i = 0 the node on +x.
OrbitalElements state_to_elements(double mu, const double r[3], const double v[3]);

// Sets system s of `ens` (n_bodies = planets + 1) from a star mass, planet masses (0: test
// particles) and their elements in `frame`; barycentric result, time 0, state active.
void set_system_from_elements(HostEnsemble& ens, int s, double star_mass,
                              const std::vector<double>& planet_masses,
                              const std::vector<OrbitalElements>& planets, ElementFrame frame);

// The elements of planets 1..n-1 of system s in `frame`.
std::vector<OrbitalElements> system_elements(const HostEnsemble& ens, int s, ElementFrame frame);

}  // namespace nbody
}  // namespace kosmos
