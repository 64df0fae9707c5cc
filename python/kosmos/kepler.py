"""kosmos.kepler: batched Kepler solver, radial-velocity models, chi^2, and the planet search.

Conventions are the library's (src/kosmos/kepler/rv.hpp, RadVel's): omega is the argument of
periastron of the star's orbit and M0 the mean anomaly at ``epoch``, both in radians; P in the
time unit of t (days), K in m/s. The search (``fit``) reports omega and M0 in degrees, as the
``kosmos rv`` tool does.
"""
import os as _os
from collections import namedtuple

import numpy as np

from . import _kosmos

_k = _kosmos.kepler

__all__ = ["solve", "rv_model", "chi2", "RVData", "read", "fit", "survey", "FitResult",
           "minimum_mass", "read_posterior", "Status", "evidence", "Evidence", "ModelEvidence",
           "false_alarm_probability", "noise_models"]


class Status:
    """Per-element status of :func:`solve` (kosmos::kepler::Status)."""
    converged, not_converged, invalid_element = 0, 1, 2


KeplerSolution = namedtuple("KeplerSolution", "E sinE cosE nu status")


def _real_array(x, dtype=np.float64):
    """A numpy array as it is (checked in C++), any other sequence or scalar converted."""
    return x if isinstance(x, np.ndarray) else np.asarray(x, dtype=dtype)


def solve(M, e, *, out=None, solver="markley", max_iterations=10, tolerance=0.0, full=False):
    """Eccentric anomaly E of M = E - e sin E, element by element, on the execution space.

    M: float64 or float32 array (any shape, C order: used without a copy); e: scalar or array
    of M's shape and dtype. out: optional array for E (M's shape and dtype), written in place.
    solver: 'markley' (loop-free, default) or 'danby' (Ford's iteration, at most max_iterations;
    tolerance on |f(E)|, 0: the default 1e-12 double / 1e-6 float). Returns E in [0, 2 pi); with
    full=True a KeplerSolution (E, sinE, cosE, nu, status). Without full, an element that is
    not converged or invalid (e outside [0, 1), non-finite M) raises ValueError naming it.
    """
    M = _real_array(M)
    dtype = M.dtype if M.dtype in (np.float32, np.float64) else np.float64
    if np.ndim(e) == 0 and not isinstance(e, np.ndarray):
        e = np.full(M.shape, e, dtype=dtype)
    e = _real_array(e, dtype)
    if e.shape != M.shape:
        raise ValueError(f"kosmos.kepler.solve: e has shape {e.shape}, M {M.shape}")
    E = np.empty(M.shape, dtype) if out is None else out
    if not isinstance(E, np.ndarray) or E.shape != M.shape:
        raise ValueError(f"kosmos.kepler.solve: out must be an array of shape {M.shape}")
    status = np.empty(M.shape, np.uint8)
    extra = [np.empty(M.shape, dtype) for _ in range(3)] if full else [None] * 3
    for name, a in (("M", M), ("e", e), ("out", E)):
        if not a.flags.c_contiguous:  # flattening it would copy: outputs would be lost
            raise ValueError(f"kosmos.kepler.solve: {name} must be C-contiguous "
                             "(use np.ascontiguousarray)")
    flat = [None if a is None else a.reshape(-1) for a in [M, e, E] + extra + [status]]
    fn = _k.solve_float32 if dtype == np.float32 else _k.solve
    fn(*flat, solver, max_iterations, tolerance)
    if full:
        return KeplerSolution(E, extra[0], extra[1], extra[2], status)
    bad = np.flatnonzero(status)
    if bad.size:
        # plain ints: numpy 2 prints its integer scalars as np.int64(2)
        i = tuple(int(k) for k in np.unravel_index(bad[0], M.shape))
        raise ValueError(f"kosmos.kepler.solve: element {i} (M = {M[i]}, e = {e[i]}) is "
                         f"{'not converged' if status[i] == 1 else 'invalid'}; "
                         f"{bad.size} element(s) failed (full=True returns the status)")
    return E


def _planet_arrays(P, K, e, omega, M0):
    cols = [np.atleast_1d(np.asarray(x, dtype=np.float64)) for x in (P, K, e, omega, M0)]
    n = max(c.size for c in cols)
    return np.ascontiguousarray(np.column_stack([np.broadcast_to(c, (n,)) for c in cols]))


