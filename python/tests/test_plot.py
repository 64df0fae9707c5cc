import numpy as np
import pytest

from kosmos import dust, kepler, nbody

plot = pytest.importorskip("kosmos.plot")


@pytest.fixture(scope="module")
def fit():
    rng = np.random.default_rng(5)
    t = np.sort(rng.uniform(0, 150, 40))
    v = 8 * np.cos(2 * np.pi * t / 11.0) + 4 * np.cos(2 * np.pi * t / 47.0 + 1) + rng.normal(0, 1, 40)
    inst = np.where(t < 75, "A", "B")
    return kepler.fit(t, v, np.ones(40), inst, planets=2, trend=0, chains=32, burn=40, steps=40, thin=2,
                      candidates=256, generations=15, period_max=80.0, precision="double")


def check(path):
    assert path.exists() and path.stat().st_size > 1000


@pytest.mark.parametrize("name", ["rv", "phase", "periodogram", "corner", "trace"])
def test_fit_plots(fit, tmp_path, name):
    path = tmp_path / f"{name}.png"
    getattr(plot, name)(fit, path=path, dpi=40)
    check(path)


def test_nbody_and_dust_plots(tmp_path):
    ens = nbody.generate(1, 3)
    plot.orbits(nbody.trajectory(ens, np.linspace(0, 2, 20)), tmp_path / "orbits.png", dpi=40)
    plot.stability_map([1, 2, 3], [0, 1], np.array([[0, 1, 1], [0, 0, 1]]), tmp_path / "map.png",
                       dpi=40)
    lam = np.geomspace(1, 1000, 50)
    sed = np.vstack([lam ** -2, lam ** -1.5]) * 1e20
    plot.sed(lam, sed, tmp_path / "sed.png", dpi=40)
    plot.temperatures([0.01, 0.1], [[20, 18], [30, 25]], tmp_path / "T.png", dpi=40)
    for name in ("orbits", "map", "sed", "T"):
        check(tmp_path / f"{name}.png")
    assert dust.status_name(0) == "converged"
