"""A searcher wrapper that numbers suggestions: the trial index behind per-trial seeds."""

from __future__ import annotations

from typing import Any

from ray.tune.search import Searcher

from raysweep.results.trial_view import INDEX_KEY
from raysweep.search.wrapping import WrappingSearcher


class IndexedSearcher(WrappingSearcher):
    """Adds ``__trial_index__`` (0, 1, 2, ... in suggestion order) to every suggested config.

    The index, not the worker, GPU or completion order, decides the trial's seed.
    Its counter is part of the saved searcher state, so a restored sweep keeps counting.
    """

    def __init__(self, searcher: Searcher, start_index: int = 0) -> None:
        super().__init__(metric=searcher.metric, mode=searcher.mode)
        self.searcher = searcher
        self.next_index = start_index
        self.index_of: dict[str, int] = {}

    def suggest(self, trial_id: str) -> dict[str, Any] | None:
        config = self.searcher.suggest(trial_id)
        if not isinstance(config, dict):
            return config  # None (wait) or Searcher.FINISHED
        config = {**config, INDEX_KEY: self.next_index}
        self.index_of[trial_id] = self.next_index
        self.next_index += 1
        return config

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        self.searcher.on_trial_result(trial_id, result)

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        self.searcher.on_trial_complete(trial_id, result=result, error=error)
