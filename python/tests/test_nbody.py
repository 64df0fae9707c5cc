from pathlib import Path

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


def _megno_pair(a2):
    """The pair of the library's MEGNO tests (unit_tests/nbody/test_megno.cpp, after REBOUND's
    megno_rebound.c): a star and two Jupiter-mass planets on the x axis at a = 1 and a2,
    slightly inclined, barycentric; and its deviation vector (k % 5 - 2) + 0.5 (k % 3),
    normalized, with the MEGNO sums at 0."""
    m1 = m2 = 1e-3
    v1, v2 = np.sqrt(1 + m1), np.sqrt((1 + m1 + m2) / a2)
    px, pv = m1 * 1.0 - m2 * a2, m1 * v1 - m2 * v2
    m = np.array([[1.0, m1, m2]])
    x = np.array([[[-px, 0, 0], [1.0, 0, 0.01], [-a2, 0, -0.02]]])
    v = np.array([[[0, -pv, 0], [0, v1, 0.001], [0, -v2 * 1.02, 0.002]]])
    k = np.arange(18)
    deviation = (k % 5 - 2) + 0.5 * (k % 3)
    state = np.concatenate([deviation / np.linalg.norm(deviation), np.zeros(nbody.megno_state_sums)])
    return nbody.from_arrays(m, x, v), state


def test_whfast_megno_of_a_regular_pair_matches_rebound_and_ias15():
    # REBOUND's WHFast + MEGNO (dt = T_inner / 50, no corrector) and IAS15 (epsilon 1e-9) on this
    # pair and deviation over 1000 inner orbits, as unit_tests/nbody/test_megno.cpp records them:
    # <Y> 2.0026846625736772 and 2.0027564328050684; quasi-periodic, <Y> -> 2.
    T = 2 * np.pi * 1000
    results = {}
    for integrator, dt, rebound in (("whfast", 2 * np.pi / 50, 2.0026846625736772),
                                    ("ias15", 1e-3, 2.0027564328050684)):
        ens, state = _megno_pair(1.8)
        report = ens.integrate(T, integrator=integrator, dt=dt, megno=True, megno_state=state,
                               steps_per_launch=1 << 20)
        assert report["reached_destination"] == 1
        assert report["megno"].shape == (1,) and report["lyapunov_time"].shape == (1,)
        assert report["megno"][0] == pytest.approx(rebound, rel=1e-6)
        assert abs(report["megno"][0] - 2) < 0.05
        assert len(report["megno_state"]) == 18 + nbody.megno_state_sums
        results[integrator] = report["megno"][0]
    assert results["whfast"] == pytest.approx(results["ias15"], abs=1e-3)
    ens, _ = _megno_pair(1.8)  # a random deviation: still regular
    report = ens.integrate(T / 4, integrator="whfast", dt=2 * np.pi / 50, megno=True)
    assert abs(report["megno"][0] - 2) < 0.1
    assert "megno" not in ens.integrate(T / 4 + 1, integrator="whfast", dt=2 * np.pi / 50)


def test_whfast_megno_of_a_chaotic_pair_grows():
    # The pair at a2 = 1.3 over 100 inner orbits: REBOUND's <Y> is 6.880 there (test_megno.cpp);
    # its Lyapunov time about 112 time units.
    ens, state = _megno_pair(1.3)
    report = ens.integrate(2 * np.pi * 100, integrator="whfast", dt=2 * np.pi / 50, megno=True,
                           megno_state=state, steps_per_launch=1 << 20)
    assert report["megno"][0] == pytest.approx(6.8802943098483142, rel=0.01)
    assert 50 < report["lyapunov_time"][0] < 250


