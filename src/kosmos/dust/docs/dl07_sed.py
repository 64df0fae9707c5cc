#!/usr/bin/env python3
"""The README's DL07 figure: `cells` writes a cells file of the Mathis ISRF (DustEM's ISRF.DAT) times
U = 1, 100, 1e4 on the CLI's default wavelength grid; `plot` draws the SEDs `kosmos dust` computed
for them with DustEM's reference SED at U = 1 (SED_DL07.RES).

  python3 dl07_sed.py cells DATA/dust/dustem dl07_cells.txt
  kosmos dust --dust-model dl07 --cells dl07_cells.txt --stochastic-below 0.05 --t-cmb 0 --sed dl07_sed.txt
  python3 dl07_sed.py plot DATA/dust/dustem dl07_sed.txt dl07_sed.png
"""
import math
import sys

U = [1.0, 100.0, 1e4]
C = 299792458.0


def default_grid():  # kosmos::dust::default_wavelength_grid()
    lo, hi, n = 0.0912, 1e4, 1208
    return [lo * (hi / lo) ** (i / (n - 1)) for i in range(n - 1)] + [hi]


def read_columns(path, skip_counts=1):
    rows = []
    for line in open(path):
        if not line.strip() or line.startswith("#"):
            continue
        if skip_counts > 0:
            skip_counts -= 1
            continue
        rows.append([float(x) for x in line.split()])
    return rows


def isrf_j_lambda(dustem, micron):
    """J_lambda (W m^-2 m^-1 sr^-1) of ISRF.DAT (4 pi I_nu, erg cm^-2 s^-1 Hz^-1), log-log."""
    rows = read_columns(dustem + "/ISRF.DAT")
    w = [r[0] for r in rows]
    v = [r[1] for r in rows]
    for k in range(1, len(w)):
        if w[k - 1] <= micron <= w[k]:
            if v[k - 1] <= 0 or v[k] <= 0:
                return 0.0
            f = math.log(micron / w[k - 1]) / math.log(w[k] / w[k - 1])
            four_pi_inu = math.exp((1 - f) * math.log(v[k - 1]) + f * math.log(v[k]))
            lam = micron * 1e-6
            return four_pi_inu / (4 * math.pi) * 1e-3 * C / lam ** 2
    return 0.0


def cells(dustem, out):
    grid = default_grid()
    j = [isrf_j_lambda(dustem, w) for w in grid]
    with open(out, "w") as f:
        f.write("# Mathis ISRF (DustEM ISRF.DAT) x U = %s, 1 kg of dust each\n" % ", ".join("%g" % u for u in U))
        for u in U:
            f.write("1 " + " ".join("%.9g" % (u * x) for x in j) + "\n")


def plot(dustem, sed_path, png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    w = None
    seds = []
    for line in open(sed_path):
        if line.startswith("# lambda_micron"):
            w = [float(x) for x in line.split()[2:]]
        elif not line.startswith("#") and line.strip():
            seds.append([float(x) for x in line.split()])
    ref = read_columns(dustem + "/SED_DL07.RES")
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    for u, sed in zip(U, seds):
        nu_l_nu = [x * lam * 1e-6 for x, lam in zip(sed, w)]  # lambda L_lambda, W/sr per kg
        norm = u
        ax.loglog(w, [v / norm for v in nu_l_nu], label="Kosmos, U = %g" % u)
    # DustEM: 4 pi nu I_nu / N_H (erg/s/H) -> W/sr per kg of dust (1.7584e-29 kg of dust per H)
    scale = 1e-7 / (4 * math.pi) / 1.7584e-29
    ax.loglog([r[0] for r in ref], [r[-1] * scale for r in ref], "k:", label="DustEM, U = 1")
    ax.set_xlim(2, 1000)
    ax.set_ylim(1e-5, 3e-3)
    ax.set_xlabel("wavelength (micron)")
    ax.set_ylabel("lambda L_lambda / U (W sr^-1 kg^-1)")
    ax.set_title("Draine & Li (2007) dust, kosmos dust --dust-model dl07")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png)


if __name__ == "__main__":
    if sys.argv[1] == "cells":
        cells(sys.argv[2], sys.argv[3])
    else:
        plot(sys.argv[2], sys.argv[3], sys.argv[4])
