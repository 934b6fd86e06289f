"""The Pareto front of a multi-objective sweep, from each trial's final metrics.

A trial is Pareto-optimal when no other trial is at least as good on every
objective and better on one. Trials are compared on their last reported values
(for metrics cumulated over a trial's iterations, such as the trading metrics,
the value that covers the whole trial); trials that errored or lack a finite
value of some objective are not on the front. O(n^2) in the trials, which is
milliseconds for the hundreds of trials a sweep has.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

Objectives = Sequence[tuple[str, str]]  # (metric, "min" | "max")


def objective_values(trial: Any, objectives: Objectives) -> tuple[float, ...] | None:
    """A trial's final values, each turned so that smaller is better (None when incomplete)."""
    if trial.status not in ("completed", "stopped"):
        return None
    out = []
    for metric, mode in objectives:
        value = trial.last.get(metric)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            return None
        out.append(float(value) if mode == "min" else -float(value))
    return tuple(out)


def dominates(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """Whether ``a`` is at least as good as ``b`` everywhere and better somewhere (min)."""
    return all(x <= y for x, y in zip(a, b, strict=True)) and a != b


def pareto_flags(trials: Sequence[Any], objectives: Objectives) -> list[bool]:
    """For each trial, whether it is on the Pareto front."""
    values = [objective_values(t, objectives) for t in trials]
    scored = [v for v in values if v is not None]
    return [v is not None and not any(dominates(w, v) for w in scored) for v in values]


def mark_pareto(trials: Sequence[Any], objectives: Objectives) -> None:
    """Set ``pareto_optimal`` on each trial record (left None for a single objective)."""
    if len(objectives) < 2:
        return
    for trial, flag in zip(trials, pareto_flags(trials, objectives), strict=True):
        trial.pareto_optimal = flag


def front_json(trials: Sequence[Any], objectives: Objectives) -> dict[str, Any]:
    """``sweep best`` of a multi-objective sweep: the objectives and the front's trials.

    Each entry: trial id, index, status, the objectives' final values, config;
    sorted by the first objective, best first.
    """
    front = [t for t in trials if t.pareto_optimal]
    metric, mode = objectives[0]
    front.sort(key=lambda t: (float(t.last[metric]) * (1 if mode == "min" else -1), t.index))
    return {
        "objectives": [{"metric": m, "mode": d} for m, d in objectives],
        "pareto_front": [
            {
                "trial_id": t.trial_id,
                "index": t.index,
                "status": t.status,
                "values": {m: t.last.get(m) for m, _ in objectives},
                "config": t.config,
            }
            for t in front
        ],
    }
