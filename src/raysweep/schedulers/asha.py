"""ASHA: asynchronous successive halving, with the rung rule the spec names."""

from __future__ import annotations

from collections.abc import Callable

from ray.tune.schedulers import AsyncHyperBandScheduler, TrialScheduler

from raysweep._raycompat.asha_rungs import use_rung_rule
from raysweep.config.schema import AshaScheduler
from raysweep.schedulers.next_trial import NextTrialCursor


class SweepASHAScheduler(NextTrialCursor, AsyncHyperBandScheduler):
    """Ray Tune's ASHAScheduler with an O(1) choice of the next trial."""


def make_asha(
    config: AshaScheduler, time_attr: str, settled: Callable[[int], int] | None = None
) -> TrialScheduler:
    """Ray Tune's ASHAScheduler (metric and mode from TuneConfig, or scheduler.metric/mode);
    ``rung_rule: "rank"`` or ``"quorum"`` gives it brackets that keep the best third of
    each rung (``_raycompat/asha_rungs.py``), ``"percentile"`` leaves Ray's own.
    ``settled``: strict mode's rule of which earlier trials a trial is compared with
    (search/strict_schedule.py), for any rung rule."""
    scheduler = SweepASHAScheduler(
        time_attr=time_attr,
        metric=config.metric,
        mode=config.mode,
        max_t=config.max_t,
        grace_period=config.grace_period,
        reduction_factor=config.reduction_factor,
        brackets=config.brackets,
    )
    rule = config.rung_rule or "percentile"
    if rule != "percentile" or settled is not None:
        use_rung_rule(
            scheduler,
            config.grace_period,
            config.max_t,
            config.reduction_factor,
            config.brackets,
            rule,
            settled,
        )
    return scheduler
