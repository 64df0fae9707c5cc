"""kosmos.series: multiple-double numbers, power series systems, evaluation, Newton's method and
the path tracker (all isolated solutions of a polynomial system).

A real N-fold double is N limbs (float64) whose exact sum is the value; complex values are 2 N
limbs (the real part's limbs, then the imaginary part's). Decimal strings are read correctly
rounded and printed exactly (the library's decimal conversion).
"""
import os
import tempfile

import numpy as np

from . import _kosmos

_s = _kosmos.series
System = _s.System

__all__ = ["to_limbs", "to_string", "load", "from_text", "generate", "evaluate", "newton",
           "symbolic", "example", "track", "TrackResult", "System"]


def to_limbs(values, precision):
    """Decimal strings (one or a list) to limbs: (precision,) or (n, precision) float64, each
    value correctly rounded to the nearest `precision`-fold double."""
    single = isinstance(values, str)
    limbs = _s.parse([values] if single else list(values), int(precision))
    return limbs[0] if single else limbs


def to_string(limbs, digits=0):
    """Limbs ((N,) or (n, N)) to decimal strings, correctly rounded to `digits` significant
    digits (0: the fewest that read back to the same N-double)."""
    limbs = np.asarray(limbs, dtype=np.float64)
    single = limbs.ndim == 1
    out = _s.format(np.ascontiguousarray(limbs.reshape(1, -1) if single else limbs), int(digits))
    return out[0] if single else out


def load(path, precision=2):
    """A system file of ``kosmos series`` (text or .h5) at `precision` limbs per real number."""
    return _s.load(os.fspath(path), int(precision))


def from_text(text, precision=2):
    """A system from text in the format of ``kosmos series --help`` (src/kosmos/series/text_format.hpp)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "system.poly")
        with open(path, "w") as f:
            f.write(text)
        return load(path, precision)


def generate(name="p1", degree=8, *, complex=False, seed=1, precision=2):
    """The test polynomial p1, p2 or p3 with random coefficients (``kosmos series --generate``)."""
    return _s.generate(name, int(degree), bool(complex), int(seed), int(precision))


def evaluate(system, *, kernels="automatic"):
    """Value and gradient of every polynomial at the system's point. Returns (values,
    gradients): lists per polynomial of arrays (degree + 1, limbs) and (degree + 1, variables,
    limbs), views of the library's result (Fortran order)."""
    r = _s.evaluate(system, kernels)
    return r["values"], r["gradients"]


class NewtonSolution:
    """x: (degree + 1, variables, limbs) series coefficients of x(t) (a view of the library's
    result); residual (of x), condition (cond_1 of the Jacobian at t = 0), error (estimated
    largest coefficient error), start_residual, start_shift (how far Newton moved the start),
    coefficient_ratio (|c_(d-1) / c_d| per variable), radius (Pade pole radius per variable,
    degree >= 3), steps."""

    def __init__(self, d):
        self.__dict__.update(d)

    def coefficients(self, variable=0, digits=0):
        """Decimal strings of x_variable's coefficients c_0 ... c_d."""
        return to_string(np.ascontiguousarray(self.x[:, variable, :]), digits)


def newton(system, degree, *, start=None, kernels="automatic", refine_start=False):
    """Series solution x(t) of the square homotopy H(x, t) = 0 to `degree` by Newton's method
    (``kosmos series --newton``): start is one decimal per variable (complex 're,im'), default
    the system's point; a start that is not a root is refused unless refine_start."""
    return NewtonSolution(_s.newton(system, int(degree), [str(s) for s in (start or [])], kernels,
                                    bool(refine_start)))


def symbolic(text, precision=2):
    """A system in the symbolic syntax (``x1^2*x2 - (1+2*t)*x3 + 0.5;`` per polynomial; see
    ``kosmos series --help``)."""
    return _s.symbolic(str(text), int(precision))


def example(name, n, *, seed=1):
    """A benchmark system without t: cyclic-n, katsura-n or a random dense quadratic system in n
    variables (seeded)."""
    return _s.example(str(name), int(n), int(seed))


class TrackResult:
    """All paths of a total-degree homotopy (``kosmos series --track``): per path x (paths,
    variables) complex128 end points, status (0 regular, 1 singular, 2 at infinity, 3 failed;
    ``status_names``), precision (doubles used), steps, t reached, residual, condition, solution
    (index of its distinct solution or -1); per distinct solution solution_path, multiplicity and
    singular; ``solutions()`` the distinct finite end points."""

    def __init__(self, d):
        self.__dict__.update(d)

    @property
    def status_names(self):
        return [_s.path_status_name(int(s)) for s in self.status]

    def count(self, name):
        return int(sum(1 for s in self.status_names if s == name))

    def solutions(self):
        """(distinct, variables) complex128: each distinct finite solution once."""
        return self.x[self.solution_path]


def track(system, *, precision=1, max_precision=4, seed=2021, max_steps=4000):
    """All isolated solutions of a square system without t by a total-degree homotopy with the
    gamma trick, every path tracked at once on the build's execution space; failed paths are
    tracked again in up to `max_precision` doubles (1, 2 or 4)."""
    return TrackResult(_s.track(system, dict(precision=int(precision),
                                             max_precision=int(max_precision), seed=int(seed),
                                             max_steps=int(max_steps))))
