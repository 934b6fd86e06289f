"""ASHA's rung rule: which trials Ray Tune's asynchronous bracket lets through a rung.

Ray's ``_Bracket`` (private) continues a trial whose result at a rung is at or
above the interpolated ``(1 - 1/rf)`` percentile of the results recorded there
before it (``percentile``). The ASHA paper, and Optuna's
``SuccessiveHalvingPruner``, keep the best ``n // rf`` of the ``n`` results at
the rung, the trial itself counted, and only the best while fewer than ``rf``
are there (``rank``). The two differ while a rung holds few results, which is
where an asynchronous sweep decides most: measured in benchmarks/BENCHMARKS.md
("ASHA's rung rule").

:class:`RankBracket` is Ray's bracket with the ``rank`` rule: it overrides
``cutoff``, the threshold Ray's ``on_result`` compares the new result with, so
the rungs, their bookkeeping and every other decision stay Ray's. Declared
targets (``_raycompat/declared.py``): the bracket's constructor, ``cutoff``,
``on_result`` (and that it still compares with ``self.cutoff(recorded)``),
``rf``, and the scheduler's ``_brackets``.
"""

from __future__ import annotations

import math
from typing import Any

from ray.tune.schedulers.async_hyperband import _Bracket


class RankBracket(_Bracket):
    """Ray's ASHA bracket whose rung keeps the best ``n // rf`` of its ``n`` results."""

    _incoming: float | None = None  # the result being decided, counted among the rung's

    def on_result(self, trial: Any, cur_iter: int, cur_rew: float | None) -> str:
        self._incoming = cur_rew
        try:
            return str(super().on_result(trial, cur_iter, cur_rew))
        finally:
            self._incoming = None

    def cutoff(self, recorded: dict[str, float | None]) -> float | None:
        """The ``max(n // rf, 1)``-th best of the rung's results and the incoming one
        (larger is better: Ray has already signed the metric by its mode)."""
        values = [v for v in (*recorded.values(), self._incoming) if _finite(v)]
        if not values:
            return None
        keep = max(int(len(values) // self.rf), 1)
        return sorted(values, reverse=True)[keep - 1]  # type: ignore[type-var]


def _finite(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def use_rank_rule(
    scheduler: Any, grace_period: int, max_t: int, reduction_factor: float, brackets: int
) -> None:
    """Give Ray's ``AsyncHyperBandScheduler`` ``scheduler``, built with these arguments,
    rank-rule brackets made as Ray makes its own (one per bracket index ``s``)."""
    scheduler._brackets = [
        RankBracket(grace_period, max_t, reduction_factor, s) for s in range(brackets)
    ]
