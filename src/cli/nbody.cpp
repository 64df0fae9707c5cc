// `kosmos nbody`: integrate an ensemble of few-body systems (Swarm-NG, Dindar et al. 2013) from a
// file or generated as in Section 5.1; report energy errors and stop reasons per system; write the
// final ensemble, logs and checkpoints; and a test mode (Section 5.2.1) comparing against a second
// integrator or against reference final conditions.
#include "options.hpp"
#include "ranks.hpp"

#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/nbody/nbody.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

namespace {
using namespace kosmos::nbody;
using Space = Kokkos::DefaultExecutionSpace;
using DevEnsemble = Ensemble<Space::memory_space>;
using kosmos::cli::usage_error;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void write_ensemble(const std::string& path, const HostEnsemble& ens) {
  if (kosmos::io::is_hdf5_path(path))
    write_hdf5(path, ens);
  else if (ends_with(path, ".bin"))
    write_binary(path, ens);
  else
    write_text(path, ens);
}

std::vector<double> energies(const DevEnsemble& dev) {
  Kokkos::View<double*, Space::memory_space> e("kosmos::nbody::cli::energy", dev.n_systems());
  energy(Space(), dev, e);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e);
  return std::vector<double>(h.data(), h.data() + h.extent(0));
}

std::string fmt(double v, int precision = 6) {
  std::ostringstream o;
  o << std::setprecision(precision) << v;
  return o.str();
}

// The run's settings: every one is stored in checkpoints, and a checkpoint lacking one is refused.
// Options with values, the output files ("" when not written), then flags ("1" or "0").
const char* const value_settings[] = {"integrator",      "dt",           "tau",
                                      "tolerance",       "destination",  "steps-per-launch",
                                      "max-iterations",  "energy-limit", "radius",
                                      "close-encounter", "ejection",     "log-interval",
                                      "corrector",       "coordinates",  "epsilon",
                                      "on-collision",    "frame"};
const char* const file_settings[] = {"output", "report", "elements-output", "checkpoint",
                                     "checkpoint-interval"};
const char* const flag_settings[] = {"crossing-orbits", "megno", "allow-failures"};
// Stored like value_settings but not required: checkpoints written before they existed resume with
// their defaults.
const char* const later_settings[] = {"changeover-hill"};
// Set by the run itself: where its segments start, its log and the log's length at the checkpoint.
const char* const run_settings[] = {"stability", "segment-origin", "log", "log-size"};

std::map<std::string, std::string> settings_from(const kosmos::cli::Options& o) {
  std::map<std::string, std::string> m;
  for (const char* k : value_settings) m[k] = o.str(k);
  for (const char* k : later_settings) m[k] = o.str(k);
  for (const char* k : file_settings) m[k] = o.has(k) ? o.str(k) : std::string();
  for (const char* k : flag_settings) m[k] = o.is_set(k) ? "1" : "0";
  m["stability"] = o.has("stability") ? "1" : "0";
  return m;
}

std::vector<std::string> checkpoint_settings() {
  std::vector<std::string> keys;
  for (const char* k : value_settings) keys.push_back(k);
  for (const char* k : file_settings) keys.push_back(k);
  for (const char* k : flag_settings) keys.push_back(k);
  for (const char* k : run_settings) keys.push_back(k);
  return keys;
}

// --radius: one radius for every body, or a comma-separated radius per body (0: no collisions).
void set_radii(const std::string& text, MonitorConfig& monitor) {
  std::vector<double> radii;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    double r = 0;
    if (!kosmos::io::parse_double(item, r) || r < 0)
      throw usage_error("--radius '" + text + "': '" + item + "' is not a radius >= 0");
    radii.push_back(r);
  }
  if (radii.empty() || int(radii.size()) > max_bodies)
    throw usage_error("--radius '" + text + "': give 1 to " + std::to_string(max_bodies) +
                      " radii");
  for (int b = 0; b < max_bodies; ++b)
    monitor.radius[b] = radii.size() == 1 ? radii[0] : b < int(radii.size()) ? radii[b] : 0.0;
}

IntegrateOptions options_from(const std::map<std::string, std::string>& m) {
  auto num = [&](const char* k) {
    double v = 0;
    if (!kosmos::io::parse_double(m.at(k), v))
      throw usage_error(std::string("--") + k + " '" + m.at(k) + "' is not a finite number");
    return v;
  };
  auto integer = [&](const char* k, long long min_value, long long max_value) {
    return kosmos::cli::parse_integer(k, m.at(k), min_value, max_value);
  };
  auto nonnegative = [&](const char* k, const char* zero_means) {
    const double v = num(k);
    if (v < 0)
      throw usage_error(std::string("--") + k + " " + m.at(k) + " must be >= 0 (0: " + zero_means +
                        ")");
    return v;
  };
  IntegrateOptions o;
  try {
    o.integrator.method = method_from_name(m.at("integrator"));
  } catch (const kosmos::invalid_input& e) {
    throw usage_error(e.what());
  }
  o.integrator.dt = num("dt");
  o.integrator.tau = num("tau");
  o.integrator.tolerance = num("tolerance");
  if (m.count("changeover-hill")) o.integrator.changeover_hill = num("changeover-hill");
  o.integrator.steps_per_launch =
      int(integer("steps-per-launch", 1, std::numeric_limits<int>::max()));
  o.integrator.max_iterations = integer("max-iterations", 1, kosmos::cli::Options::largest_integer);
  o.monitor.energy_error_limit = nonnegative("energy-limit", "off");
  set_radii(m.at("radius"), o.monitor);
  if (m.count("on-collision")) {  // absent from older checkpoints
    try {
      o.monitor.on_collision = collision_response_from_name(m.at("on-collision"));
    } catch (const kosmos::invalid_input& e) {
      throw usage_error(e.what());
    }
  }
  o.monitor.close_encounter_hill = nonnegative("close-encounter", "off");
  o.monitor.ejection_distance = nonnegative("ejection", "off");
  o.monitor.crossing_orbits = m.at("crossing-orbits") == "1";
  o.monitor.log_interval = nonnegative("log-interval", "events only");
  if (m.count("corrector")) {  // whfast / ias15 settings (absent from older checkpoints)
    o.integrator.corrector = int(integer("corrector", 0, std::numeric_limits<int>::max()));
    o.integrator.epsilon = num("epsilon");
    const std::string& c = m.at("coordinates");
    if (c != "jacobi" && c != "democratic_heliocentric" && c != "whds")
      throw usage_error("--coordinates '" + c + "' is not jacobi, democratic_heliocentric or whds");
    o.integrator.coordinates = c == "jacobi" ? WHCoordinates::jacobi
                               : c == "democratic_heliocentric"
                                   ? WHCoordinates::democratic_heliocentric
                                   : WHCoordinates::whds;
  }
  return o;
}

