"""Strict reproducibility with a sliding window: every suggestion learns from all it can.

``WindowSearcher`` wraps a real searcher (Optuna, HyperOpt, grid/random), as
``BatchedSearcher`` does, but without batches. Trial ``i`` (the ``i``-th
suggestion) is drawn only once every trial ``<= i - window`` has finished, and
the inner searcher has then been told exactly the results of trials
``0 .. i - window``, in index order; trials ``i - window + 1 .. i - 1`` are
pending (Optuna's constant liar sees the same pending set every time). A result
that arrives earlier is held back until its turn, intermediate results
included, so every suggestion depends only on the seed, the window and earlier
results, however many trials run at once and whichever finishes first.

Against batches of the same size: a batch of ``B`` gives its trials between
0 and ``B - 1`` pending results (``B - 1`` only for its last), a window always
``window - 1``; but a window never holds a free slot until a whole batch has
finished, only until trial ``i - window`` has. With ``window`` equal to the
slots, a trial is suggested knowing what a non-strict sweep would know when
trials finish in index order (measured in benchmarks/BENCHMARKS.md).
"""

from __future__ import annotations

import copy
from typing import Any

from ray.tune.search import Searcher

from raysweep.search.strict_schedule import StrictSchedule

INNER_ID = "window-{}"


class WindowSearcher(StrictSchedule):
    """Hands out the inner searcher's suggestions through a sliding window of ``window``.

    Args:
        searcher: the real searcher.
        window: suggestions ahead of the last result told (the spec's ``batch_size``).
        total: trials this searcher hands out, or None (the inner searcher decides).
        first: number of this searcher's first suggestion in the run (an extension
            continues an inner searcher that already holds ``strict-0``...: its ids
            must not repeat).

    Ray saves this wrapper's ``get_state`` and the inner searcher separately (it
    follows the ``searcher`` attribute, as for ConcurrencyLimiter).
    """

    def __init__(
        self, searcher: Searcher, window: int, total: int | None = None, first: int = 0
    ) -> None:
        super().__init__(searcher, window, "window", total, first)
        self.window = window
        self.told = 0  # suggestions 0 .. told-1 were told to the inner searcher
        self.number: dict[str, int] = {}  # Ray trial id -> suggestion number (untold ones)
        self.rows: dict[int, list[dict[str, Any]]] = {}  # intermediate results, held back
        self.finished: dict[int, tuple[dict[str, Any] | None, bool]] = {}  # ended, untold

    def suggest(self, trial_id: str) -> dict[str, Any] | None:
        if self.exhausted:
            return self._finished_or_wait()
        n = self.suggested
        while self.told <= n - self.window:  # trials 0 .. n-window, in index order
            if self.told not in self.finished:
                return None  # wait: trial n-window (or one before it) still runs
            self._tell_next()
        config: Any = self.searcher.suggest(self._inner(n))  # Ray types FINISHED out
        if config == Searcher.FINISHED:
            self.inner_finished = True
            return self._finished_or_wait()
        if config is None:
            return None  # the inner searcher waits
        self.number[trial_id] = n
        self.rows[n] = []
        self.suggested += 1
        return dict(config)

    def _inner(self, n: int) -> str:
        return INNER_ID.format(self.first + n)

    def _finished_or_wait(self) -> Any:
        if self.told == self.suggested:
            return Searcher.FINISHED
        if all(n in self.finished for n in range(self.told, self.suggested)):
            self._tell_rest()
            return Searcher.FINISHED
        return None  # trials still run; the sweep ends when they finish

    def _tell_next(self) -> None:
        """Tell the inner searcher trial ``told``: its rows, then its end."""
        n = self.told
        inner_id = self._inner(n)
        for row in self.rows.pop(n, []):
            self.searcher.on_trial_result(inner_id, row)
        result, error = self.finished.pop(n)
        self.searcher.on_trial_complete(inner_id, result=result, error=error)
        self.told += 1
        self.number = {t: k for t, k in self.number.items() if k != n}

    def _tell_rest(self) -> None:
        """Every trial ended and none will be suggested: tell the rest, in index order.

        The inner searcher's saved state then holds every result, for a
        ``--num-samples`` extension that continues it.
        """
        while self.told < self.suggested:
            self._tell_next()

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        n = self.number.get(trial_id)
        if n is not None and n not in self.finished:
            self.rows[n].append(dict(result))

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        n = self.number.get(trial_id)
        if n is None or n in self.finished:
            return  # not ours (or reported twice)
        self.finished[n] = (copy.deepcopy(result), error)
        if self.exhausted and len(self.finished) == self.suggested - self.told:
            self._tell_rest()
