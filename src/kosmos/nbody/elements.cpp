#include <kosmos/core/error.hpp>
#include <kosmos/nbody/elements.hpp>

#include <cmath>

namespace kosmos {
namespace nbody {

namespace {
constexpr double two_pi = 6.283185307179586476925286766559;

double wrap_angle(double x) {
  x = std::fmod(x, two_pi);
  if (x < 0) x += two_pi;
  return x < two_pi ? x : 0.0;  // -tiny + 2 pi rounds to 2 pi
}

// v <- R_z(angle) v and R_x(angle) v.
void rotate_z(double angle, double v[3]) {
  const double c = std::cos(angle), s = std::sin(angle), x = v[0], y = v[1];
  v[0] = c * x - s * y;
  v[1] = s * x + c * y;
}
void rotate_x(double angle, double v[3]) {
  const double c = std::cos(angle), s = std::sin(angle), y = v[1], z = v[2];
  v[1] = c * y - s * z;
  v[2] = s * y + c * z;
}

// Eccentric anomaly of mean anomaly M (elliptic), Newton's method from E = M + e sin M.
double eccentric_anomaly(double M, double e) {
  M = wrap_angle(M);
  double E = e < 0.8 ? M + e * std::sin(M) : M_PI;
  for (int i = 0; i < 64; ++i) {
    const double dE = (E - e * std::sin(E) - M) / (1 - e * std::cos(E));
    E -= dE;
    if (std::fabs(dE) <= 1e-15 * (1 + std::fabs(E))) break;
  }
  return E;
}

struct Body {
  double m, x[3], v[3];
};

// Centre of mass of bodies [0, count) of system s.
Body centre_of_mass(const HostEnsemble& ens, int s, int count) {
  Body c{0, {0, 0, 0}, {0, 0, 0}};
  for (int b = 0; b < count; ++b) {
    const double m = ens.m(s, b);
    c.m += m;
    for (int k = 0; k < 3; ++k) {
      c.x[k] += m * ens.x(s, b, k);
      c.v[k] += m * ens.v(s, b, k);
    }
  }
  for (int k = 0; k < 3; ++k) {
    c.x[k] /= c.m;
    c.v[k] /= c.m;
  }
  return c;
}
}  // namespace

ElementFrame element_frame_from_name(const std::string& name) {
  if (name == "heliocentric") return ElementFrame::heliocentric;
  if (name == "jacobi") return ElementFrame::jacobi;
  throw invalid_input("kosmos::nbody: unknown element frame '" + name + "' (heliocentric, jacobi)");
}

void elements_to_state(double mu, const OrbitalElements& el, double r[3], double v[3]) {
  kosmos::Impl::require(mu > 0 && std::isfinite(mu), "kosmos::nbody::elements_to_state",
                        "mu = ", mu, " must be positive");
  kosmos::Impl::require(el.a > 0 && std::isfinite(el.a), "kosmos::nbody::elements_to_state",
                        "a = ", el.a, " must be positive (bound orbits)");
  kosmos::Impl::require(el.e >= 0 && el.e < 1, "kosmos::nbody::elements_to_state", "e = ", el.e,
                        " is outside [0, 1)");
  for (double angle : {el.inc, el.Omega, el.omega, el.M})
    kosmos::Impl::require(std::isfinite(angle), "kosmos::nbody::elements_to_state", "angle ", angle,
                          " is not finite");
  const double E = eccentric_anomaly(el.M, el.e);
  const double cosE = std::cos(E), sinE = std::sin(E), b = std::sqrt((1 - el.e) * (1 + el.e));
  const double n = std::sqrt(mu / (el.a * el.a * el.a)), Edot = n / (1 - el.e * cosE);
  r[0] = el.a * (cosE - el.e);
  r[1] = el.a * b * sinE;
  r[2] = 0;
  v[0] = -el.a * sinE * Edot;
  v[1] = el.a * b * cosE * Edot;
  v[2] = 0;
  for (double* w : {r, v}) {
    rotate_z(el.omega, w);
    rotate_x(el.inc, w);
    rotate_z(el.Omega, w);
  }
}

OrbitalElements state_to_elements(double mu, const double r_in[3], const double v_in[3]) {
  kosmos::Impl::require(mu > 0 && std::isfinite(mu), "kosmos::nbody::state_to_elements",
                        "mu = ", mu, " must be positive");
  double r[3] = {r_in[0], r_in[1], r_in[2]}, v[3] = {v_in[0], v_in[1], v_in[2]};
  const double h[3] = {r[1] * v[2] - r[2] * v[1], r[2] * v[0] - r[0] * v[2],
                       r[0] * v[1] - r[1] * v[0]};
  const double hxy = std::hypot(h[0], h[1]), hn = std::sqrt(hxy * hxy + h[2] * h[2]);
  const double rn = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
  const double v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
  kosmos::Impl::require(rn > 0 && hn > 0 && std::isfinite(rn) && std::isfinite(v2),
                        "kosmos::nbody::state_to_elements",
                        "radial or degenerate state (|r| = ", rn, ", |r x v| = ", hn, ")");
  OrbitalElements el;
  const double energy = 0.5 * v2 - mu / rn;
  el.a = -mu / (2 * energy);
  el.inc = std::atan2(hxy, h[2]);
  el.Omega = hxy > 1e-15 * hn ? wrap_angle(std::atan2(h[0], -h[1])) : 0.0;
  // Into the orbital plane: the node on +x, the angular momentum on +z.
  for (double* w : {r, v}) {
    rotate_z(-el.Omega, w);
    rotate_x(-el.inc, w);
  }
  // Eccentricity vector (in-plane) e = (v x h) / mu - r / |r| with h = (0, 0, hn).
  const double ex = v[1] * hn / mu - r[0] / rn, ey = -v[0] * hn / mu - r[1] / rn;
  el.e = std::hypot(ex, ey);
  el.omega = el.e > 1e-15 ? wrap_angle(std::atan2(ey, ex)) : 0.0;
  const double nu = std::atan2(r[1], r[0]) - el.omega;
  const double e = el.e;
  if (e < 1) {
    const double E = std::atan2(std::sqrt((1 - e) * (1 + e)) * std::sin(nu), e + std::cos(nu));
    el.M = wrap_angle(E - e * std::sin(E));
  } else {
    const double H =
        std::asinh(std::sqrt((e - 1) * (e + 1)) * std::sin(nu) / (1 + e * std::cos(nu)));
    el.M = e * std::sinh(H) - H;
  }
  return el;
}

void set_system_from_elements(HostEnsemble& ens, int s, double star_mass,
                              const std::vector<double>& planet_masses,
                              const std::vector<OrbitalElements>& planets, ElementFrame frame) {
  const char* where = "kosmos::nbody::set_system_from_elements";
  kosmos::Impl::require(s >= 0 && s < ens.n_systems(), where, "system ", s, " is outside [0, ",
                        ens.n_systems(), ")");
  kosmos::Impl::require(
      planets.size() == planet_masses.size() && int(planets.size()) + 1 == ens.n_bodies(), where,
      planets.size(), " elements and ", planet_masses.size(), " masses for ", ens.n_bodies() - 1,
      " planets");
  kosmos::Impl::require(star_mass > 0 && std::isfinite(star_mass), where, "star mass ", star_mass,
                        " must be positive");
  Body inner{
      star_mass, {0, 0, 0}, {0, 0, 0}};  // the star, then the centre of mass of bodies 0..k-1
  ens.m(s, 0) = star_mass;
  for (int c = 0; c < 3; ++c) ens.x(s, 0, c) = ens.v(s, 0, c) = 0;
  for (std::size_t k = 0; k < planets.size(); ++k) {
    const double m = planet_masses[k];
    kosmos::Impl::require(m >= 0 && std::isfinite(m), where, "planet ", k + 1, " mass ", m,
                          " must be >= 0");
    const bool jacobi = frame == ElementFrame::jacobi;
    double r[3], v[3];
    elements_to_state((jacobi ? inner.m : star_mass) + m, planets[k], r, v);
    const int b = int(k) + 1;
    ens.m(s, b) = m;
    for (int c = 0; c < 3; ++c) {
      ens.x(s, b, c) = (jacobi ? inner.x[c] : 0.0) + r[c];
      ens.v(s, b, c) = (jacobi ? inner.v[c] : 0.0) + v[c];
      inner.x[c] = (inner.m * inner.x[c] + m * ens.x(s, b, c)) / (inner.m + m);
      inner.v[c] = (inner.m * inner.v[c] + m * ens.v(s, b, c)) / (inner.m + m);
    }
    inner.m += m;
  }
  for (int b = 0; b < ens.n_bodies(); ++b)
    for (int c = 0; c < 3; ++c) {
      ens.x(s, b, c) -= inner.x[c];
      ens.v(s, b, c) -= inner.v[c];
    }
  ens.time(s) = 0;
  ens.time_lo(s) = 0;
  ens.step(s) = 0;
  ens.state(s) = state_active;
  ens.reason(s) = reason_none;
}

std::vector<OrbitalElements> system_elements(const HostEnsemble& ens, int s, ElementFrame frame) {
  std::vector<OrbitalElements> out;
  for (int b = 1; b < ens.n_bodies(); ++b) {
    const Body centre = frame == ElementFrame::jacobi
                            ? centre_of_mass(ens, s, b)
                            : Body{ens.m(s, 0),
                                   {ens.x(s, 0, 0), ens.x(s, 0, 1), ens.x(s, 0, 2)},
                                   {ens.v(s, 0, 0), ens.v(s, 0, 1), ens.v(s, 0, 2)}};
    double r[3], v[3];
    for (int c = 0; c < 3; ++c) {
      r[c] = ens.x(s, b, c) - centre.x[c];
      v[c] = ens.v(s, b, c) - centre.v[c];
    }
    out.push_back(state_to_elements(centre.m + ens.m(s, b), r, v));
  }
  return out;
}

}  // namespace nbody
}  // namespace kosmos
