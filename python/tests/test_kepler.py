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
    r = kepler.fit(t, v, sigma, planets=1, trend=0, chains=16, burn=60, steps=60, thin=2, candidates=256,
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


def _star(orbits, n, span, seed, sigma=1.5, offset=2.0):
    """A one-instrument star about epoch 5000 (the budget of the library's model-selection tests,
    unit_tests/kepler/test_evidence.cpp): Keplerians (P, K, e, omega, M0 at 5000; E by Newton's
    iteration here) + offset + white noise of `sigma`."""
    rng = np.random.default_rng(seed)
    t = np.sort(5000 - span / 2 + span * rng.uniform(size=n))
    v = np.full(n, offset)
    for P, K, e, w, M0 in orbits:
        M = M0 + 2 * np.pi * (t - 5000) / P
        E = M.copy()
        for _ in range(50):
            E -= (E - e * np.sin(E) - M) / (1 - e * np.cos(E))
        nu = 2 * np.arctan2(np.sqrt(1 + e) * np.sin(E / 2), np.sqrt(1 - e) * np.cos(E / 2))
        v += K * (np.cos(nu + w) + e * np.cos(w))
    return kepler.RVData(t, v + sigma * rng.normal(size=n), np.full(n, sigma))


# The budget of test_evidence.cpp's selection tests: small chains, a 10-temperature ladder.
def _selection_budget(planets, trend=0):
    return dict(chains=2 * (5 * planets + 2 + trend) + 2, burn=150, steps=150, thin=3, generations=40,
                candidates=1024, epoch=5000.0, k_max=100.0, jitter_max=20.0, temperatures=10,
                precision="double")


def test_evidence_prefers_one_planet_for_a_one_planet_star():
    data = _star([(11.3, 9.0, 0.1, 1.0, 2.0)], 40, 250, 22)
    fit = kepler.fit(data, planets="auto", max_planets=2, trend=0, **_selection_budget(2))
    z = fit.evidence
    assert list(z.planets) == [0, 1, 2] and list(z.trend) == [0, 0, 0]
    assert z.preferred == 1 and not z.top_of_range
    assert z.log_odds(1, 0) > 20
    # Short chains bias ln Z of the larger model up (test_evidence.cpp): 2 planets do not beat
    # 1 by the odds threshold once the errors are counted, so the rule keeps 1.
    assert z.log_odds(2, 1) - 2 * (z.ln_z_error[1] + z.ln_z_error[2]) < 5
    assert z.ln_z[1] > z.ln_z[0]
    assert np.all(z.ln_z_error > 0)
    assert z.probability.sum() == pytest.approx(1.0)
    # Equal prior odds: each probability is exp(ln Z) normalized over the models compared.
    p = np.exp(z.ln_z - z.ln_z.max())
    np.testing.assert_allclose(z.probability, p / p.sum(), rtol=1e-9, atol=1e-12)
    assert [prior[0] for prior in z.default_priors] == ["gamma_0"]
    assert fit.planets == 1
    assert fit.summary["P_b"].median == pytest.approx(11.3, abs=0.05)
    assert fit.summary["K_b"].median == pytest.approx(9.0, abs=1.5)
    assert fit.false_alarm[0] < 1e-6
    assert len(fit.period_modes) == 1 and len(fit.period_modes[0]) == 1
    assert "supported 1 planet(s)" in repr(fit)


def test_evidence_prefers_no_planet_and_no_trend_for_noise():
    data = _star([], 40, 300, 21)
    # The defaults, as the tool's: counts and trend orders by evidence.
    fit = kepler.fit(data, max_planets=1, **_selection_budget(1, trend=2))
    z = fit.evidence
    assert sorted(zip(z.trend, z.planets)) == [(t, p) for t in range(3) for p in range(2)]
    assert (z.preferred, z.preferred_trend) == (0, 0)
    assert z.log_odds(1, 0) < 5
    assert fit.planets == 0 and fit.trend == 0
    assert fit.false_alarm[0] > 0.01  # the signal searched for and rejected


def test_survey_counts_each_star_by_evidence():
    # A 1-planet star and a noise-only star in one survey (kosmos::kepler::survey_evidence).
    stars = [_star([(11.3, 9.0, 0.1, 1.0, 2.0)], 40, 250, 22), _star([], 40, 300, 21)]
    results = kepler.survey(stars, max_planets=1, evidence=True, **_selection_budget(1))
    assert [r.evidence.preferred for r in results] == [1, 0]
    assert [r.planets for r in results] == [1, 0]
    assert results[0].evidence.log_odds(1, 0) > 20
    assert results[1].evidence.log_odds(1, 0) < 5
    assert results[0].summary["P_b"].median == pytest.approx(11.3, abs=0.05)
    assert kepler.survey(stars[:1], planets=1, chains=16, burn=20, steps=20, thin=2,
                         candidates=256, generations=10, precision="double")[0].evidence is None


def test_count_evidence_of_offsets_matches_the_analytic_evidence():
    # Two offsets, no planet, jitter fixed at 0, uniform priors of widths 60 and 80 m/s: ln L is
    # Gaussian in the offsets, so Z = L_max (2 pi)^(d/2) det(F)^(-1/2) / prod(widths) with
    # F = X^T W X (the check of test_evidence.cpp, computed here with numpy).
    rng = np.random.default_rng(3)
    n = 40
    t = 1000 + 200.0 * np.arange(n) / n
    sigma = 1 + rng.uniform(size=n)
    inst = np.arange(n) % 2
    v = np.where(inst == 1, -4.0, 3.0) + 0.05 * (t - 1100) + sigma * rng.normal(size=n)
    data = kepler.RVData(t, v, sigma, np.array(["A", "B"])[inst])
    z = kepler.evidence(data, planets=0, chains=24, burn=400, steps=1200, thin=2, epoch=1100.0,
                        priors="jitter_A fixed 0; jitter_B fixed 0; gamma_A uniform -30 30; "
                               "gamma_B uniform -40 40", precision="double")
    X = np.column_stack([inst == 0, inst == 1]).astype(float)
    W = 1 / sigma ** 2
    F = X.T @ (W[:, None] * X)
    beta = np.linalg.solve(F, X.T @ (W * v))
    r = v - X @ beta
    ln_l = -0.5 * np.sum(r ** 2 * W + np.log(2 * np.pi * sigma ** 2))
    expected = ln_l + np.log(2 * np.pi) - 0.5 * np.linalg.slogdet(F)[1] - np.log(60 * 80)
    (c,) = z.counts
    assert c.ln_z == pytest.approx(expected, abs=max(3 * c.ln_z_error, 0.1))
    assert c.ln_z_error < 0.5
    assert len(c.beta) == 32 and c.beta[0] == 0 and c.beta[-1] == 1
    with pytest.raises(kosmos.InvalidInput, match="temperatures = 2"):
        kepler.evidence(data, planets=0, temperatures=2, chains=24, burn=10, steps=40,
                        priors="gamma_A uniform -30 30; gamma_B uniform -40 40")
    with pytest.raises(kosmos.InvalidInput, match="gamma"):  # improper offset priors
        kepler.evidence(data, planets=0, chains=24, burn=10, steps=40)


def test_baluev_false_alarm_probability_against_its_formula():
    # Baluev (2008), as astropy's method="baluev": FAP = 1 - (1 - (1 - z)^((n-3)/2)) exp(-tau),
    # tau = gamma(n-1) W (1 - z)^((n-4)/2) sqrt((n-1) z / 2), W = f_max sqrt(4 pi var_w(t)),
    # gamma(N) = sqrt(2 / N) Gamma(N / 2) / Gamma((N - 1) / 2); written here from the paper.
    from math import lgamma
    rng = np.random.default_rng(5)
    t = np.sort(rng.uniform(0, 300, 30))
    sigma = rng.uniform(1, 2, 30)
    w = 1 / sigma ** 2
    f_max = 1.0
    n = len(t)
    var = np.sum(w * t ** 2) / np.sum(w) - (np.sum(w * t) / np.sum(w)) ** 2
    W = f_max * np.sqrt(4 * np.pi * var)

    def gamma(N):
        return np.sqrt(2 / N) * np.exp(lgamma(N / 2) - lgamma((N - 1) / 2))

    for z in (0.2, 0.4, 0.6):
        tau = gamma(n - 1) * W * (1 - z) ** ((n - 4) / 2) * np.sqrt((n - 1) * z / 2)
        expected = 1 - (1 - (1 - z) ** ((n - 3) / 2)) * np.exp(-tau)
        assert kepler.false_alarm_probability(z, t, sigma, f_max) == pytest.approx(expected,
                                                                                   rel=1e-10)
    with pytest.raises(kosmos.InvalidInput, match="power"):
        kepler.false_alarm_probability(1.5, t, sigma, f_max)
    with pytest.raises(ValueError, match="weights has extent 29"):
        kepler._k.false_alarm_probability(0.5, t, w[:29], f_max)
