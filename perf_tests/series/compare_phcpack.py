#!/usr/bin/env python3
"""Kosmos' path tracker against PHCpack (Verschelde's phc) as the oracle.

  compare_phcpack.py PHC [--kosmos KOSMOS] [--work DIR]
      solves cyclic-5, katsura-6 and a random dense quadratic system in 8 variables with
      `phc -b` (blackbox: root count, start system, tracking in double) and with
      `kosmos series --track`, deduplicates both solution lists, matches them and recomputes
      every solution's residual here (complex double, relative to the sum of the terms'
      magnitudes, at least 1). Exit status 1 when a system's solutions do not agree.

  compare_phcpack.py PHC --time [--kosmos KOSMOS] [--work DIR] [--systems cyclic7,...]
      times path tracking on one core in double double: PHCpack's tracker (`phc -b2 -p TARGET
      START OUT`: blackbox continuation in double double, no multitasking, of the artificial
      parameter homotopy from the total-degree start system G_i = x_i^d_i - 1 with its prod d_i
      start solutions, written here; phc picks a random gamma) and
      `kosmos series --track --precision 2 --max-precision 2` on one OpenMP thread (its own
      total-degree homotopy, same number of paths). Prints paths, seconds and paths/s of both:
      wall time of the whole command, and for phc also the user time it reports for the
      continuation alone (the rest is reading, root refinement and writing), and the regular
      solutions phc found. --phc-only: phc alone.

  compare_phcpack.py PHC --time --phc-only --jobs J [--systems ...]
      the one-core rate over every path of a large system in 1/J of the time: the start
      solutions are dealt round-robin to J start files, J phc processes (one thread each) track
      them at once, each pinned to its own CPU (CPUs 0 .. J-1; taskset where it exists), and the
      rate is the paths over the sum of their continuation user times (also printed: the
      slowest part's wall time). Use J no larger than the machine's physical cores.

Both print the exact commands run. The systems are written in PHCpack's input syntax, which the
Kosmos symbolic reader also takes. PHC: path of the phc binary (scripts/phcpack.sh builds it);
KOSMOS: the kosmos CLI (default build/openmp/src/cli/kosmos).
"""
import argparse
import cmath
import itertools
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A polynomial: a list of (complex coefficient, exponent tuple).


def cyclic(n):
    system = []
    for k in range(1, n + 1):
        terms = []
        for i in range(n if k < n else 1):
            e = [0] * n
            for j in range(k):
                e[(i + j) % n] += 1
            terms.append((1.0, tuple(e)))
        if k == n:
            terms.append((-1.0, (0,) * n))
        system.append(terms)
    return system


def katsura(n):
    """katsura-n: n + 1 variables u_0 .. u_n (u_-i = u_i, u_i = 0 beyond n); 2^n solutions."""
    v = n + 1

    def unit(*indices):
        e = [0] * v
        for i in indices:
            e[i] += 1
        return tuple(e)

    system = [[(-1.0, (0,) * v)] + [(2.0 if i else 1.0, unit(i)) for i in range(v)]]
    for m in range(n):
        terms = {}
        for i in range(-n, n + 1):
            a, b = abs(i), abs(m - i)
            if b > n:
                continue
            key = unit(a, b)
            terms[key] = terms.get(key, 0.0) + 1.0
        system.append([(c, e) for e, c in terms.items()] + [(-1.0, unit(m))])
    return system


def random_quadratic(n, seed):
    """Dense quadratics in n variables, complex coefficients uniform on the unit circle: 2^n
    regular solutions (generic)."""
    rng = random.Random(seed)
    exponents = [e for e in itertools.product(range(3), repeat=n) if sum(e) <= 2]
    return [[(cmath.exp(2j * cmath.pi * rng.random()), e) for e in exponents] for _ in range(n)]


SYSTEMS = {
    "cyclic5": lambda: cyclic(5),
    "cyclic6": lambda: cyclic(6),
    "cyclic7": lambda: cyclic(7),
    "katsura6": lambda: katsura(6),
    "katsura8": lambda: katsura(8),
    "katsura10": lambda: katsura(10),
    "random8": lambda: random_quadratic(8, 29),
    "random10": lambda: random_quadratic(10, 29),
}


def term(c, monomial):
    """' + 2.0E+00*x1^2', ' - 1.0E+00', ' + (a + b*i)*x2': signs outside real coefficients, complex
    ones in parentheses, as PHCpack writes them."""
    c = complex(c)
    if c.imag == 0:
        text = "%s %.17E" % ("-" if c.real < 0 else "+", abs(c.real))
    else:
        text = "+ (%.17E %s %.17E*i)" % (c.real, "-" if c.imag < 0 else "+", abs(c.imag))
    return text + ("*" + monomial if monomial else "")


