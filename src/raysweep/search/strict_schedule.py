"""What both strict schedules (batches, the window) keep: a sized wrapper that counts its draws."""

from __future__ import annotations

from ray.tune.search import Searcher

from raysweep.search.wrapping import WrappingSearcher


class Settled:
    """Strict mode's ``i -> n``: trials ``< n`` had all ended when trial ``i`` was suggested.

    The window suggests ``i`` once every trial ``<= i - size`` has ended; batches
    suggest a batch once every earlier batch has. An early-stopping decision for trial
    ``i`` that compares it with those trials alone depends on the seed only. A class,
    not a closure: Ray pickles the scheduler that holds it.
    """

    def __init__(self, schedule: str, size: int) -> None:
        if size < 1:
            raise ValueError(f"size must be >= 1 (got {size})")
        self.schedule, self.size = schedule, size

    def __call__(self, index: int) -> int:
        if self.schedule == "window":
            return max(0, index - self.size + 1)
        return (index // self.size) * self.size


class StrictSchedule(WrappingSearcher):
    """A wrapper drawing from ``searcher`` at most ``total`` times, ``size`` ahead of its results.

    Args:
        searcher: the real searcher.
        size: the schedule's size (``batch_size`` or ``window``), named ``size_name`` in errors.
        total: trials this wrapper hands out, or None (the inner searcher decides).
        first: number of this wrapper's first suggestion in the run: a
            ``--num-samples`` extension continues an inner searcher that already
            holds the earlier part's ids, and Ray's OptunaSearch answers a known id
            with that trial's config again.
    """

    def __init__(
        self, searcher: Searcher, size: int, size_name: str, total: int | None, first: int
    ) -> None:
        if size < 1:
            raise ValueError(f"{size_name} must be >= 1 (got {size})")
        if total is not None and total < 0:
            raise ValueError(f"total must be >= 0 (got {total})")
        super().__init__(metric=searcher.metric, mode=searcher.mode)
        self.searcher = searcher
        self.total = total
        self.first = first
        self.suggested = 0  # suggestions taken from the inner searcher so far
        self.inner_finished = False  # the inner searcher answered FINISHED

    @property
    def exhausted(self) -> bool:
        """No more suggestions: the inner searcher finished or ``total`` were drawn.

        Raising ``total`` (a sweep extended to more trials) lets the schedule continue.
        """
        return self.inner_finished or (self.total is not None and self.suggested >= self.total)
