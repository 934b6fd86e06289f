"""Strict reproducibility: suggest trials in fixed batches, learn from them in index order.

``BatchedSearcher`` wraps a real searcher (Optuna, HyperOpt, grid/random). At the
start of a batch it asks the inner searcher for ``batch_size`` configurations in
a row; it hands them out one by one and answers "wait" (``None``) once they are
all out. Completed results are held back until every trial of the batch has
finished, then fed to the inner searcher in suggestion (trial-index) order. The
inner searcher therefore sees the same calls in the same order however many
trials run at once and whichever finishes first, so the sequence of configs
depends only on the seed, the batch size and the trials' results.

Ray's OptunaSearch and HyperOptSearch create their per-trial state inside
``suggest`` (Optuna's ``study.ask()``), keyed by trial id; the inner searcher is
given stable ids of its own (``strict-<n>``, ``n`` = suggestion number) so its
state never contains Ray's random trial ids.
"""

from __future__ import annotations

import copy
from typing import Any

from ray.tune.search import Searcher

from raysweep.search.strict_schedule import StrictSchedule

INNER_ID = "strict-{}"


class BatchedSearcher(StrictSchedule):
    """Hands out the inner searcher's suggestions in batches of ``batch_size``.

    Args:
        searcher: the real searcher.
        batch_size: trials per batch, independent of how many run at once.
        total: trials the sweep will run (the last batch is cut to fit), or None.
        first: number of this searcher's first suggestion in the run (an extension
            continues an inner searcher that already holds ``strict-0``...).

    Intermediate results (``on_trial_result``) are forwarded at once: they are
    per trial, and the inner searcher is only asked for new configs when the
    whole batch has finished, so their interleaving cannot change a suggestion.
    Ray saves this wrapper's ``get_state`` and the inner searcher separately (it
    follows the ``searcher`` attribute, as for ConcurrencyLimiter).
    """

    def __init__(
        self, searcher: Searcher, batch_size: int, total: int | None = None, first: int = 0
    ) -> None:
        super().__init__(searcher, batch_size, "batch_size", total, first)
        self.batch_size = batch_size
        self.batches = 0  # batches started
        self.queue: list[tuple[str, Any]] = []  # (inner id, config) not yet handed out
        self.batch: list[str] = []  # inner ids of the current batch, in suggestion order
        self.inner_id: dict[str, str] = {}  # Ray trial id -> inner id (current batch)
        self.finished: dict[str, tuple[dict[str, Any] | None, bool]] = {}  # by inner id

    def set_state(self, state: dict[str, Any]) -> None:
        """Ray's saved state; one saved before ``first`` existed numbered from 0."""
        super().set_state({"first": 0, **state})

    def suggest(self, trial_id: str) -> dict[str, Any] | None:
        if not self.queue and self._batch_done():
            self._start_batch()
        if not self.queue:
            if self.exhausted and self._batch_done():
                return Searcher.FINISHED  # type: ignore[return-value]  # Ray's sentinel string
            return None  # wait: the batch is still running
        inner_id, config = self.queue.pop(0)
        self.inner_id[trial_id] = inner_id
        return dict(config)

    def _batch_done(self) -> bool:
        """Every trial of the current batch was handed out and has finished."""
        return not self.queue and all(i in self.finished for i in self.batch)

    def _start_batch(self) -> None:
        """Feed the finished batch to the inner searcher, then draw the next one."""
        for inner_id in self.batch:
            result, error = self.finished[inner_id]
            self.searcher.on_trial_complete(inner_id, result=result, error=error)
        self.batch, self.finished, self.inner_id = [], {}, {}
        if self.exhausted:
            return
        size = self.batch_size
        if self.total is not None:
            size = min(size, self.total - self.suggested)
        for _ in range(size):
            inner_id = INNER_ID.format(self.first + self.suggested)
            config: Any = self.searcher.suggest(inner_id)  # Ray types FINISHED out
            if config == Searcher.FINISHED:
                self.inner_finished = True
                break
            if config is None:  # the inner searcher wants to wait: end the batch here
                break
            self.queue.append((inner_id, config))
            self.batch.append(inner_id)
            self.suggested += 1
        if self.batch:
            self.batches += 1

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        inner_id = self.inner_id.get(trial_id)
        if inner_id is not None and inner_id not in self.finished:
            self.searcher.on_trial_result(inner_id, result)

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        inner_id = self.inner_id.get(trial_id)
        if inner_id is None or inner_id in self.finished:
            return  # not ours (or reported twice)
        self.finished[inner_id] = (copy.deepcopy(result), error)
        if self.exhausted and self._batch_done():
            # Nothing more will be drawn: tell the last batch now, so the inner
            # searcher's saved state holds every result for an extension.
            self._start_batch()
