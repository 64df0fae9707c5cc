"""kosmos.plot: figures of Kosmos results with matplotlib (an optional dependency).

Every function returns the matplotlib Figure and, given `path`, also saves it there (dpi: the
`dpi` keyword, default 100) and closes it.
"""
import numpy as np

try:
    import matplotlib.pyplot as plt
except ImportError as _error:  # pragma: no cover - depends on the installation
    raise ImportError("kosmos.plot needs matplotlib (Debian: apt-get install python3-matplotlib; "
                      "pip install matplotlib)") from _error

__all__ = ["rv", "phase", "periodogram", "corner", "trace", "orbits", "stability_map", "sed",
           "temperatures", "temperature_distribution"]


def _finish(fig, path, dpi):
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=dpi)
        plt.close(fig)
    return fig


def _markers():
    return ["o", "s", "^", "D", "v", "P", "X"]


def rv(fit, path=None, *, dpi=100, points=2000):
    """RV data per instrument (offsets removed) with the MAP model, and the residuals."""
    d = fit.data
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1]})
    tt = np.linspace(d.t.min(), d.t.max(), points)
    t0 = np.floor(d.t.min() / 1000) * 1000 if d.t.min() > 1e5 else 0.0  # e.g. BJD - 2450000
    top.plot(tt - t0, fit.model(tt, offsets=False), color="k", lw=0.8, label="MAP model")
    resid = fit.residuals()
    offsets = np.asarray(fit.map_offsets)
    for i, name in enumerate(d.instrument_names):
        sel = d.instrument == i
        kw = dict(fmt=_markers()[i % 7], ms=3, lw=0.6, label=name)
        top.errorbar(d.t[sel] - t0, d.v[sel] - offsets[i], d.sigma[sel], **kw)
        bottom.errorbar(d.t[sel] - t0, resid[sel], d.sigma[sel], **kw)
    top.set_ylabel("RV [m/s]")
    top.legend(fontsize=8, ncol=len(d.instrument_names) + 1)
    bottom.axhline(0, color="k", lw=0.8)
    bottom.set_ylabel("O - C [m/s]")
    bottom.set_xlabel(f"time - {t0:.0f}" if t0 else "time")
    top.set_title(f"{fit.planets} planet(s): MAP ln L = {fit.map_loglike:.1f}, "
                  f"rms O - C = {np.std(resid):.2f} m/s")
    return _finish(fig, path, dpi)


def phase(fit, path=None, *, dpi=100):
    """Per planet: the data minus the other planets, the trend and the offsets, folded on the
    planet's MAP period, with its model."""
    d = fit.data
    n = max(fit.planets, 1)
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.6), squeeze=False)
    offsets = np.asarray(fit.map_offsets)[d.instrument]
    for p, ax in enumerate(axes[0][:fit.planets]):
        others = [q for q in range(fit.planets) if q != p]
        rest = fit.model(d.t, planets=others, offsets=False) if others else fit.model(d.t, planets=[], offsets=False)
        own = d.v - offsets - rest
        P = fit.map_orbits[p]["P"]
        ph = np.mod(d.t - fit.epoch, P) / P
        for i, name in enumerate(d.instrument_names):
            sel = d.instrument == i
            ax.errorbar(ph[sel], own[sel], d.sigma[sel], fmt=_markers()[i % 7], ms=3, lw=0.6,
                        label=name)
        grid = np.linspace(0, 1, 400)
        model = fit.model(fit.epoch + grid * P, planets=[p], offsets=False) - \
            fit.model(fit.epoch + grid * P, planets=[], offsets=False)
        ax.plot(grid, model, color="k", lw=1)
        letter = chr(ord("b") + p)
        ax.set_title(f"planet {letter}: P = {P:.4g} d, K = {fit.map_orbits[p]['K']:.3g} m/s")
        ax.set_xlabel("phase")
        ax.set_ylabel("RV [m/s]")
    axes[0][0].legend(fontsize=7)
    return _finish(fig, path, dpi)


