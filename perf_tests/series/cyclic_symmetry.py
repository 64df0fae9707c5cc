#!/usr/bin/env python3
"""Which solutions of cyclic-n a tracker run missed, from the system's symmetry.

  cyclic_symmetry.py RUN.h5 [RUN.h5 ...]

RUN.h5: `kosmos series --track cyclicN.txt --output RUN.h5` (layout in
src/kosmos/series/track.hpp). The solution set of cyclic-n is invariant under the cyclic shifts
of the coordinates, their reversal and the scaling x -> w x by an n-th root of unity w (each
equation is homogeneous of degree k < n, the last is x_1 ... x_n = 1): a group of 2 n^2
elements. The orbits of the regular solutions that all the given runs found together are a set
the runs need not have found themselves (singular end points are left out of it: in a
total-degree homotopy they are mostly points near infinity); for cyclic-7 it has 924 points,
the known number of isolated solutions. Prints the orbit closure's size and, per run, how many
of its points the run found (as a regular or singular end point, within 1e-6 relative) and the
largest coordinate of the points it missed, with how many share it.
"""
import argparse
import sys

import h5py
import numpy as np

REGULAR, SINGULAR = 0, 1  # path_status


def end_points(path):
    """The run's regular end points and its regular or singular ones."""
    with h5py.File(path, "r") as f:
        x = f["path_x"][...]
        status = f["path_status"][...]
    x = x[..., 0] + 1j * x[..., 1]
    return x[status == REGULAR], x[np.isin(status, (REGULAR, SINGULAR))]


def orbit(point):
    n = len(point)
    roots = np.exp(2j * np.pi * np.arange(n) / n)
    for shift in range(n):
        rotated = np.roll(point, shift)
        for image in (rotated, rotated[::-1]):
            for w in roots:
                yield image * w


def key(point):
    return tuple(np.round(point, 6))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="track .h5 outputs of cyclic-n")
    args = parser.parse_args()
    runs = [end_points(path) for path in args.runs]
    closure = {}
    for regular, _ in runs:
        for point in regular:
            for image in orbit(point):
                closure.setdefault(key(image), image)
    reference = np.array(list(closure.values()))
    print("orbit closure of the runs' regular solutions: %d points" % len(reference))
    for path, (_, points) in zip(args.runs, runs):
        found = set()
        for point in points:
            distance = np.max(np.abs(reference - point), axis=1)
            nearest = int(np.argmin(distance))
            if distance[nearest] <= 1e-6 * (1 + np.max(np.abs(point))):
                found.add(nearest)
        missed = [k for k in range(len(reference)) if k not in found]
        sizes = {}
        for k in missed:
            size = "%.2f" % np.max(np.abs(reference[k]))
            sizes[size] = sizes.get(size, 0) + 1
        sizes = ", ".join("%s (%d)" % item for item in sorted(sizes.items()))
        print("%s: found %d of %d; missed, largest |x_j| of each: %s" %
              (path, len(found), len(reference), sizes or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
