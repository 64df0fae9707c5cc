"""Writes a planet-planet scattering ensemble as a kosmos nbody text ensemble (standard output).

Usage: make_scattering.py SYSTEMS SEED. Each system: a star of mass 1 and three planets of mass
1e-3 (G = 1), the inner one at a = 1, each next one 2 to 3 mutual Hill radii further out (unstable
within a few hundred orbits), e < 0.05, inclinations < 0.02 rad, random angles; barycentric frame.
scattering_64.txt is `make_scattering.py 64 1`.
"""
import math
import random
import sys


def rotate(x, y, omega, node, inc):
    cw, sw, cn, sn = math.cos(omega), math.sin(omega), math.cos(node), math.sin(node)
    ci, si = math.cos(inc), math.sin(inc)
    return [(cn * cw - sn * sw * ci) * x + (-cn * sw - sn * cw * ci) * y,
            (sn * cw + cn * sw * ci) * x + (-sn * sw + cn * cw * ci) * y,
            sw * si * x + cw * si * y]


def system(rng):
    bodies = [(1.0, [0.0] * 3, [0.0] * 3)]
    a = 1.0
    for p in range(3):
        m = 1e-3
        if p > 0:
            a += rng.uniform(2.0, 3.0) * (2 * m / 3) ** (1 / 3) * a
        e, inc = rng.uniform(0, 0.05), rng.uniform(0, 0.02)
        f, omega, node = (rng.uniform(0, 2 * math.pi) for _ in range(3))
        mu = 1 + m
        r = a * (1 - e * e) / (1 + e * math.cos(f))
        h = math.sqrt(mu * a * (1 - e * e))
        x = rotate(r * math.cos(f), r * math.sin(f), omega, node, inc)
        v = rotate(-mu / h * math.sin(f), mu / h * (e + math.cos(f)), omega, node, inc)
        bodies.append((m, x, v))
    total = sum(b[0] for b in bodies)
    cx = [sum(b[0] * b[1][c] for b in bodies) / total for c in range(3)]
    cv = [sum(b[0] * b[2][c] for b in bodies) / total for c in range(3)]
    return [[m] + [x[c] - cx[c] for c in range(3)] + [v[c] - cv[c] for c in range(3)]
            for m, x, v in bodies]


def main():
    n, seed = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    print("# Planet-planet scattering: written by make_scattering.py %d %d" % (n, seed))
    print("kosmos-nbody-ensemble 1")
    print("systems %d bodies 4 attributes 0" % n)
    for s in range(n):
        print("system %d time 0 state active reason none step 0" % s)
        for row in system(rng):
            print(" ".join(repr(q) for q in row))


main()