def _gls(t, y, sigma, frequencies):
    """Generalized Lomb-Scargle power (Zechmeister & Kuerster 2009), weights 1 / sigma^2."""
    w = 1 / sigma ** 2
    w = w / w.sum()
    y = y - np.sum(w * y)
    yy = np.sum(w * y * y)
    power = np.empty(frequencies.size)
    for k, f in enumerate(frequencies):
        c, s = np.cos(2 * np.pi * f * t), np.sin(2 * np.pi * f * t)
        C, S = np.sum(w * c), np.sum(w * s)
        YC, YS = np.sum(w * y * c), np.sum(w * y * s)
        CC = np.sum(w * c * c) - C * C
        SS = np.sum(w * s * s) - S * S
        CS = np.sum(w * c * s) - C * S
        D = CC * SS - CS * CS
        power[k] = (SS * YC * YC + CC * YS * YS - 2 * CS * YC * YS) / (yy * D)
    return power


def periodogram(fit, path=None, *, dpi=100, period_min=None, period_max=None, n=3000):
    """Generalized Lomb-Scargle periodogram of the MAP residuals (remaining signals), with the
    fitted periods marked."""
    d = fit.data
    span = d.t.max() - d.t.min()
    pmin = period_min or 1.0
    pmax = period_max or 2 * span
    freq = np.geomspace(1 / pmax, 1 / pmin, n)
    power = _gls(d.t, fit.residuals(), d.sigma, freq)
    fig, ax = plt.subplots(figsize=(8, 3.2))
    ax.semilogx(1 / freq, power, color="k", lw=0.7)
    for o in fit.map_orbits:
        ax.axvline(o["P"], color="C3", ls="--", lw=0.8)
    ax.set_xlabel("period [d]")
    ax.set_ylabel("GLS power")
    ax.set_title("residual periodogram (dashed: fitted periods)")
    return _finish(fig, path, dpi)


def _columns(fit, columns):
    if columns is None:
        columns = [c for c in fit.columns if c.split("_")[0] in ("P", "K", "e")]
    return columns


def corner(fit, columns=None, path=None, *, dpi=100, bins=30):
    """Histograms of each column and 2-D histograms of each pair of the posterior samples,
    with the medians and the 68 % intervals."""
    columns = _columns(fit, columns)
    n = len(columns)
    data = [fit[c] for c in columns]
    fig, axes = plt.subplots(n, n, figsize=(1.9 * n + 1, 1.9 * n + 1), squeeze=False)
    for i in range(n):
        for j in range(n):
            ax = axes[i][j]
            if j > i:
                ax.set_visible(False)
                continue
            if i == j:
                ax.hist(data[i], bins=bins, color="0.4", histtype="stepfilled")
                lo, mid, hi = np.percentile(data[i], [15.87, 50, 84.13])
                for x in (lo, mid, hi):
                    ax.axvline(x, color="C0", lw=0.8, ls="-" if x == mid else "--")
                ax.set_yticks([])
                ax.set_title(f"{columns[i]} = {mid:.4g}", fontsize=8)
            else:
                ax.hist2d(data[j], data[i], bins=bins, cmap="Greys")
            if i == n - 1:
                ax.set_xlabel(columns[j], fontsize=8)
            else:
                ax.set_xticklabels([])
            if j == 0 and i > 0:
                ax.set_ylabel(columns[i], fontsize=8)
            elif i != j:
                ax.set_yticklabels([])
            ax.tick_params(labelsize=6)
    return _finish(fig, path, dpi)


def trace(fit, columns=None, path=None, *, dpi=100, chains=6):
    """Samples against their index in each of the first `chains` chains, per column."""
    columns = _columns(fit, columns)
    fig, axes = plt.subplots(len(columns), 1, figsize=(8, 1.6 * len(columns) + 0.6), sharex=True,
                             squeeze=False)
    for ax, c in zip(axes[:, 0], columns):
        values = fit[c]
        for k in np.unique(fit.chain)[:chains]:
            ax.plot(values[fit.chain == k], lw=0.5)
        ax.set_ylabel(c, fontsize=8)
        ax.tick_params(labelsize=7)
    axes[-1, 0].set_xlabel("kept sample of the chain")
    axes[0, 0].set_title(f"first {chains} chains; max R-hat {fit.max_rhat:.3f}, min ESS {fit.min_ess:.0f}")
    return _finish(fig, path, dpi)


