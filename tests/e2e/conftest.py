"""The end-to-end tests import their shared helpers (e2e_helpers.py) from this directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_helpers import Sweeps


@pytest.fixture()
def drivers(tmp_path: Path) -> Iterator[Sweeps]:
    """`sweep` processes for one test; every group it started is killed at the end."""
    d = Sweeps(tmp_path)
    yield d
    d.close()
