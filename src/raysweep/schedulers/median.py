"""Median stopping rule."""

from __future__ import annotations

from ray.tune.schedulers import MedianStoppingRule, TrialScheduler

from raysweep.config.schema import MedianScheduler
from raysweep.schedulers.next_trial import NextTrialCursor


class SweepMedianStoppingRule(NextTrialCursor, MedianStoppingRule):
    """Ray Tune's MedianStoppingRule with an O(1) choice of the next trial."""


def make_median(config: MedianScheduler, time_attr: str) -> TrialScheduler:
    """Ray Tune's MedianStoppingRule (metric and mode come from TuneConfig)."""
    return SweepMedianStoppingRule(
        time_attr=time_attr,
        grace_period=config.grace_period,
        min_samples_required=config.min_samples_required,
    )
