"""Median stopping rule."""

from __future__ import annotations

from ray.tune.schedulers import MedianStoppingRule, TrialScheduler

from raysweep.config.schema import MedianScheduler


def make_median(config: MedianScheduler, time_attr: str) -> TrialScheduler:
    """Ray Tune's MedianStoppingRule (metric and mode come from TuneConfig)."""
    return MedianStoppingRule(
        time_attr=time_attr,
        grace_period=config.grace_period,
        min_samples_required=config.min_samples_required,
    )
