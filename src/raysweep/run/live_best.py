"""The best trial so far on a run's live lines, by the sweep's ranking rule, O(1) a trial.

The rule is results/ranking.py's: ``"best"`` ranks a trial by its best value over its
iterations, ``"last"`` by the value it ended with, a trial cut short after the
trials that ran to their end. The live lines cannot tell a trial that returned
early from one its scheduler stopped (results.json can), so here a trial that ran
fewer iterations than the longest so far counts as cut short; for a trainable
whose trials all run the same iterations (the trading folds) the two agree.
"""

from __future__ import annotations

import math
from typing import Any

from raysweep.config.rank_rule import DEFAULT_RANK_BY

Entry = tuple[float, str | None]  # a value and the trial that reported it


class LiveBest:
    """The best ended trial so far (``value``, ``trial_id``; None before any)."""

    def __init__(self, mode: str, rank_by: str = DEFAULT_RANK_BY) -> None:
        self.mode = mode
        self.rank_by = rank_by
        self._longest = 0
        self._full: Entry | None = None  # the best of the trials that ran the longest
        self._short: Entry | None = None  # the best of the others

    def add(self, trial_id: str | None, last: Any, best: Any, iterations: int) -> None:
        """An ended trial: its last value, its best over iterations, how many it ran."""
        if self.rank_by != "last":
            value = _number(best)
            self._full = self._better(self._full, None if value is None else (value, trial_id))
            return
        value = _number(last)
        if value is None:
            return
        entry = (value, trial_id)
        if iterations > self._longest:  # the trials so far now count as cut short
            self._short = self._better(self._short, self._full)
            self._full, self._longest = entry, iterations
        elif iterations == self._longest:
            self._full = self._better(self._full, entry)
        else:
            self._short = self._better(self._short, entry)

    @property
    def value(self) -> float | None:
        chosen = self._full or self._short
        return None if chosen is None else chosen[0]

    @property
    def trial_id(self) -> str | None:
        chosen = self._full or self._short
        return None if chosen is None else chosen[1]

    def _better(self, kept: Entry | None, new: Entry | None) -> Entry | None:
        if new is None or kept is None:
            return kept or new
        ahead = new[0] < kept[0] if self.mode == "min" else new[0] > kept[0]
        return new if ahead else kept


def _number(value: Any) -> float | None:
    """``value`` as a float when it can rank a trial (a finite number), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)
