"""Graphite and silicate grains (MRN sizes, Draine's tables) heated by the interstellar radiation
field scaled by U: equilibrium temperatures and emission SEDs.

    PYTHONPATH=build/openmp/python python3 examples/python/dust_sed.py [OUTDIR]

Writes temperatures.png (T against grain radius) and sed.png (lambda L_lambda per cell); then
the Draine & Li (2007) model with PAHs (q_PAH 4.6 %, ``--dust-model dl07:qpah=4.6``), its grains
below 0.05 micron heated stochastically, in the same fields: sed_dl07.png and its Spitzer and
Herschel photometry (MJy/sr of a cell of 1 pc^2 seen face-on).
"""
import pathlib
import sys

import numpy as np

import kosmos
import kosmos.plot

root = pathlib.Path(__file__).resolve().parents[2] / "data" / "dust"
out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
out.mkdir(parents=True, exist_ok=True)

radius = np.geomspace(0.005, 0.25, 12)
tables, numbers = [], []
for material, table in (("graphite", "draine_graphite_81.dat"), ("silicate", "draine_suvsilicate_81.dat")):
    r, per_h = kosmos.dust.size_distribution("mrn", material, radius)
    tables.append(root / table)
    numbers.append((r, per_h))
# grains per kg of dust: per-H numbers over the dust mass per H of both compositions
mass_per_h = sum(np.sum(n * np.array([kosmos.dust._d.grain_mass_g(m, a) for a in r])) * 1e-3
                 for (r, n), m in zip(numbers, ("graphite", "silicate")))
grains = kosmos.dust.from_draine(tables, [r for r, _ in numbers], [n / mass_per_h for _, n in numbers])
lam = grains.wavelength * 1e6
U = np.array([1.0, 10.0, 100.0])
cells = U[:, None] * kosmos.dust.mmp83(lam)[None, :]
sed, T, status = grains.sed(cells, np.full(3, 2e30), full=True)  # 1 solar mass of dust per cell
print("T [K] of the smallest and largest graphite grains:", T[:, 0].round(1), T[:, len(radius) - 1].round(1))
labels = [f"U = {u:g}" for u in U]
n_graphite = len(numbers[0][0])
rows = [T[:, :n_graphite], T[:, n_graphite:]]  # graphite, silicate species
kosmos.plot.temperatures(numbers[0][0], np.vstack(rows), out / "temperatures.png", dpi=80,
                         labels=[f"{m}, {u}" for m in ("graphite", "silicate") for u in labels])
kosmos.plot.sed(lam, sed, out / "sed.png", dpi=80, labels=labels)

# The DL07 model with PAHs, stochastic heating of the small grains, synthetic photometry.
dl07 = kosmos.dust.Grains.from_model("dl07:qpah=4.6", kosmos.dust.wavelength_grid(0.0912, 1000, 400))
lam = dl07.wavelength * 1e6
cells = U[:, None] * kosmos.dust.mmp83(lam)[None, :]
sed = dl07.sed(cells, np.full(3, 2e30), stochastic_below=0.05)
kosmos.plot.sed(lam, sed, out / "sed_dl07.png", dpi=80, labels=labels)
bands = ["IRAC1", "IRAC4", "MIPS24", "PACS70", "PACS160", "SPIRE250", "SPIRE500"]
flux = kosmos.dust.photometry(lam, sed, bands, scale=kosmos.dust.mjy_per_sr_scale(1.0))
print("DL07 (q_PAH %.1f %%) photometry [MJy/sr]:" % (100 * dl07.model.pah_mass_fraction))
for u, row in zip(U, flux):
    print(f"  U = {u:5g}: " + ", ".join(f"{b} {f:.3g}" for b, f in zip(bands, row)))
