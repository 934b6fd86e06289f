"""FIFO: every trial runs to its end."""

from __future__ import annotations

from ray.tune.schedulers import FIFOScheduler, TrialScheduler

from raysweep.config.schema import FifoScheduler


def make_fifo(config: FifoScheduler, time_attr: str) -> TrialScheduler:
    """Ray Tune's FIFOScheduler."""
    return FIFOScheduler()
