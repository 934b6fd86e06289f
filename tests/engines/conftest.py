"""The engine contract suite's fixture: one ``engine``, parametrized over the registry.

Every test that takes ``engine`` runs once per registered engine (as Optuna runs
one sampler suite over every sampler); the Ray engine's runs share the
session's one local Ray (tests/conftest.py's ``ray_session``).
"""

from __future__ import annotations

import pytest

from raysweep.engines.registry import ENGINES


@pytest.fixture(params=sorted(ENGINES))
def engine(request: pytest.FixtureRequest) -> str:
    """Each registered engine's name; the Ray engine's tests get the session's Ray."""
    name = str(request.param)
    if name == "ray":
        request.getfixturevalue("ray_session")
    return name