def rv_model(t, P, K, e=0.0, omega=0.0, M0=0.0, *, epoch=0.0, out=None):
    """Stellar velocity sum_j K_j [cos(nu_j + omega_j) + e_j cos omega_j] at times t (float64).

    P, K, e, omega [rad], M0 [rad at epoch]: scalars (one planet) or one value per planet.
    out: optional float64 array of t's shape, written in place (and returned).
    """
    t = _real_array(t)
    v = np.empty(t.shape) if out is None else out
    _k.rv_model(t, _planet_arrays(P, K, e, omega, M0), float(epoch), v)
    return v


def _instrument_indices(instrument, n):
    """(indices int32, names) from None, labels or integer indices."""
    if instrument is None:
        return np.zeros(n, np.int32), ["0"]
    inst = np.asarray(instrument)
    if inst.dtype.kind in "iu":
        names = [str(i) for i in range(int(inst.max()) + 1 if n else 1)]
        return np.ascontiguousarray(inst, dtype=np.int32), names
    names, first = [], {}
    for label in inst.tolist():
        if label not in first:
            first[label] = len(names)
            names.append(str(label))
    return np.array([first[label] for label in inst.tolist()], np.int32), names


def chi2(t, v, sigma, P, K, e, omega, M0, *, instrument=None, offset=0.0, jitter=0.0, trend=None,
         epoch=0.0, solver="markley"):
    """chi^2 and ln L (double precision) of n_sys Keplerian models against one data set.

    P, K, e, omega, M0: (n_sys, n_pl) float64 arrays (radians; n_pl may be 0); offset, jitter:
    scalars or (n_sys, n_instruments); trend: None or (n_sys, 1 or 2) (dvdt, curv about epoch).
    Returns (chi2, loglike), each of shape (n_sys,).
    """
    t, v, sigma = (_real_array(x) for x in (t, v, sigma))
    inst, names = _instrument_indices(instrument, len(t))
    P = _real_array(P)
    if P.ndim != 2:
        raise ValueError(f"kosmos.kepler.chi2: P must have shape (n_sys, n_pl), not {P.shape}")
    n_sys, n_inst = P.shape[0], len(names)

    def per_instrument(x):
        x = np.asarray(x, dtype=np.float64)
        if x.ndim == 0:
            return np.full((n_sys, n_inst), float(x))
        return _real_array(x)
    trend = np.zeros((n_sys, 0)) if trend is None else _real_array(trend)
    out_chi2, out_loglike = np.empty(n_sys), np.empty(n_sys)
    _k.chi2(t, v, sigma, inst, n_inst, float(epoch), P, _real_array(K), _real_array(e),
            _real_array(omega), _real_array(M0), per_instrument(offset),
            per_instrument(jitter), trend, out_chi2, out_loglike, solver)
    return out_chi2, out_loglike


class RVData:
    """Radial velocities: t, v, sigma (float64 arrays), instrument (int32 indices), instrument_names."""

    def __init__(self, t, v, sigma, instrument=None, path=""):
        self.t, self.v, self.sigma = (np.asarray(x, dtype=np.float64) for x in (t, v, sigma))
        if isinstance(instrument, tuple):
            self.instrument, self.instrument_names = instrument
        else:
            self.instrument, self.instrument_names = _instrument_indices(instrument, len(self.t))
        order = np.argsort(self.t, kind="stable")  # the library takes time-sorted rows
        if np.any(order != np.arange(len(order))):
            self.t, self.v, self.sigma, self.instrument = (
                np.ascontiguousarray(x[order]) for x in (self.t, self.v, self.sigma, self.instrument))
        self.path = path

    def __len__(self):
        return len(self.t)

    def _arguments(self):
        return (self.t, self.v, self.sigma, self.instrument, list(self.instrument_names))


def read(path):
    """Reads an RV file as `kosmos rv` does (whitespace or CSV, RadVel's column names)."""
    d = _k.read_rv_file(str(path))
    return RVData(d["t"], d["v"], d["sigma"], (d["instrument"], d["instrument_names"]), str(path))


Summary = namedtuple("Summary", "name map median lower upper ess rhat")


