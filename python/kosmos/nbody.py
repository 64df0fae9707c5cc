"""kosmos.nbody: ensembles of few-body systems (Swarm-NG), their integration and stability.

Units: G = 1 (AU, solar masses, year = 2 pi; one time unit is ``days_per_time_unit`` days).
An Ensemble lives where the execution space computes; its chunked layout (systems interleaved in
chunks of 16) is not numpy's (system, body, component), so states come in and go out as copies.
"""
import numpy as np

from . import _kosmos

_n = _kosmos.nbody
days_per_time_unit = _n.days_per_time_unit
megno_state_sums = _n.megno_state_sums  # per system in megno_state after the 6 n deviation values
reason_name = _n.reason_name
state_name = _n.state_name

__all__ = ["Ensemble", "from_arrays", "from_elements", "generate", "from_rebound", "stability",
           "stability_map", "StabilityMap", "trajectory", "days_per_time_unit"]


def _f64(x):
    return x if isinstance(x, np.ndarray) else np.asarray(x, dtype=np.float64)


class Ensemble:
    """Many systems of the same number of bodies. Build with from_arrays, from_elements,
    generate, from_rebound or stability."""

    def __init__(self, native):
        self._native = native

    @property
    def systems(self):
        return self._native.systems

    @property
    def bodies(self):
        return self._native.bodies

    def positions(self):
        """(systems, bodies, 3) float64 (a copy)."""
        return self._native.bodies_array(0)

    def velocities(self):
        return self._native.bodies_array(1)

    def masses(self):
        return self._native.bodies_array(2)

    def time(self):
        return self._native.time()

    def state(self):
        """Per system: 0 active, 1 inactive (a stop condition), 2 disabled (bad input, failure)."""
        return self._native.state()

    def reason(self):
        """Per system: why it stopped (``reason_name(code)``)."""
        return self._native.reason()

    def energy(self, out=None):
        """Total energy per system, computed where the ensemble lives; out: float64 (systems,)."""
        out = np.empty(self.systems) if out is None else out
        self._native.energy(out)
        return out

    def momenta(self, out=None):
        """(systems, 6): total momentum and angular momentum about the origin."""
        out = np.empty((self.systems, 6)) if out is None else out
        self._native.momenta(out)
        return out

    def elements(self, frame="jacobi"):
        """(systems, bodies - 1, 6): a, e, inc, Omega, omega, M [rad] of the planets in
        frame 'jacobi' or 'heliocentric'."""
        return self._native.elements(frame)

    def integrate(self, destination, *, integrator="hermite", dt=1e-3, **options):
        """Integrates every active system to time `destination` in place. Options mirror
        ``kosmos nbody``: integrator (hermite, hermite_adaptive, rkck, rkck_adaptive, mvs, verlet,
        whfast, ias15, mercurius: Wisdom-Holman with close encounters by Bulirsch-Stoer), dt, tau,
        tolerance, epsilon, corrector, coordinates, changeover_hill (mercurius), steps_per_launch,
        max_iterations, energy_limit, close_encounter (mutual Hill radii), ejection (distance),
        crossing_orbits, radius (collision radii: one or one per body), on_collision (stop,
        merge), megno (``--megno``: ias15, or whfast in Jacobi coordinates), megno_seed,
        megno_state (a previous report's, to go on). Returns the report (counts, steps, seconds;
        with megno also per system arrays megno <Y> (2: quasi-periodic, growing: chaotic),
        lyapunov (REBOUND's estimate, per time unit), lyapunov_time (1 / lyapunov, inf when not
        positive) and megno_state)."""
        return self._native.integrate(float(destination), _settings(integrator, dt, options))

    def stability_summary(self, destination):
        """Counts of an integrated stability ensemble (survived, close encounters, ejections, ...)."""
        return self._native.stability_summary(float(destination))


def _settings(integrator, dt, options):
    settings = dict(options, integrator=integrator, dt=dt)
    if "radius" in settings:
        settings["radius"] = list(np.atleast_1d(settings["radius"]).astype(float))
    if "megno_state" in settings:
        settings["megno_state"] = list(np.asarray(settings["megno_state"], dtype=np.float64))
    return settings


class StabilityMap:
    """A stability map (kosmos::nbody::run_stability_map): x (nx,), y (ny,) the axis values (angles
    in radians, masses in solar masses), x_element, y_element, x_body, y_body; per grid point
    (ny, nx) arrays megno (<Y>), lyapunov_time, time, state, reason; report (the integration's);
    final_state (an Ensemble, system ix + nx iy)."""

    def __init__(self, d):
        final = d.pop("final_state")
        self.__dict__.update(d)
        self.final_state = Ensemble(final)

    def __repr__(self):
        return (f"StabilityMap: {self.x_element} of body {self.x_body} ({len(self.x)}) x "
                f"{self.y_element} of body {self.y_body} ({len(self.y)}), median <Y> "
                f"{np.median(self.megno):.3g}")


