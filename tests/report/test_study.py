"""Trials as Optuna sees them: distributions from the spec, states, values and curves."""

from __future__ import annotations

import json

import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import TrialState

from factories import quadratic_sweep
from raysweep.config.load import parse_spec
from raysweep.report.study import distributions, export_trials, optuna_value, scored_study
from raysweep.results.records import SweepResult, TrialRecord


def _spec(space: dict[str, object]) -> object:
    return parse_spec(
        quadratic_sweep(
            name="s", space=space, search={"algorithm": "random", "num_samples": 4}, seed=0
        )
    )


def _trial(index: int, status: str, config: dict[str, object], **fields: object) -> TrialRecord:
    values: dict[str, object] = {
        "trial_id": f"t{index}", "index": index, "status": status, "config": config,
        "seed": index, "iterations": 3, "last": {"loss": float(index), "training_iteration": 3},
        "best_metric": float(index) - 0.5,
    }  # fmt: skip
    values.update(fields)
    return TrialRecord(**values)  # type: ignore[arg-type]


def _result(trials: list[TrialRecord]) -> SweepResult:
    return SweepResult(name="s", metric="loss", mode="min", trials=trials)


def test_each_parameter_type_has_its_optuna_distribution() -> None:
    spec = _spec(
        {
            "u": {"type": "uniform", "low": 0, "high": 1},
            "lu": {"type": "loguniform", "low": 0.001, "high": 1},
            "q": {"type": "quniform", "low": 0, "high": 1, "q": 0.3},
            "i": {"type": "int", "low": 5, "high": 100, "step": 5},
            "il": {"type": "int", "low": 8, "high": 256, "log": True},
            "c": {"type": "choice", "values": ["a", [1, 2]]},
            "g": {"type": "grid", "values": [1, 2]},
            "const": 7,
        }
    )
    config = {"u": 0.5, "lu": 0.01, "q": 0.9, "i": 10, "il": 16, "c": [1, 2], "g": 1, "const": 7}
    dists = distributions(spec, _result([_trial(0, "completed", config)]))
    assert set(dists) == {"u", "lu", "q", "i", "il", "c", "g"}  # constants are no parameter
    assert dists["u"] == FloatDistribution(0, 1)
    assert dists["lu"] == FloatDistribution(0.001, 1, log=True)
    assert dists["i"] == IntDistribution(5, 100, step=5)
    assert dists["il"] == IntDistribution(8, 256, log=True)
    assert dists["c"] == CategoricalDistribution(["a", json.dumps([1, 2])])
    assert dists["g"] == CategoricalDistribution([1, 2])
    assert optuna_value({"b": 1, "a": 2}) == '{"a": 2, "b": 1}'


def test_distributions_cover_the_values_the_trials_ran() -> None:
    # quniform rounds to multiples of q (1.2 > high); qrandint to multiples of step (off low's grid)
    spec = _spec(
        {
            "q": {"type": "quniform", "low": 0, "high": 1.1, "q": 0.4},
            "i": {"type": "int", "low": 3, "high": 20, "step": 5},
            "c": {"type": "choice", "values": ["a", "b"]},
        }
    )
    trials = [
        _trial(0, "completed", {"q": 1.2, "i": 5, "c": "a"}),
        _trial(1, "completed", {"q": 0.4, "i": 20, "c": "z"}),  # warm-started outside the list
    ]
    dists = distributions(spec, _result(trials))
    assert dists["q"] == FloatDistribution(0, 1.2)
    assert dists["i"] == IntDistribution(3, 20)  # step 5 dropped: 5 and 20 are off 3 + 5k
    assert dists["c"] == CategoricalDistribution(["a", "b", "z"])
    frozen = export_trials(spec, _result(trials), {})
    assert [t.params for t in frozen] == [t.config for t in trials]


def test_export_states_values_and_intermediate_values() -> None:
    spec = _spec({"x": {"type": "uniform", "low": 0, "high": 10}})
    trials = [
        _trial(0, "completed", {"x": 1.0}, started_at="2026-11-24T01:00:00Z",
               ended_at="2026-11-24T01:00:05Z"),
        _trial(1, "stopped", {"x": 2.0}),
        _trial(2, "errored", {"x": 3.0}, best_metric=None, last={},
               error="Traceback\nValueError: x"),
        _trial(3, "completed", {"x": 4.0}, best_metric=None, last={}),  # never reported the metric
        _trial(4, "pending", {"x": 5.0}, best_metric=None, last={}),
    ]  # fmt: skip
    curves = {"t0": [(1, 3.0), (2, 1.0), (3, 0.0)], "t1": [(1, 5.0)]}
    frozen = export_trials(spec, _result(trials), curves)
    assert [t.state for t in frozen] == [
        TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL, TrialState.FAIL,
        TrialState.WAITING,
    ]  # fmt: skip
    assert frozen[0].value == 0.0  # the final value (last), not the best
    assert frozen[0].intermediate_values == {1: 3.0, 2: 1.0, 3: 0.0}
    assert frozen[1].intermediate_values == {1: 5.0} and frozen[1].value is None
    assert frozen[2].user_attrs["error"].endswith("ValueError: x")
    assert frozen[0].user_attrs["raysweep_trial_id"] == "t0"
    assert (frozen[0].datetime_complete - frozen[0].datetime_start).total_seconds() == 5
    study = optuna.create_study()
    study.add_trials(frozen)  # Optuna accepts every one of them
    assert len(study.trials) == 5


@pytest.mark.parametrize("mode", ["min", "max"])
def test_scored_study_holds_the_trials_with_a_value(mode: str) -> None:
    spec = _spec({"x": {"type": "uniform", "low": 0, "high": 10}, "steps": 3})
    trials = [
        _trial(0, "completed", {"x": 1.0, "steps": 3}),
        _trial(1, "stopped", {"x": 2.0, "steps": 3}),
        _trial(2, "errored", {"x": 3.0, "steps": 3}, best_metric=None),
    ]
    result = SweepResult(name="s", metric="loss", mode=mode, trials=trials)
    study = scored_study(spec, result)
    assert study is not None
    assert [t.value for t in study.trials] == [-0.5, 0.5]  # best values; errored left out
    assert study.direction.name == ("MINIMIZE" if mode == "min" else "MAXIMIZE")
    assert scored_study(_spec({"steps": 3, "x": 1}), result) is None  # nothing sampled
