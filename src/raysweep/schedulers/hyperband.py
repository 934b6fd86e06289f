"""Synchronous Hyperband."""

from __future__ import annotations

import math
from typing import Any

from ray.tune.schedulers import HyperBandScheduler, TrialScheduler

from raysweep._raycompat.scheduler_state import bracket_done_with
from raysweep.config.schema import HyperbandScheduler


class FinishingHyperBandScheduler(HyperBandScheduler):
    """Ray Tune's HyperBandScheduler, stopping a trial as soon as its bracket is done with it.

    Ray pauses a trial that reaches its bracket's last rung until the rest of the
    bracket gets there, then stops the paused ones (``_Bracket.cleanup_full``).
    A trial whose pause still waits for its rung checkpoint at that moment is not
    PAUSED yet: it is missed, is paused once the checkpoint lands, and is never
    resumed or stopped, so the sweep never ends (the driver spins with every
    other trial finished). A trial with no rung left has nothing to wait for:
    this scheduler stops it at once, as the bracket would have, with no race.
    Halvings are untouched: before the last rung Ray's decision stands.
    """

    def on_trial_result(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> str:
        action = str(super().on_trial_result(tune_controller, trial, result))
        if action != TrialScheduler.PAUSE:
            return action
        if bracket_done_with(self, trial):
            return str(TrialScheduler.STOP)
        return action


def make_hyperband(config: HyperbandScheduler, time_attr: str) -> TrialScheduler:
    """Hyperband with Ray's brackets (metric and mode from TuneConfig, or scheduler.metric/mode)."""
    return FinishingHyperBandScheduler(
        time_attr=time_attr,
        metric=config.metric,
        mode=config.mode,
        max_t=config.max_t,
        reduction_factor=config.reduction_factor,
    )


def _brackets(config: HyperbandScheduler) -> list[tuple[int, int]]:
    """``(s, r0)`` of every bracket Ray Tune's Hyperband runs in a band.

    Ray makes ``s_max + 1 = round(log(max_t) / log(eta)) + 1`` brackets; bracket ``s``
    starts at ``r0 = int(max_t * eta**-s)`` iterations and is skipped when that is 0.
    """
    eta, max_t = config.reduction_factor, config.max_t
    count = round(math.log(max_t) / math.log(eta)) + 1
    starts = ((s, int(max_t * eta ** (-s))) for s in range(count))
    return [(s, r0) for s, r0 in starts if r0 > 0]


def hyperband_milestones(config: HyperbandScheduler) -> frozenset[int]:
    """The iterations at which Ray Tune's Hyperband may pause a trial (its rungs).

    A bracket ``s`` starts at ``r0`` iterations and multiplies its milestone by
    ``eta`` (capped at ``max_t``) at each of its ``s`` halvings; a trial that
    reaches the milestone before the rest of its bracket is paused there. A trial
    with a checkpoint at each of these iterations resumes exactly where it stopped.
    """
    milestones: set[int] = set()
    for s, r in _brackets(config):
        milestones.add(r)
        for _ in range(s):
            r = int(min(r * config.reduction_factor, config.max_t))
            milestones.add(r)
    return frozenset(milestones)


def hyperband_largest_bracket(config: HyperbandScheduler) -> int:
    """Trials in the largest bracket of Ray Tune's Hyperband band.

    Ray fills the brackets of a band in turn, bracket ``s`` with
    ``ceil((s_max + 1) / (s + 1) * eta**s)`` trials; a bracket halves its trials
    only when all of them reach its rung, so fewer trials admitted at once than
    this leave brackets unfilled and trials are stopped late or not at all.
    """
    eta = config.reduction_factor
    count = round(math.log(config.max_t) / math.log(eta)) + 1
    return max(math.ceil(count / (s + 1) * eta**s) for s, _ in _brackets(config))
