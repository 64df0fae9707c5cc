"""Orbits of a three-body system and a stability map of two-planet systems.

    PYTHONPATH=build/openmp/python python3 examples/python/nbody_stability.py [OUTDIR] [--quick]

orbits.png: the x-y paths of a star and two Jupiter-mass planets; stability.png: whether a
system survives (no close encounter within 3 mutual Hill radii, no ejection) for 100 time units
(16 years) as a function of the outer planet's semi-major axis and eccentricity (the inner one at
a = 1, circular): one ensemble, all systems integrated together; megno.png: MEGNO <Y> over the
same plane (kosmos.nbody.stability_map, WHFast with its variational equations): 2 where the
motion is quasi-periodic, growing where it is chaotic.
"""
import pathlib
import sys

import numpy as np

import kosmos
import kosmos.plot

args = [a for a in sys.argv[1:] if a != "--quick"]
quick = "--quick" in sys.argv
out = pathlib.Path(args[0] if args else ".")
out.mkdir(parents=True, exist_ok=True)

# Orbits: planets at a = 1 and 1.6, the outer one eccentric.
system = kosmos.nbody.from_elements(1.0, [[1e-3, 1e-3]],
                                    [[1.0, 0.0, 0, 0, 0, 0], [1.6, 0.2, 0, 0, 1.0, 2.0]])
positions = kosmos.nbody.trajectory(system, np.linspace(0, 13, 300), dt=1e-3)
kosmos.plot.orbits(positions, out / "orbits.png", dpi=80, labels=["star", "b", "c"])

# Stability map over (a_c, e_c).
a = np.linspace(1.15, 2.0, 8 if quick else 24)
e = np.linspace(0.0, 0.5, 6 if quick else 16)
A, E = np.meshgrid(a, e)
n = A.size
elements = np.zeros((n, 2, 6))
elements[:, 0, 0] = 1.0
elements[:, 1, 0] = A.ravel()
elements[:, 1, 1] = E.ravel()
elements[:, 1, 5] = np.pi  # opposite the inner planet at the start
ensemble = kosmos.nbody.from_elements(np.ones(n), np.full((n, 2), 1e-3), elements)
destination = 20.0 if quick else 100.0
report = ensemble.integrate(destination, integrator="hermite", dt=2e-3, close_encounter=3.0,
                            ejection=20.0)
survived = (ensemble.state() == 0).reshape(A.shape).astype(float)
print(f"{int(survived.sum())} of {n} systems survive to t = {destination}; "
      f"{report['steps']} steps in {report['seconds']:.2f} s")
kosmos.plot.stability_map(a, e, survived, out / "stability.png", dpi=80, xlabel="a_c [AU]",
                          ylabel="e_c", label=f"survived to t = {destination:g}")

# MEGNO map over the same plane (``kosmos nbody --stability-map``): the base system's outer planet
# with a and e set per grid point.
base = kosmos.nbody.from_elements(1.0, [[1e-3, 1e-3]],
                                  [[1.0, 0.0, 0, 0, 0, 0], [1.6, 0.0, 0, 0, 0, np.pi]])
nx, ny = (8, 6) if quick else (24, 16)
orbits = 100 if quick else 1000
smap = kosmos.nbody.stability_map(base, ("a", 2, 1.15, 2.0, nx), ("e", 2, 0.0, 0.5, ny),
                                  destination=2 * np.pi * orbits, integrator="whfast",
                                  dt=2 * np.pi / 50, close_encounter=1.0)
regular = np.count_nonzero(np.abs(smap.megno - 2) < 0.5)
print(f"MEGNO map: {regular} of {smap.megno.size} points regular (|<Y> - 2| < 0.5) after {orbits} "
      f"inner orbits; {smap.report['steps']} steps in {smap.report['seconds']:.2f} s")
shown = np.where(smap.state == 0, np.clip(smap.megno, 0, 8), 8.0)  # a close encounter: 8
kosmos.plot.stability_map(smap.x, smap.y, shown, out / "megno.png", dpi=80, xlabel="a_c [AU]",
                          ylabel="e_c", label="MEGNO <Y> (8: at least, or a close encounter)",
                          cmap="magma")
