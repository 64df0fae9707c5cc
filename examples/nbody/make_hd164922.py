#!/usr/bin/env python3
"""Writes hd164922_ensemble.txt: HD 164922 (star + planets c and b) as 4 systems differing in sin(i).

Orbits (P, K, e) from Fulton et al. 2016 as quoted in data/README.md; assumed stellar mass 0.9 Msun,
coplanar orbits, planets at pericentre on +x at t = 0. Units: G = 1, AU, Msun, yr / 2 pi.
"""
import math

AU_PER_TU_KMS = 29.784691829676934  # km/s in one AU per (yr / 2 pi)
MSTAR = 0.9
PLANETS = [("c", 75.765, 2.22, 0.22), ("b", 1201.1, 7.15, 0.126)]  # name, P (d), K (m/s), e
SINI = [1.0, 0.8, 0.6, 0.4]


def main():
    out = [
        "# HD 164922 (star + planets c and b) as an ensemble of 4 systems that differ in sin(i).",
        "# Orbits from Fulton et al. 2016 (ApJ 830, 46) as quoted in data/README.md: c: P = 75.765 d,",
        "# K = 2.22 m/s, e = 0.22; b: P = 1201.1 d, K = 7.15 m/s, e = 0.126. Assumed here: stellar mass",
        "# 0.9 Msun, coplanar orbits, both planets at pericentre on the +x axis at t = 0 (the arguments",
        "# of pericentre and phases are not used); planet masses m = (m sin i) / sin i with sin i = 1, 0.8,",
        "# 0.6, 0.4. Units: G = 1, AU, Msun, time unit = yr / 2 pi. Barycentric frame.",
        "# Written by examples/nbody/make_hd164922.py (kept with this file).",
        "kosmos-nbody-ensemble 1",
        "systems %d bodies 3 attributes 1   # attribute: sin(i)" % len(SINI),
    ]
    for s, sini in enumerate(SINI):
        bodies = [[MSTAR, 0, 0, 0, 0, 0, 0]]
        for _, period_days, k_ms, e in PLANETS:
            p_yr = period_days / 365.25
            k = k_ms / 1000.0 / AU_PER_TU_KMS
            m = 0.0
            for _ in range(50):  # m sin i from K, a from Kepler's third law, to convergence
                a = ((MSTAR + m) * p_yr ** 2) ** (1 / 3)
                n = 1 / p_yr  # mean motion in radians per time unit
                m = k * math.sqrt(1 - e * e) * (MSTAR + m) / (n * a) / sini
            rp = a * (1 - e)
            vp = math.sqrt((MSTAR + m) * (1 + e) / rp)
            bodies.append([m, rp, 0, 0, 0, vp, 0])
        total = sum(b[0] for b in bodies)
        for k in range(1, 7):
            cm = sum(b[0] * b[k] for b in bodies) / total
            for b in bodies:
                b[k] -= cm
        out.append("system %d time 0 state active reason none step 0 %.17g" % (s, sini))
        out.extend(" ".join("%.17g" % v for v in b) for b in bodies)
    with open("hd164922_ensemble.txt", "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
