# `kosmos rv --plot DIR` and `kosmos dust --plot DIR`: the tool's outputs read back by
# kosmos.kepler.read_posterior / kosmos.io and drawn by kosmos.cli_plots.
import os
import re
import subprocess

import numpy as np
import pytest

from kosmos import io, kepler

pytest.importorskip("matplotlib")
CLI = os.environ.get("KOSMOS_CLI")
pytestmark = pytest.mark.skipif(not CLI, reason="KOSMOS_CLI (the kosmos tool) not given")


def run(*args):
    r = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def pngs(directory, names):
    for name in names:
        path = directory / f"{name}.png"
        assert path.exists() and path.stat().st_size > 1000, path


@pytest.mark.parametrize("suffix", ["txt", "h5"])
def test_rv_plot(data_dir, tmp_path, suffix):
    if suffix == "h5" and not io._io.hdf5:
        pytest.skip("built without HDF5")
    data = data_dir / "rv" / "hd164922_radvel.txt"
    out = tmp_path / f"post.{suffix}"
    # The text run samples in mixed precision (the GPU's default); the MAP's ln L is still double.
    precision = "mixed" if suffix == "txt" else "double"
    stdout = run("rv", data, "--planets", 1, "--trend", 0, "--chains", 24, "--burn", 30, "--steps", 30,
                 "--generations", 20, "--candidates", 512, "--precision", precision, "--output", out,
                 "--plot", tmp_path / "plots", "--quiet")
    pngs(tmp_path / "plots", ["rv", "phase", "periodogram", "corner", "trace"])
    fit = kepler.read_posterior(out, data)
    kept = (30 + 3) // 4  # generations 0, 4, ..., 28 of each chain
    assert fit.samples.shape == (24 * kept, len(fit.columns))
    assert np.array_equal(np.bincount(fit.chain), np.full(24, kept))
    # The MAP model read back, evaluated by the chi^2 kernel, has the tool's printed ln L.
    printed = float(re.search(r"MAP \(polished optimum\).*ln L = (\S+)", stdout).group(1))
    P, K, e, omega, M0 = (x[None, :] for x in fit.orbit_arrays())
    _, loglike = kepler.chi2(fit.data.t, fit.data.v, fit.data.sigma, P, K, e, omega, M0,
                             instrument=fit.data.instrument, offset=[fit.map_offsets],
                             jitter=[fit.map_jitters], epoch=fit.epoch)
    assert loglike[0] == pytest.approx(fit.map_loglike, rel=1e-10)
    assert loglike[0] == pytest.approx(printed, abs=1e-3)


def test_rv_plot_refused_before_the_fit(data_dir, tmp_path):
    r = subprocess.run([CLI, "rv", "--batch", data_dir / "rv", "--plot", tmp_path],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--plot" in r.stderr


@pytest.mark.parametrize("suffix", ["txt", "h5"])
def test_dust_plot(data_dir, tmp_path, suffix):
    if suffix == "h5" and not io._io.hdf5:
        pytest.skip("built without HDF5")
    sed, temperatures = tmp_path / f"sed.{suffix}", tmp_path / f"t.{suffix}"
    args = ["dust", "--cross-sections", data_dir / "dust" / "draine_graphite_81.dat",
            "--generate", 3, "--sed", sed, "--temperatures", temperatures,
            "--plot", tmp_path / "plots"]
    if suffix == "h5":
        args += ["--stochastic-below", 0.002, "--pt-output", tmp_path / "pt.h5"]
    run(*args)
    pngs(tmp_path / "plots", ["sed", "temperatures_0"] +
         (["temperature_distribution"] if suffix == "h5" else []))
