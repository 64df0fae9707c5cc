import numpy as np
import pytest

import kosmos
from kosmos import dust


def blackbody(wavelength_m, T):
    return np.array([dust.planck(float(l), T) for l in wavelength_m])


def test_grey_grain_in_a_blackbody_field_takes_its_temperature():
    lam = np.geomspace(0.5e-6, 3000e-6, 400)
    dl = dust.bin_widths(lam)
    sigma = np.full((2, lam.size), 1e-14)
    grains = dust.Grains(lam, dl, sigma, [1e-7, 2e-7], [1e10, 1e9], tolerance=1e-10)
    T0 = np.array([20.0, 60.0])
    intensity = np.vstack([blackbody(lam, T) for T in T0])
    T, status, heating = grains.temperatures(intensity, full=True)
    np.testing.assert_allclose(T, np.repeat(T0[:, None], 2, axis=1), rtol=1e-8)
    assert np.all(status == 0)
    np.testing.assert_allclose(heating[:, 0], intensity @ (sigma[0] * dl), rtol=1e-12)
    sed = grains.sed(intensity, np.array([2.0, 3.0]))
    expected = np.array([2.0, 3.0])[:, None] * (1e10 + 1e9) * 1e-14 * intensity
    np.testing.assert_allclose(sed, expected, rtol=1e-6)


def test_draine_grains_in_the_isrf_and_memory_orders(data_dir):
    table = data_dir / "dust" / "draine_graphite_81.dat"
    grains = dust.from_draine(table, [0.01, 0.1], [1e10, 1e7], dust.wavelength_grid(0.0912, 1000, 200))
    field = dust.mmp83(grains.wavelength * 1e6)
    cells = np.vstack([field, 10 * field])
    T = grains.temperatures(cells)
    assert np.all((T > 10) & (T < 60)) and np.all(T[1] > T[0])
    np.testing.assert_array_equal(grains.temperatures(np.asfortranarray(cells)), T)
    t = dust.read_draine_table(table)
    assert t["q_abs"].shape == (len(t["radius_micron"]), len(t["wavelength_micron"]))


def test_errors_name_the_value():
    lam = np.geomspace(1e-6, 1e-3, 10)
    grains = dust.Grains(lam, dust.bin_widths(lam), np.ones((1, 10)) * 1e-14, [1e-7], [1.0])
    bad = np.ones((2, 10))
    bad[1, 3] = -1
    with pytest.raises(kosmos.InvalidInput, match=r"intensity\(1, 3\) = -1"):
        grains.temperatures(bad)
    with pytest.raises(ValueError, match="intensity has extent 9 in dimension 1, expected 10"):
        grains.temperatures(np.ones((2, 9)))
    with pytest.raises(ValueError, match="sigma"):
        dust.Grains(lam, dust.bin_widths(lam), np.ones((2, 10)), [1e-7], [1.0])
    with pytest.raises(TypeError, match="float64"):
        grains.temperatures(np.ones((2, 10), np.float32))


class SmallGraphite:
    """Two very small graphite grains (10 and 30 A) in the MMP83 field on the default grid: their
    equilibrium temperatures, P(T) (128 bins), cross sections and a Planck function (W m^-3 sr^-1)
    written here."""

    def __init__(self, data_dir):
        table = data_dir / "dust" / "draine_graphite_81.dat"
        self.lam = dust.wavelength_grid()
        radii = [0.001, 0.003]
        self.grains = dust.from_draine(table, radii, [1.0, 1.0], self.lam)
        self.intensity = dust.mmp83(self.lam)
        self.T = self.grains.temperatures(self.intensity)
        self.P, self.Tb, self.status = self.grains.temperature_distributions(
            self.intensity, [0, 1], "graphite", temperature=self.T)
        self.sigma = dust._d.cross_sections(str(table), radii, list(self.lam), 2.0)

    def planck(self, T):
        h, c, k = 6.62607015e-34, 2.99792458e8, 1.380649e-23
        wl = self.lam * 1e-6
        with np.errstate(over="ignore"):
            return 2 * h * c ** 2 / wl ** 5 / np.expm1(h * c / (wl * k * T))

    def emission(self, q):
        """sum_j P_j B(lambda, T_j) of grain q."""
        return sum(p * self.planck(t) for p, t in zip(self.P[0, q], self.Tb[0, q]) if p > 0)


