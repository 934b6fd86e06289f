"""The spec's trial scheduler and what follows from it, for both engines (no Tuner here)."""

from __future__ import annotations

from typing import Any

from ray.tune.schedulers import TrialScheduler

from raysweep.config.schema import HyperbandScheduler, SweepSpec
from raysweep.registry import SCHEDULERS, lookup
from raysweep.schedulers.hyperband import hyperband_milestones
from raysweep.search.strict_schedule import Settled

TIME_ATTR = "training_iteration"  # the result key that counts a trial's iterations


def build_scheduler(spec: SweepSpec) -> TrialScheduler:
    """The spec's trial scheduler."""
    factory = lookup(SCHEDULERS, "scheduler", spec.scheduler.type)
    extra: dict[str, Any] = {}
    repro = spec.reproducibility
    if repro.strict and spec.scheduler.type == "asha":  # the schema allows no other
        extra["settled"] = Settled(repro.schedule, repro.batch_size)
    scheduler: TrialScheduler = factory(spec.scheduler, TIME_ATTR, **extra)
    return scheduler


def pause_points(spec: SweepSpec) -> frozenset[int]:
    """Iterations at which the spec's scheduler may pause a trial to resume it later."""
    if isinstance(spec.scheduler, HyperbandScheduler):
        return hyperband_milestones(spec.scheduler)
    return frozenset()