ElementFrame frame_from(const std::string& name) {
  try {
    return element_frame_from_name(name);
  } catch (const kosmos::invalid_input& e) {
    throw usage_error(e.what());
  }
}

// Stability mode: the posterior samples as systems (planets by period, the posterior's stellar
// mass unless --stellar-mass); unless given, a close encounter is 3 mutual Hill radii and an
// ejection is an unbound planet beyond 20 times the largest semi-major axis.
PosteriorSystems stability_systems(const kosmos::cli::Options& o, const RVPosterior& posterior,
                                   std::map<std::string, std::string>& settings) {
  StabilitySetup setup;
  setup.star_mass = o.has("stellar-mass") ? o.number("stellar-mass") : 0.0;
  if (o.has("stellar-mass") && !(setup.star_mass > 0))
    throw usage_error("--stellar-mass " + o.str("stellar-mass") + " must be positive");
  setup.inclination = o.number("inclination") * M_PI / 180;
  setup.isotropic_inclination = o.is_set("isotropic-inclination");
  setup.mutual_inclination = o.number("mutual-inclination") * M_PI / 180;
  setup.seed = (unsigned long long)o.integer("seed", 0, kosmos::cli::Options::largest_integer);
  setup.max_samples = int(o.integer("samples", 0));
  setup.frame = frame_from(o.str("frame"));
  // A missing stellar mass is for the command line to give (exit 2); a bad value in the posterior
  // (a NaN period, a negative K) is a failed run on bad input (exit 1).
  if (setup.star_mass == 0 && posterior_stellar_masses(posterior).empty())
    throw usage_error(
        "the posterior has no stellar mass (a column mstar, or the msini_jup_b and a_au_b of "
        "`kosmos rv --stellar-mass`): --stellar-mass M sets one");
  const PosteriorSystems systems = systems_from_rv_posterior(posterior, setup);
  const HostEnsemble& ens = systems.ensemble;
  if (o.number("close-encounter") == 0) settings["close-encounter"] = "3";
  if (o.number("ejection") == 0) {
    double a_max = 0;
    for (int s = 0; s < ens.n_systems(); ++s)
      for (const auto& el : system_elements(ens, s, setup.frame)) a_max = std::max(a_max, el.a);
    settings["ejection"] = fmt(20 * a_max, 17);
  }
  // What was built: the stellar mass's source and the planets' order by period.
  std::map<std::string, int> orders;
  for (const auto& order : systems.order) ++orders[planet_order_name(order)];
  auto [lo, hi] = std::minmax_element(systems.star_mass.begin(), systems.star_mass.end());
  std::cout << "stability: " << ens.n_systems() << " samples; stellar mass "
            << (o.has("stellar-mass") ? "from --stellar-mass " : "from the posterior ")
            << fmt(*lo, 6) << (*hi > *lo ? " to " + fmt(*hi, 6) : std::string())
            << "; planets by period (body 1, 2, ...):";
  for (const auto& [name, count] : orders) std::cout << ' ' << name << " in " << count;
  std::cout << "\n";
  return systems;
}

void write_elements(const std::string& path, const HostEnsemble& ens, ElementFrame frame) {
  kosmos::io::write_atomically(path, [&](std::ostream& out) {
    out << "# kosmos nbody orbital elements ("
        << (frame == ElementFrame::jacobi ? "jacobi" : "heliocentric")
        << "; G = 1, AU, solar masses, year = 2 pi; angles in degrees)\n"
        << "# system planet mass a e inc Omega omega M state\n"
        << std::setprecision(17);
    const double deg = 180 / M_PI;
    for (int s = 0; s < ens.n_systems(); ++s) {
      if (ens.state(s) == state_disabled) continue;  // no meaningful elements
      const auto planets = system_elements(ens, s, frame);
      for (std::size_t k = 0; k < planets.size(); ++k) {
        const auto& el = planets[k];
        out << s << ' ' << k + 1 << ' ' << ens.m(s, int(k) + 1) << ' ' << el.a << ' ' << el.e << ' '
            << el.inc * deg << ' ' << el.Omega * deg << ' ' << el.omega * deg << ' ' << el.M * deg
            << ' ' << state_name(ens.state(s)) << '\n';
      }
    }
  });
}

// Position, velocity and time differences between two ensembles (Section 5.2.1's test).
struct Comparison {
  double pos = 0, vel = 0, time = 0;
  int worst_system = -1;
};
Comparison compare(const HostEnsemble& a, const HostEnsemble& b) {
  if (a.n_systems() != b.n_systems() || a.n_bodies() != b.n_bodies())
    throw kosmos::invalid_input(
        "kosmos nbody --test: the reference has " + std::to_string(b.n_systems()) + " systems of " +
        std::to_string(b.n_bodies()) + " bodies, the run " + std::to_string(a.n_systems()) +
        " of " + std::to_string(a.n_bodies()));
  // |x - y|, where a NaN on one side only is infinitely far (std::max would drop it) and NaN on
  // both sides agrees (a system disabled in both).
  auto difference = [](double x, double y) {
    if (x == y) return 0.0;
    if (std::isnan(x) || std::isnan(y))
      return std::isnan(x) && std::isnan(y) ? 0.0 : double(INFINITY);
    return std::fabs(x - y);
  };
  Comparison c;
  double worst = -1;
  for (int s = 0; s < a.n_systems(); ++s) {
    double dx = 0, dv = 0;
    for (int i = 0; i < a.n_bodies(); ++i)
      for (int k = 0; k < 3; ++k) {
        dx = std::max(dx, difference(a.x(s, i, k), b.x(s, i, k)));
        dv = std::max(dv, difference(a.v(s, i, k), b.v(s, i, k)));
      }
    c.pos = std::max(c.pos, dx);
    c.vel = std::max(c.vel, dv);
    c.time = std::max(c.time, difference(a.time(s), b.time(s)));
    if (std::max(dx, dv) > worst) {
      worst = std::max(dx, dv);
      c.worst_system = s;
    }
  }
  return c;
}

