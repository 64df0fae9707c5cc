import os
import subprocess
import sys

import numpy as np
import pytest

import kosmos


def test_package_and_exceptions():
    assert kosmos.backend in ("OpenMP", "Serial", "Cuda")
    config = kosmos.configuration()
    assert config["kosmos_version"] and config["kokkos_version"]
    assert issubclass(kosmos.InvalidInput, ValueError)
    assert issubclass(kosmos.FileError, OSError)


def test_rv_model_writes_into_out():
    t = np.linspace(0, 10, 20)
    out = np.empty(20)
    assert kosmos.kepler.rv_model(t, 3.0, 2.0, out=out) is out
    np.testing.assert_allclose(out, 2 * np.cos(2 * np.pi * t / 3.0), atol=1e-12)


def run(code):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)


def test_objects_alive_at_exit_and_after_finalize():
    # Kokkos is finalized at exit while an ensemble and a grain model still hold Views: a clean exit.
    r = run("import kosmos, numpy as np\n"
            "ens = kosmos.nbody.generate(2, 3)\n"
            "lam = np.geomspace(1e-6, 1e-3, 8)\n"
            "g = kosmos.dust.Grains(lam, kosmos.dust.bin_widths(lam), np.full((1, 8), 1e-14), [1e-7], [1.0])\n")
    assert r.returncode == 0, r.stderr
    r = run("import kosmos\n"
            "ens = kosmos.nbody.generate(2, 3)\n"
            "kosmos.finalize()\n"
            "try:\n"
            "    ens.energy()\n"
            "except RuntimeError as e:\n"
            "    print(e)\n")
    assert r.returncode == 0, r.stderr
    assert "Kokkos was finalized" in r.stdout


@pytest.mark.skipif(kosmos.backend != "OpenMP", reason="threads of the OpenMP backend")
@pytest.mark.parametrize("spelling", ["--kokkos-threads=1", "--kokkos-num-threads=1"])
def test_kokkos_arguments_from_the_environment(spelling):
    # Kokkos 3.4 knows only the first spelling, 4.x only the second: Kosmos takes both.
    env = dict(os.environ, KOSMOS_KOKKOS_ARGS=spelling)
    r = subprocess.run([sys.executable, "-c", "import kosmos; print(kosmos.configuration()['concurrency'])"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1"
