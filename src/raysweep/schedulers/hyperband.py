"""Synchronous Hyperband."""

from __future__ import annotations

import math

from ray.tune.schedulers import HyperBandScheduler, TrialScheduler

from raysweep.config.schema import HyperbandScheduler


def make_hyperband(config: HyperbandScheduler, time_attr: str) -> TrialScheduler:
    """Ray Tune's HyperBandScheduler (metric and mode come from TuneConfig)."""
    return HyperBandScheduler(
        time_attr=time_attr, max_t=config.max_t, reduction_factor=config.reduction_factor
    )


def hyperband_milestones(config: HyperbandScheduler) -> frozenset[int]:
    """The iterations at which Ray Tune's Hyperband may pause a trial (its rungs).

    A bracket ``s`` starts at ``r0 = int(max_t * eta**-s)`` iterations and multiplies
    its milestone by ``eta`` (capped at ``max_t``) at each halving; a trial that
    reaches the milestone before the rest of its bracket is paused there. A trial
    with a checkpoint at each of these iterations resumes exactly where it stopped.
    """
    eta, max_t = config.reduction_factor, config.max_t
    brackets = round(math.log(max_t) / math.log(eta)) + 1  # Ray's s_max + 1
    milestones: set[int] = set()
    for s in range(brackets):
        r = int(max_t * eta ** (-s))
        if r == 0:
            continue  # Ray skips brackets too small to run
        milestones.add(r)
        for _ in range(s):
            r = int(min(r * eta, max_t))
            milestones.add(r)
    return frozenset(milestones)
