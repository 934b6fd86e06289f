"""ASHA's rung rule: which trials Ray Tune's asynchronous bracket lets through a rung.

Ray's ``_Bracket`` (private) continues a trial whose result at a rung is at or
above the interpolated ``(1 - 1/rf)`` percentile of the results recorded there
before it (``percentile``). The ASHA paper, and Optuna's
``SuccessiveHalvingPruner``, keep the best ``n // rf`` of the ``n`` results at
the rung, the trial itself counted, and only the best while fewer than ``rf``
are there (``rank``). The two differ while a rung holds few results, which is
where an asynchronous sweep decides most: measured in benchmarks/BENCHMARKS.md
("ASHA's rung rule"). ``quorum`` keeps the best ``n // rf`` with no floor of one: a
rung passes no trial before it holds ``rf`` results, so the first trials of a sweep,
drawn at random, are not run to the end ahead of everything learned after them
(measured in benchmarks/BENCHMARKS.md, search quality).

Strict mode (``settled``): trial ``i`` is compared only with the trials its strict
schedule had seen end before it started (index ``< settled(i)``: those ``<= i -
window``, or the earlier batches), whose rung results are then all known, so each
decision depends on the seed alone however many trials run at once.

:class:`RuleBracket` is Ray's bracket with one of these rules: it overrides
``cutoff``, the threshold Ray's ``on_result`` compares the new result with, so
the rungs, their bookkeeping and every other decision stay Ray's. Declared
targets (``_raycompat/declared.py``): the bracket's constructor, ``cutoff``,
``on_result`` (and that it still compares with ``self.cutoff(recorded)``),
``rf``, the scheduler's ``_brackets``, and that the rung's record is keyed by trial id.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ray.tune.schedulers.async_hyperband import _Bracket

INDEX_KEY = "__trial_index__"  # search/indexed.py: the trial's place in suggestion order
RULES = ("rank", "quorum", "percentile")


class RuleBracket(_Bracket):
    """Ray's ASHA bracket with one of raysweep's rung rules (``RULES``).

    Args (beyond Ray's): ``rule``; ``settled``: strict mode's ``i -> first index not
    yet settled when trial i started`` (None: every recorded result counts).
    """

    _incoming: float | None = None  # the result being decided, counted among the rung's
    _incoming_index: int | None = None

    def __init__(
        self,
        min_t: int,
        max_t: int,
        reduction_factor: float,
        s: int,
        rule: str = "rank",
        settled: Callable[[int], int] | None = None,
    ) -> None:
        if rule not in RULES:
            raise ValueError(f"unknown rung rule {rule!r}: one of {RULES}")
        super().__init__(min_t, max_t, reduction_factor, s)
        self.rule = rule
        self.settled = settled
        self.index: dict[str, int] = {}  # trial id -> trial index, as results arrive

    def on_result(self, trial: Any, cur_iter: int, cur_rew: float | None) -> str:
        self._incoming = cur_rew
        self._incoming_index = _trial_index(trial)
        if self._incoming_index is not None:
            self.index[trial.trial_id] = self._incoming_index
        try:
            return str(super().on_result(trial, cur_iter, cur_rew))
        finally:
            self._incoming = self._incoming_index = None

    def cutoff(self, recorded: dict[str, float | None]) -> float | None:
        """The threshold the incoming result must reach, over the results it is compared
        with (larger is better: Ray has already signed the metric by its mode)."""
        if self.settled is not None:
            if self._incoming_index is None:
                raise ValueError(f"strict mode: a trial's config has no {INDEX_KEY}")
            bound = self.settled(self._incoming_index)
            recorded = {t: v for t, v in recorded.items() if self.index.get(t, bound) < bound}
        if self.rule == "percentile":
            cut = super().cutoff(recorded)
            return None if cut is None else float(cut)  # type: ignore[arg-type]
        values = [v for v in (*recorded.values(), self._incoming) if _finite(v)]
        if not values:
            return None
        keep = int(len(values) // self.rf)
        if self.rule == "rank":
            keep = max(keep, 1)
        if keep == 0:  # quorum: fewer than rf results, none passes
            return math.inf
        return sorted(values, reverse=True)[keep - 1]  # type: ignore[type-var]


def _trial_index(trial: Any) -> int | None:
    index = (getattr(trial, "config", None) or {}).get(INDEX_KEY)
    return index if isinstance(index, int) else None


def _finite(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def use_rung_rule(
    scheduler: Any,
    grace_period: int,
    max_t: int,
    reduction_factor: float,
    brackets: int,
    rule: str,
    settled: Callable[[int], int] | None = None,
) -> None:
    """Give Ray's ``AsyncHyperBandScheduler`` ``scheduler``, built with these arguments,
    brackets with ``rule`` made as Ray makes its own (one per bracket index ``s``)."""
    scheduler._brackets = [
        RuleBracket(grace_period, max_t, reduction_factor, s, rule, settled)
        for s in range(brackets)
    ]
