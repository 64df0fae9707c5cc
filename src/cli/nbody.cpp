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

// Attributes the CLI appends to the user's (kept across checkpoints, stripped from the output):
// the initial energy and the steps taken so far.
constexpr int internal_attributes = 2;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
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

// The integrator settings (also stored in checkpoints).
std::map<std::string, std::string> settings_from(const kosmos::cli::Options& o) {
  std::map<std::string, std::string> m;
  for (const char* k : {"integrator", "dt", "tau", "tolerance", "destination", "steps-per-launch", "max-iterations",
                        "energy-limit", "radius", "close-encounter", "ejection", "log-interval", "corrector",
                        "coordinates", "epsilon", "on-collision"})
    m[k] = o.str(k);
  m["crossing-orbits"] = o.is_set("crossing-orbits") ? "1" : "0";
  m["stability"] = o.has("stability") ? "1" : "0";
  return m;
}

// Under several ranks a checkpoint comes in parts: FILE holds the ensemble as the run started, the
// number of parts and a run id; FILE.part<r> the systems rank r has integrated so far (at the end
// of their latest segment), each with its index in the ensemble as one more attribute. A resumed
// run, on any number of ranks, puts the parts of the same run over FILE.
std::string part_path(const std::string& checkpoint, int part) {
  return checkpoint + ".part" + std::to_string(part);
}

void overlay_checkpoint_parts(const std::string& checkpoint,
                              const std::map<std::string, std::string>& meta, HostEnsemble& host) {
  const auto parts = meta.find("parts");
  if (parts == meta.end()) return;  // one process wrote it whole
  const int n_parts = int(kosmos::cli::parse_integer("parts", parts->second, 1, 1 << 24));
  for (int k = 0; k < n_parts; ++k) {
    const std::string path = part_path(checkpoint, k);
    if (!std::filesystem::exists(path)) continue;  // that rank had not finished a segment
    std::map<std::string, std::string> part_meta;
    const HostEnsemble part = read_binary(path, &part_meta);
    if (part_meta["run"] != meta.at("run")) continue;  // left by an earlier run with more ranks
    const int index = host.n_attributes();
    if (part.n_bodies() != host.n_bodies() || part.n_attributes() != index + 1)
      throw kosmos::file_error(path + ": a checkpoint part of " + std::to_string(part.n_bodies()) +
                               " bodies and " + std::to_string(part.n_attributes()) +
                               " attributes, expected " + std::to_string(host.n_bodies()) +
                               " and " + std::to_string(index + 1));
    for (int s = 0; s < part.n_systems(); ++s) {
      const double g = part.attributes(s, index);
      if (!(g >= 0 && g < host.n_systems() && g == std::floor(g)))
        throw kosmos::file_error(path + ": system " + std::to_string(s) + " names system " +
                                 fmt(g, 17) + " of an ensemble of " +
                                 std::to_string(host.n_systems()));
      copy_system(part, s, host, int(g));
    }
  }
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
    throw usage_error("--radius '" + text + "': give 1 to " + std::to_string(max_bodies) + " radii");
  for (int b = 0; b < max_bodies; ++b) monitor.radius[b] = radii.size() == 1 ? radii[0] : b < int(radii.size()) ? radii[b] : 0.0;
}

IntegrateOptions options_from(const std::map<std::string, std::string>& m) {
  auto num = [&](const char* k) {
    double v = 0;
    if (!kosmos::io::parse_double(m.at(k), v)) throw usage_error(std::string("--") + k + " '" + m.at(k) + "' is not a finite number");
    return v;
  };
  auto integer = [&](const char* k, long long min_value, long long max_value) {
    return kosmos::cli::parse_integer(k, m.at(k), min_value, max_value);
  };
  auto nonnegative = [&](const char* k, const char* zero_means) {
    const double v = num(k);
    if (v < 0) throw usage_error(std::string("--") + k + " " + m.at(k) + " must be >= 0 (0: " + zero_means + ")");
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
  o.integrator.steps_per_launch = int(integer("steps-per-launch", 1, std::numeric_limits<int>::max()));
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
    o.integrator.coordinates = c == "jacobi"                    ? WHCoordinates::jacobi
                               : c == "democratic_heliocentric" ? WHCoordinates::democratic_heliocentric
                                                                : WHCoordinates::whds;
  }
  return o;
}

