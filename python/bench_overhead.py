"""Call overhead of the Python bindings: Kepler solves through kosmos.kepler.solve against the C++
benchmark (perf_tests/kepler, BM_KeplerSolve<double,Markley>, 2^24 solutions per call).

    PYTHONPATH=build/openmp/python python3 python/bench_overhead.py [--cxx build/openmp/perf_tests/kepler/kosmos_kepler_benchmarks]

Prints, for a small (16) and a large (2^24) problem, the time per call of the public wrapper and
of the raw binding (kosmos._kosmos.kepler.solve, preallocated outputs), and solutions/s; with
--cxx, runs the C++ benchmark on the same machine for its solutions/s.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

# Python puts this script's folder first on sys.path, where the package's sources (without the
# compiled extension) would shadow the built package on PYTHONPATH.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
import kosmos  # noqa: E402
from kosmos import _kosmos  # noqa: E402


def per_call(fn, min_seconds=0.5):
    fn()  # warm up (first-touch of pages, OpenMP threads)
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds and calls >= 3:
            return elapsed / calls


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cxx", help="the C++ kepler benchmark executable")
    args = parser.parse_args()
    rng = np.random.default_rng(2009)
    print(f"backend {kosmos.backend}, {kosmos.configuration()['concurrency']} thread(s)")
    for n in (16, 1 << 24):
        M = rng.uniform(0, 2 * np.pi, n)
        e = rng.uniform(0, 0.99, n)
        E, status = np.empty(n), np.empty(n, np.uint8)
        wrapper = per_call(lambda: kosmos.kepler.solve(M, e, out=E))
        raw = per_call(lambda: _kosmos.kepler.solve(M, e, E, None, None, None, status, "markley", 10, 0.0))
        print(f"n = {n:>9d}: kosmos.kepler.solve {wrapper * 1e6:10.1f} us/call ({n / wrapper:.3g} solutions/s), "
              f"raw binding {raw * 1e6:10.1f} us/call ({n / raw:.3g} solutions/s)")
    if args.cxx:
        out = subprocess.run([args.cxx, "--benchmark_filter=BM_KeplerSolve<double,Markley>/OpenMP",
                              "--benchmark_format=json"], check=True, capture_output=True, text=True)
        for b in json.loads(out.stdout)["benchmarks"]:
            print(f"C++ {b['name']}: {b['real_time']:.3g} {b['time_unit']}/call "
                  f"({b['solutions/s']:.3g} solutions/s, 2^24 solutions)")


if __name__ == "__main__":
    main()
