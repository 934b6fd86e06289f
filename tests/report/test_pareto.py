"""The Pareto front of trial records, and its listing."""

from __future__ import annotations

from typing import Any

from raysweep.report.pareto import front_json, mark_pareto, pareto_flags
from raysweep.results.records import TrialRecord

OBJECTIVES = [("sharpe", "max"), ("max_drawdown", "min")]


def trial(index: int, sharpe: Any, drawdown: Any, status: str = "completed") -> TrialRecord:
    last = {"sharpe": sharpe, "max_drawdown": drawdown}
    return TrialRecord(trial_id=f"t{index}", index=index, status=status,  # type: ignore[arg-type]
                       config={"i": index}, seed=0, iterations=1, last=last,
                       best_metric=sharpe)  # fmt: skip


def test_dominated_errored_and_incomplete_trials_are_off_the_front() -> None:
    trials = [
        trial(0, 1.0, 0.10),  # front
        trial(1, 2.0, 0.30),  # front
        trial(2, 0.5, 0.20),  # dominated by 0
        trial(3, 1.0, 0.10),  # equal to 0: not dominated, on the front too
        trial(4, 9.0, 0.01, status="errored"),
        trial(5, None, 0.01),
        trial(6, float("nan"), 0.01),
        trial(7, 2.0, 0.30, status="stopped"),  # equal to 1
    ]
    assert pareto_flags(trials, OBJECTIVES) == [True, True, False, True, False, False, False, True]
    mark_pareto(trials, OBJECTIVES)
    listed = front_json(trials, OBJECTIVES)["pareto_front"]
    assert [t["trial_id"] for t in listed] == ["t1", "t7", "t0", "t3"]  # by sharpe, best first


def test_one_objective_marks_nothing() -> None:
    trials = [trial(0, 1.0, 0.1)]
    mark_pareto(trials, OBJECTIVES[:1])
    assert trials[0].pareto_optimal is None and "pareto_optimal" not in trials[0].to_json()
