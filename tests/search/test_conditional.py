"""Each searcher that can express a conditional space suggests only active parameters.

Real searchers (Ray's variant generator, OptunaSearch, HyperOptSearch), asked for
suggestions and told results, without running trials.
"""

from __future__ import annotations

import pickle
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from factories import quadratic_sweep
from raysweep.config.load import parse_spec
from raysweep.search.build import build_searcher, innermost
from raysweep.search.indexed import INDEX_KEY

SPACE: dict[str, Any] = {
    "model": {"type": "choice", "values": ["x", "y"]},
    "x.depth": {"type": "int", "low": 2, "high": 6, "when": {"model": "x"}},
    "y.boosting": {"type": "choice", "values": ["gbdt", "dart"], "when": {"model": "y"}},
    "y.drop_rate": {"type": "uniform", "low": 0.1, "high": 0.3, "when": {"y.boosting": "dart"}},
    "lr": {"type": "loguniform", "low": 0.01, "high": 0.3},
    "steps": 3,
}
SHAPES = {
    ("lr", "model", "x.depth"),
    ("lr", "model", "y.boosting"),
    ("lr", "model", "y.boosting", "y.drop_rate"),
}


@pytest.mark.parametrize("algorithm", ["random", "optuna", "hyperopt"])
def test_suggestions_hold_only_active_parameters(algorithm: str, tmp_path: Path) -> None:
    search = {"algorithm": algorithm, "num_samples": 40}
    spec = parse_spec(quadratic_sweep(name="c", space=SPACE, seed=3, search=search))
    searcher = build_searcher(spec)
    shapes: Counter[tuple[str, ...]] = Counter()
    for i in range(40):
        config = searcher.suggest(f"t{i}")
        assert isinstance(config, dict)
        config.pop(INDEX_KEY)
        config.pop("steps", None)  # random search carries the constants itself
        shapes[tuple(sorted(config))] += 1
        assert all(isinstance(v, int | float | str) for v in config.values())  # flat
        searcher.on_trial_complete(f"t{i}", {"loss": config["lr"], "training_iteration": 1})
    assert set(shapes) == SHAPES, shapes
    state = searcher.get_state()  # what Ray saves of the wrappers, then the inner searcher
    pickle.loads(pickle.dumps(state))
    innermost(searcher).save(str(tmp_path / "searcher.pkl"))
