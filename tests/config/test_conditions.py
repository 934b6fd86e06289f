"""Conditional parameters in sweep.json: validation, order, and which parameters are active."""

from __future__ import annotations

from typing import Any

import pytest

from factories import quadratic_sweep
from raysweep.config.conditions import active_config, ordered_names
from raysweep.config.load import parse_spec, spec_to_json
from raysweep.errors import ConfigError

SPACE: dict[str, Any] = {
    "x.depth": {"type": "int", "low": 2, "high": 6, "when": {"model": "x"}},
    "model": {"type": "choice", "values": ["x", "y"]},
    "y.boosting": {"type": "choice", "values": ["gbdt", "dart"], "when": {"model": ["y"]}},
    "y.drop_rate": {"type": "uniform", "low": 0.1, "high": 0.3, "when": {"y.boosting": "dart"}},
    "lr": {"type": "loguniform", "low": 0.01, "high": 0.3},
}


def spec(space: dict[str, Any], algorithm: str = "random") -> Any:
    search = {"algorithm": algorithm}
    return parse_spec(quadratic_sweep(name="c", space=space, search=search, seed=0))  # fmt: skip


def test_spec_shows_conditions_and_leaves_plain_parameters_as_they_were() -> None:
    data = spec_to_json(spec(SPACE))["space"]
    assert data["x.depth"] == {"type": "int", "low": 2, "high": 6, "log": False, "step": 1,
                               "when": {"model": ["x"]}}  # fmt: skip
    assert data["lr"] == {"type": "loguniform", "low": 0.01, "high": 0.3}  # no "when": null


def test_parents_come_first_and_inactive_parameters_drop() -> None:
    space = spec(SPACE).space
    assert ordered_names(space) == ["model", "x.depth", "y.boosting", "y.drop_rate", "lr"]
    full = {"model": "y", "x.depth": 3, "y.boosting": "gbdt", "y.drop_rate": 0.2, "lr": 0.1}
    assert active_config(full, space) == {"model": "y", "y.boosting": "gbdt", "lr": 0.1}
    dart = {**full, "y.boosting": "dart"}
    assert active_config(dart, space) == {"model": "y", "y.boosting": "dart",
                                          "y.drop_rate": 0.2, "lr": 0.1}  # fmt: skip
    x = {**dart, "model": "x"}  # y.drop_rate's parent is inactive: so is it
    assert active_config(x, space) == {"model": "x", "x.depth": 3, "lr": 0.1}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"when": {"model": "z"}}, r'space\.x\.depth\.when\.model: "z" is not one of'),
        ({"when": {"lr": 1}}, r"space\.x\.depth\.when\.lr: .* must be a choice"),
        ({"when": {"nope": 1}}, r"space\.x\.depth\.when\.nope: not another parameter"),
        ({"when": {"model": "x", "lr": 1}}, r"space\.x\.depth\.when: must name exactly one"),
        ({"when": {"model": []}}, r"space\.x\.depth\.when\.model: needs at least one value"),
    ],
)
def test_bad_conditions_name_their_path(change: dict[str, Any], message: str) -> None:
    space = {**SPACE, "x.depth": {**SPACE["x.depth"], **change}}
    with pytest.raises(ConfigError, match=message):
        spec(space)


def test_cycles_and_grid_are_refused() -> None:
    cycle = {"a": {"type": "choice", "values": [1, 2], "when": {"b": 1}},
             "b": {"type": "choice", "values": [1, 2], "when": {"a": 1}}}  # fmt: skip
    with pytest.raises(ConfigError, match=r"conditions form a cycle \(a -> b -> a\)"):
        spec(cycle)
    grid = {"model": {"type": "grid", "values": ["x", "y"]},
            "x.depth": {"type": "grid", "values": [2, 4], "when": {"model": "x"}}}  # fmt: skip
    with pytest.raises(
        ConfigError, match=r"need search\.algorithm random, optuna, mf-tpe, hyperopt"
    ):
        spec(grid, "grid")
    with pytest.raises(ConfigError, match="a grid parameter cannot be conditional"):
        spec(grid, "random")
    for algorithm in ("random", "optuna", "hyperopt"):
        spec(SPACE, algorithm)
