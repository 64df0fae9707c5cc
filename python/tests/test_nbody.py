import numpy as np
import pytest

import kosmos
from kosmos import nbody


def test_arrays_round_trip_and_energy_against_numpy():
    rng = np.random.default_rng(4)
    m = rng.uniform(0.1, 1, (5, 3))
    x = rng.normal(size=(5, 3, 3))
    v = rng.normal(size=(5, 3, 3))
    ens = nbody.from_arrays(m, x, v)
    np.testing.assert_array_equal(ens.positions(), x)
    np.testing.assert_array_equal(ens.velocities(), v)
    np.testing.assert_array_equal(ens.masses(), m)
    kinetic = 0.5 * np.sum(m * np.sum(v ** 2, axis=2), axis=1)
    potential = np.zeros(5)
    for i in range(3):
        for j in range(i + 1, 3):
            potential -= m[:, i] * m[:, j] / np.linalg.norm(x[:, i] - x[:, j], axis=1)
    out = np.empty(5)
    assert ens.energy(out=out) is out
    np.testing.assert_allclose(out, kinetic + potential, rtol=1e-13)
    p = ens.momenta()
    np.testing.assert_allclose(p[:, :3], np.sum(m[:, :, None] * v, axis=1), atol=1e-13)


def test_two_body_orbit_energy_and_period():
    el = np.array([[1.0, 0.3, 0.1, 0.2, 0.5, 0.0]])
    ens = nbody.from_elements(1.0, [[1e-3]], el)
    np.testing.assert_allclose(ens.elements()[0], el, atol=1e-12)
    x0 = ens.positions()
    e0 = ens.energy()
    period = 2 * np.pi / np.sqrt(1.0 + 1e-3)
    report = ens.integrate(3 * period, integrator="hermite", dt=1e-3)
    assert report["reached_destination"] == 1
    assert abs(ens.energy()[0] / e0[0] - 1) < 1e-10
    np.testing.assert_allclose(ens.positions(), x0, atol=1e-7)  # back after whole periods


def test_generate_and_trajectory():
    ens = nbody.generate(2, 2, seed=0)  # star and one planet: a circular orbit of radius 1
    pos = nbody.trajectory(ens, np.linspace(0, 1, 5), dt=1e-3)
    assert pos.shape == (5, 2, 2, 3)
    radius = np.linalg.norm(pos[:, 0, 1, :2] - pos[:, 0, 0, :2], axis=1)
    np.testing.assert_allclose(radius, 1.0, rtol=1e-10)


def test_errors():
    with pytest.raises(ValueError, match="positions has extent 2 in dimension 1, expected 3"):
        nbody.from_arrays(np.ones((1, 3)), np.zeros((1, 2, 3)), np.zeros((1, 3, 3)))
    ens = nbody.generate(1, 2)
    with pytest.raises(kosmos.InvalidInput, match="leapfrog"):
        ens.integrate(1.0, integrator="leapfrog")


class Posterior:
    """The columns a kosmos.kepler.FitResult carries, for two samples."""
    planets = 2
    columns = ["P_b", "K_b", "e_b", "omega_deg_b", "M0_deg_b", "P_c", "K_c", "e_c", "omega_deg_c",
               "M0_deg_c"]
    samples = np.array([[10.0, 5.0, 0.0, 0.0, 0.0, 100.0, 5.0, 0.0, 0.0, 180.0],
                        [10.0, 3000.0, 0.0, 0.0, 0.0, 10.5, 3000.0, 0.0, 0.0, 20.0]])


def test_stability_of_posterior_samples():
    ens, summary = nbody.stability(Posterior(), destination=20.0, dt=2e-4)
    assert summary["samples"] == 2
    assert summary["survived"] == 1
    assert summary["close_encounters"] == 1
    assert list(ens.state()) == [0, 1]


def test_rebound_converter():
    rebound = pytest.importorskip("rebound")
    sim = rebound.Simulation()
    sim.add(m=1.0)
    sim.add(m=1e-3, a=1.0)
    ens = nbody.from_rebound(sim)
    np.testing.assert_allclose(ens.positions()[0, 1], [sim.particles[1].x, sim.particles[1].y,
                                                        sim.particles[1].z])