class FitResult:
    """The search's result: posterior samples, per-column summaries, diagnostics, the MAP model.

    samples: (n_samples, n_columns) float64; columns: their names (P_b, K_b, e_b, omega_deg_b,
    M0_deg_b, Tc_b, Tp_b [, msini_jup_b, msini_earth_b, a_au_b], gamma_<inst>, jitter_<inst>,
    dvdt, curv, lnL); chain: each row's chain. result["P_b"] is a column (a view of samples).
    """

    def __init__(self, d, data):
        self.__dict__.update(d)
        self.data = data
        self.summary = {s["name"]: Summary(**s) for s in d["summary"]}
        self.diagnostics = {"max_rhat": d["max_rhat"], "min_ess": d["min_ess"],
                            "acceptance": d["acceptance"], "seconds": d["seconds"],
                            "likelihood_evaluations": d["likelihood_evaluations"]}

    def __getitem__(self, column):
        return self.samples[:, self.columns.index(column)]

    def planet_letters(self):
        return [chr(ord("b") + i) for i in range(self.planets)]

    def orbit_arrays(self, planets=None):
        """P, K, e, omega, M0 (radians) of the MAP orbits, optionally of some planets only."""
        orbits = [o for i, o in enumerate(self.map_orbits) if planets is None or i in planets]
        return tuple(np.array([o[k] for o in orbits]) for k in ("P", "K", "e", "omega", "M0"))

    def model(self, t, instrument=0, planets=None, offsets=True):
        """The MAP velocity at times t: planets (all, or the given indices), trend, and the offset
        of `instrument` (index) when offsets."""
        t = np.asarray(t, dtype=np.float64)
        v = rv_model(t, *self.orbit_arrays(planets), epoch=self.epoch) if self.planets else 0 * t
        for power, coefficient in enumerate(self.map_trend, start=1):
            v = v + coefficient * (t - self.epoch) ** power
        return v + (self.map_offsets[instrument] if offsets else 0.0)

    def residuals(self):
        d = self.data
        model = self.model(d.t, offsets=False) + np.asarray(self.map_offsets)[d.instrument]
        return d.v - model

    def __repr__(self):
        if getattr(self, "evidence", None) is not None:
            return repr(self.evidence) + "\n" + self._posterior_repr()
        return self._posterior_repr()

    def _posterior_repr(self):
        lines = [f"FitResult: {self.planets} planet(s), {len(self.samples)} samples, "
                 f"max R-hat {self.max_rhat:.3f}, min ESS {self.min_ess:.0f}"]
        for s in self.summary.values():
            lines.append(f"  {s.name:>16s} {s.median:.6g} -{s.median - s.lower:.2g} "
                         f"+{s.upper - s.median:.2g} (MAP {s.map:.6g})")
        return "\n".join(lines)


ModelEvidence = namedtuple("ModelEvidence", "planets trend ln_z ln_z_error ln_z_drift ln_z_ti "
                                           "probability beta mean_loglike method ln_z_margin "
                                           "importance_ess")


