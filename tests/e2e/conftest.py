"""The end-to-end tests import their shared helpers (e2e_helpers.py) from this directory."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from e2e_helpers import Sweeps  # noqa: E402


@pytest.fixture()
def drivers(tmp_path: Path) -> Iterator[Sweeps]:
    """`sweep` processes for one test; every group it started is killed at the end."""
    d = Sweeps(tmp_path)
    yield d
    d.close()