def test_temperature_distributions_conserve_energy(data_dir):
    # P(T) of the two grains: each sums to 1, and the power it emits, sum_j P_j sum_l sigma_l
    # B(lambda_l, T_j) dlambda_l, equals the power absorbed, sum_l sigma_l I_l dlambda_l (1 % is
    # the library's own energy tolerance; 3 % allows for its bins).
    s = SmallGraphite(data_dir)
    assert s.P.shape == (1, 2, 128)
    assert [dust.stochastic_status_name(v) for v in s.status[0]] == ["ok"] * 2
    assert np.allclose(s.P.sum(axis=2), 1, atol=1e-9)
    dl = dust.bin_widths(s.lam) * 1e-6
    for q in range(2):
        absorbed = np.sum(s.sigma[q] * s.intensity * dl)
        emitted = np.sum(s.sigma[q] * s.emission(q) * dl)
        assert emitted == pytest.approx(absorbed, rel=0.03)
    with pytest.raises(ValueError, match="differ in length"):
        s.grains._native.distributions(s.intensity[None, :], s.T, [0, 1], ["graphite"], [0.001],
                                       128, s.P, s.Tb, s.status)


def test_stochastic_sed_from_nodes_matches_numpy_planck_sums(data_dir):
    # Both grains stochastic: the SED is sum_q sigma_q(lambda) sum_j P_j B(lambda, T_j) (one grain
    # per unit mass, unit cell mass), written here from temperature_distributions' P(T). Summed at
    # every wavelength it matches to 1e-9; from nodes 0.04 apart in ln lambda (every 4
    # wavelengths of the default grid) to 5e-6 wherever it is above 1e-6 of its peak.
    s = SmallGraphite(data_dir)
    reference = s.sigma[0] * s.emission(0) + s.sigma[1] * s.emission(1)
    above = reference > 1e-6 * reference.max()
    for spacing, tolerance in ((0.0, 1e-9), (0.04, 5e-6)):
        sed = s.grains.sed(s.intensity, 1.0, stochastic_below=1.0, materials="graphite",
                           emission_node_spacing=spacing)[0]
        assert np.max(np.abs(sed[above] / reference[above] - 1)) < tolerance, spacing
    with pytest.raises(ValueError, match="emission_node_spacing = -1"):
        s.grains.sed(s.intensity, 1.0, stochastic_below=1.0, materials="graphite",
                     emission_node_spacing=-1)


H, C, K = 6.62607015e-34, 2.99792458e8, 1.380649e-23


def test_dl07_model_sizes_pah_fraction_and_energy_balance():
    # DL07 with q_PAH = 4.6 %: the species' grain masses 4/3 pi a^3 rho n (numpy, from the
    # model's radii, densities and numbers) add up to 1 kg of dust per kg, 4.6 % of it in the
    # PAH populations; in the MMP83 field the SED (per kg, equilibrium temperatures) emits the
    # power absorbed, sum_s n_s sum_l sigma_sl I_l dlambda_l, within the solver's tolerance.
    lam = dust.wavelength_grid(0.0912, 1000, 300)
    g = dust.Grains.from_model("dl07:qpah=4.6", lam, tolerance=1e-6)
    model = g.model
    pops = model.populations
    assert [p["pah"] for p in pops].count(True) == 2
    assert model.pah_mass_fraction == pytest.approx(0.046, rel=1e-12)
    density = np.array([pops[p]["density_g_cm3"] for p in model.population_of]) * 1e3  # kg/m^3
    a = model.radius_micron * 1e-6
    mass = 4 / 3 * np.pi * a ** 3 * density * model.number_per_kg
    pah = np.array([pops[p]["pah"] for p in model.population_of])
    assert mass.sum() == pytest.approx(1.0, rel=1e-6)
    assert mass[pah].sum() / mass.sum() == pytest.approx(0.046, rel=1e-6)
    assert g.species == len(a) and g.sigma.shape == (len(a), lam.size)
    intensity = dust.mmp83(lam)
    sed, T, status = g.sed(intensity, np.array([1.0]), full=True)
    assert np.all(status == 0)
    dl = dust.bin_widths(lam) * 1e-6
    absorbed = np.sum(g.number_per_mass[:, None] * g.sigma * intensity * dl)
    assert np.sum(sed[0] * dl) == pytest.approx(absorbed, rel=1e-5)
    # The default q_PAH is the file's; more PAHs absorb more of the field per kg.
    default = dust.dust_model("dl07")
    assert default.pah_mass_fraction == pytest.approx(0.0473, abs=5e-4)
    # A PAH's P(T) with the model's heat capacities conserves energy as well.
    small = int(np.argmin(np.where(pah, a, np.inf)))
    P, Tb, st = g.temperature_distributions(intensity, [small], temperature=T)
    assert dust.stochastic_status_name(st[0, 0]) == "ok"
    wl = lam * 1e-6
    with np.errstate(over="ignore"):
        emitted = sum(p * np.sum(g.sigma[small] * 2 * H * C ** 2 / wl ** 5 /
                                 np.expm1(H * C / (wl * K * t)) * dl)
                      for p, t in zip(P[0, 0], Tb[0, 0]) if p > 0)
    assert emitted == pytest.approx(np.sum(g.sigma[small] * intensity * dl), rel=0.03)
    # Grains below 0.05 micron heated stochastically (the tool's default for named models): the
    # SED still emits what the grains absorb (each P(T) balances its heating to 1 % where its
    # status is ok; a few species flagged energy_imbalance carry little of the mass), and the
    # PAHs' hot emission raises the mid-infrared.
    sed_st, _, _, st_all = g.sed(intensity, np.array([1.0]), stochastic_below=0.05, full=True)
    assert st_all.shape[1] == np.count_nonzero(a < 0.05e-6)
    names = [dust.stochastic_status_name(s) for s in st_all[0]]
    assert set(names) <= {"ok", "energy_imbalance"} and names.count("ok") >= 0.95 * len(names)
    assert np.sum(sed_st[0] * dl) == pytest.approx(absorbed, rel=1e-3)
    mid_ir = (lam > 5) & (lam < 15)
    assert np.sum(sed_st[0, mid_ir]) > 10 * np.sum(sed[0, mid_ir])
    with pytest.raises(kosmos.InvalidInput, match="nosuch"):
        dust.Grains.from_model("nosuch", lam)
    with pytest.raises(kosmos.InvalidInput, match="qpah"):
        dust.Grains.from_model("dl07:qpah=150", lam)


