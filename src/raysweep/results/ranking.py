"""The one rule that orders trials: every ranking of raysweep goes through here.

results.json's order of best, best_config.json, ``sweep best``, the reports, the
nightly export and the regression check all rank with :func:`rank_trials`, so a
sweep's ``rank_by`` (config/ranking.py) means the same thing everywhere:
``"best"`` ranks a trial by its best value over its iterations (``best_metric``),
``"last"`` by the value it ended with (``last[metric]``). A last value covers the
iterations a trial ran, so under ``"last"`` a trial its scheduler stopped early
ranks after every trial that ran to its end, whatever its value: a trading trial
cut after 2 of 8 folds is not compared with full walk-forward scores (Optuna's
best trial is likewise a complete one, never a pruned one). Errored trials and
trials without a value are not ranked; ties go to the lower trial index.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeVar

from raysweep.config.rank_rule import DEFAULT_RANK_BY


class Rankable(Protocol):
    """What ranking reads of a trial record."""

    @property
    def index(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def last(self) -> Mapping[str, Any]: ...
    @property
    def best_metric(self) -> float | None: ...
    @property
    def iterations(self) -> int: ...


T = TypeVar("T", bound=Rankable)


def rank_value(trial: Rankable, metric: str, rank_by: str = DEFAULT_RANK_BY) -> float | None:
    """The value that ranks ``trial``: its last or its best ``metric`` (None: not ranked)."""
    value = trial.last.get(metric) if rank_by == "last" else trial.best_metric
    return _number(value)


def better(value: float, than: float | None, mode: str) -> bool:
    """Whether ``value`` ranks ahead of ``than`` (None: nothing yet) in ``mode``."""
    return than is None or (value < than if mode == "min" else value > than)


def rank_trials(
    trials: Iterable[T], metric: str, mode: str, rank_by: str = DEFAULT_RANK_BY
) -> list[T]:
    """Trials with a value, best first (ties by index); errored trials are left out.

    By ``"last"``, the trials cut short (:func:`cut_short`) follow the others.
    """
    sign = 1.0 if mode == "min" else -1.0
    scored = [
        (value, t)
        for t in trials
        if t.status != "errored" and (value := rank_value(t, metric, rank_by)) is not None
    ]
    longest = max((t.iterations for _, t in scored), default=0)
    scored.sort(
        key=lambda pair: (
            rank_by == "last" and cut_short(pair[1], longest),
            sign * pair[0],
            pair[1].index,
        )
    )
    return [t for _, t in scored]


def cut_short(trial: Rankable, longest: int) -> bool:
    """Whether ``trial`` was stopped early: by its scheduler, before the ``longest`` run
    of iterations among the trials ranked with it (a trial that returned never is)."""
    return trial.status == "stopped" and trial.iterations < longest


def ranked_by_note(rank_by: str) -> str:
    """What the reports add to a best chosen by its last value ("" for the usual rule)."""
    return " (ranked by its last value)" if rank_by == "last" else ""


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None
