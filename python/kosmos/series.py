"""kosmos.series: multiple-double numbers, power series systems, evaluation and Newton's method.

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
           "System"]


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
