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
// have P_x, K_x, e_x, omega_deg_x, M0_deg_x for planets x = b, c, ... Only the first
// `max_samples` rows are read (0: all).
RVPosterior read_rv_posterior(const std::string& path, std::size_t max_samples = 0);

// Planet mass (solar masses) of semi-amplitude K (m/s), period P (days), eccentricity e, around a
// star of mass star_mass (solar masses), at sin i.
double planet_mass_from_rv(double K, double P_days, double e, double star_mass, double sin_i);

// The stellar mass of every sample (solar masses), read from the posterior: a column `mstar` or
// `stellar_mass`, else the derived columns that `kosmos rv --stellar-mass M[,SIGMA]` writes
// (a_au_b and msini_jup_b: M* + m_b from Kepler's third law with P_b, in the constants of
// kosmos::kepler, so a drawn stellar mass is recovered per sample). Empty when the file has
// neither.
std::vector<double> posterior_stellar_masses(const RVPosterior& posterior);

struct StabilitySetup {
  // > 0: every sample's stellar mass (overrides the posterior's); 0: the posterior's per sample
  // (posterior_stellar_masses; an invalid_input when the file has none).
  double star_mass = 0;
  double inclination = 1.5707963267948966;  // radians from the sky plane (pi / 2: edge-on)
  // Per sample, draw the system's inclination isotropically (cos i uniform in [0, 1)) instead.
  bool isotropic_inclination = false;
  // > 0: each planet's orbit normal is tilted from the system's by a Rayleigh-distributed angle
  // of this scale (radians) about a uniformly drawn direction (its node on the system plane);
  // 0: coplanar. Each planet's mass is its m sin i over the sin i of its own orbit to the sky.
  double mutual_inclination = 0;
  unsigned long long seed = 1;  // the draws above (the same seed, the same systems)
  ElementFrame frame = ElementFrame::jacobi;
  int max_samples = 0;  // use the first max_samples samples (0: all)
};

// The systems of a posterior with what was chosen for each: planets enter (body 1, 2, ...) in
// order of increasing period of that sample, whatever their labels (the Jacobi hierarchy and the
// Keplerian fit agree only so).
struct PosteriorSystems {
  HostEnsemble ensemble;                 // one system per sample; attribute 0: the posterior row
  std::vector<std::vector<int>> order;   // order[s][k]: planet (0 = b, 1 = c, ...) of body k + 1
  std::vector<double> star_mass;         // per system
  std::vector<std::vector<double>> inclination, node;  // per system and body k + 1 (radians)
};
PosteriorSystems systems_from_rv_posterior(const RVPosterior& posterior, const StabilitySetup& setup);

// systems_from_rv_posterior(...).ensemble.
HostEnsemble ensemble_from_rv_posterior(const RVPosterior& posterior, const StabilitySetup& setup);

// The planet letters of an order ("cb": c is body 1, b body 2).
std::string planet_order_name(const std::vector<int>& order);

// Counts of an integrated stability ensemble.
struct StabilitySummary {
  int samples = 0, survived = 0;
  int close_encounters = 0, ejections = 0, collisions = 0, other_stops = 0;  // inactive, by reason
  int failures = 0;    // disabled (numerical failure or bad input)
  int unfinished = 0;  // active, short of the destination (iteration budget)
  double fraction() const { return samples ? double(survived) / samples : 0.0; }
};
StabilitySummary summarize_stability(const HostEnsemble& ens, double destination);

// What a stability run measured per system besides its state (empty or NaN: not measured).
struct StabilityOutcomes {
  std::vector<double> max_eccentricity;  // largest eccentricity (in the setup's frame) seen
  std::vector<double> megno;             // <Y> at the end (2: quasi-periodic)
  std::vector<double> lyapunov_time;     // 1 / (largest Lyapunov exponent), time units
};

// One table joining each posterior row with its system's outcome; HDF5 when io::is_hdf5_path
// (datasets sample, order, star_mass, inclination, columns, posterior, state, reason, time,
// max_eccentricity, megno, lyapunov_time), else text: a line of column names (sample, order,
// star_mass, inc_1.. (deg, by body), the posterior's columns, state, reason, time,
// max_eccentricity, megno, lyapunov_time), then one line per system. `time` is where the system
// stopped (the destination for survivors).
void write_stability_table(const std::string& path, const RVPosterior& posterior,
                           const PosteriorSystems& systems, const HostEnsemble& final_state,
                           const StabilityOutcomes& outcomes);

}  // namespace nbody
}  // namespace kosmos

