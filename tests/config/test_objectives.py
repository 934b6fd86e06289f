"""Several objectives in sweep.json: what is accepted, what is refused and why."""

from __future__ import annotations

from typing import Any

import pytest

from raysweep.config.load import parse_spec, spec_to_json
from raysweep.errors import ConfigError

BASE: dict[str, Any] = {"name": "m", "trainable": "examples.quadratic:fit",
                        "space": {"x": {"type": "uniform", "low": 0, "high": 1}}}  # fmt: skip
TWO = {"metric": ["sharpe", "max_drawdown"], "mode": ["max", "min"]}


def spec(**fields: Any) -> Any:
    return parse_spec({**BASE, **fields})


def test_lists_become_objectives_and_the_first_is_the_metric() -> None:
    s = spec(**TWO, search={"algorithm": "optuna", "options": {"sampler": "nsga2"}})
    assert (s.metric, s.mode) == ("sharpe", "max")
    assert s.objective_pairs == [("sharpe", "max"), ("max_drawdown", "min")]
    data = spec_to_json(s)
    assert data["objectives"] == [{"metric": "sharpe", "mode": "max"},
                                  {"metric": "max_drawdown", "mode": "min"}]  # fmt: skip
    assert parse_spec(data) == s  # spec.json reads back
    one = spec_to_json(spec(metric="loss", mode="min", scheduler={"type": "asha"}))
    assert "objectives" not in one and "metric" not in one["scheduler"]  # as before


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({**TWO, "mode": "max"}, r"mode: a list with one mode per metric \(2\)"),
        ({"metric": ["a"], "mode": ["max"]}, r"metric: a list needs two metrics or more"),
        ({"metric": ["a", "a"], "mode": ["max", "min"]}, r"metric: distinct metric names"),
        ({**TWO, "search": {"algorithm": "hyperopt"}}, r"need search\.algorithm optuna, random"),
        (
            {**TWO, "search": {"algorithm": "optuna", "options": {"sampler": "cmaes"}}},
            r"search\.options\.sampler: 'cmaes' optimises one metric",
        ),
        ({**TWO, "scheduler": {"type": "asha"}}, r"scheduler\.metric: asha stops trials by"),
        (
            {
                "metric": "a",
                "mode": "max",
                "scheduler": {"type": "median", "metric": "a", "mode": "max"},
            },
            r"scheduler\.metric: only for a sweep with several objectives",
        ),
        (
            {**TWO, "scheduler": {"type": "hyperband", "metric": "sharpe"}},
            r"scheduler\.metric: give scheduler\.metric and scheduler\.mode together",
        ),
    ],
)
def test_refusals(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        spec(**fields)


def test_a_scheduler_with_its_own_metric_and_random_search_are_fine() -> None:
    s = spec(**TWO, scheduler={"type": "asha", "metric": "sharpe", "mode": "max", "max_t": 4})
    assert (s.scheduler.metric, s.scheduler.mode) == ("sharpe", "max")
    assert spec(**TWO).search.algorithm == "random"
