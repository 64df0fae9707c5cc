// Stability of RV posteriors: planetary systems built from the posterior samples of `kosmos rv`
// (its text file), integrated as one ensemble; a sample survives when it reaches the destination
// without a close encounter (Hill criterion), an ejection or a numerical failure.
//
// From the RV parameters of each planet (RadVel conventions, see src/kosmos/kepler/rv.hpp):
//  - mass m from K, P, e and the stellar mass M*:  K = (2 pi G / P)^(1/3) m sin i
//    / ((M* + m)^(2/3) sqrt(1 - e^2)), solved for m at the given inclination (sin i = 1: minimum
//    masses); every planet shares the inclination and Omega = 0 (a coplanar system);
//  - a from Kepler's third law with the frame's mu (RadVel fits are Jacobi-like: the default);
//  - the planet's argument of pericentre omega_star + pi; mean anomaly M0 at the posterior epoch
//    (time 0 of the integration).
// Units: P in days (the RV data's time unit), K in m/s; the integration's time unit is 1/k days
// with k = 0.01720209895 (Gauss: G = 1 in AU, solar masses), so one year is about 2 pi.
#pragma once

#include <kosmos/nbody/elements.hpp>
#include <kosmos/nbody/ensemble.hpp>

#include <string>
#include <vector>

namespace kosmos {
namespace nbody {

// Days per time unit of the nbody module (1 / Gauss's constant).
constexpr double days_per_time_unit = 1.0 / 0.01720209895;

struct RVPosterior {
  int planets = 0;
  std::vector<std::string> columns;
  std::vector<std::vector<double>> samples;  // one row per sample, in `columns` order
};

// Reads the posterior file of `kosmos rv`: text ('#' comments, a line of column names, then one
// sample per line) or, for a .h5/.hdf5 name, its HDF5 file (datasets samples and columns). It must
// have P_x, K_x, e_x, omega_deg_x, M0_deg_x for planets x = b, c, ...
RVPosterior read_rv_posterior(const std::string& path);

// Planet mass (solar masses) of semi-amplitude K (m/s), period P (days), eccentricity e, around a
// star of mass star_mass (solar masses), at sin i.
double planet_mass_from_rv(double K, double P_days, double e, double star_mass, double sin_i);

struct StabilitySetup {
  double star_mass = 1.0;
  double inclination = 1.5707963267948966;  // radians from the sky plane (pi / 2: edge-on)
  ElementFrame frame = ElementFrame::jacobi;
  int max_samples = 0;  // use the first max_samples samples (0: all)
};

// One system per sample (star + planets); attribute 0 holds the sample's row index.
HostEnsemble ensemble_from_rv_posterior(const RVPosterior& posterior, const StabilitySetup& setup);

// Counts of an integrated stability ensemble.
struct StabilitySummary {
  int samples = 0, survived = 0;
  int close_encounters = 0, ejections = 0, collisions = 0, other_stops = 0;  // inactive, by reason
  int failures = 0;    // disabled (numerical failure or bad input)
  int unfinished = 0;  // active, short of the destination (iteration budget)
  double fraction() const { return samples ? double(survived) / samples : 0.0; }
};
StabilitySummary summarize_stability(const HostEnsemble& ens, double destination);

}  // namespace nbody
}  // namespace kosmos