def write_system(path, system):
    n = len(system[0][0][1])
    lines = [str(len(system))]
    for p in system:
        terms = []
        for c, e in p:
            monomial = "*".join("x%d^%d" % (j + 1, k) if k > 1 else "x%d" % (j + 1)
                                for j, k in enumerate(e) if k)
            terms.append(term(c, monomial))
        lines.append(" ".join(terms) + ";")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return n


def residual(system, x):
    """max_i |f_i(x)| / max(1, sum_terms |c x^e|): a relative backward error (absolute where the
    terms are small, as at solutions with zero coordinates)."""
    worst = 0.0
    for p in system:
        value, size = 0j, 0.0
        for c, e in p:
            term = c
            for xj, k in zip(x, e):
                term *= xj ** k
            value += term
            size += abs(term)
        worst = max(worst, abs(value) / max(size, 1.0))
    return worst


def distance(a, b):
    return max(abs(p - q) / max(1.0, abs(q)) for p, q in zip(a, b))


def deduplicate(solutions, tolerance):
    distinct = []
    for x in solutions:
        if all(distance(x, y) > tolerance for y in distinct):
            distinct.append(x)
    return distinct


def phc_input(path, suffix=""):
    """A copy of the system file for phc, which appends its solutions to its input file (the
    complete list, where the output file may split it into lists of different subsystems)."""
    copy = path[:-len(".txt")] + "_phc" + suffix + ".txt"
    with open(path) as f, open(copy, "w") as g:
        g.write(f.read())
    return copy


def run(command, env=None):
    """Runs command (its output captured), prints it first; returns the result and wall seconds."""
    shown = " ".join(shlex.quote(c) for c in command)
    if env is not None and "OMP_NUM_THREADS" in env:
        shown = "OMP_NUM_THREADS=%s OMP_PROC_BIND=%s " % (
            env["OMP_NUM_THREADS"], env.get("OMP_PROC_BIND", "")) + shown
    print("$ " + shown, flush=True)
    start = time.perf_counter()
    done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=env)
    return done, time.perf_counter() - start


def parse_phc_solutions(text):
    """Solutions of the last list in a phc output file ('the solution for t :' blocks)."""
    solutions = []
    for block in text.split("the solution for t :")[1:]:
        x = []
        for line in block.split("\n")[1:]:
            m = re.match(r"\s*(\w+)\s*:\s*(\S+)\s+(\S+)\s*$", line)
            if not m:
                break
            x.append((m.group(1), complex(float(m.group(2)), float(m.group(3)))))
        solutions.append(x)
    # A file may hold the start solutions first; the target's list is the last 'THE SOLUTIONS'.
    last = text.rfind("THE SOLUTIONS")
    if last >= 0:
        count = text[:last].count("the solution for t :")
        solutions = solutions[count:]
    return solutions


def ordered(named, n):
    """PHCpack orders variables by appearance; put them back to x1 .. xn."""
    values = dict(named)
    return [values["x%d" % (j + 1)] for j in range(n)]


def kosmos_order(path):
    """Kosmos numbers the variables of a symbolic file in order of first appearance: the
    0-based index in x1 .. xn of its x<j>, j = 1 .. n."""
    with open(path) as f:
        names = re.findall(r"x(\d+)", f.read().split("\n", 1)[1])
    return [int(k) - 1 for k in dict.fromkeys(names)]


def parse_kosmos(text):
    """Distinct solutions with their status and multiplicity; the summary line's counts."""
    solutions = []
    for block in re.split(r"\nsolution \d+ : ", "\n" + text)[1:]:
        head = block.split("\n")[0]
        status, multiplicity = head.split()[0], int(re.search(r"multiplicity (\d+)", head).group(1))
        x = []
        for line in block.split("\n")[1:]:
            m = re.match(r"\s+x\d+ : (\S+),(\S+)$", line)
            if not m:
                break
            x.append(complex(float(m.group(1)), float(m.group(2))))
        solutions.append((status, multiplicity, x))
    summary = re.search(r"^paths .*$", text, re.M)
    return solutions, summary.group(0) if summary else None


