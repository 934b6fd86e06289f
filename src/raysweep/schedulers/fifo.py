"""FIFO: every trial runs to its end."""

from __future__ import annotations

from ray.tune.schedulers import FIFOScheduler, TrialScheduler

from raysweep.config.schema import FifoScheduler
from raysweep.schedulers.next_trial import NextTrialCursor


class SweepFIFOScheduler(NextTrialCursor, FIFOScheduler):
    """Ray Tune's FIFOScheduler with an O(1) choice of the next trial."""


def make_fifo(config: FifoScheduler, time_attr: str) -> TrialScheduler:
    """Ray Tune's FIFOScheduler."""
    return SweepFIFOScheduler()
