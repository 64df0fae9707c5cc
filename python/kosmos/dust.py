"""kosmos.dust: equilibrium grain temperatures and emission SEDs (Jonsson & Primack 2010).

Units are the library's SI (wavelength and bin widths in m, cross sections in m^2, mean intensity
in W m^-2 m^-1 sr^-1, SED in W m^-1 sr^-1 per unit of the dust mass's unit) except where a name
says micron. Status codes per (cell, species): ``status_name(code)``.
"""
import os

import numpy as np

from . import _kosmos

_d = _kosmos.dust
status_name = _d.status_name
stochastic_status_name = _d.stochastic_status_name
planck = _d.planck

__all__ = ["Grains", "from_draine", "wavelength_grid", "bin_widths", "size_distribution",
           "mmp83", "planck", "read_draine_table", "status_name", "stochastic_status_name"]


def read_draine_table(path):
    """A Draine table: radius_micron, wavelength_micron (ascending) and q_abs (radius, wavelength)."""
    return _d.read_draine_table(os.fspath(path))


def wavelength_grid(lo_micron=0.0912, hi_micron=1000.0, n=968):
    """Log-spaced wavelengths in micron (the default: the paper's 968-point grid)."""
    return np.array(_d.log_wavelength_grid(float(lo_micron), float(hi_micron), int(n)))


def bin_widths(wavelength):
    return np.array(_d.bin_widths(list(np.asarray(wavelength, dtype=float))))


def size_distribution(model, material, radius_micron):
    """Binned MRN or WD01 (R_V = 3.1) distribution: (radius_micron, grains per H nucleus)."""
    d = _d.size_distribution(model, material, list(np.asarray(radius_micron, dtype=float)))
    return np.array(d["radius_micron"]), np.array(d["number_per_h"])


def mmp83(wavelength_micron):
    """Mathis, Mezger & Panagia (1983) interstellar radiation field, W m^-2 m^-1 sr^-1."""
    return _d.mmp83(np.asarray(wavelength_micron, dtype=np.float64))


class Grains:
    """A grain model prepared on the execution space (stage 1), and stages 2-4 on cells.

    wavelength, dlambda (L,) in m; sigma (S, L) in m^2; radius (S,) in m; number_per_mass (S,)
    grains per unit dust mass. method: 'newton' or 'table'; tolerance: energy balance
    |emitted / absorbed - 1| (default 1e-3 as the paper's).
    """

    def __init__(self, wavelength, dlambda, sigma, radius, number_per_mass, *, method="newton",
                 tolerance=1e-3):
        f = [x if isinstance(x, np.ndarray) else np.asarray(x, dtype=np.float64)
             for x in (wavelength, dlambda, sigma, radius, number_per_mass)]
        self._native = _d.Grains(*f, method, float(tolerance))
        self.wavelength = f[0]
        self.radius = f[3]

    @property
    def species(self):
        return self._native.species

    def _outputs(self, intensity):
        intensity = intensity if isinstance(intensity, np.ndarray) else np.asarray(intensity, float)
        if intensity.ndim == 1:
            intensity = intensity[np.newaxis, :]
        c, s = intensity.shape[0], self.species
        return (intensity, np.empty((c, s), order="F"), np.empty((c, s)),
                np.empty((c, s), np.int32))

    def temperatures(self, intensity, *, full=False):
        """Equilibrium temperatures (cells, species) in K of the cells' mean intensities
        (cells, L) float64 (Fortran order is used in place; C order is reordered once for the
        heating GEMM). full=True: (temperature, status, heating)."""
        intensity, heating, T, status = self._outputs(intensity)
        self._native.run(intensity, None, heating, T, status, None)
        return (T, status, heating) if full else T

    def sed(self, intensity, dust_mass, *, full=False):
        """Emission SED (cells, L) in W m^-1 sr^-1 of cells of dust_mass (cells,); full=True:
        (sed, temperature, status)."""
        intensity, heating, T, status = self._outputs(intensity)
        dust_mass = np.atleast_1d(dust_mass if isinstance(dust_mass, np.ndarray)
                                  else np.asarray(dust_mass, dtype=np.float64))
        sed = np.empty((intensity.shape[0], len(self.wavelength)))
        self._native.run(intensity, dust_mass, heating, T, status, sed)
        return (sed, T, status) if full else sed

    def temperature_distributions(self, intensity, species, materials, *, bins=128,
                                      temperature=None):
        """P(T) of stochastically heated grains (Guhathakurta & Draine 1989; Draine & Li 2001 heat
        capacities): species (Q,) indices into this model, materials ('graphite' or 'silicate' each,
        or one for all). Returns (probability, bin_temperature, status): (cells, Q, bins) summing to 1
        over the bins, bin temperatures in K, and a status per (cell, Q)
        (``stochastic_status_name``). temperature: the cells' equilibrium temperatures (cells,
        species) if already computed."""
        intensity = np.atleast_2d(np.asarray(intensity, dtype=np.float64))
        if temperature is None:
            temperature = self.temperatures(intensity)
        species = [int(s) for s in np.atleast_1d(species)]
        materials = [materials] * len(species) if isinstance(materials, str) else list(materials)
        radius = [float(self.radius[s]) * 1e6 for s in species]
        c, q = intensity.shape[0], len(species)
        probability = np.empty((c, q, int(bins)))
        bin_temperature = np.empty((c, q, int(bins)))
        status = np.empty((c, q), np.int32)
        self._native.distributions(np.ascontiguousarray(intensity), np.ascontiguousarray(temperature),
                                   species, materials, radius, int(bins), probability,
                                   bin_temperature, status)
        return probability, bin_temperature, status



def from_draine(tables, radius_micron, number_per_mass, wavelength_micron=None, *, beta=2.0, **options):
    """Grains from Draine's tables (e.g. data/dust/draine_graphite_81.dat): one table per
    composition with its radii (micron) and grains per unit dust mass, or one table for all.
    wavelength_micron defaults to the paper's grid. Options as Grains."""
    if isinstance(tables, (str, os.PathLike)):
        tables, radius_micron, number_per_mass = [tables], [radius_micron], [number_per_mass]
    lam = wavelength_grid() if wavelength_micron is None else np.asarray(wavelength_micron, float)
    sigma = np.vstack([_d.cross_sections(os.fspath(t), list(np.atleast_1d(r).astype(float)),
                                         list(lam), float(beta))
                       for t, r in zip(tables, radius_micron)])
    radius = np.concatenate([np.atleast_1d(r) for r in radius_micron]).astype(float) * 1e-6
    number = np.concatenate([np.atleast_1d(n) for n in number_per_mass]).astype(float)
    return Grains(lam * 1e-6, bin_widths(lam) * 1e-6, sigma, radius, number, **options)