// --stability-map FILE: the map over --map-x and --map-y of --input's first system, with MEGNO
// (kosmos::nbody::run_stability_map), written to FILE; a summary on stdout.
int run_stability_map_mode(const kosmos::cli::Options& o,
                           const std::map<std::string, std::string>& settings) {
  for (const char* needed : {"input", "map-x", "map-y"})
    if (!o.has(needed)) throw usage_error(std::string("--stability-map needs --") + needed);
  o.reject_given({"generate", "stability", "resume", "checkpoint", "log", "output", "report",
                  "stability-output", "elements-output", "test"},
                 "does not apply to --stability-map (the map file is its output)");
  kosmos::cli::check_output_files({{"input", o.str("input")}},
                                  {{"stability-map", o.str("stability-map")}});
  StabilityMapSetup setup;
  IntegrateOptions options = options_from(settings);
  options.megno = true;
  try {
    setup.x = parse_map_axis(o.str("map-x"));
    setup.y = parse_map_axis(o.str("map-y"));
    setup.frame = element_frame_from_name(o.str("frame"));
    check_options(options, read_ensemble(o.str("input")).n_bodies());
  } catch (const kosmos::invalid_input& e) {
    throw usage_error(e.what());
  }
  double destination = 0;
  if (!kosmos::io::parse_double(settings.at("destination"), destination) || !(destination > 0))
    throw usage_error("--destination '" + settings.at("destination") +
                      "' must be a positive number");
  const HostEnsemble base = read_ensemble(o.str("input"));
  const StabilityMap map = run_stability_map(Space(), base, 0, setup, options, destination);
  write_stability_map(o.str("stability-map"), map);
  std::vector<double> sorted;
  for (int s = 0; s < map.final_state.n_systems(); ++s)
    if (map.final_state.state(s) != state_disabled) sorted.push_back(map.megno[std::size_t(s)]);
  std::sort(sorted.begin(), sorted.end());
  int chaotic = 0;
  for (double y : sorted) chaotic += y > 4;
  const int failed = map.final_state.n_systems() - int(sorted.size());
  std::printf("stability map: %d x %d points (%s of body %d, %s of body %d) to t = %s in %.3f s\n",
              setup.x.count, setup.y.count, map_element_name(setup.x.element), setup.x.body,
              map_element_name(setup.y.element), setup.y.body, fmt(destination).c_str(),
              map.report.seconds);
  if (!sorted.empty())
    std::printf("MEGNO <Y>: median %s, range %s to %s; %d point(s) with <Y> > 4 (chaotic)\n",
                fmt(sorted[sorted.size() / 2]).c_str(), fmt(sorted.front()).c_str(),
                fmt(sorted.back()).c_str(), chaotic);
  std::printf("%d stopped, %d failed; written to %s\n", map.report.stopped, failed,
              o.str("stability-map").c_str());
  if (failed > 0 && !o.is_set("allow-failures")) {
    std::fprintf(stderr, "kosmos nbody: %d of %d system(s) failed\n", failed,
                 map.final_state.n_systems());
    return 1;
  }
  return 0;
}

