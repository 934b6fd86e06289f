"""Median stopping rule."""

from __future__ import annotations

from ray.tune.schedulers import MedianStoppingRule, TrialScheduler

from raysweep._raycompat.scheduler_state import ContinueOnInsufficientSamples
from raysweep.config.schema import MedianScheduler
from raysweep.schedulers.next_trial import NextTrialCursor


class SweepMedianStoppingRule(ContinueOnInsufficientSamples, NextTrialCursor, MedianStoppingRule):
    """Ray Tune's MedianStoppingRule with an O(1) choice of the next trial; trials never yield.

    Ray's rule pauses a trial after each report while fewer than
    ``min_samples_required`` trials can be compared and others are waiting, to
    give them its slot. A paused trial without checkpoints starts over from its
    first iteration, so each pause wastes its work and repeats its reports
    (Optuna then warns "step already reported"), and which trials get paused
    depends on timing. Here such a trial simply continues
    (``_raycompat/scheduler_state.py``).
    """


def make_median(config: MedianScheduler, time_attr: str) -> TrialScheduler:
    """Ray Tune's MedianStoppingRule (metric and mode from TuneConfig, or scheduler.metric/mode)."""
    return SweepMedianStoppingRule(
        time_attr=time_attr,
        metric=config.metric,
        mode=config.mode,
        grace_period=config.grace_period,
        min_samples_required=config.min_samples_required,
    )