class Evidence:
    """ln Z per model compared (kosmos::kepler::EvidenceResult): stepping stones over parallel
    tempered DE-MCMC, the thermodynamic integral beside it as a cross-check.

    counts: ModelEvidence per (trend, planets), trend order major; ln_z, ln_z_error (arrays in
    that order); preferred, preferred_trend: the supported model (the fewest planets, then the
    lowest trend order, whose ln Z + 2 sigma is within the odds threshold of the largest
    ln Z - 2 sigma); top_of_range: the supported count is the largest compared (more planets may
    be there); rule; default_priors: (parameter, kind, a, b) priors added for the offsets and trend;
    decided_by: "importance" where a survey's importance screening decided the count (each count's
    method "importance", ln_z_margin: how much higher ln Z may be for period modes the draws do
    not see), "importance and ladder: ..." where those estimates and the ladders of the counts it
    could not estimate decided it, else "ladder" (with the reason in a survey).
    """

    def __init__(self, d):
        self.counts = [ModelEvidence(**c) for c in d["counts"]]
        self.preferred, self.preferred_trend = d["preferred"], d["preferred_trend"]
        self.top_of_range, self.rule, self.seconds = d["top_of_range"], d["rule"], d["seconds"]
        self.default_priors = list(d["default_priors"])
        self.decided_by = d["decided_by"]
        self.planets = np.array([c.planets for c in self.counts])
        self.trend = np.array([c.trend for c in self.counts])
        self.ln_z = np.array([c.ln_z for c in self.counts])
        self.ln_z_error = np.array([c.ln_z_error for c in self.counts])
        self.probability = np.array([c.probability for c in self.counts])

    def get(self, planets, trend=None):
        """The ModelEvidence of a planet count (at the preferred trend order unless given)."""
        trend = self.preferred_trend if trend is None else trend
        for c in self.counts:
            if c.planets == planets and c.trend == trend:
                return c
        raise KeyError(f"no model of {planets} planet(s) and trend {trend} was compared")

    def log_odds(self, a, b):
        """ln of the odds of count a against count b (at the preferred trend order)."""
        return self.get(a).ln_z - self.get(b).ln_z

    def __repr__(self):
        lines = [f"Evidence: supported {self.preferred} planet(s), trend {self.preferred_trend}"
                 + (" (the largest count compared)" if self.top_of_range else "")]
        for c in self.counts:
            lines.append(f"  {c.planets} planet(s), trend {c.trend}: ln Z {c.ln_z:.3f} "
                         f"+- {c.ln_z_error:.3f}, probability {c.probability:.3g}")
        return "\n".join(lines)


def _evidence_options(temperatures, ladder_power, odds_threshold, ladder_chains):
    return {"temperatures": int(temperatures), "ladder_power": float(ladder_power),
            "odds_threshold": float(odds_threshold), "ladder_chains": int(ladder_chains)}


def _options(planets, trend, priors, fix, stellar_mass, precision, progress, options,
             max_planets=2):
    o = dict(options)
    if planets == "auto":
        o["min_planets"], o["planets"] = 0, int(max_planets)
    elif isinstance(planets, str) and ".." in planets:
        lo, hi = planets.split("..")
        o["min_planets"], o["planets"] = int(lo), int(hi)
    elif isinstance(planets, (tuple, list, range)):
        o["min_planets"], o["planets"] = int(min(planets)), int(max(planets))
    else:
        o["planets"] = int(planets)
    o["trend"] = _k.auto_trend if trend == "auto" else int(trend)
    specs = [p.strip() for p in priors.split(";")] if isinstance(priors, str) else list(priors or [])
    specs += [f"{name} fixed {value!r}" for name, value in (fix or {}).items()]
    o["priors"] = [s for s in specs if s]
    if stellar_mass is not None:
        m = np.atleast_1d(stellar_mass)
        o["stellar_mass"] = float(m[0])
        o["stellar_mass_sigma"] = float(m[1]) if m.size > 1 else 0.0
    if precision not in ("auto", "double", "mixed"):
        raise ValueError(f"kosmos.kepler.fit: precision must be auto, double or mixed, not {precision!r}")
    o["mixed_precision"] = precision == "mixed" or (precision == "auto" and not _kosmos.host_accessible)
    o["progress"] = progress
    return o


