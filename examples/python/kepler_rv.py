"""Fit the HD 164922 radial velocities with two Keplerian planets and plot the result.

    PYTHONPATH=build/openmp/python python3 examples/python/kepler_rv.py [DATA] [OUTDIR] [--quick]

Writes rv.png, phase.png, periodogram.png, corner.png and trace.png to OUTDIR (default: .), then
compares 0, 1 and 2 planets by their evidence (``kosmos rv --planets auto``) and prints the table.
--quick: short chains and a short temperature ladder (a smoke test, not converged results).
"""
import pathlib
import sys

import kosmos
import kosmos.plot

args = [a for a in sys.argv[1:] if a != "--quick"]
quick = "--quick" in sys.argv
root = pathlib.Path(__file__).resolve().parents[2]
data = kosmos.kepler.read(args[0] if args else root / "data" / "rv" / "hd164922_radvel.txt")
out = pathlib.Path(args[1] if len(args) > 1 else ".")
out.mkdir(parents=True, exist_ok=True)

settings = dict(chains=40, burn=60, steps=60, candidates=1024, generations=30) if quick else \
    dict(chains=64, burn=400, steps=400)
fit = kosmos.kepler.fit(data, planets=2, trend=0, stellar_mass=(0.874, 0.012), **settings)
print(fit)
kosmos.plot.rv(fit, out / "rv.png", dpi=80)
kosmos.plot.phase(fit, out / "phase.png", dpi=80)
kosmos.plot.periodogram(fit, out / "periodogram.png", dpi=80)
kosmos.plot.corner(fit, ["P_b", "K_b", "e_b", "P_c", "K_c"], out / "corner.png", dpi=60)
kosmos.plot.trace(fit, ["P_b", "K_b", "P_c", "K_c"], out / "trace.png", dpi=55)

for letter, fap in zip(fit.planet_letters(), fit.false_alarm):
    print(f"planet {letter}: false-alarm probability of its periodogram peak {fap:.2g} (Baluev 2008)")

# Model selection by evidence: ln Z of 0..2 planets (parallel tempering, stepping stones).
budget = dict(chains=40, burn=40, steps=40, candidates=1024, generations=30, temperatures=4) \
    if quick else dict(chains=64, burn=400, steps=400, temperatures=32)
selection = kosmos.kepler.fit(data, planets="auto", max_planets=2, stellar_mass=(0.874, 0.012),
                              **budget)
print(selection.evidence)