def orbits(positions, path=None, *, dpi=100, system=0, labels=None):
    """x-y paths of the bodies of one system: positions (times, systems, bodies, 3), e.g. from
    kosmos.nbody.trajectory."""
    p = np.asarray(positions)[:, system]
    fig, ax = plt.subplots(figsize=(5, 5))
    for b in range(p.shape[1]):
        label = labels[b] if labels else ("star" if b == 0 else f"body {b}")
        ax.plot(p[:, b, 0], p[:, b, 1], lw=0.8, label=label)
        ax.plot(p[-1, b, 0], p[-1, b, 1], "o", ms=4 if b else 7, color=ax.lines[-1].get_color())
    ax.set_aspect("equal")
    ax.set_xlabel("x [AU]")
    ax.set_ylabel("y [AU]")
    ax.legend(fontsize=8)
    return _finish(fig, path, dpi)


def stability_map(x, y, value, path=None, *, dpi=100, xlabel="", ylabel="", label="survived",
                  cmap="viridis"):
    """A scalar (e.g. survival, time of the first close encounter) over a grid of two
    parameters: value has shape (len(y), len(x))."""
    fig, ax = plt.subplots(figsize=(6, 4.5))
    mesh = ax.pcolormesh(x, y, np.asarray(value), shading="auto", cmap=cmap)
    fig.colorbar(mesh, ax=ax, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return _finish(fig, path, dpi)


def sed(wavelength_micron, sed, path=None, *, dpi=100, labels=None):
    """lambda L_lambda of each cell's SED (cells, L) against wavelength (micron)."""
    sed = np.atleast_2d(sed)
    lam = np.asarray(wavelength_micron)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for c, row in enumerate(sed):
        ax.loglog(lam, lam * 1e-6 * row, lw=1, label=labels[c] if labels else f"cell {c}")
    ax.set_xlabel("wavelength [micron]")
    ax.set_ylabel(r"$\lambda L_\lambda$ [W sr$^{-1}$]")
    peak = np.max(lam * 1e-6 * sed)
    ax.set_ylim(peak * 1e-6, peak * 3)
    shown = np.any(lam * 1e-6 * sed > peak * 1e-6, axis=0)
    ax.set_xlim(lam[shown].min() / 1.5, lam[shown].max() * 1.5)
    ax.legend(fontsize=8)
    return _finish(fig, path, dpi)


def temperatures(radius_micron, temperature, path=None, *, dpi=100, labels=None):
    """Equilibrium temperature against grain radius, one line per cell: temperature (cells, S)."""
    temperature = np.atleast_2d(temperature)
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for c, row in enumerate(temperature):
        ax.semilogx(radius_micron, row, "o-", ms=3, lw=1, label=labels[c] if labels else f"cell {c}")
    ax.set_xlabel("grain radius [micron]")
    ax.set_ylabel("T [K]")
    ax.legend(fontsize=7, bbox_to_anchor=(1.02, 1), loc="upper left")
    return _finish(fig, path, dpi)


def temperature_distribution(bin_temperature, probability, path=None, *, dpi=100, labels=None,
                             bins=None):
    """P(T) of stochastically heated grains: one curve per grain, probability per bin (G, bins)
    on bin temperatures (G, bins) in K, as dP/dlnT so that curves on different grids compare.
    bins: each grain's number of bins (a --pt-output's species_bins), where a row holds fewer than
    its length (the rest is padding)."""
    T = np.atleast_2d(bin_temperature)
    P = np.atleast_2d(probability)
    counts = [T.shape[1]] * T.shape[0] if bins is None else [int(b) for b in np.atleast_1d(bins)]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    top = 0.0
    for g in range(P.shape[0]):
        t, p = T[g, :counts[g]], P[g, :counts[g]]
        density = p / np.gradient(np.log(t)) if len(t) > 1 else p
        top = max(top, float(np.nanmax(density, initial=0.0)))
        ax.loglog(t, density, lw=1, label=labels[g] if labels else f"grain {g}")
    ax.set_xlabel("T [K]")
    ax.set_ylabel("dP / d ln T")
    if top > 0 and np.isfinite(top):
        ax.set_ylim(top * 1e-8, top * 3)
    ax.legend(fontsize=7)
    return _finish(fig, path, dpi)
