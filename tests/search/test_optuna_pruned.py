"""Optuna learns which trials a scheduler stopped early (told as pruned, not complete)."""

from __future__ import annotations

import warnings
from typing import Any

import optuna
from ray import tune

from factories import quadratic_sweep
from raysweep.config.load import parse_spec
from raysweep.search.build import build_searcher, innermost
from raysweep.search.optuna import make_optuna

TrialState = optuna.trial.TrialState


def searcher(full_length: int | None) -> Any:
    space = {"x": tune.uniform(0.0, 1.0)}
    return make_optuna(space, 10, 1, "loss", "min", {}, full_length=full_length)


def run_trial(search: Any, trial_id: str, losses: list[float], *, stopped: bool) -> None:
    """Suggest, report ``losses`` (iterations 1..n) and complete, as Ray's controller does.

    A trial a scheduler stops: its last result goes to ``on_trial_complete`` only.
    """
    assert search.suggest(trial_id) is not None
    results = [{"loss": v, "training_iteration": i + 1} for i, v in enumerate(losses)]
    for result in results[:-1] if stopped else results:
        search.on_trial_result(trial_id, result)
    search.on_trial_complete(trial_id, {**results[-1], "done": True})


def states(search: Any) -> list[tuple[TrialState, float | None, dict[int, float]]]:
    return [(t.state, t.value, t.intermediate_values) for t in search._ot_study.trials]


def test_a_trial_stopped_before_full_length_is_pruned_at_its_last_iteration() -> None:
    search = searcher(full_length=9)
    run_trial(search, "a", [0.9, 0.5, 0.4], stopped=True)
    run_trial(search, "b", [0.9] * 9, stopped=False)
    (state_a, value_a, steps_a), (state_b, value_b, _) = states(search)
    assert state_a == TrialState.PRUNED
    assert steps_a == {1: 0.9, 2: 0.5, 3: 0.4}  # the stopping result is recorded too
    assert value_a == 0.4
    assert (state_b, value_b) == (TrialState.COMPLETE, 0.9)


def test_a_trial_stopped_at_its_first_report_still_has_a_value() -> None:
    search = searcher(full_length=9)
    run_trial(search, "a", [0.7], stopped=True)
    [(state, value, steps)] = states(search)
    assert (state, value, steps) == (TrialState.PRUNED, 0.7, {1: 0.7})


def test_errored_trials_fail_and_without_full_length_stopped_trials_complete() -> None:
    search = searcher(full_length=9)
    assert search.suggest("a") is not None
    search.on_trial_complete("a", {"loss": 0.5, "training_iteration": 2}, error=True)
    assert states(search)[0][0] == TrialState.FAIL
    ray_default = searcher(full_length=None)
    run_trial(ray_default, "a", [0.9, 0.5], stopped=True)
    assert states(ray_default)[0][:2] == (TrialState.COMPLETE, 0.5)


def test_a_restarted_trial_reports_its_steps_again_without_warnings() -> None:
    search = searcher(full_length=9)
    assert search.suggest("a") is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for value in (0.9, 0.8):  # iteration 1, then iteration 1 again after a restart
            search.on_trial_result("a", {"loss": value, "training_iteration": 1})
    assert states(search)[0][2] == {1: 0.9}  # Optuna keeps the first value


def optuna_spec(scheduler: dict[str, Any]) -> Any:
    search = {"algorithm": "optuna", "num_samples": 20}
    return parse_spec(quadratic_sweep(search=search, scheduler=scheduler))


def test_the_builder_gives_optuna_the_schedulers_full_length() -> None:
    asha = innermost(build_searcher(optuna_spec({"type": "asha", "max_t": 27})))
    assert asha.full_length == 27  # type: ignore[attr-defined]
    fifo = innermost(build_searcher(optuna_spec({"type": "fifo"})))
    assert fifo.full_length is None  # type: ignore[attr-defined]