ElementFrame frame_from(const kosmos::cli::Options& o) {
  try {
    return element_frame_from_name(o.str("frame"));
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
  setup.frame = frame_from(o);
  PosteriorSystems systems;
  try {
    systems = systems_from_rv_posterior(posterior, setup);
  } catch (const kosmos::invalid_input& e) {
    throw usage_error(std::string(e.what()) + (o.has("stellar-mass") ? "" : " (--stellar-mass M sets one)"));
  }
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
            << (o.has("stellar-mass") ? "from --stellar-mass " : "from the posterior ") << fmt(*lo, 6)
            << (*hi > *lo ? " to " + fmt(*hi, 6) : std::string()) << "; planets by period (body 1, 2, ...):";
  for (const auto& [name, count] : orders) std::cout << ' ' << name << " in " << count;
  std::cout << "\n";
  return systems;
}

void write_elements(const std::string& path, const HostEnsemble& ens, ElementFrame frame) {
  kosmos::io::write_atomically(path, [&](std::ostream& out) {
    out << "# kosmos nbody orbital elements (" << (frame == ElementFrame::jacobi ? "jacobi" : "heliocentric")
        << "; G = 1, AU, solar masses, year = 2 pi; angles in degrees)\n"
        << "# system planet mass a e inc Omega omega M state\n"
        << std::setprecision(17);
    const double deg = 180 / M_PI;
    for (int s = 0; s < ens.n_systems(); ++s) {
      if (ens.state(s) == state_disabled) continue;  // no meaningful elements
      const auto planets = system_elements(ens, s, frame);
      for (std::size_t k = 0; k < planets.size(); ++k) {
        const auto& el = planets[k];
        out << s << ' ' << k + 1 << ' ' << ens.m(s, int(k) + 1) << ' ' << el.a << ' ' << el.e << ' ' << el.inc * deg
            << ' ' << el.Omega * deg << ' ' << el.omega * deg << ' ' << el.M * deg << ' ' << state_name(ens.state(s))
            << '\n';
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
    throw kosmos::invalid_input("kosmos nbody --test: the reference has " + std::to_string(b.n_systems()) + " systems of " +
                                std::to_string(b.n_bodies()) + " bodies, the run " + std::to_string(a.n_systems()) +
                                " of " + std::to_string(a.n_bodies()));
  // |x - y|, where a NaN on one side only is infinitely far (std::max would drop it) and NaN on
  // both sides agrees (a system disabled in both).
  auto difference = [](double x, double y) {
    if (x == y) return 0.0;
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y) ? 0.0 : double(INFINITY);
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

int run_nbody(const std::vector<std::string>& args) {
  kosmos::cli::Options o("nbody",
                         "Integrate an ensemble of few-body systems (G = 1; AU, solar masses, year = 2 pi) with\n"
                         "Hermite, Runge-Kutta Cash-Karp, mixed-variable symplectic or Verlet, on the default Kokkos\n"
                         "device. The ensemble comes from --input (text, binary or HDF5 ensemble file) or is generated as in\n"
                         "Dindar et al. (2013) Section 5.1 (--generate). Prints per-system energy errors and stop reasons.\n"
                         "--test compares the result with --compare-integrator or with --reference final conditions.\n"
                         "--stability FILE integrates every posterior sample of `kosmos rv` (P in days, K in m/s; planets\n"
                         "ordered by period per sample, the posterior's stellar mass, masses from K at --inclination,\n"
                         "Jacobi elements) and reports the fraction that reaches --destination without a close encounter,\n"
                         "ejection or failure; --stability-output joins each sample with its outcome. Time unit: 58.1324\n"
                         "days (1/k, Gauss's constant), so one year is about 2 pi.\n"
                         "Exit status 1 when a system was disabled (unless --allow-failures), a test failed or the\n"
                         "iteration budget ran out; 2 for a usage error.\n"
                         "States and reasons in the report: active; inactive (close_encounter, ejection, crossing_orbits,\n"
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
      .option("integrator", "NAME",
              "hermite, hermite_adaptive, rkck, rkck_adaptive, mvs, verlet, whfast, ias15",
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
            "ias15: integrate the variational equations and report MEGNO <Y> (2: quasi-periodic, "
            "growing: "
            "chaotic) and the Lyapunov time per system (in --report and --stability-output; no "
            "--checkpoint)")
      .option("tau", "TAU", "hermite_adaptive step scale (dt = tau [sum |j|^2/|a|^2]^-1/2)",
              "0.017")
      .option("tolerance", "EPS",
              "rkck_adaptive: largest step error max(|dx|/max|x|, |dv|/max|v|) (Swarm-NG's "
              "error_tolerance is its square)",
              "1e-12")
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
      .option("checkpoint", "FILE", "write a binary checkpoint every --checkpoint-interval", "",
              true)
      .option("checkpoint-interval", "T", "time between checkpoints (default: destination/10)", "",
              true)
      .option("resume", "FILE", "continue an interrupted run from its checkpoint", "", true)
      .option("mpi-chunk", "N",
              "under mpirun: systems per chunk of the ranks' work queue (0: a quarter of "
              "each rank's share)",
              "0")
      .flag("progress", "print progress to stderr")
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

  // Ensemble and settings.
  std::map<std::string, std::string> settings = settings_from(o);
  HostEnsemble host;
  RVPosterior posterior;      // stability mode
  PosteriorSystems systems;   // stability mode
  std::vector<double> e0;
  std::string log_path = o.str("log");
  int user_attributes = 0;
  // What the run reads is not what it writes (a resumed run appends to its checkpoint's log and
  // may rewrite the checkpoint it resumes from).
  auto path_of = [&](const char* name) { return o.has(name) ? o.str(name) : std::string(); };
  const std::vector<kosmos::cli::FileArgument> inputs = {
      {"input", path_of("input")}, {"stability", path_of("stability")}, {"reference", path_of("reference")}};
  auto check_files = [&](const std::string& log) {
    auto read = inputs;
    if (o.has("resume")) read.push_back({"resume", o.str("resume")});
    std::vector<kosmos::cli::FileArgument> written = {{"output", path_of("output")},
                                                       {"elements-output", path_of("elements-output")},
                                                       {"report", path_of("report")},
                                                       {"stability-output", path_of("stability-output")},
                                                       {"log", log}};
    kosmos::cli::check_output_files(read, written);
    written.push_back({"checkpoint", path_of("checkpoint")});
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
        throw usage_error(std::string("--resume continues the checkpoint's run: it takes no --") + conflicting +
                          (std::string(conflicting) == "log"                ? " (the run appends to its own log)"
                           : std::string(conflicting) == "stability-output" ? " (the table needs the posterior)"
                                                                            : ""));
    const std::string resume = o.str("resume");
    std::map<std::string, std::string> meta;
    host = read_binary(resume, &meta);
    if (!meta.count("kosmos-nbody-checkpoint")) throw usage_error(resume + " is not a kosmos nbody checkpoint");
    overlay_checkpoint_parts(resume, meta, host);
    auto meta_integer = [&](const std::string& key, long long max_value) {
      const auto it = meta.find(key);
      if (it != meta.end()) try {
          return kosmos::cli::parse_integer(key, it->second, 0, max_value);
        } catch (const usage_error&) {  // a damaged checkpoint, not a bad option: named below
        }
      throw kosmos::file_error(resume + ": checkpoint entry '" + key + "' is " +
                               (it == meta.end() ? "missing"
                                                 : "'" + it->second + "', not an integer in 0.." + std::to_string(max_value)));
    };
    // The checkpoint's settings, except those given again on this command line.
    auto given = [&](const std::string& key) {
      for (const auto& a : args)
        if (a == "--" + key || a.rfind("--" + key + "=", 0) == 0) return true;
      return false;
    };
    for (auto& [k, v] : settings)
      if (meta.count(k) && !given(k)) v = meta[k];
    user_attributes = int(meta_integer("user-attributes", std::numeric_limits<int>::max()));
    if (host.n_attributes() != user_attributes + internal_attributes)
      throw usage_error(o.str("resume") + " is a checkpoint of another kosmos version (" +
                        std::to_string(host.n_attributes() - user_attributes) + " internal attributes, expected " +
                        std::to_string(internal_attributes) + ")");
    if (meta.count("log")) log_path = meta["log"];
    if (!log_path.empty() && kosmos::cli::ranks() > 1)
      throw usage_error(
          resume +
          " belongs to a run with a --log, which one process writes: resume it without mpirun");
    check_files(log_path);
    if (!log_path.empty()) {
      // Drop whatever the interrupted run appended after its last checkpoint: only ever shorten,
      // and only a file at least as long as the log was then (else it is not this run's log).
      const auto log_size = std::uintmax_t(meta_integer("log-size", kosmos::cli::Options::largest_integer));
      if (std::filesystem::exists(log_path)) {
        const auto now = std::filesystem::file_size(log_path);
        if (now < log_size)
          throw kosmos::file_error(resume + ": its log " + log_path + " has " + std::to_string(now) +
                                   " bytes, fewer than the " + std::to_string(log_size) +
                                   " it had at the checkpoint: not this run's log (move it back or away)");
        std::filesystem::resize_file(log_path, log_size);
      }
    }
  } else {
    HostEnsemble user;
    if (int(o.has("input")) + int(o.has("generate")) + int(o.has("stability")) != 1)
      throw usage_error("give exactly one of --input FILE, --generate N and --stability FILE");
    if (o.has("stability-output") && !o.has("stability"))
      throw usage_error("--stability-output joins posterior samples with their outcomes: it needs --stability FILE");
    if (o.has("stability")) {
      try {
        posterior = read_rv_posterior(o.str("stability"));
      } catch (const kosmos::invalid_input& e) {
        throw usage_error(e.what());
      }
      systems = stability_systems(o, posterior, settings);
      user = systems.ensemble;
    } else if (o.has("input")) {
      user = read_ensemble(o.str("input"));
    } else {
      user = generate_planetary_ensemble(int(o.integer("generate", 1)), int(o.integer("bodies", 2)),
                                         o.number("planet-mass"), o.number("alpha"),
                                         (unsigned long long)o.integer("seed", 0, kosmos::cli::Options::largest_integer));
    }
    user_attributes = user.n_attributes();
    host = HostEnsemble(user.n_systems(), user.n_bodies(), user_attributes + internal_attributes);
    copy_bodies_and_states(host, user);
    for (int s = 0; s < user.n_systems(); ++s)
      for (int k = 0; k < user_attributes; ++k) host.attributes(s, k) = user.attributes(s, k);
  }
  const IntegrateOptions base = options_from(settings);
  if (o.is_set("megno") && (o.has("checkpoint") || o.has("resume")))
    throw usage_error("--megno runs without --checkpoint and --resume (checkpoints do not keep the variational state)");
  if (base.monitor.merging() && o.has("checkpoint"))
    throw usage_error("--on-collision merge runs without --checkpoint (checkpoints do not keep what merged)");
  double destination = 0;
  if (!kosmos::io::parse_double(settings["destination"], destination))
    throw usage_error("--destination '" + settings["destination"] + "' is not a finite number");

  auto dev = clone<Space::memory_space>(host);
  validate(Space(), dev);
  // The chunks of several ranks start from `host`: with the systems validate() disabled.
  Kokkos::deep_copy(host.state, dev.state);
  Kokkos::deep_copy(host.reason, dev.reason);
  if (!o.has("resume")) {
    const auto e = energies(dev);
    for (int s = 0; s < host.n_systems(); ++s) host.attributes(s, user_attributes) = e[s];
    Kokkos::deep_copy(dev.attributes, host.attributes);
  }
  e0.resize(host.n_systems());
  std::vector<long long> iterations_used(host.n_systems());
  for (int s = 0; s < host.n_systems(); ++s) {
    e0[s] = host.attributes(s, user_attributes);
    iterations_used[s] = (long long)host.attributes(s, user_attributes + 1);
  }

  const bool progress = o.is_set("progress");
  std::unique_ptr<kosmos::io::AppendLog> log;
  IntegrateOptions opt = base;
  opt.megno = o.is_set("megno");
  opt.reference_energy = e0;  // the energy check measures drift from the start of the run
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
      throw usage_error("--destination " + settings["destination"] + " is before system " + std::to_string(s) +
                        "'s time " + fmt(host.time(s), 17) + " (integration runs forward only)");
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

  // Integrate in segments, checkpointing between them.
  double start_time = INFINITY;
  {
    auto t = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dev.time);
    for (int s = 0; s < host.n_systems(); ++s) start_time = std::min(start_time, t(s));
  }
  if (!std::isfinite(start_time)) start_time = 0;
  // A fixed step too small for the budget does not fail (the run stops at the budget and can be
  // resumed), but say so before it spends the budget: at 1e15 steps that would be days.
  const Method method = opt.integrator.method;
  const bool fixed_step = method != Method::hermite_adaptive && method != Method::rkck_adaptive &&
                          method != Method::ias15;
  const double steps_needed = std::ceil((destination - start_time) / opt.integrator.dt);
  if (fixed_step && steps_needed > double(opt.integrator.max_iterations))
    std::cerr << "kosmos nbody: warning: --dt " << fmt(opt.integrator.dt, 17) << " needs "
              << (std::isfinite(steps_needed) ? fmt(steps_needed) : std::string("over 1e308"))
              << " steps from t = " << fmt(start_time, 17) << " to --destination " << fmt(destination, 17)
              << ", more than --max-iterations " << opt.integrator.max_iterations
              << ": the run will stop short of the destination\n";
  const std::string checkpoint = o.has("checkpoint") ? o.str("checkpoint") : std::string();
  double interval = destination - start_time;
  if (!checkpoint.empty()) {
    interval = o.has("checkpoint-interval") ? o.number("checkpoint-interval") : (destination - start_time) / 10;
    if (o.has("checkpoint-interval") && !(interval > 0))
      throw usage_error("--checkpoint-interval " + o.str("checkpoint-interval") + " must be positive");
    if (!(interval > 0)) interval = destination - start_time;
    constexpr double max_checkpoints = 1e6;
    if ((destination - start_time) / interval > max_checkpoints)
      throw usage_error("--checkpoint-interval " + fmt(interval, 17) + " would write more than " +
                        fmt(max_checkpoints) + " checkpoints from t = " + fmt(start_time, 17) + " to " +
                        fmt(destination, 17));
  }
  // Stability mode follows the largest eccentricity at --eccentricity-samples times: segments no
  // longer than that spacing, whole steps of a fixed-step method (no landing step in between).
  const bool stability = settings["stability"] == "1";
  const bool track_eccentricity = stability && !o.has("resume");
  if (track_eccentricity) {
    const double samples = double(o.integer("eccentricity-samples", 1, 1000000));
    double spacing = (destination - start_time) / samples;
    if (fixed_step) spacing = std::max(1.0, std::floor(spacing / opt.integrator.dt)) * opt.integrator.dt;
    if (spacing > 0) interval = std::min(interval, spacing);
  }
  if (kosmos::cli::ranks() > 1) {
    // One process owns these files; each rank runs only its share of the systems.
    if (o.has("log"))
      throw usage_error(
          "--log is written by one process: run it without mpirun (or with one rank)");
  }
  if (!log_path.empty()) {
    if (!o.has("resume")) kosmos::io::write_atomically(log_path, [](std::ostream&) {});  // a new run: a new log
    log = std::make_unique<kosmos::io::AppendLog>(log_path);
  }
  const bool jacobi_eccentricity = frame_from(o) == ElementFrame::jacobi;
  const auto wall0 = std::chrono::steady_clock::now();
  IntegrationReport total;
  // What a chunk of systems hands back, a row per system: bodies (m, x, v), time, time_lo, step,
  // state, reason, attributes, final energy, MEGNO and Lyapunov rate (if any), largest
  // eccentricity, energy merged away, merged bodies.
  const int n_bodies = host.n_bodies(), n_attributes = host.n_attributes();
  const std::size_t width = std::size_t(7 * n_bodies + 5 + n_attributes + 7);
  std::vector<double> rows;
  std::vector<int> finished;  // the ensemble index of each system in `rows`
  // A row's state into system s of `ens`; returns what follows the attributes.
  auto unpack_state = [&](const double* row, const HostEnsemble& ens, int s) {
    for (int b = 0; b < n_bodies; ++b, row += 7) {
      ens.m(s, b) = row[0];
      for (int c = 0; c < 3; ++c) ens.x(s, b, c) = row[1 + c];
      for (int c = 0; c < 3; ++c) ens.v(s, b, c) = row[4 + c];
    }
    ens.time(s) = row[0];
    ens.time_lo(s) = row[1];
    ens.step(s) = row[2];
    ens.state(s) = int(row[3]);
    ens.reason(s) = int(row[4]);
    row += 5;
    for (int k = 0; k < n_attributes; ++k) ens.attributes(s, k) = *row++;
    return row;
  };
  auto checkpoint_meta = [&] {
    auto meta = settings;
    meta["kosmos-nbody-checkpoint"] = "1";
    meta["user-attributes"] = std::to_string(user_attributes);
    meta["log"] = log_path.empty()
                      ? log_path
                      : std::filesystem::absolute(log_path).string();  // --resume from anywhere
    meta["log-size"] = std::to_string(log_path.empty() || !std::filesystem::exists(log_path)
                                          ? 0
                                          : std::filesystem::file_size(log_path));
    return meta;
  };
  // Several ranks: rank 0 writes the ensemble as it starts, then each rank its part (see
  // overlay_checkpoint_parts); one process: the whole ensemble.
  const bool checkpoint_in_parts = !checkpoint.empty() && kosmos::cli::ranks() > 1;
  std::string run_id;
  if (checkpoint_in_parts) {
    run_id = std::to_string(kosmos::cli::sum_over_ranks(
        kosmos::cli::is_root() ? std::chrono::system_clock::now().time_since_epoch().count() : 0));
    if (kosmos::cli::is_root()) {
      auto meta = checkpoint_meta();
      meta["parts"] = std::to_string(kosmos::cli::ranks());
      meta["run"] = run_id;
      write_binary(checkpoint, host, meta);
    }
    kosmos::cli::synchronize_ranks();  // no part before its run's start
  }
  auto write_checkpoint = [&](const HostEnsemble& snapshot, int first) {
    if (!checkpoint_in_parts) return write_binary(checkpoint, snapshot, checkpoint_meta());
    const int done = int(finished.size());
    HostEnsemble part(done + snapshot.n_systems(), n_bodies, n_attributes + 1);
    for (int k = 0; k < done; ++k) {
      unpack_state(&rows[std::size_t(k) * width], part, k);
      part.attributes(k, n_attributes) = finished[std::size_t(k)];
    }
    for (int s = 0; s < snapshot.n_systems(); ++s) {
      copy_system(snapshot, s, part, done + s);
      part.attributes(done + s, n_attributes) = first + s;
    }
    write_binary(part_path(checkpoint, kosmos::cli::rank()), part,
                 {{"run", run_id}, {"part", std::to_string(kosmos::cli::rank())}});
  };
  // The systems [first, first + count) through every segment; one rank's chunk is all of them.
  auto run_chunk = [&](const kosmos::distributed::IndexRange& range) {
    const int first = int(range.begin), count = int(range.size());
    auto part = count == host.n_systems()
                    ? dev
                    : clone<Space::memory_space>(systems_of(host, first, count));
    IntegrateOptions chunk_opt = opt;
    chunk_opt.megno_first_system = first;
    chunk_opt.reference_energy.assign(e0.begin() + first, e0.begin() + first + count);
    std::vector<long long> used(iterations_used.begin() + first,
                                iterations_used.begin() + first + count);
    Kokkos::View<double*, Space::memory_space> max_e;
    if (track_eccentricity) {
      max_e = Kokkos::View<double*, Space::memory_space>("kosmos::nbody::cli::max_e", count);
      update_max_eccentricity(Space(), part, max_e, jacobi_eccentricity);
    }
    std::vector<double> megno, lyapunov;  // MEGNO runs: at the end of the last segment
    double t = start_time;
    do {
      // At least one representable time further: t + interval rounds to t where the interval is
      // below the spacing of doubles at t.
      double segment_end = std::min(destination, t + (interval > 0 ? interval : 0));
      if (!(segment_end > t)) segment_end = std::min(destination, std::nextafter(t, INFINITY));
      if (progress) {
        chunk_opt.on_progress = [&](double done) {
          const double el =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
          std::fprintf(
              stderr,
              "\r[kosmos nbody] segment to t = %.6g of %.6g: %5.1f%% of systems done, %.1f s   ",
              segment_end, destination, 100 * done, el);
        };
      }
      chunk_opt.prior_iterations = used;  // one budget for the whole run
      const auto rep = integrate(Space(), part, segment_end, chunk_opt);
      used = rep.iterations;
      if (max_e.extent(0) > 0) update_max_eccentricity(Space(), part, max_e, jacobi_eccentricity);
      // What merged so far (empty unless merging) carries over to the next segment.
      chunk_opt.energy_offset = rep.energy_offset;
      chunk_opt.removed = rep.removed;
      chunk_opt.radii = rep.radii;
      chunk_opt.megno_state = rep.megno_state;  // MEGNO runs go on from where the segment ended
      megno = rep.megno;
      lyapunov = rep.lyapunov;
      total.launches += rep.launches;
      total.steps += rep.steps;
      total.seconds += rep.seconds;
      total.unfinished += rep.unfinished;
      t = segment_end;
      if (!checkpoint.empty()) {
        auto snapshot = clone<Kokkos::HostSpace>(part);
        for (int s = 0; s < snapshot.n_systems(); ++s)
          snapshot.attributes(s, user_attributes + 1) = double(used[s]);
        write_checkpoint(snapshot, first);
      }
      if (rep.unfinished > 0) break;  // iteration budget used up
    } while (t < destination);
    const auto final_part = clone<Kokkos::HostSpace>(part);
    const auto e1 = energies(part);
    const auto eccentricity = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), max_e);
    for (int s = 0; s < count; ++s) {
      for (int b = 0; b < n_bodies; ++b) {
        rows.push_back(final_part.m(s, b));
        for (int c = 0; c < 3; ++c) rows.push_back(final_part.x(s, b, c));
        for (int c = 0; c < 3; ++c) rows.push_back(final_part.v(s, b, c));
      }
      for (double v : {final_part.time(s), final_part.time_lo(s), final_part.step(s),
                       double(final_part.state(s)), double(final_part.reason(s))})
        rows.push_back(v);
      for (int k = 0; k < n_attributes; ++k)
        rows.push_back(k == user_attributes + 1 ? double(used[s]) : final_part.attributes(s, k));
      rows.push_back(e1[s]);
      rows.push_back(megno.empty() ? 0.0 : 1.0);
      rows.push_back(megno.empty() ? 0.0 : megno[s]);
      rows.push_back(megno.empty() ? 0.0 : lyapunov[s]);
      rows.push_back(eccentricity.extent(0) > 0 ? eccentricity(s) : 0.0);
      rows.push_back(chunk_opt.energy_offset.empty() ? 0.0 : chunk_opt.energy_offset[s]);
      rows.push_back(
          chunk_opt.removed.empty() ? 0.0 : double(chunk_opt.removed[s]));  // a bit mask below 2^32
      finished.push_back(first + s);
    }
  };
  const std::int64_t n_all = host.n_systems();
  const auto done = kosmos::cli::run_chunks(
      n_all,
      kosmos::cli::schedule_from(o.integer("mpi-chunk", 0, kosmos::cli::Options::largest_integer),
                                 4),
      run_chunk);
  if (progress) std::fprintf(stderr, "\n");
  total.steps = kosmos::cli::sum_over_ranks(total.steps);
  total.launches = kosmos::cli::sum_over_ranks(total.launches);
  total.unfinished = int(kosmos::cli::sum_over_ranks(total.unfinished));
  rows = kosmos::cli::gather_rows(done, rows, width, n_all);
  if (!kosmos::cli::is_root()) return 0;  // rank 0 reports and writes

  HostEnsemble final_host(host.n_systems(), n_bodies, n_attributes);
  std::vector<double> e1(n_all), megno, lyapunov, max_eccentricity;
  opt.energy_offset.assign(std::size_t(n_all), 0.0);
  opt.removed.assign(std::size_t(n_all), 0);
  for (int s = 0; s < n_all; ++s) {
    const double* row = unpack_state(&rows[std::size_t(s) * width], final_host, s);
    e1[s] = row[0];
    if (row[1] != 0) {
      megno.push_back(row[2]);
      lyapunov.push_back(row[3]);
    }
    if (track_eccentricity) max_eccentricity.push_back(row[4]);
    opt.energy_offset[std::size_t(s)] = row[5];
    opt.removed[std::size_t(s)] = int(row[6]);
  }
  // Strip the internal energy column for the user's output.
  HostEnsemble out(final_host.n_systems(), final_host.n_bodies(), user_attributes);
  copy_bodies_and_states(out, final_host);
  for (int s = 0; s < out.n_systems(); ++s)
    for (int k = 0; k < user_attributes; ++k) out.attributes(s, k) = final_host.attributes(s, k);

  // Report.
  const int n_sys = out.n_systems();
  std::vector<double> rel(n_sys);
  std::map<std::string, int> by_reason;
  for (int s = 0; s < n_sys; ++s) {
    // The energy merges took out is not the integrator's error.
    const double merged_away = opt.energy_offset.empty() ? 0.0 : opt.energy_offset[s];
    rel[s] = std::fabs((e1[s] + merged_away - e0[s]) / e0[s]);
    ++by_reason[std::string(state_name(out.state(s))) + (out.reason(s) ? std::string(" (") + reason_name(out.reason(s)) + ")" : "")];
  }
  std::vector<double> finite;
  for (int s = 0; s < n_sys; ++s)
    if (out.state(s) != state_disabled && std::isfinite(rel[s])) finite.push_back(rel[s]);
  std::sort(finite.begin(), finite.end());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  std::cout << "kosmos nbody: " << n_sys << " systems of " << out.n_bodies() << " bodies, " << settings["integrator"]
            << ", to t = " << fmt(destination, 10) << " on " << Space::name() << "\n";
  std::cout << "  steps " << total.steps << ", launches " << total.launches << ", " << fmt(wall, 4) << " s\n";
  if (!megno.empty()) {
    std::vector<double> sorted;
    for (int s = 0; s < n_sys; ++s)
      if (out.state(s) != state_disabled) sorted.push_back(megno[s]);
    std::sort(sorted.begin(), sorted.end());
    if (!sorted.empty())
      std::cout << "  MEGNO <Y>: median " << fmt(sorted[sorted.size() / 2], 4) << ", min " << fmt(sorted.front(), 4)
                << ", max " << fmt(sorted.back(), 4) << " (2: quasi-periodic)\n";
  }
  if (!finite.empty())
    std::cout << "  |dE/E|: median " << fmt(finite[finite.size() / 2], 3) << ", max " << fmt(finite.back(), 3) << "\n";
  for (const auto& [k, v] : by_reason) std::cout << "  " << v << " system(s) " << k << "\n";
  const int shown = std::min(n_sys, 10);
  // Fixed-width columns, each after a separator, so that wide values never run together.
  auto row = [](const std::string& system, const std::string& time, const std::string& error,
                const std::string& state, const std::string& reason) {
    std::cout << "  " << std::setw(7) << system << ' ' << std::setw(22) << time << ' ' << std::setw(10) << error << "  "
              << std::left << std::setw(8) << state << ' ' << reason << std::right << "\n";
  };
  row("system", "time", "|dE/E|", "state", "reason");
  for (int s = 0; s < shown; ++s)
    row(std::to_string(s), fmt(out.time(s), 15), e0[s] == 0 ? "n/a" : fmt(rel[s], 3),  // E0 = 0: no relative error
        state_name(out.state(s)), reason_name(out.reason(s)));
  if (n_sys > shown) std::cout << "  ... (" << n_sys - shown << " more; --report FILE writes them all)\n";
  if (o.has("report")) {
    kosmos::io::write_atomically(o.str("report"), [&](std::ostream& r) {
      r << "# system time energy0 energy rel_energy_error state reason" << (megno.empty() ? "" : " megno lyapunov_time")
        << "\n" << std::setprecision(17);
      for (int s = 0; s < n_sys; ++s) {
        r << s << ' ' << out.time(s) << ' ' << e0[s] << ' ' << e1[s] << ' ' << rel[s] << ' ' << state_name(out.state(s))
          << ' ' << reason_name(out.reason(s));
        if (!megno.empty()) r << ' ' << megno[s] << ' ' << (lyapunov[s] > 0 ? 1 / lyapunov[s] : INFINITY);
        r << '\n';
      }
    });
  }
  if (o.has("output")) {
    write_ensemble(o.str("output"), out);
    // Ensemble files have no removed bodies: a merged-away body stays as a massless body.
    int merged_away = 0;
    for (int mask : opt.removed)
      for (; mask != 0; mask &= mask - 1) ++merged_away;
    if (merged_away > 0)
      std::cerr << "kosmos nbody: warning: " << merged_away << " bod" << (merged_away == 1 ? "y" : "ies")
                << " merged into others; " << o.str("output")
                << " keeps them as massless bodies where they merged (with --radius, read back they "
                   "collide at once): drop them before integrating the file on\n";
  }
  if (o.has("elements-output")) write_elements(o.str("elements-output"), out, frame_from(o));
  if (o.has("stability-output")) {
    StabilityOutcomes outcomes;
    outcomes.max_eccentricity = max_eccentricity;
    outcomes.megno = megno;
    for (double l : lyapunov) outcomes.lyapunov_time.push_back(l > 0 ? 1 / l : INFINITY);
    write_stability_table(o.str("stability-output"), posterior, systems, out, outcomes);
  }
  if (stability) {
    const auto st = summarize_stability(out, destination);
    std::cout << "stability: " << st.survived << " of " << st.samples << " samples survive to t = "
              << fmt(destination, 10) << " (fraction " << fmt(st.fraction(), 4) << "); " << st.close_encounters
              << " close encounter(s) within " << settings["close-encounter"] << " Hill radii, " << st.ejections
              << " ejection(s) beyond " << fmt(std::stod(settings["ejection"]), 4) << ", " << st.collisions
              << " collision(s), " << st.other_stops << " other stop(s), " << st.failures << " numerical failure(s), "
              << st.unfinished << " unfinished\n";
  }

  if (total.unfinished > 0)
    std::cout << "  " << total.unfinished << " system(s) short of the destination: the iteration budget (--max-iterations) "
              << "is used up" << (checkpoint.empty() ? "" : "; continue with --resume " + checkpoint) << "\n";
  // Disabled systems (bad input, numerical failures) fail the run unless allowed; stopped ones
  // (close encounters, ejections, collisions: unstable samples) are results.
  int failed = 0;
  for (int s = 0; s < n_sys; ++s) failed += out.state(s) == state_disabled;
  const bool failure = failed > 0 && !o.is_set("allow-failures");
  if (failure)
    std::cerr << "kosmos nbody: " << failed << " of " << n_sys
              << " system(s) failed (disabled: bad input or a numerical failure; reasons above): exit status 1 "
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
  std::cout << "test against " << against << ": max |dx| " << fmt(c.pos, 3) << ", max |dv| " << fmt(c.vel, 3)
            << ", max |dt| " << fmt(c.time, 3) << " (worst system " << c.worst_system << "): "
            << (pass ? "PASS" : "FAIL") << "\n";
  return pass && !failure ? 0 : 1;
}

const kosmos::cli::CommandRegistration registration{
    {"nbody", "ensembles of few-body systems (Swarm-NG): integrate, log, test", &run_nbody}};
}  // namespace
