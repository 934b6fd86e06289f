"""Synchronous Hyperband."""

from __future__ import annotations

from ray.tune.schedulers import HyperBandScheduler, TrialScheduler

from raysweep.config.schema import HyperbandScheduler


def make_hyperband(config: HyperbandScheduler, time_attr: str) -> TrialScheduler:
    """Ray Tune's HyperBandScheduler (metric and mode come from TuneConfig)."""
    return HyperBandScheduler(
        time_attr=time_attr, max_t=config.max_t, reduction_factor=config.reduction_factor
    )
