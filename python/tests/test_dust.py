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


def test_temperature_distributions_conserve_energy(data_dir):
    # P(T) of two very small graphite grains in the MMP83 field: each sums to 1, and the power it
    # emits, sum_j P_j sum_l sigma_l B(lambda_l, T_j) dlambda_l with a Planck function written
    # here, equals the power absorbed, sum_l sigma_l I_l dlambda_l (1 % is the library's own
    # energy tolerance; 3 % allows for its bins).
    table = data_dir / "dust" / "draine_graphite_81.dat"
    lam = dust.wavelength_grid()
    radii = [0.001, 0.003]
    g = dust.from_draine(table, radii, [1.0, 1.0], lam)
    intensity = dust.mmp83(lam)
    T = g.temperatures(intensity)
    P, Tb, status = g.temperature_distributions(intensity, [0, 1], "graphite", temperature=T)
    assert P.shape == (1, 2, 128) and [dust.stochastic_status_name(s) for s in status[0]] == ["ok"] * 2
    assert np.allclose(P.sum(axis=2), 1, atol=1e-9)
    sigma = dust._d.cross_sections(str(table), radii, list(lam), 2.0)
    wl, dl = lam * 1e-6, dust.bin_widths(lam) * 1e-6
    h, c, k = 6.62607015e-34, 2.99792458e8, 1.380649e-23

    def planck(T):
        with np.errstate(over="ignore"):
            return 2 * h * c ** 2 / wl ** 5 / np.expm1(h * c / (wl * k * T))

    for q in range(2):
        absorbed = np.sum(sigma[q] * intensity * dl)
        emitted = sum(p * np.sum(sigma[q] * planck(t) * dl)
                      for p, t in zip(P[0, q], Tb[0, q]) if p > 0)
        assert emitted == pytest.approx(absorbed, rel=0.03)
    with pytest.raises(ValueError, match="differ in length"):
        g._native.distributions(intensity[None, :], T, [0, 1], ["graphite"], [0.001], 128, P, Tb,
                                status)
