"""kosmos.io: Kosmos' output files read back as numpy arrays.

HDF5 files go through the library's own reader (``read``, ``read_strings``, ``attribute``;
its shape and size checks, no h5py needed); text tables are '#'-commented, whitespace-separated.
"""
import os

import numpy as np

from . import _kosmos

_io = _kosmos.io

__all__ = ["is_hdf5", "read", "read_strings", "attribute", "has", "read_text_table"]


def is_hdf5(path):
    """True for the names Kosmos writes as HDF5 (*.h5, *.hdf5)."""
    return os.fspath(path).endswith((".h5", ".hdf5"))


def _hdf5(function, path, *args):
    if not _io.hdf5:
        raise _kosmos.InvalidInput(f"{os.fspath(path)}: this Kosmos was built without HDF5")
    return function(os.fspath(path), *args)


def read(path, name):
    """An HDF5 dataset as a float64 array of its shape."""
    return _hdf5(_io.read, path, name)


def read_strings(path, name):
    """An HDF5 dataset of strings as a list."""
    return _hdf5(_io.read_strings, path, name)


def attribute(path, key, object="/"):
    """An HDF5 attribute: str for text, float for numbers."""
    return _hdf5(_io.attribute, path, object, key)


def has(path, name):
    """Whether an HDF5 file holds a dataset `name`."""
    return _hdf5(_io.has, path, name)


def read_text_table(path):
    """A text table: (comment lines without '# ', column names or None, values (rows, columns)).

    The column names are the first non-comment line when it is not numeric."""
    comments, names, rows = [], None, []
    with open(path) as f:
        for line in f:
            s = line.strip()
            if not s:
                continue
            if s.startswith("#"):
                comments.append(s[1:].strip())
                continue
            fields = s.split()
            if names is None and not rows:
                try:
                    float(fields[0])
                except ValueError:
                    names = fields
                    continue
            rows.append([float(x) for x in fields])
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        raise _kosmos.FileError(f"{os.fspath(path)}: rows of different lengths {sorted(widths)}")
    return comments, names, np.array(rows, dtype=np.float64).reshape(len(rows), -1)
