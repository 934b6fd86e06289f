"""The simulated clock of strict mode's schedules drives the searcher as the sweep does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from benchmarks.standalone import strict_schedules
from benchmarks.workloads.search_quality_problems import PROBLEMS, MFHartmann


class Maximized:
    """Hartmann-3 as a sweep that maximizes ``score`` (the negated value), as trading does."""

    def __init__(self, inner: MFHartmann) -> None:
        self.inner = inner
        self.name = "mfh3-max"
        self.max_fidelity = inner.max_fidelity
        self.cheap_regret = True
        self.params = inner.params
        self.names = inner.names

    def sweep_fields(self) -> dict[str, Any]:
        return {"metric": "score", "mode": "max"}

    def value(self, config: Mapping[str, Any], z: int) -> float:
        return self.inner.value(config, z)

    def regret(self, config: Mapping[str, Any]) -> float:
        return self.inner.regret(config)


@pytest.mark.parametrize("recipe", ["tpe", "tpe strict window 4"])
def test_a_maximizing_sweep_is_simulated_in_its_own_direction(monkeypatch, recipe):
    """Told its sweep's metric and mode, TPE maximizing the negated value suggests what it
    suggests minimizing the value: the same regret and slot use, seed by seed."""
    inner = PROBLEMS["mfh3"]
    assert isinstance(inner, MFHartmann)
    monkeypatch.setitem(PROBLEMS, "mfh3-max", Maximized(inner))
    for seed in (1, 2):
        minimized = strict_schedules.simulate(recipe, "mfh3", seed, trials=12, slots=2)
        maximized = strict_schedules.simulate(recipe, "mfh3-max", seed, trials=12, slots=2)
        assert maximized == minimized
        assert minimized[0] >= 0 and 0 < minimized[1] <= 1