def test_stability_map_grid_axes_and_regular_points():
    base = nbody.from_elements(1.0, [[1e-3, 1e-3]],
                               [[1.0, 0.0, 0, 0, 0, 0], [1.8, 0.0, 0, 0, 0, np.pi]])
    x0 = base.positions()
    smap = nbody.stability_map(base, "a:2:1.6:2.0:4", ("e", 2, 0.0, 0.1, 3),
                               destination=2 * np.pi * 50, integrator="whfast",
                               dt=2 * np.pi / 50)
    np.testing.assert_allclose(smap.x, np.linspace(1.6, 2.0, 4))
    np.testing.assert_allclose(smap.y, np.linspace(0.0, 0.1, 3))
    assert (smap.x_element, smap.x_body, smap.y_element, smap.y_body) == ("a", 2, "e", 2)
    for name in ("megno", "lyapunov_time", "time", "state", "reason"):
        assert getattr(smap, name).shape == (3, 4), name
    assert smap.state.dtype == np.int32 or smap.state.dtype.kind == "i"
    np.testing.assert_allclose(smap.time, 2 * np.pi * 50)
    # Point (ix, iy) is system ix + 4 iy of the final state: its outer planet keeps about those
    # a and e over 50 orbits.
    final = smap.final_state
    assert final.systems == 12
    outer = final.elements()[:, 1, :].reshape(3, 4, 6)
    np.testing.assert_allclose(outer[:, :, 0], np.broadcast_to(smap.x, (3, 4)), rtol=0.03)
    np.testing.assert_allclose(outer[:, :, 1], np.broadcast_to(smap.y[:, None], (3, 4)), atol=0.03)
    # Far from the inner planet and circular: regular, as ias15 finds the same system.
    single = nbody.from_elements(1.0, [[1e-3, 1e-3]],
                                 [[1.0, 0.0, 0, 0, 0, 0], [2.0, 0.0, 0, 0, 0, np.pi]])
    ias15 = single.integrate(2 * np.pi * 50, integrator="ias15", dt=1e-3, megno=True)
    assert abs(smap.megno[0, 3] - 2) < 0.3 and abs(ias15["megno"][0] - 2) < 0.3
    np.testing.assert_array_equal(base.positions(), x0)  # the base is left as it was
    with pytest.raises(kosmos.InvalidInput, match="body"):
        nbody.stability_map(base, "a:5:1.6:2.0:4", "e:2:0:0.1:3", destination=1.0)
    with pytest.raises(kosmos.InvalidInput, match="system 3"):
        nbody.stability_map(base, "a:2:1.6:2.0:4", "e:2:0:0.1:3", destination=1.0, system=3)


def _scattering_system(index):
    """System `index` of unit_tests/nbody/data/scattering_64.txt as arrays (m, x, v)."""
    path = (Path(__file__).resolve().parents[2] / "unit_tests" / "nbody" / "data" /
            "scattering_64.txt")
    rows = [line.split() for line in path.read_text().splitlines()
            if line and line[0] in "0123456789-"]
    state = np.array(rows[4 * index:4 * index + 4], dtype=float)[None]
    return tuple(np.ascontiguousarray(part) for part in
                 (state[:, :, 0], state[:, :, 1:4], state[:, :, 4:7]))


def test_mercurius_crosses_a_close_encounter_as_ias15_does():
    # The planets of system 4 pass deep inside their Hill spheres before t = 20: the hybrid at
    # dt 0.05 follows IAS15 there, as unit_tests/nbody/test_mercurius.cpp checks in C++.
    m, x, v = _scattering_system(4)
    hybrid, reference = nbody.from_arrays(m, x, v), nbody.from_arrays(m, x, v)
    e0 = hybrid.energy()[0]
    report = hybrid.integrate(20, integrator="mercurius", dt=0.05, changeover_hill=3,
                              energy_limit=0)
    assert report["reached_destination"] == 1
    reference.integrate(20, integrator="ias15", dt=0.01, energy_limit=0)
    assert np.max(np.abs(hybrid.positions() - reference.positions())) < 1e-4
    assert abs(hybrid.energy()[0] / e0 - 1) < 1e-6
    with pytest.raises(kosmos.InvalidInput, match="tolerance"):
        nbody.from_arrays(m, x, v).integrate(1, integrator="mercurius", dt=0.05, tolerance=0)
