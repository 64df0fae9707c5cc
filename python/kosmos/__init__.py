"""Kosmos for Python: the Kokkos library's four modules on numpy arrays.

    import kosmos
    E = kosmos.kepler.solve(M, e)             # batched Kepler equation
    fit = kosmos.kepler.fit(t, v, sigma, planets=1, trend=0)
    kosmos.plot.rv(fit, "rv.png")

Kokkos is initialized on import (unless the process already did; Kokkos options, e.g.
``--kokkos-threads=4``, come from the environment variable KOSMOS_KOKKOS_ARGS) and finalized at
exit. Arrays: numpy arrays of the documented dtype in C order are used in place (on GPU backends
copied to the device and back); an array of another dtype or memory order is an error, never a
silent copy; Python lists and scalars are converted. The library's errors arrive as
``kosmos.InvalidInput`` (a ValueError) and ``kosmos.FileError`` (an OSError) with its messages.
"""
import atexit as _atexit
import os as _os
import shlex as _shlex

# Kokkos' OpenMP backend asks for a thread binding; in a Python process (numpy, BLAS, other
# libraries' threads) none is the safe default. Read by the OpenMP runtime when it loads.
_os.environ.setdefault("OMP_PROC_BIND", "false")

from . import _kosmos  # noqa: E402

_kosmos.initialize(_shlex.split(_os.environ.get("KOSMOS_KOKKOS_ARGS", "")))
_atexit.register(_kosmos.finalize)

InvalidInput = _kosmos.InvalidInput
FileError = _kosmos.FileError
backend = _kosmos.backend
configuration = _kosmos.configuration
finalize = _kosmos.finalize

from . import dust, kepler, nbody, series  # noqa: E402,F401

__all__ = ["kepler", "nbody", "series", "dust", "plot", "InvalidInput", "FileError", "backend",
           "configuration", "finalize"]


def __getattr__(name):
    # kosmos.plot imports matplotlib: only when used.
    if name == "plot":  # import_module: `from . import plot` would ask this hook again
        import importlib
        return importlib.import_module(".plot", __name__)
    raise AttributeError(f"module 'kosmos' has no attribute {name!r}")
