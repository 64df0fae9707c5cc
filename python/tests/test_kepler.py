import numpy as np
import pytest

import kosmos
from kosmos import kepler


def residual(E, e, M):
    return E - e * np.sin(E) - np.mod(M, 2 * np.pi)


@pytest.mark.parametrize("solver", ["markley", "danby"])
def test_solve_satisfies_kepler_equation(solver):
    rng = np.random.default_rng(1)
    M = rng.uniform(-2 * np.pi, 2 * np.pi, 20000)
    e = rng.uniform(0, 0.99, M.size)
    E = kepler.solve(M, e, solver=solver)
    r = residual(E, e, M)
    r -= 2 * np.pi * np.round(r / (2 * np.pi))  # M mod 2pi may round to 2pi
    assert np.max(np.abs(r)) < 1e-14
    assert np.all((E >= 0) & (E < 2 * np.pi))


def test_solve_float32_and_full_outputs():
    M = np.linspace(0, 6, 101, dtype=np.float32)
    s = kepler.solve(M, np.float32(0.5) * np.ones_like(M), full=True)
    assert s.E.dtype == np.float32
    assert np.max(np.abs(residual(s.E.astype(float), 0.5, M.astype(float)))) < 2e-6
    np.testing.assert_allclose(s.sinE, np.sin(s.E), atol=2e-6)
    # true anomaly: tan(nu/2) = sqrt((1 + e) / (1 - e)) tan(E/2)
    nu = 2 * np.arctan(np.sqrt(3.0) * np.tan(s.E.astype(float) / 2)) % (2 * np.pi)
    np.testing.assert_allclose(s.nu, nu, atol=1e-5)
    assert np.all(s.status == kepler.Status.converged)


def test_solve_writes_into_out_without_copy():
    M = np.linspace(0, 1, 50)
    out = np.empty(50)
    E = kepler.solve(M, 0.1, out=out)
    assert E is out
    assert np.shares_memory(E, out)
    assert np.max(np.abs(residual(out, 0.1, M))) < 1e-14


def test_solve_rejects_bad_arrays():
    with pytest.raises(TypeError, match="M must have dtype float64, not int64"):
        kepler.solve(np.arange(5), np.zeros(5))
    with pytest.raises(ValueError, match="C-contiguous"):
        kepler.solve(np.linspace(0, 1, 10)[::2], 0.1)
    with pytest.raises(ValueError, match="e has shape"):
        kepler.solve(np.zeros(4), np.zeros(3))
    with pytest.raises(ValueError, match=r"element \(2,\) .*invalid"):
        kepler.solve(np.zeros(4), np.array([0.1, 0.2, 1.5, 0.3]))
    with pytest.raises(kosmos.InvalidInput, match="max_iterations = 0"):
        kepler.solve(np.zeros(4), 0.1, solver="danby", max_iterations=0)


def test_circular_orbit_rv_is_a_cosine():
    t = np.linspace(0, 100, 500)
    P, K, omega, M0, epoch = 7.3, 12.5, 0.7, 1.1, 20.0
    v = kepler.rv_model(t, P, K, 0.0, omega, M0, epoch=epoch)
    np.testing.assert_allclose(v, K * np.cos(2 * np.pi * (t - epoch) / P + M0 + omega), atol=1e-11)
    # two planets add
    v2 = kepler.rv_model(t, [P, 30.0], [K, 3.0], [0, 0], [omega, 0], [M0, 0], epoch=epoch)
    np.testing.assert_allclose(v2 - v, 3 * np.cos(2 * np.pi * (t - epoch) / 30.0), atol=1e-11)


def test_chi2_matches_direct_sum():
    rng = np.random.default_rng(2)
    t = np.sort(rng.uniform(0, 50, 60))
    sigma = rng.uniform(1, 2, 60)
    inst = np.where(np.arange(60) % 2 == 0, "A", "B")
    v = rng.normal(0, 5, 60)
    P = np.array([[5.0], [9.0]])
    K = np.array([[3.0], [4.0]])
    zeros = np.zeros((2, 1))
    M0 = np.array([[0.3], [1.0]])
    offset = np.array([[1.0, -1.0], [0.5, 0.0]])
    jitter = np.array([[0.5, 1.0], [0.0, 2.0]])
    chi2, loglike = kepler.chi2(t, v, sigma, P, K, zeros, zeros, M0, instrument=inst,
                                offset=offset, jitter=jitter, epoch=10.0)
    idx = (inst == "B").astype(int)
    for s in range(2):
        model = K[s, 0] * np.cos(2 * np.pi * (t - 10.0) / P[s, 0] + M0[s, 0]) + offset[s, idx]
        var = sigma ** 2 + jitter[s, idx] ** 2
        r2 = (v - model) ** 2 / var
        assert chi2[s] == pytest.approx(np.sum(r2), rel=1e-12)
        assert loglike[s] == pytest.approx(-0.5 * np.sum(r2 + np.log(2 * np.pi * var)), rel=1e-12)


def synthetic(n=40, P=12.3, K=10.0, seed=3):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, 150, n))
    sigma = np.full(n, 1.0)
    v = K * np.cos(2 * np.pi * t / P + 0.4) + rng.normal(0, 1.0, n)
    return t, v, sigma


def test_fit_recovers_a_circular_planet():
    t, v, sigma = synthetic()
    r = kepler.fit(t, v, sigma, planets=1, chains=16, burn=60, steps=60, thin=2, candidates=256,
                   generations=15, period_max=60.0, precision="double")
    assert r.planets == 1 and r.samples.shape == (len(r.chain), len(r.columns))
    P = r.summary["P_b"]
    assert abs(P.median - 12.3) < 5 * max(P.upper - P.median, P.median - P.lower, 1e-3)
    K = r.summary["K_b"]
    assert abs(K.median - 10.0) < 1.0
    assert np.shares_memory(r["K_b"], r.samples)  # a column is a view
    assert np.std(r.residuals()) < 1.5
    assert set(r.diagnostics) >= {"max_rhat", "min_ess", "acceptance"}


def test_fit_errors_carry_library_messages(tmp_path, data_dir):
    t, v, sigma = synthetic()
    with pytest.raises(kosmos.InvalidInput, match="priors"):
        kepler.fit(t, v, sigma, planets=1, priors="P_b gaussian 12 1")
    with pytest.raises(kosmos.FileError) as info:
        kepler.read(tmp_path / "missing.txt")
    assert isinstance(info.value, OSError) and "missing.txt" in str(info.value)
    d = kepler.read(data_dir / "rv" / "hd164922_radvel.txt")
    assert len(d) == 401 and d.instrument_names == ["k", "j", "a"]


def test_survey_fits_every_star():
    stars = [kepler.RVData(*synthetic(P=12.3, seed=6)), kepler.RVData(*synthetic(P=20.0, K=15.0, seed=7))]
    results = kepler.survey(stars, planets=1, chains=16, burn=40, steps=40, thin=2, candidates=256,
                            generations=15, period_max=60.0, precision="double")
    assert len(results) == 2
    for r, P, K in zip(results, (12.3, 20.0), (10.0, 15.0)):
        assert r.data is not None and r.samples.shape[1] == len(r.columns)
        assert abs(r.summary["P_b"].median - P) < 0.2
        assert abs(r.summary["K_b"].median - K) < 1.5