def compare(args):
    ok = True
    rows = []
    for name in args.systems.split(","):
        system = SYSTEMS[name]()
        path = os.path.join(args.work, name + ".txt")
        n = write_system(path, system)
        out = os.path.join(args.work, name + ".phc")
        if os.path.exists(out):
            os.remove(out)
        target = phc_input(path)
        done, phc_seconds = run([args.phc, "-b", target, out])
        if done.returncode != 0 or not os.path.exists(out):
            print(done.stdout[-2000:])
            raise SystemExit("phc -b failed on " + name)
        with open(target) as f:
            text = f.read()
        if "THE SOLUTIONS" not in text:
            with open(out) as f:
                text = f.read()
        phc = [ordered(x, n) for x in parse_phc_solutions(text)]
        done, kosmos_seconds = run([args.kosmos, "series", "--track", path, "--digits", "17"])
        kosmos, summary = parse_kosmos(done.stdout)
        if done.returncode not in (0, 1) or summary is None:
            print(done.stdout[-2000:])
            raise SystemExit("kosmos series --track failed on " + name)
        order = kosmos_order(path)
        finite = []
        for status, _, y in kosmos:
            if status in ("regular", "singular"):
                x = [0j] * n
                for j, value in zip(order, y):
                    x[j] = value
                finite.append(x)
        phc_distinct = deduplicate(phc, args.tolerance)
        kosmos_distinct = deduplicate(finite, args.tolerance)
        unmatched_phc = [x for x in phc_distinct
                         if all(distance(x, y) > args.tolerance for y in kosmos_distinct)]
        unmatched_kosmos = [y for y in kosmos_distinct
                            if all(distance(x, y) > args.tolerance for x in phc_distinct)]
        worst_match = max((min(distance(x, y) for y in kosmos_distinct) for x in phc_distinct
                           if x not in unmatched_phc), default=0.0)
        phc_residual = max((residual(system, x) for x in phc_distinct), default=0.0)
        kosmos_residual = max((residual(system, x) for x in kosmos_distinct), default=0.0)
        agree = not unmatched_phc and not unmatched_kosmos
        ok = ok and agree
        rows.append((name, len(phc), len(phc_distinct), len(kosmos_distinct), len(unmatched_phc),
                     len(unmatched_kosmos), worst_match, phc_residual, kosmos_residual,
                     phc_seconds, kosmos_seconds, "yes" if agree else "NO"))
        print("  kosmos: " + summary, flush=True)
    print()
    print("| system | phc solutions | phc distinct | kosmos distinct | only phc | only kosmos "
          "| max distance of a match | max residual phc | max residual kosmos | phc -b s "
          "| kosmos s | agree |")
    print("| --- " * 12 + "|")
    for r in rows:
        print("| %s | %d | %d | %d | %d | %d | %.1e | %.1e | %.1e | %.2f | %.2f | %s |" % r)
    return 0 if ok else 1


def write_start_system(path, degrees, part=0, parts=1):
    """G_i = x_i^d_i - 1 and its solutions (roots of unity) in PHCpack's format: all prod d_i of
    them, or with parts > 1 those whose number is part modulo parts. Returns their count."""
    n = len(degrees)
    lines = [str(n)] + ["x%d^%d - 1;" % (j + 1, d) for j, d in enumerate(degrees)]
    roots = [[cmath.exp(2j * cmath.pi * k / d) for k in range(d)] for d in degrees]
    chosen = [x for s, x in enumerate(itertools.product(*roots)) if s % parts == part]
    count = len(chosen)
    lines += ["", "THE SOLUTIONS :", "%d %d" % (count, n),
              "=" * 59]
    for s, x in enumerate(chosen):
        lines += ["solution %d :" % (s + 1), "t :  0.00000000000000E+00   0.00000000000000E+00",
                  "m : 1", "the solution for t :"]
        lines += [" x%d : %22.15E  %22.15E" % (j + 1, v.real, v.imag) for j, v in enumerate(x)]
        lines += ["== err :  0.000E+00 = rco :  1.000E+00 = res :  0.000E+00 =="]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return count


def phc_continuation_seconds(text):
    """The user time phc's print_times reports for 'continuation' (None if absent)."""
    m = re.search(r"TIMING INFORMATION for continuation.*?User time in seconds was\s*([0-9.]+)",
                  text, re.S)
    return float(m.group(1)) if m else None


def phc_b2p(args, name, path, degrees, part=0, parts=1):
    """The command `phc -b2 -p` on the total-degree start solutions whose number is part modulo
    parts (all of them by default), its start file written and its old output removed; returns
    the command, the number of paths and the output file."""
    suffix = "_%dof%d" % (part + 1, parts) if parts > 1 else ""
    start = os.path.join(args.work, "%s_start%s.phc" % (name, suffix))
    paths = write_start_system(start, degrees, part, parts)
    out = os.path.join(args.work, "%s_b2p%s.phc" % (name, suffix))
    if os.path.exists(out):
        os.remove(out)
    return [args.phc, "-b2", "-p", phc_input(path, suffix), start, out], paths, out


def phc_b2p_result(out):
    """phc's continuation user seconds and its count of regular solutions (None where absent)."""
    with open(out) as f:
        text = f.read()
    regular = re.search(r"Number of regular solutions\s*:\s*(\d+)", text)
    return phc_continuation_seconds(text), int(regular.group(1)) if regular else None


