import os
import pathlib

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def data_dir():
    return pathlib.Path(os.environ.get("KOSMOS_DATA", pathlib.Path(__file__).parents[2] / "data"))