def fit(t, v=None, sigma=None, instrument=None, *, planets="auto", trend="auto", priors=None, fix=None,
        stellar_mass=None, precision="auto", progress=None, evidence=False, max_planets=2,
        temperatures=32, ladder_power=5.0, odds_threshold=5.0, ladder_chains=32, **options):
    """Global search and DE-MCMC posterior of a Keplerian RV model (kosmos::kepler::search).

    Data: t, v, sigma (and instrument labels or indices), or an RVData (``read(path)``) as t.
    Keywords mirror ``kosmos rv``: planets (N, "A..B" or a range: compare the counts by BIC;
    "auto": 0..max_planets by evidence), trend (0, 1, 2, or "auto": the order 0..2 by evidence),
    priors ("P_b gauss 4.23 0.01; K_b uniform 0 30" or a list), fix ({"e_b": 0}), stellar_mass
    (M or (M, sigma): adds m sin i and a), precision (auto, double, mixed), chains, burn, steps,
    thin, max_extensions, target_rhat (chains not converged run on: ``kosmos rv
    --max-extensions``), generations, candidates, period_min, period_max, epoch, solver
    ('markley', 'danby'),
    noise (``noise_models()``), seed, and the library's k_max, e_max, jitter_max, bic_threshold.
    progress: a callable receiving progress messages.

    Model selection by evidence (kosmos::kepler::select_model, ``kosmos rv --planets auto
    --trend auto`` or ``--evidence``): with planets="auto", trend="auto" or evidence=True the
    counts (and trend orders) are compared by ln Z over a ladder of `temperatures` (>= 3;
    beta_k = (k / (T - 1))^ladder_power; ladder_chains DE-MCMC chains each, or chains where
    fewer, raised to 2 x parameters + 2 where fewer still, 0: chains), the supported model preferred unless a larger one
    raises ln Z by more than odds_threshold (ln odds), and that model's tempered posterior is
    returned, its Evidence in ``result.evidence`` (None otherwise). The defaults are the tool's:
    0..max_planets planets and trend orders 0..2 by evidence.
    """
    data = t if isinstance(t, RVData) else RVData(t, v, sigma, instrument)
    o = _options(planets, trend, priors, fix, stellar_mass, precision, progress, options,
                 max_planets)
    if evidence or planets == "auto" or trend == "auto":
        d = _k.evidence(*data._arguments(), o,
                        _evidence_options(temperatures, ladder_power, odds_threshold, ladder_chains), True)
        result = FitResult(d["posterior"], data)
        result.evidence = Evidence(d["evidence"])
        return result
    result = FitResult(_k.fit(*data._arguments(), o), data)
    result.evidence = None
    return result


def evidence(t, v=None, sigma=None, instrument=None, *, planets="auto", trend=0, priors=None,
             fix=None, precision="auto", progress=None, max_planets=2, temperatures=32,
             ladder_power=5.0, odds_threshold=5.0, ladder_chains=32, **options):
    """ln Z per planet count without the final posterior (kosmos::kepler::planet_count_evidence):
    planets "auto" (0..max_planets), "A..B", a range or N; trend 0, 1 or 2 (one order: for
    "auto" use fit(..., trend="auto")). Every offset and trend coefficient needs a proper prior
    here (e.g. "gamma_HIRES uniform -50 50"); fit(..., planets="auto") adds data-derived ones.
    Other keywords as fit. Returns an Evidence."""
    data = t if isinstance(t, RVData) else RVData(t, v, sigma, instrument)
    o = _options(planets, trend, priors, fix, None, precision, progress, options, max_planets)
    return Evidence(_k.evidence(*data._arguments(), o,
                                _evidence_options(temperatures, ladder_power, odds_threshold, ladder_chains),
                                False)["evidence"])


def false_alarm_probability(power, t, sigma, f_max):
    """Baluev (2008) false-alarm probability of a generalized Lomb-Scargle peak of `power`
    (ZK09 normalization, floating mean) searched up to frequency f_max [1/d] with observations at
    times t of uncertainties sigma (weights 1 / sigma^2): an upper bound, accurate when small
    (astropy's method="baluev")."""
    t = np.ascontiguousarray(t, dtype=np.float64)
    w = 1.0 / np.ascontiguousarray(sigma, dtype=np.float64) ** 2
    return _k.false_alarm_probability(float(power), t, np.ascontiguousarray(w), float(f_max))


def noise_models():
    """The names the ``noise`` keyword of fit accepts."""
    return list(_k.noise_model_names())


