"""ASHA: asynchronous successive halving."""

from __future__ import annotations

from ray.tune.schedulers import ASHAScheduler, TrialScheduler

from raysweep.config.schema import AshaScheduler


def make_asha(config: AshaScheduler, time_attr: str) -> TrialScheduler:
    """Ray Tune's ASHAScheduler (metric and mode come from TuneConfig)."""
    return ASHAScheduler(
        time_attr=time_attr,
        max_t=config.max_t,
        grace_period=config.grace_period,
        reduction_factor=config.reduction_factor,
        brackets=config.brackets,
    )