int run_nbody(const std::vector<std::string>& args) {
  kosmos::cli::Options o(
      "nbody",
      "Integrate an ensemble of few-body systems (G = 1; AU, solar masses, year = 2 pi) with\n"
      "Hermite, Runge-Kutta Cash-Karp, mixed-variable symplectic or Verlet, on the default Kokkos\n"
      "device. The ensemble comes from --input (text, binary or HDF5 ensemble file) or is "
      "generated as in\n"
      "Dindar et al. (2013) Section 5.1 (--generate). Prints per-system energy errors and stop "
      "reasons.\n"
      "--test compares the result with --compare-integrator or with --reference final conditions.\n"
      "--stability FILE integrates every posterior sample of `kosmos rv` (P in days, K in m/s; "
      "planets\n"
      "ordered by period per sample, the posterior's stellar mass, masses from K at "
      "--inclination,\n"
      "Jacobi elements) and reports the fraction that reaches --destination without a close "
      "encounter,\n"
      "ejection or failure; --stability-output joins each sample with its outcome. Time unit: "
      "58.1324\n"
      "days (1/k, Gauss's constant), so one year is about 2 pi.\n"
      "Exit status 1 when a system was disabled (unless --allow-failures), a test failed or the\n"
      "iteration budget ran out; 2 for a usage error.\n"
      "States and reasons in the report: active; inactive (close_encounter, ejection, "
      "crossing_orbits,\n"
      "collision); disabled (nonpositive_mass, nonfinite, coincident_bodies, kepler_failure,\n"
      "step_underflow, bad_step, energy_error, central_not_first: mvs needs the star as body 0).");
  o.option("input", "FILE",
           "ensemble file (kosmos text format, binary, or HDF5 if FILE ends in .h5/.hdf5)", "",
           true)
      .option("generate", "N", "generate N Section 5.1 systems instead of reading --input", "",
              true)
      .option("stability", "FILE",
              "stability mode: one system per posterior sample of `kosmos rv` (its text or .h5 "
              "samples file)",
              "", true)
      .option("stellar-mass", "M",
              "stability mode: stellar mass (solar masses) for every sample, overriding the "
              "posterior's (its mstar column, or the one `kosmos rv --stellar-mass` derived a_au "
              "and msini from)",
              "", true)
      .option(
          "inclination", "DEG",
          "stability mode: inclination of the system to the sky (90: sin i = 1, minimum masses)",
          "90")
      .flag("isotropic-inclination",
            "stability mode: draw each sample's inclination isotropically (cos i uniform; "
            "masses m sin i / sin i) instead of --inclination")
      .option("mutual-inclination", "DEG",
              "stability mode: tilt each planet's orbit from the system plane by a "
              "Rayleigh-distributed angle of this scale about a random node (0: coplanar)",
              "0")
      .option("stability-output", "FILE",
              "stability mode: one row per posterior sample joined with its outcome "
              "(order, stellar mass, inclinations, the posterior's columns, state, reason, time, "
              "max_eccentricity, "
              "megno, lyapunov_time); HDF5 if FILE ends in .h5/.hdf5",
              "", true)
      .option("eccentricity-samples", "N",
              "stability mode: times (evenly spaced, on the dt grid) at which the "
              "largest eccentricity is sampled",
              "100")
      .option("samples", "N", "stability mode: use the first N posterior samples (0: all)", "0")
      .option("stability-map", "FILE",
              "stability map mode: vary two elements of --input's first system over the grid "
              "of --map-x and --map-y, integrate every point with MEGNO and write the map (ix iy x "
              "y megno "
              "lyapunov_time state reason time; HDF5 if FILE ends in .h5/.hdf5)",
              "", true)
      .option("map-x", "SPEC",
              "stability map: ELEMENT:BODY:MIN:MAX:COUNT, ELEMENT a, e, inc, Omega, omega, M "
              "(angles in degrees) or mass, BODY 1 for the first planet, in --frame (e.g. "
              "a:2:1.3:1.7:40)",
              "", true)
      .option("map-y", "SPEC", "stability map: the second axis, as --map-x (e.g. e:2:0:0.3:30)", "",
              true)
      .option("frame", "NAME",
              "orbital elements frame: jacobi or heliocentric (stability mode, --elements-output)",
              "jacobi")
      .option("bodies", "N", "bodies per generated system (star + N-1 planets)", "3")
      .option("planet-mass", "M", "mass of each generated planet (solar masses)", "0.001")
      .option("alpha", "A", "generated semi-major axes a_i = (1 + A)^(i-1)", "0.4")
      .option("seed", "S",
              "random orbital phases per generated system (0: all planets start on the x axis); "
              "stability mode: the inclination draws",
              "0")
      .option(
          "integrator", "NAME",
          "hermite, hermite_adaptive, rkck, rkck_adaptive, mvs, verlet, whfast, ias15, mercurius "
          "(Wisdom-Holman with close encounters integrated by Bulirsch-Stoer)",
          "hermite")
      .option("dt", "DT",
              "time step (fixed-step integrators; first step of rkck_adaptive and ias15)", "0.001")
      .option("corrector", "K",
              "whfast symplectic corrector order: 0 (none), 3, 5, 7, 11 (jacobi only)", "0")
      .option("coordinates", "NAME",
              "whfast coordinates: jacobi, democratic_heliocentric, whds (Hernandez & Dehnen 2017)",
              "jacobi")
      .option("epsilon", "EPS", "ias15 step control, as REBOUND's epsilon (steps adapt per system)",
              "1e-9")
      .flag("megno",
            "ias15, whfast (jacobi): integrate the variational equations and report MEGNO <Y> (2: "
            "quasi-periodic, growing: chaotic) and the Lyapunov time per system (in --report and "
            "--stability-output)")
      .option("tau", "TAU", "hermite_adaptive step scale (dt = tau [sum |j|^2/|a|^2]^-1/2)",
              "0.017")
      .option("tolerance", "EPS",
              "rkck_adaptive: largest step error max(|dx|/max|x|, |dv|/max|v|) (Swarm-NG's "
              "error_tolerance is its square); mercurius: the same for its encounter sub-steps",
              "1e-12")
      .option("changeover-hill", "K",
              "mercurius: changeover radius in Hill radii (REBOUND's r_crit_hill)", "3")
      .option("destination", "T", "integrate every system to this time", "6.283185307179586")
      .option("steps-per-launch", "N", "propagator steps per kernel launch", "1000")
      .option(
          "max-iterations", "N",
          "maximum steps per system over the whole run (checkpoint segments and resumes included)",
          "1e15")
      .option(
          "energy-limit", "X",
          "disable a system (reason energy_error) when |dE/E| > X, checked every launch (0: off)",
          "0.01")
      .option("radius", "R[,R...]",
              "collision radius of every body, or of body 0, 1, ...: two bodies touch when closer "
              "than the sum (0: off)",
              "0")
      .option("on-collision", "WHAT",
              "when two bodies touch: stop (the system stops, reason collision) or merge (the "
              "lighter body "
              "merges into the heavier: mass, momentum and volume add up; |dE/E| leaves out the "
              "energy merges took; "
              "not mvs or whfast; no --checkpoint)",
              "stop")
      .option("close-encounter", "K",
              "stop a system when two planets come within K mutual Hill radii (0: off; stability "
              "mode: 3)",
              "0")
      .option("ejection", "R",
              "stop a system when a planet is unbound beyond R from body 0 (0: off; stability "
              "mode: 20 x the largest a)",
              "0")
      .flag("crossing-orbits", "stop a system when two planets' osculating orbits cross")
      .option(
          "output", "FILE",
          "write the final ensemble (binary if FILE ends in .bin, HDF5 if .h5/.hdf5, else text)",
          "", true)
      .option("elements-output", "FILE",
              "write the final orbital elements of every planet in --frame", "", true)
      .option("log", "FILE",
              "log snapshots and events, a line each: time system event, then m x y z vx vy vz per "
              "body",
              "", true)
      .option("log-interval", "DT", "log every system each DT time units (0: events only)", "0")
      .option("report", "FILE", "write the per-system energy error and stop reason table", "", true)
      .option("checkpoint", "FILE",
              "write a binary checkpoint every --checkpoint-interval (each system at its first "
              "step at or after it: checkpoints never change the results)",
              "", true)
      .option("checkpoint-interval", "T", "time between checkpoints (default: destination/10)", "",
              true)
      .option("resume", "FILE",
              "continue an interrupted run from its checkpoint, with all its settings (outputs, "
              "checkpoint, destination, integrator), exactly as if it had not stopped; options "
              "given again "
              "override them",
              "", true)
      .option("mpi-chunk", "N",
              "under mpirun: systems per chunk of the ranks' work queue (0: a quarter of each "
              "rank's share, at least what fills a GPU unless a rank would get none)",
              "0")
      .flag("progress", "print progress to stderr")
      .flag("timings",
            "print where the time goes on stderr (rank 0's chunks, the sums and the gather of "
            "every rank's rows, the report)")
      .flag("allow-failures",
            "exit 0 even when systems were disabled (bad input or a numerical failure); "
            "without it such a run exits 1 (stopped systems, e.g. unstable posterior samples, are "
            "results, not failures)")
      .flag("test", "test mode: compare with --compare-integrator or --reference")
      .option("compare-integrator", "NAME",
              "test mode: second integrator (other settings as for the first)", "", true)
      .option("compare-dt", "DT", "test mode: time step of the second integrator (default: --dt)",
              "", true)
      .option("reference", "FILE", "test mode: reference final conditions", "", true)
      .option("pos-threshold", "X", "test mode: position tolerance", "1e-10")
      .option("vel-threshold", "V", "test mode: velocity tolerance", "1e-10")
      .option("time-threshold", "T", "test mode: time tolerance", "1e-10");
  if (!o.parse(args)) return 0;
  if (kosmos::cli::ranks() > 1) {
    // One process owns these files; each rank runs only its chunks of the systems.
    if (o.has("log"))
      throw usage_error(
          "--log is written by one process: run it without mpirun (or with one rank)");
    if (o.has("stability-map"))
      throw usage_error(
          "--stability-map runs on one process: run it without mpirun (or with one rank)");
  }
  if (o.has("stability-map")) return run_stability_map_mode(o, settings_from(o));
  for (const char* map_only : {"map-x", "map-y"})
    if (o.has(map_only))
      throw usage_error(std::string("--") + map_only + " belongs to --stability-map FILE");

  // Ensemble and settings.
  std::map<std::string, std::string> settings = settings_from(o);
  HostEnsemble host;
  RVPosterior posterior;     // stability mode
  PosteriorSystems systems;  // stability mode
  RunState state;            // what the run carries between segments (and checkpoints)
  std::string log_path = o.str("log");
  std::uintmax_t log_size = 0;  // a resumed run's log at its checkpoint
  const auto setting = [&](const char* key) -> const std::string& { return settings[key]; };
  // What the run reads is not what it writes (a resumed run appends to its checkpoint's log and
  // may rewrite the checkpoint it resumes from).
  auto path_of = [&](const char* name) { return o.has(name) ? o.str(name) : std::string(); };
  const std::vector<kosmos::cli::FileArgument> inputs = {{"input", path_of("input")},
                                                         {"stability", path_of("stability")},
                                                         {"reference", path_of("reference")}};
  auto check_files = [&](const std::string& log) {
    auto read = inputs;
    if (o.has("resume")) read.push_back({"resume", o.str("resume")});
    std::vector<kosmos::cli::FileArgument> written = {
        {"output", setting("output")},
        {"elements-output", setting("elements-output")},
        {"report", setting("report")},
        {"stability-output", path_of("stability-output")},
        {"log", log}};
    kosmos::cli::check_output_files(read, written);
    written.push_back({"checkpoint", setting("checkpoint")});
    kosmos::cli::check_output_files(inputs, written);
  };
  if (o.is_set("test") && !o.has("reference") && !o.has("compare-integrator"))
    throw usage_error("--test needs --compare-integrator NAME or --reference FILE");
  for (const char* threshold : {"pos-threshold", "vel-threshold", "time-threshold"})
    if (!(o.number(threshold) >= 0))
      throw usage_error(std::string("--") + threshold + " " + o.str(threshold) + " must be >= 0");
  if (!o.has("resume")) check_files(log_path);  // before anything is read
  if (o.has("resume")) {
    for (const char* conflicting : {"input", "generate", "stability", "log", "stability-output"})
      if (o.has(conflicting))
        throw usage_error(
            std::string("--resume continues the checkpoint's run: it takes no --") + conflicting +
            (std::string(conflicting) == "log"                ? " (the run appends to its own log)"
             : std::string(conflicting) == "stability-output" ? " (the table needs the posterior)"
                                                              : ""));
    const std::string resume = o.str("resume");
    Checkpoint checkpoint = read_checkpoint(resume, checkpoint_settings());
    // The checkpoint's settings, except those given again on this command line.
    auto given = [&](const std::string& key) {
      for (const auto& a : args)
        if (a == "--" + key || a.rfind("--" + key + "=", 0) == 0) return true;
      return false;
    };
    for (const auto& [k, v] : checkpoint.settings)
      if (!given(k)) settings[k] = v;
    host = std::move(checkpoint.ensemble);
    state = std::move(checkpoint.state);
    log_path = settings["log"];
    if (!log_path.empty() && kosmos::cli::ranks() > 1)
      throw usage_error(resume +
                        " belongs to a run with a --log, which one process writes: "
                        "resume it without mpirun (or with one rank)");
    try {
      log_size = std::uintmax_t(kosmos::cli::parse_integer("log-size", settings["log-size"], 0,
                                                           kosmos::cli::Options::largest_integer));
    } catch (const usage_error&) {
      throw kosmos::file_error(resume + ": checkpoint setting 'log-size' is '" +
                               settings["log-size"] + "', not a byte count");
    }
    check_files(log_path);
    if (!log_path.empty() && std::filesystem::exists(log_path)) {
      // Drop whatever the interrupted run appended after its last checkpoint: only ever shorten,
      // and only a file at least as long as the log was then (else it is not this run's log).
      const auto now = std::filesystem::file_size(log_path);
      if (now < log_size)
        throw kosmos::file_error(
            resume + ": its log " + log_path + " has " + std::to_string(now) +
            " bytes, fewer than the " + std::to_string(log_size) +
            " it had at the checkpoint: not this run's log (move it back or away)");
      std::filesystem::resize_file(log_path, log_size);
    }
  } else {
    if (int(o.has("input")) + int(o.has("generate")) + int(o.has("stability")) != 1)
      throw usage_error("give exactly one of --input FILE, --generate N and --stability FILE");
    if (o.has("stability-output") && !o.has("stability"))
      throw usage_error(
          "--stability-output joins posterior samples with their outcomes: it needs --stability "
          "FILE");
    if (o.has("stability")) {
      try {
        posterior = read_rv_posterior(o.str("stability"), std::size_t(o.integer("samples", 0)));
      } catch (const kosmos::invalid_input& e) {
        throw usage_error(e.what());
      }
      systems = stability_systems(o, posterior, settings);
      host = systems.ensemble;
    } else if (o.has("input")) {
      host = read_ensemble(o.str("input"));
    } else {
      host = generate_planetary_ensemble(
          int(o.integer("generate", 1)), int(o.integer("bodies", 2)), o.number("planet-mass"),
          o.number("alpha"),
          (unsigned long long)o.integer("seed", 0, kosmos::cli::Options::largest_integer));
    }
    settings["log"] = log_path.empty()
                          ? log_path
                          : std::filesystem::absolute(log_path).string();  // --resume from anywhere
  }
  const IntegrateOptions base = options_from(settings);
  const ElementFrame frame = frame_from(setting("frame"));
  if (base.monitor.merging() && !setting("checkpoint").empty())
    throw usage_error(
        "--on-collision merge runs without --checkpoint (checkpoints do not keep what merged)");
  double destination = 0;
  if (!kosmos::io::parse_double(settings["destination"], destination))
    throw usage_error("--destination '" + settings["destination"] + "' is not a finite number");

  auto dev = clone<Space::memory_space>(host);
  validate(Space(), dev);
  if (!o.has("resume"))
    state.reference_energy = energies(dev);  // drift measured from the start of the run
  const std::vector<double>& e0 = state.reference_energy;

  const bool progress = o.is_set("progress");
  std::unique_ptr<kosmos::io::AppendLog> log;
  IntegrateOptions opt = base;
  opt.megno = setting("megno") == "1";
  if (!log_path.empty()) {
    opt.on_log = [&](const LogRecord& r) {
      std::ostringstream line;
      line << std::setprecision(17) << r.time << ' ' << r.system << ' ' << reason_name(r.event);
      for (std::size_t b = 0; b < r.mass.size(); ++b) {
        line << ' ' << r.mass[b];
        for (int c = 0; c < 3; ++c) line << ' ' << r.pos[3 * b + c];
        for (int c = 0; c < 3; ++c) line << ' ' << r.vel[3 * b + c];
      }
      log->write_line(line.str());
    };
  }
  // Everything is checked before a new run's log replaces a file of that name.
  check_options(opt, host.n_bodies());
  for (int s = 0; s < host.n_systems(); ++s)
    if (host.state(s) == state_active && host.time(s) > destination)
      throw usage_error("--destination " + settings["destination"] + " is before system " +
                        std::to_string(s) + "'s time " + fmt(host.time(s), 17) +
                        " (integration runs forward only)");
  IntegrateOptions compare_options;
  HostEnsemble reference;
  if (o.is_set("test") && o.has("reference")) {
    reference = read_ensemble(o.str("reference"));
  } else if (o.is_set("test")) {
    auto s2 = settings;
    s2["integrator"] = o.str("compare-integrator");
    if (o.has("compare-dt")) s2["dt"] = o.str("compare-dt");
    compare_options = options_from(s2);
    check_options(compare_options, host.n_bodies());
  }

  // Integrate in segments (checkpoints, eccentricity samples) from the run's first time.
  double start_time = INFINITY;
  {
    auto t = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dev.time);
    for (int s = 0; s < host.n_systems(); ++s) start_time = std::min(start_time, t(s));
  }
  if (!std::isfinite(start_time)) start_time = 0;
  if (!o.has("resume")) settings["segment-origin"] = fmt(start_time, 17);
  double origin = 0;
  if (!kosmos::io::parse_double(settings["segment-origin"], origin))
    throw kosmos::file_error(o.str("resume") + ": checkpoint setting 'segment-origin' is '" +
                             settings["segment-origin"] + "', not a time");
  // A fixed step too small for the budget does not fail (the run stops at the budget and can be
  // resumed), but say so before it spends the budget: at 1e15 steps that would be days.
  const Method method = opt.integrator.method;
  const bool fixed_step = method != Method::hermite_adaptive && method != Method::rkck_adaptive &&
                          method != Method::ias15;
  const double steps_needed = std::ceil((destination - start_time) / opt.integrator.dt);
  if (fixed_step && steps_needed > double(opt.integrator.max_iterations))
    std::cerr << "kosmos nbody: warning: --dt " << fmt(opt.integrator.dt, 17) << " needs "
              << (std::isfinite(steps_needed) ? fmt(steps_needed) : std::string("over 1e308"))
              << " steps from t = " << fmt(start_time, 17) << " to --destination "
              << fmt(destination, 17) << ", more than --max-iterations "
              << opt.integrator.max_iterations << ": the run will stop short of the destination\n";
  SegmentOptions segments;
  segments.origin = origin;
  segments.checkpoint = setting("checkpoint");
  if (!segments.checkpoint.empty()) {
    double interval = (destination - origin) / 10;
    if (!setting("checkpoint-interval").empty() &&
        (!kosmos::io::parse_double(setting("checkpoint-interval"), interval) || !(interval > 0)))
      throw usage_error("--checkpoint-interval " + setting("checkpoint-interval") +
                        " must be positive");
    if (!(interval > 0)) interval = INFINITY;
    constexpr double max_checkpoints = 1e6;
    if ((destination - start_time) / interval > max_checkpoints)
      throw usage_error("--checkpoint-interval " + fmt(interval, 17) + " would write more than " +
                        fmt(max_checkpoints) + " checkpoints from t = " + fmt(start_time, 17) +
                        " to " + fmt(destination, 17));
    segments.interval = interval;
  }
  // Stability mode follows the largest eccentricity at --eccentricity-samples times.
  const bool stability = settings["stability"] == "1";
  const bool track_eccentricity = stability && !o.has("resume");
  const bool jacobi = frame == ElementFrame::jacobi;
  if (track_eccentricity) {
    const double spacing =
        (destination - start_time) / double(o.integer("eccentricity-samples", 1, 1000000));
    if (spacing > 0) segments.interval = std::min(segments.interval, spacing);
  }
  if (!log_path.empty()) {
    if (!o.has("resume"))
      kosmos::io::write_atomically(log_path, [](std::ostream&) {});  // a new run: a new log
    log = std::make_unique<kosmos::io::AppendLog>(log_path);
  }
  const auto wall0 = std::chrono::steady_clock::now();
  if (progress) {
    opt.on_progress = [&](double done) {
      const double el =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
      std::fprintf(stderr, "\r[kosmos nbody] to t = %.6g: %5.1f%% of systems done, %.1f s   ",
                   destination, 100 * done, el);
    };
  }
  segments.settings = settings;
  // Each rank integrates its chunks of the systems (one rank: the whole ensemble in one chunk),
  // each chunk an ensemble of its own with its share of the run state, and keeps a row per
  // system: the system (system_values), its final energy, whether MEGNO ran, MEGNO <Y>, the
  // Lyapunov rate, the largest eccentricity, the energy merges took out and the merged bodies.
  const int n_systems = host.n_systems();
  const std::size_t width = system_values(host) + 7;
  std::vector<double> rows;
  IntegrationReport total;
  // Several ranks checkpoint in parts (kosmos::nbody::write_checkpoint_start): rank 0 the run's
  // start, then after every segment each rank the systems of its finished chunks and of the
  // chunk under way, so that --resume goes on with any number of ranks.
  const bool checkpoint_in_parts = !segments.checkpoint.empty() && kosmos::cli::ranks() > 1;
  std::string run_id;
  std::vector<std::pair<int, HostEnsemble>> finished_chunks;  // first system, final state
  RunState finished_state;
  if (checkpoint_in_parts) {
    if (opt.megno && state.megno_state.empty())
      throw usage_error(
          "--megno with --checkpoint starts on one process (a checkpoint in parts "
          "cannot hold the MEGNO state of systems not yet integrated): run it "
          "without mpirun; its checkpoints resume under mpirun");
    run_id = std::to_string(kosmos::cli::sum_over_ranks(
        kosmos::cli::is_root()
            ? (long long)std::chrono::system_clock::now().time_since_epoch().count()
            : 0));
    if (kosmos::cli::is_root()) {
      auto start_settings = settings;
      start_settings["log-size"] = "0";
      write_checkpoint_start(segments.checkpoint, Checkpoint{host, state, start_settings},
                             kosmos::cli::ranks(), run_id);
    }
    kosmos::cli::synchronize_ranks();  // no part before its run's start
  }
  auto write_part = [&](const HostEnsemble& current, const RunState& current_state, int first) {
    int n = current.n_systems();
    for (const auto& chunk : finished_chunks) n += chunk.second.n_systems();
    const HostEnsemble systems(n, host.n_bodies(), host.n_attributes());
    std::vector<int> index;
    const auto add = [&](int from, const HostEnsemble& e) {
      for (int s = 0; s < e.n_systems(); ++s) {
        copy_system(e, s, systems, int(index.size()));
        index.push_back(from + s);
      }
    };
    for (const auto& chunk : finished_chunks) add(chunk.first, chunk.second);
    add(first, current);
    RunState part_state = finished_state;
    part_state.append(current_state);
    write_checkpoint_part(segments.checkpoint, kosmos::cli::rank(), run_id, systems, index,
                          part_state);
  };
  auto run_chunk = [&](const kosmos::distributed::IndexRange& range) {
    const int first = int(range.begin), count = int(range.size());
    const DevEnsemble part =
        count == n_systems ? dev : clone<Space::memory_space>(systems_of(host, first, count));
    RunState chunk_state = state.systems(first, count, n_systems);
    IntegrateOptions chunk_options = opt;
    chunk_options.megno_first_system = first;  // each system's deviation wherever it runs
    Kokkos::View<double*, Space::memory_space> max_e;
    if (track_eccentricity) {
      max_e = Kokkos::View<double*, Space::memory_space>("kosmos::nbody::cli::max_e", count);
      update_max_eccentricity(Space(), part, max_e, jacobi);
    }
    SegmentOptions chunk_segments = segments;
    if (checkpoint_in_parts) chunk_segments.checkpoint.clear();  // written as a part below
    chunk_segments.after_segment = [&](const IntegrationReport&,
                                       std::map<std::string, std::string>& stored) {
      if (track_eccentricity) update_max_eccentricity(Space(), part, max_e, jacobi);
      stored["log-size"] = std::to_string(log_path.empty() || !std::filesystem::exists(log_path)
                                              ? 0
                                              : std::filesystem::file_size(log_path));
      if (checkpoint_in_parts) write_part(clone<Kokkos::HostSpace>(part), chunk_state, first);
    };
    const IntegrationReport rep =
        integrate_segments(Space(), part, destination, chunk_options, chunk_state, chunk_segments);
    total.steps += rep.steps;
    total.launches += rep.launches;
    total.unfinished += rep.unfinished;
    const HostEnsemble final_part = clone<Kokkos::HostSpace>(part);
    if (checkpoint_in_parts) {
      finished_chunks.emplace_back(first, final_part);
      finished_state.append(chunk_state);
    }
    const auto e1 = energies(part);
    const auto max_e_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), max_e);
    const bool megno = !rep.megno.empty();
    rows.reserve(rows.size() + std::size_t(count) * width);
    for (int s = 0; s < count; ++s) {
      append_system_values(final_part, s, rows);
      rows.push_back(e1[std::size_t(s)]);
      rows.push_back(megno ? 1.0 : 0.0);
      rows.push_back(megno ? rep.megno[std::size_t(s)] : 0.0);
      rows.push_back(megno ? rep.lyapunov[std::size_t(s)] : 0.0);
      rows.push_back(track_eccentricity ? max_e_host(s) : 0.0);
      rows.push_back(chunk_state.energy_offset.empty() ? 0.0
                                                       : chunk_state.energy_offset[std::size_t(s)]);
      rows.push_back(chunk_state.removed.empty() ? 0.0
                                                 : double(chunk_state.removed[std::size_t(s)]));
    }
  };
  using clock = std::chrono::steady_clock;
  // By default a quarter of a rank's share, but no chunk below what fills the device (its
  // concurrency, one system a thread at the most) unless that leaves a rank without one: a
  // half-filled GPU runs two chunks slower than one of twice the systems.
  long long chunk = o.integer("mpi-chunk", 0, kosmos::cli::Options::largest_integer);
  if (chunk == 0) {
    const long long ranks = kosmos::cli::ranks(), n = n_systems;
    const long long fills = std::min<long long>(Space().concurrency(), (n + ranks - 1) / ranks);
    chunk = std::max((n + 4 * ranks - 1) / (4 * ranks), fills);
  }
  const auto done =
      kosmos::cli::run_chunks(n_systems, kosmos::cli::schedule_from(chunk, 4), run_chunk);
  if (progress) std::fprintf(stderr, "\n");
  const auto chunks_done = clock::now();
  total.steps = kosmos::cli::sum_over_ranks(total.steps);
  total.launches = kosmos::cli::sum_over_ranks(total.launches);
  total.unfinished = int(kosmos::cli::sum_over_ranks(total.unfinished));
  rows = kosmos::cli::gather_rows(done, rows, width, n_systems);
  const auto gathered = clock::now();
  if (!kosmos::cli::is_root()) return 0;  // rank 0 reports and writes

  const HostEnsemble out(n_systems, host.n_bodies(), host.n_attributes());
  const auto n_rows = static_cast<std::size_t>(n_systems);
  std::vector<double> e1(n_rows), energy_offset(n_rows), megno, lyapunov, max_eccentricity;
  std::vector<int> removed(n_rows);
  for (int s = 0; s < n_systems; ++s) {
    const double* row = set_system_values(&rows[std::size_t(s) * width], out, s);
    e1[std::size_t(s)] = row[0];
    if (row[1] != 0) {
      megno.push_back(row[2]);
      lyapunov.push_back(row[3]);
    }
    if (track_eccentricity) max_eccentricity.push_back(row[4]);
    energy_offset[std::size_t(s)] = row[5];
    removed[std::size_t(s)] = int(row[6]);
  }
  const std::string& checkpoint = setting("checkpoint");

  // Report.
  const int n_sys = out.n_systems();
  std::vector<double> rel(n_sys);
  std::map<std::pair<int, int>, int> by_state_and_reason;  // named once per kind, not per system
  for (int s = 0; s < n_sys; ++s) {
    // The energy merges took out is not the integrator's error.
    const double merged_away = energy_offset[std::size_t(s)];
    rel[s] = std::fabs((e1[s] + merged_away - e0[s]) / e0[s]);
    ++by_state_and_reason[{out.state(s), out.reason(s)}];
  }
  std::map<std::string, int> by_reason;
  for (const auto& [kind, count] : by_state_and_reason)
    by_reason[std::string(state_name(kind.first)) +
              (kind.second ? std::string(" (") + reason_name(kind.second) + ")" : "")] += count;
  std::vector<double> finite;
  for (int s = 0; s < n_sys; ++s)
    if (out.state(s) != state_disabled && std::isfinite(rel[s])) finite.push_back(rel[s]);
  // The median by nth_element (a full sort of 1e5-1e6 values is rank 0's serial time); the
  // largest is among the values after it.
  const auto median = finite.begin() + std::ptrdiff_t(finite.size() / 2);
  if (!finite.empty()) std::nth_element(finite.begin(), median, finite.end());
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  std::cout << "kosmos nbody: " << n_sys << " systems of " << out.n_bodies() << " bodies, "
            << settings["integrator"] << ", to t = " << fmt(destination, 10) << " on "
            << Space::name() << "\n";
  std::cout << "  steps " << total.steps << ", launches " << total.launches << ", " << fmt(wall, 4)
            << " s\n";
  if (o.is_set("timings")) {
    const auto seconds = [](clock::time_point a, clock::time_point b) {
      return fmt(std::chrono::duration<double>(b - a).count(), 4);
    };
    std::cerr << "  time (s): rank 0's chunks " << seconds(wall0, chunks_done)
              << ", sums and gather of every rank's rows " << seconds(chunks_done, gathered)
              << ", report " << seconds(gathered, clock::now()) << "\n";
  }
  if (!megno.empty()) {
    std::vector<double> sorted;
    for (int s = 0; s < n_sys; ++s)
      if (out.state(s) != state_disabled) sorted.push_back(megno[s]);
    std::sort(sorted.begin(), sorted.end());
    if (!sorted.empty())
      std::cout << "  MEGNO <Y>: median " << fmt(sorted[sorted.size() / 2], 4) << ", min "
                << fmt(sorted.front(), 4) << ", max " << fmt(sorted.back(), 4)
                << " (2: quasi-periodic)\n";
  }
  if (!finite.empty())
    std::cout << "  |dE/E|: median " << fmt(*median, 3) << ", max "
              << fmt(*std::max_element(median, finite.end()), 3) << "\n";
  for (const auto& [k, v] : by_reason) std::cout << "  " << v << " system(s) " << k << "\n";
  const int shown = std::min(n_sys, 10);
  // Fixed-width columns, each after a separator, so that wide values never run together.
  auto row = [](const std::string& system, const std::string& time, const std::string& error,
                const std::string& state, const std::string& reason) {
    std::cout << "  " << std::setw(7) << system << ' ' << std::setw(22) << time << ' '
              << std::setw(10) << error << "  " << std::left << std::setw(8) << state << ' '
              << reason << std::right << "\n";
  };
  row("system", "time", "|dE/E|", "state", "reason");
  for (int s = 0; s < shown; ++s)
    row(std::to_string(s), fmt(out.time(s), 15),
        e0[s] == 0 ? "n/a" : fmt(rel[s], 3),  // E0 = 0: no relative error
        state_name(out.state(s)), reason_name(out.reason(s)));
  if (n_sys > shown)
    std::cout << "  ... (" << n_sys - shown << " more; --report FILE writes them all)\n";
  if (!setting("report").empty()) {
    kosmos::io::write_atomically(setting("report"), [&](std::ostream& r) {
      r << "# system time energy0 energy rel_energy_error state reason"
        << (megno.empty() ? "" : " megno lyapunov_time") << "\n"
        << std::setprecision(17);
      for (int s = 0; s < n_sys; ++s) {
        r << s << ' ' << out.time(s) << ' ' << e0[s] << ' ' << e1[s] << ' ' << rel[s] << ' '
          << state_name(out.state(s)) << ' ' << reason_name(out.reason(s));
        if (!megno.empty())
          r << ' ' << megno[s] << ' ' << (lyapunov[s] > 0 ? 1 / lyapunov[s] : INFINITY);
        r << '\n';
      }
    });
  }
  if (!setting("output").empty()) {
    write_ensemble(setting("output"), out);
    // Ensemble files have no removed bodies: a merged-away body stays as a massless body.
    int merged_away = 0;
    for (int mask : removed)
      for (; mask != 0; mask &= mask - 1) ++merged_away;
    if (merged_away > 0)
      std::cerr
          << "kosmos nbody: warning: " << merged_away << " bod" << (merged_away == 1 ? "y" : "ies")
          << " merged into others; " << setting("output")
          << " keeps them as massless bodies where they merged (with --radius, read back they "
             "collide at once): drop them before integrating the file on\n";
  }
  if (!setting("elements-output").empty()) write_elements(setting("elements-output"), out, frame);
  if (o.has("stability-output")) {
    StabilityOutcomes outcomes;
    outcomes.max_eccentricity = max_eccentricity;
    outcomes.megno = megno;
    for (double l : lyapunov) outcomes.lyapunov_time.push_back(l > 0 ? 1 / l : INFINITY);
    write_stability_table(o.str("stability-output"), posterior, systems, out, outcomes);
  }
  if (stability) {
    const auto st = summarize_stability(out, destination);
    std::cout << "stability: " << st.survived << " of " << st.samples
              << " samples survive to t = " << fmt(destination, 10) << " (fraction "
              << fmt(st.fraction(), 4) << "); " << st.close_encounters
              << " close encounter(s) within " << settings["close-encounter"] << " Hill radii, "
              << st.ejections << " ejection(s) beyond " << fmt(std::stod(settings["ejection"]), 4)
              << ", " << st.collisions << " collision(s), " << st.other_stops << " other stop(s), "
              << st.failures << " numerical failure(s), " << st.unfinished << " unfinished\n";
  }

  if (total.unfinished > 0)
    std::cout << "  " << total.unfinished
              << " system(s) short of the destination: the iteration budget (--max-iterations) "
              << "is used up"
              << (checkpoint.empty() ? "" : "; continue with --resume " + checkpoint) << "\n";
  // Disabled systems (bad input, numerical failures) fail the run unless allowed; stopped ones
  // (close encounters, ejections, collisions: unstable samples) are results.
  int failed = 0;
  for (int s = 0; s < n_sys; ++s) failed += out.state(s) == state_disabled;
  const bool failure = failed > 0 && setting("allow-failures") != "1";
  if (failure)
    std::cerr << "kosmos nbody: " << failed << " of " << n_sys
              << " system(s) failed (disabled: bad input or a numerical failure; reasons above): "
                 "exit status 1 "
                 "(--allow-failures accepts them)\n";
  if (!o.is_set("test")) return total.unfinished > 0 || failure ? 1 : 0;
  // Test mode (Section 5.2.1).
  std::string against;
  if (o.has("reference")) {
    against = "reference " + o.str("reference");
  } else {
    auto dev2 = clone<Space::memory_space>(host);
    integrate(Space(), dev2, destination, compare_options);
    reference = clone<Kokkos::HostSpace>(dev2);
    against = "integrator " + o.str("compare-integrator") + " (dt " +
              (o.has("compare-dt") ? o.str("compare-dt") : settings["dt"]) + ")";
  }
  const Comparison c = compare(out, reference);
  const bool pass = c.pos <= o.number("pos-threshold") && c.vel <= o.number("vel-threshold") &&
                    c.time <= o.number("time-threshold");
  std::cout << "test against " << against << ": max |dx| " << fmt(c.pos, 3) << ", max |dv| "
            << fmt(c.vel, 3) << ", max |dt| " << fmt(c.time, 3) << " (worst system "
            << c.worst_system << "): " << (pass ? "PASS" : "FAIL") << "\n";
  return pass && !failure ? 0 : 1;
}

const kosmos::cli::CommandRegistration registration{
    {"nbody", "ensembles of few-body systems (Swarm-NG): integrate, log, test", &run_nbody}};
}  // namespace
