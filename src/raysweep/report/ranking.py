"""The one rule that orders trials: every ranking of raysweep goes through here.

results.json's order of best, best_config.json, ``sweep best``, the reports, the
nightly export and the regression check all rank with :func:`rank_trials`, so a
sweep's ``rank_by`` (config/ranking.py) means the same thing everywhere:
``"best"`` ranks a trial by its best value over its iterations (``best_metric``),
``"last"`` by the value it ended with (``last[metric]``). Errored trials and
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
    """Trials with a value, best first (ties by index); errored trials are left out."""
    sign = 1.0 if mode == "min" else -1.0
    scored = [
        (value, t)
        for t in trials
        if t.status != "errored" and (value := rank_value(t, metric, rank_by)) is not None
    ]
    scored.sort(key=lambda pair: (sign * pair[0], pair[1].index))
    return [t for _, t in scored]


def ranked_by_note(rank_by: str) -> str:
    """What the reports add to a best chosen by its last value ("" for the usual rule)."""
    return " (ranked by its last value)" if rank_by == "last" else ""


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None
