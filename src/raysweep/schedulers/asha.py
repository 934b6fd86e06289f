"""ASHA: asynchronous successive halving."""

from __future__ import annotations

from ray.tune.schedulers import AsyncHyperBandScheduler, TrialScheduler

from raysweep.config.schema import AshaScheduler
from raysweep.schedulers.next_trial import NextTrialCursor


class SweepASHAScheduler(NextTrialCursor, AsyncHyperBandScheduler):
    """Ray Tune's ASHAScheduler with an O(1) choice of the next trial."""


def make_asha(config: AshaScheduler, time_attr: str) -> TrialScheduler:
    """Ray Tune's ASHAScheduler (metric and mode from TuneConfig, or scheduler.metric/mode)."""
    return SweepASHAScheduler(
        time_attr=time_attr,
        metric=config.metric,
        mode=config.mode,
        max_t=config.max_t,
        grace_period=config.grace_period,
        reduction_factor=config.reduction_factor,
        brackets=config.brackets,
    )
