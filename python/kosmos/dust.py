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

__all__ = ["Grains", "from_draine", "from_model", "dust_model", "dust_models", "wavelength_grid",
           "bin_widths", "size_distribution", "mmp83", "planck", "read_draine_table",
           "status_name", "stochastic_status_name", "photometry", "known_bands", "read_filter",
           "jansky_scale", "mjy_per_sr_scale"]


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
        self.sigma, self.number_per_mass = f[2], f[4]
        self.model = None
        self.materials = None  # per species, where known (named models)

    @classmethod
    def from_model(cls, spec, wavelength_micron=None, *, data_dir=None, beta=2.0, **options):
        """Grains of a named dust model (``kosmos dust --dust-model``): "dl07[:qpah=PERCENT]"
        (Draine & Li 2007 with neutral and ionized PAHs, graphite and silicate; q_PAH in per cent,
        default the file's 4.73) or "dustem:FILE" (a DustEM GRAIN_*.DAT with its Q_, C_ and MIX_
        files). data_dir: the DustEM files (default: $KOSMOS_DUST_DATA, else the source tree's
        data/dust/dustem). wavelength_micron: the grid (default the paper's); beta: the Q_abs
        slope beyond the tables. The grains are per kg of dust (number_per_mass); ``model`` holds
        the DustModel (populations, population_of per species, pah_mass_fraction,
        dust_mass_per_h_g); the P(T) of its species use the model's heat capacities (the PAHs').
        Options as Grains."""
        model = dust_model(spec, data_dir)
        lam = wavelength_grid() if wavelength_micron is None else np.asarray(wavelength_micron, float)
        sigma = model.cross_sections(list(lam), float(beta))
        grains = cls(lam * 1e-6, bin_widths(lam) * 1e-6, sigma, model.radius_micron * 1e-6,
                     model.number_per_kg, **options)
        grains._native.set_model(model)
        grains.model = model
        populations = model.populations
        grains.materials = [populations[p]["material"] for p in model.population_of]
        return grains

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

    def sed(self, intensity, dust_mass, *, stochastic_below=None, materials=None, bins=128,
            emission_node_spacing=0.0, full=False):
        """Emission SED (cells, L) in W m^-1 sr^-1 of cells of dust_mass (cells,); full=True:
        (sed, temperature, status), and the stochastic status (cells, Q) of the stochastic
        species too when there are any. stochastic_below: grains of smaller radius (micron) emit
        from their P(T) (``kosmos dust --stochastic-below``; `bins` enthalpy bins; materials
        as temperature_distributions) instead of at their equilibrium temperature.
        emission_node_spacing > 0: their emission summed at wavelengths at most this far apart
        in ln lambda and interpolated between (``--pt-emission-spacing``; 0: every wavelength)."""
        intensity, heating, T, status = self._outputs(intensity)
        dust_mass = np.atleast_1d(dust_mass if isinstance(dust_mass, np.ndarray)
                                  else np.asarray(dust_mass, dtype=np.float64))
        sed = np.empty((intensity.shape[0], len(self.wavelength)))
        self._native.run(intensity, dust_mass, heating, T, status, sed)
        species = [] if stochastic_below is None else \
            [int(s) for s in np.flatnonzero(self.radius * 1e6 < float(stochastic_below))]
        if not species:
            return (sed, T, status) if full else sed
        materials = self._species_materials(species, materials, "sed")
        stochastic = np.empty((intensity.shape[0], len(species)), np.int32)
        self._native.add_stochastic(np.ascontiguousarray(intensity), T, dust_mass, sed, species,
                                    materials, [float(self.radius[s]) * 1e6 for s in species],
                                    int(bins), float(emission_node_spacing), stochastic)
        return (sed, T, status, stochastic) if full else sed

    def _species_materials(self, species, materials, what):
        if materials is None:
            if self.materials is None:
                raise ValueError(f"kosmos.dust.Grains.{what}: give the species' materials "
                                 "(graphite or silicate)")
            return [self.materials[s] for s in species]
        return [materials] * len(species) if isinstance(materials, str) else list(materials)

    def temperature_distributions(self, intensity, species, materials=None, *, bins=128,
                                      temperature=None):
        """P(T) of stochastically heated grains (Guhathakurta & Draine 1989; Draine & Li 2001 heat
        capacities, or a named model's tables): species (Q,) indices into this model, materials
        ('graphite' or 'silicate' each, or one for all; a named model's by default). Returns (probability, bin_temperature, status): (cells, Q, bins) summing to 1
        over the bins, bin temperatures in K, and a status per (cell, Q)
        (``stochastic_status_name``). temperature: the cells' equilibrium temperatures (cells,
        species) if already computed."""
        intensity = np.atleast_2d(np.asarray(intensity, dtype=np.float64))
        if temperature is None:
            temperature = self.temperatures(intensity)
        species = [int(s) for s in np.atleast_1d(species)]
        materials = self._species_materials(species, materials, "temperature_distributions")
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