def survey(stars, *, planets="auto", trend=0, priors=None, fix=None, stellar_mass=None,
           precision="auto", progress=None, max_planets=2, evidence=False, temperatures=32,
           ladder_power=5.0, odds_threshold=5.0, screen_by_importance=True, importance_draws=4096,
           ladder_chains=32, **options):
    """Many stars: every stage batched over the stars, then one DE-MCMC for all of them, whatever
    their planet counts, in shared launches (kosmos::kepler::survey). stars: RVData objects or file paths.
    planets: N, "A..B" or a range (each star's count chosen by BIC), or "auto" (the default, as
    ``kosmos rv --batch``): 0..max_planets. evidence=True (``kosmos rv --batch --evidence``):
    each star's count by evidence instead (kosmos::kepler::survey_evidence; every star's
    temperature ladders in shared launches), its Evidence in ``result.evidence``; with
    screen_by_importance (the default; ``--ladder-all`` turns it off) importance sampling decides
    the stars it can and only the others run the ladders. Returns one FitResult per star, in
    order."""
    data = [s if isinstance(s, RVData) else read(s) for s in stars]
    o = _options(planets, trend, priors, fix, stellar_mass, precision, progress, options,
                 max_planets)
    arguments = [d._arguments() for d in data]
    if not evidence:
        results = [FitResult(r, d) for r, d in zip(_k.survey(arguments, o), data)]
        for result in results:
            result.evidence = None
        return results
    results = []
    for s, d in zip(_k.survey(arguments, o,
                              dict(_evidence_options(temperatures, ladder_power, odds_threshold, ladder_chains),
                                   screen_by_importance=screen_by_importance,
                                   importance_draws=importance_draws)), data):
        result = FitResult(s["posterior"], d)
        result.evidence = Evidence(s["evidence"])
        results.append(result)
    return results


def read_posterior(path, data):
    """A posterior written by ``kosmos rv --output`` (text or HDF5) as a FitResult: samples,
    columns, chains, epoch and the MAP model (the polished optimum) from the file; data: the RV
    data it was fitted to (an RVData or the data file's path). Summaries are recomputed from
    the samples (median and 68 % interval; R-hat and ESS are not stored per column: NaN)."""
    from . import io
    data = data if isinstance(data, RVData) else read(data)
    path = _os.fspath(path)
    d = {"max_rhat": np.nan, "min_ess": np.nan, "acceptance": np.nan, "seconds": np.nan,
         "likelihood_evaluations": 0}
    if io.is_hdf5(path):
        d["samples"] = io.read(path, "samples")
        d["columns"] = io.read_strings(path, "columns")
        d["chain"] = io.read(path, "chain").astype(np.int64)
        d["epoch"] = io.attribute(path, "epoch")
        d["planets"] = int(io.attribute(path, "planets"))
        d["map_loglike"] = io.attribute(path, "map_loglike")
        d["max_rhat"] = io.attribute(path, "max_rhat")
        d["acceptance"] = io.attribute(path, "acceptance")
        orbits = io.read(path, "map_orbits").reshape(-1, 5)
        d["map_offsets"] = list(io.read(path, "map_offsets"))
        d["map_jitters"] = list(io.read(path, "map_jitters"))
        d["map_trend"] = list(io.read(path, "map_trend"))
    else:
        comments, names, values = io.read_text_table(path)
        meta = {c.split()[0]: c.split()[1:] for c in comments if c.split()}
        if "map_loglike" not in meta or names is None:
            raise _kosmos.FileError(f"{path}: not a posterior written by kosmos rv (no MAP lines; "
                            "files of Kosmos before 0.2 lack them)")
        d["samples"], d["columns"] = values, names
        chains = int(meta["chains"][0].rstrip(":"))
        d["chain"] = np.arange(len(values)) % max(chains, 1)
        header = comments[0]
        d["epoch"] = float(header.split("epoch ")[1].split(",")[0])
        d["map_loglike"] = float(meta["map_loglike"][0])
        keys = sorted(k for k in meta if k.startswith("map_orbit_"))
        orbits = np.array([[float(x) for x in meta[k]] for k in keys]).reshape(-1, 5)
        d["planets"] = len(orbits)
        d["map_offsets"] = [float(x) for x in meta["map_offsets"]]
        d["map_jitters"] = [float(x) for x in meta["map_jitters"]]
        d["map_trend"] = [float(x) for x in meta.get("map_trend", [])]
    d["map_orbits"] = [dict(zip(("P", "K", "e", "omega", "M0"), o)) for o in orbits]
    d["summary"] = [dict(name=c, map=np.nan, median=q[1], lower=q[0], upper=q[2], ess=np.nan,
                         rhat=np.nan)
                    for c, q in zip(d["columns"], np.percentile(d["samples"], [15.87, 50, 84.13],
                                                                axis=0).T)]
    return FitResult(d, data)


def minimum_mass(P, K, e, stellar_mass):
    """m sin i (Jupiter and Earth masses) and a (au) of an orbit around a star (M_sun)."""
    return _k.minimum_mass(float(P), float(K), float(e), float(stellar_mass))
