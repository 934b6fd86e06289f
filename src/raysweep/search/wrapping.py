"""Shared behaviour of searchers that wrap another searcher (Ray's wrapper convention)."""

from __future__ import annotations

import copy
from typing import Any

from ray.tune.search import Searcher

from raysweep._raycompat.searcher_state import adopt_metric_mode


class WrappingSearcher(Searcher):
    """A Searcher around ``self.searcher``.

    Ray treats any searcher with a ``.searcher`` attribute as a wrapper: it saves
    the wrapper's ``get_state()`` and the innermost searcher's own checkpoint
    separately, as it does for its ConcurrencyLimiter.
    """

    searcher: Searcher

    def set_search_properties(
        self, metric: str | None, mode: str | None, config: dict[str, Any], **spec: Any
    ) -> bool:
        """Passed to the inner searcher; the wrapper then takes its metric and mode."""
        ok = self.searcher.set_search_properties(metric, mode, config, **spec)
        adopt_metric_mode(self, self.searcher)
        return bool(ok)

    def add_evaluated_point(self, *args: Any, **kwargs: Any) -> None:
        self.searcher.add_evaluated_point(*args, **kwargs)

    def get_state(self) -> dict[str, Any]:
        """Wrapper state, without the inner searcher (Ray saves that one itself)."""
        state = self.__dict__.copy()
        del state["searcher"]
        return copy.deepcopy(state)

    def set_state(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def save(self, checkpoint_path: str) -> None:
        self.searcher.save(checkpoint_path)

    def restore(self, checkpoint_path: str) -> None:
        self.searcher.restore(checkpoint_path)