def dust_models():
    """The named dust models: (name, description) pairs."""
    return list(_d.dust_model_names())


def dust_model(spec, data_dir=None):
    """A named dust model (kosmos::dust::load_dust_model; see Grains.from_model): name,
    populations (type, material, density_g_cm3, pah), population_of, radius_micron and
    number_per_kg per species, pah_mass_fraction, dust_mass_per_h_g, cross_sections(wavelength
    micron list, beta)."""
    return _d.load_dust_model(str(spec), "" if data_dir is None else os.fspath(data_dir))


from_model = Grains.from_model


def known_bands():
    """The band names photometry knows (IRAC1-4, MIPS24/70/160, WISE1-4, PACS70/100/160,
    SPIRE250/350/500, NIRCAM_F..., MIRI_F...)."""
    return list(_d.known_bands())


def read_filter(band, filter_dir=None):
    """A filter curve: a band name (known_bands) in filter_dir (default: $KOSMOS_FILTER_DATA, else
    the source tree's data/filters) or a file (wavelength in Angstrom, response). Returns a dict:
    name, path, wavelength_micron, response, pivot_micron."""
    return _d.filter(os.fspath(band), "" if filter_dir is None else os.fspath(filter_dir))



def jansky_scale(distance_pc):
    """The scale of photometry to Jy at a distance (L_nu per sr / D^2)."""
    d = float(distance_pc) * _d.parsec_m
    return 1e26 / (d * d)


def mjy_per_sr_scale(area_pc2):
    """The scale of photometry to MJy/sr for a cell of projected area area_pc2 seen face-on."""
    return 1e20 / (float(area_pc2) * _d.parsec_m ** 2)


def photometry(wavelength_micron, sed, bands, *, width_micron=None, filter_dir=None, scale=1.0):
    """Synthetic photometry through filter curves (kosmos::dust::Photometry, ``kosmos dust
    --bands``): the photon-weighted band mean <F_nu> = int F_nu R / lambda dlambda / int R /
    lambda dlambda of each SED row. wavelength_micron (L,) the grid; sed (L,) or (C, L) float64,
    F_lambda per metre of wavelength (e.g. Grains.sed's W m^-1 sr^-1); bands: names
    (known_bands) or filter files; width_micron: the bins (default bin_widths of the grid);
    scale: a factor (jansky_scale(distance_pc), mjy_per_sr_scale(area_pc2)). Returns (B,) or
    (C, B) in the SED's unit per Hz times scale. A band reaching outside the grid is an error."""
    lam = np.ascontiguousarray(wavelength_micron, dtype=np.float64)
    width = bin_widths(lam) if width_micron is None else np.ascontiguousarray(width_micron,
                                                                             dtype=np.float64)
    sed = sed if isinstance(sed, np.ndarray) else np.asarray(sed, dtype=np.float64)
    single = sed.ndim == 1
    rows = sed[np.newaxis, :] if single else sed
    bands = [bands] if isinstance(bands, (str, os.PathLike)) else list(bands)
    out = np.empty((rows.shape[0] if rows.ndim == 2 else 0, len(bands)))
    _d.photometry(lam, width, rows, [os.fspath(b) for b in bands],
                  "" if filter_dir is None else os.fspath(filter_dir), float(scale), out)
    return out[0] if single else out