def _axis_spec(axis):
    if isinstance(axis, str):
        return axis
    element, body, lo, hi, count = axis
    return f"{element}:{int(body)}:{float(lo)!r}:{float(hi)!r}:{int(count)}"


def stability_map(base, x, y, *, destination, integrator="whfast", dt=1e-2, frame="jacobi",
                  system=0, **options):
    """A MEGNO map over two elements of one system (``kosmos nbody --stability-map``): the grid's
    systems are system `system` of the Ensemble `base` (left unchanged) with the two elements set,
    integrated together to `destination` with MEGNO on (integrator whfast, Jacobi coordinates, or
    ias15). x, y: "ELEMENT:BODY:MIN:MAX:COUNT" or (element, body, min, max, count), element one
    of a, e, inc, Omega, omega, M (angles in degrees, as the tool's) or mass (solar masses), body
    1 the first planet, in `frame` (jacobi or heliocentric). Other options as Ensemble.integrate
    (close_encounter, ejection, ...). Returns a StabilityMap."""
    return StabilityMap(base._native.stability_map(int(system), _axis_spec(x), _axis_spec(y), frame,
                                                   float(destination),
                                                   _settings(integrator, dt, options)))


def from_arrays(masses, positions, velocities, time=None):
    """masses (systems, bodies), positions and velocities (systems, bodies, 3), float64."""
    return Ensemble(_n.Ensemble.from_arrays(_f64(masses), _f64(positions), _f64(velocities),
                                            None if time is None else _f64(time)))


def from_elements(star_mass, planet_masses, elements, frame="jacobi"):
    """Systems from a star mass (systems,), planet masses (systems, planets) and elements
    (systems, planets, 6): a, e, inc, Omega, omega, M [rad]; barycentric, time 0."""
    planet_masses = np.atleast_2d(_f64(planet_masses))
    n = planet_masses.shape[0]
    star = np.broadcast_to(np.asarray(star_mass, dtype=np.float64), (n,)).copy()
    elements = _f64(elements)
    if elements.ndim == 2:
        elements = elements[np.newaxis]
    return Ensemble(_n.Ensemble.from_elements(star, planet_masses, elements, frame))


def generate(systems, bodies=3, planet_mass=1e-3, alpha=0.4, seed=0):
    """Dindar et al. (2013) Sec. 5.1: a unit-mass star and planets on circular orbits of radius
    (1 + alpha)^(i-1) (``kosmos nbody --generate``)."""
    return Ensemble(_n.Ensemble.generate(int(systems), int(bodies), float(planet_mass),
                                         float(alpha), int(seed)))


def from_rebound(simulations):
    """An ensemble from REBOUND simulations (one system each, the same particle count; G must
    be 1 in the units used): their particles' masses, positions, velocities and times."""
    sims = list(simulations) if isinstance(simulations, (list, tuple)) else [simulations]
    for sim in sims:
        if abs(sim.G - 1.0) > 1e-12:
            raise ValueError(f"kosmos.nbody.from_rebound: G = {sim.G}; Kosmos uses G = 1")
    m = np.array([[p.m for p in sim.particles] for sim in sims])
    x = np.array([[[p.x, p.y, p.z] for p in sim.particles] for sim in sims])
    v = np.array([[[p.vx, p.vy, p.vz] for p in sim.particles] for sim in sims])
    t = np.array([sim.t for sim in sims])
    return from_arrays(m, x, v, t)


def stability(posterior, *, destination, stellar_mass=1.0, inclination=90.0, frame="jacobi",
              samples=0, integrator="hermite", dt=1e-3, close_encounter=3.0, ejection=None,
              **options):
    """Integrates one system per RV posterior sample (``kosmos nbody --stability``): posterior is
    a kosmos.kepler.FitResult or a posterior file of ``kosmos rv``. inclination in degrees (90:
    minimum masses); close encounters at `close_encounter` mutual Hill radii, ejections beyond
    `ejection` (default: 20 x the largest semi-major axis). Returns (ensemble, summary)."""
    inc = np.radians(inclination)
    if isinstance(posterior, (str, bytes)) or hasattr(posterior, "__fspath__"):
        native = _n.Ensemble.read_rv_posterior(str(posterior), float(stellar_mass), inc, frame, int(samples))
    else:
        native = _n.Ensemble.from_rv_posterior(posterior.planets, list(posterior.columns),
                                               posterior.samples, float(stellar_mass), inc, frame,
                                               int(samples))
    ens = Ensemble(native)
    if ejection is None:
        ejection = 20 * float(np.max(ens.elements(frame)[:, :, 0]))
    ens.integrate(destination, integrator=integrator, dt=dt, close_encounter=close_encounter,
                  ejection=ejection, **options)
    return ens, ens.stability_summary(destination)


def trajectory(ensemble, times, **options):
    """Positions (len(times), systems, bodies, 3) at the given increasing times, integrating the
    ensemble in place from one to the next (options as Ensemble.integrate)."""
    out = []
    for t in times:
        if t > np.max(ensemble.time()):
            ensemble.integrate(t, **options)
        out.append(ensemble.positions())
    return np.array(out)
