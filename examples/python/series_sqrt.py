"""The power series of sqrt(1 + t) by Newton's method in quad double, against the binomial series.

    PYTHONPATH=build/openmp/python python3 examples/python/series_sqrt.py [OUTDIR]

Solves x^2 - 1 - t = 0 from x(0) = 1 to degree 40 (kosmos series --newton), prints the first
coefficients exactly, and plots |c_k| with the library's coefficient ratio (the radius of
convergence, 1) to series.png.
"""
import pathlib
import sys
from fractions import Fraction

import numpy as np

import kosmos

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
out.mkdir(parents=True, exist_ok=True)
system = kosmos.series.from_text(
    "variables 1\ndegree 1\nconstant : -1 -1\nterm x1^2 : 1 0\npoint x1 : 1 0\n", precision=4)
solution = kosmos.series.newton(system, 40)
coefficients = solution.coefficients(0)
binomial, worst = Fraction(1), 0.0
for k in range(41):
    exact = sum(Fraction(float(limb)) for limb in solution.x[k, 0])
    worst = max(worst, float(abs(exact - binomial) / abs(binomial)))
    binomial *= (Fraction(1, 2) - k) / (k + 1)
print("x(t) = " + " + ".join(f"({c}) t^{k}" for k, c in enumerate(coefficients[:6])) + " + ...")
print(f"largest relative error against the binomial series (degree 40): {worst:.1e}")
print(f"residual {solution.residual:.1e}, coefficient ratio {solution.coefficient_ratio[0]:.4f}")

try:
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
fig, ax = plt.subplots(figsize=(6, 3.6))
ax.semilogy(np.abs(solution.x[:, 0, 0]), "o", ms=3)
ax.set_xlabel("k")
ax.set_ylabel("|c_k| of sqrt(1 + t)")
ax.set_title(f"quad double Newton, |c_(d-1) / c_d| = {solution.coefficient_ratio[0]:.3f}")
fig.tight_layout()
fig.savefig(out / "series.png", dpi=80)
