"""Every example config in sweeps/ validates, with its trainable importable."""

from __future__ import annotations

from pathlib import Path

import pytest

from raysweep import api

REPO = Path(__file__).resolve().parents[1]
SWEEPS = sorted((REPO / "sweeps").glob("*.json"))


def test_there_are_examples_for_every_algorithm_and_scheduler() -> None:
    specs = [api.load_run_spec(api.RunOptions(config=p)) for p in SWEEPS]
    assert {s.search.algorithm for s in specs} == {"grid", "random", "optuna", "mf-tpe", "hyperopt"}
    assert {s.scheduler.type for s in specs} == {"fifo", "asha", "hyperband", "median"}
    assert any(":" in s.trainable for s in specs)  # a user trainable from examples/
    assert {s.execution for s in specs} == {"ray", "local"}


@pytest.mark.parametrize("path", SWEEPS, ids=[p.stem for p in SWEEPS])
def test_example_config_validates(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    spec = api.load_run_spec(api.RunOptions(config=path))
    assert spec.total_trials >= 1