def time_phc_in_parts(args, name, path, degrees):
    """phc -b2 -p on args.jobs round-robin parts of the start solutions at once, a CPU each."""
    pin = shutil.which("taskset")
    commands, outs, paths = [], [], 0
    for part in range(args.jobs):
        command, count, out = phc_b2p(args, name, path, degrees, part, args.jobs)
        commands.append(([pin, "-c", str(part)] if pin else []) + command)
        outs.append(out)
        paths += count
    for command in commands:
        print("$ " + " ".join(shlex.quote(c) for c in command), flush=True)
    began = time.perf_counter()
    running = [subprocess.Popen(c, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.STDOUT) for c in commands]
    codes = [p.wait() for p in running]
    wall = time.perf_counter() - began
    user, regular = 0.0, 0
    for code, out in zip(codes, outs):
        if code != 0 or not os.path.exists(out):
            raise SystemExit("phc -b2 -p failed on %s (%s)" % (name, out))
        seconds, found = phc_b2p_result(out)
        if seconds is None or found is None:
            raise SystemExit("no continuation time or solution count in " + out)
        user += seconds
        regular += found
    print("| %s | %d | %d | %.2f | %.2f | **%.1f** | %d |" % (
        name, paths, args.jobs, wall, user, paths / user, regular), flush=True)


def time_trackers(args):
    """Prints each system's row as soon as it is measured, so a long run leaves what it did."""
    if args.jobs > 1:
        print("| system | paths | phc processes | wall s (slowest) | continuation user s (sum) "
              "| **phc paths/s on one core** | phc regular (sum over parts) |")
        print("| --- " * 7 + "|", flush=True)
    else:
        print("| system | paths | phc -b2 -p wall s | phc continuation user s | phc paths/s (wall) "
              "| phc regular | kosmos N=2 wall s | kosmos paths/s | kosmos distinct |")
        print("| --- " * 9 + "|", flush=True)
    for name in args.systems.split(","):
        system = SYSTEMS[name]()
        path = os.path.join(args.work, name + ".txt")
        write_system(path, system)
        degrees = [max(sum(e) for _, e in p) for p in system]
        if args.jobs > 1:
            time_phc_in_parts(args, name, path, degrees)
            continue
        command, paths, out = phc_b2p(args, name, path, degrees)
        done, phc_seconds = run(command)
        if done.returncode != 0 or not os.path.exists(out):
            print(done.stdout[-3000:])
            raise SystemExit("phc -b2 -p failed on " + name)
        continuation, regular = phc_b2p_result(out)
        kosmos = ["-", "-", "-"]
        if not args.phc_only:
            env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="true")
            done, kosmos_seconds = run([args.kosmos, "series", "--track", path, "--precision",
                                        "2", "--max-precision", "2"], env=env)
            _, summary = parse_kosmos(done.stdout)
            if done.returncode not in (0, 1) or summary is None:
                print(done.stdout[-2000:])
                raise SystemExit("kosmos series --track failed on " + name)
            distinct = re.search(r"distinct (\d+)", summary)
            kosmos = ["%.2f" % kosmos_seconds, "%.1f" % (paths / kosmos_seconds),
                      distinct.group(1) if distinct else "?"]
        print("| %s | %d | %.2f | %s | %.1f | %s | %s |" % (
            name, paths, phc_seconds, "%.2f" % continuation if continuation is not None else "?",
            paths / phc_seconds, regular if regular is not None else "?", " | ".join(kosmos)),
            flush=True)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("phc", help="path of PHCpack's phc binary")
    parser.add_argument("--kosmos", default=os.path.join(ROOT, "build/openmp/src/cli/kosmos"))
    parser.add_argument("--work", default="phcpack_compare", help="folder for the files written")
    parser.add_argument("--time", action="store_true", help="time the trackers (see above)")
    parser.add_argument("--phc-only", action="store_true",
                        help="with --time: time phc alone (the baseline), not kosmos")
    parser.add_argument("--systems", default=None,
                        help="comma-separated: " + ", ".join(SYSTEMS))
    parser.add_argument("--jobs", type=int, default=1,
                        help="with --time --phc-only: phc processes on parts of the paths at once")
    parser.add_argument("--tolerance", type=float, default=1e-6,
                        help="relative distance under which two solutions are the same")
    args = parser.parse_args()
    for program in (args.phc,) if args.phc_only else (args.phc, args.kosmos):
        if not os.access(program, os.X_OK):
            parser.error("%s is not an executable file" % program)
    if args.jobs < 1 or (args.jobs > 1 and not (args.time and args.phc_only)):
        parser.error("--jobs %d: needs --time --phc-only and at least 1" % args.jobs)
    if args.systems is None:
        args.systems = "cyclic7,katsura10,random10" if args.time else "cyclic5,katsura6,random8"
    os.makedirs(args.work, exist_ok=True)
    args.work = os.path.abspath(args.work)
    args.phc = os.path.abspath(args.phc)
    return time_trackers(args) if args.time else compare(args)


if __name__ == "__main__":
    sys.exit(main())