def _trapezoid(y, x):
    return np.sum(0.5 * (y[1:] + y[:-1]) * np.diff(x))


def _read_par(path):
    table = np.loadtxt(path, comments="#")
    return table[:, 0] * 1e-4, table[:, 1]  # micron, response


def test_photometry_of_flat_and_planck_spectra(data_dir):
    lam = dust.wavelength_grid(0.3, 1000, 6000)
    bands = dust.known_bands()
    assert "IRAC1" in bands and "SPIRE500" in bands and len(bands) == 30
    # F_nu = 3.5 (any unit per Hz) is F_lambda = F_nu c / lambda^2: every band gives 3.5.
    wl = lam * 1e-6
    flat = 3.5 * C / wl ** 2
    np.testing.assert_allclose(dust.photometry(lam, flat, bands), 3.5, rtol=1e-12)
    two = dust.photometry(lam, np.vstack([flat, 2 * flat]), ["MIPS24", "PACS100"], scale=10.0)
    np.testing.assert_allclose(two, [[35, 35], [70, 70]], rtol=1e-12)
    # A Planck spectrum against the photon-weighted mean of B_nu over each filter's own table
    # (trapezoids on its wavelengths, read here), at a temperature peaking near the band.
    for band in bands:
        f = dust.read_filter(band)
        w_f, r_f = _read_par(f["path"])
        np.testing.assert_allclose(f["wavelength_micron"], w_f)
        T = 5000.0 / f["pivot_micron"]
        b_nu = 2 * H * (C / (w_f * 1e-6)) ** 3 / C ** 2 / np.expm1(H * C / (w_f * 1e-6 * K * T))
        expected = _trapezoid(b_nu * r_f / w_f, w_f) / _trapezoid(r_f / w_f, w_f)
        with np.errstate(over="ignore"):
            b_lambda = 2 * H * C ** 2 / wl ** 5 / np.expm1(H * C / (wl * K * T))
        got = dust.photometry(lam, b_lambda, [band])[0]
        assert got == pytest.approx(expected, rel=1e-4), band
    # A filter file by path works as a band name does.
    path = data_dir / "filters" / "wise_w3.par"
    np.testing.assert_allclose(dust.photometry(lam, flat, [path]), 3.5, rtol=1e-12)


def test_photometry_errors_name_the_problem():
    lam = dust.wavelength_grid(1, 100, 200)
    sed = np.ones(200)
    with pytest.raises(kosmos.InvalidInput, match="unknown band 'NOSUCH'"):
        dust.photometry(lam, sed, ["NOSUCH"])
    with pytest.raises(kosmos.InvalidInput, match="SPIRE500.*outside the wavelength grid"):
        dust.photometry(lam, sed, ["SPIRE500"])
    with pytest.raises(ValueError, match="sed has extent 199 in dimension 1, expected 200"):
        dust.photometry(lam, np.ones((2, 199)), ["MIPS24"])
    with pytest.raises(TypeError, match="sed must have dtype float64, not float32"):
        dust.photometry(lam, np.ones(200, np.float32), ["MIPS24"])
    with pytest.raises(kosmos.FileError, match="nosuch.par"):
        dust.photometry(lam, sed, ["nosuch.par"])
