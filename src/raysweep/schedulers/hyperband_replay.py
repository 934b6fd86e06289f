"""Synchronous Hyperband's history, replayed as a simulation of the killed experiment.

Hyperband decides from results and from the trials' statuses: a trial that
reaches its bracket's rung before the others is PAUSED, and when the last one
gets there the bracket is halved, stopping the paused bad trials
(``tune_controller.stop_trial``) and releasing the good ones. A restored
experiment has no paused trials (Ray makes every unfinished one PENDING), so
feeding the rows as the asynchronous schedulers get them is not enough.

The replay sets each restored trial's ``status`` while it runs: RUNNING while
its rows are fed, PAUSED on a PAUSE decision, TERMINATED on STOP or when the
stand-in controller stops it. A trial runs when Hyperband would run it (PENDING,
or PAUSED and released by its bracket), in creation order, until its rows run
out or Hyperband pauses or stops it. A bracket halves only when every live trial
has reached its rung, on the results at that rung, so the order in which the
trials got there does not change what it decides. Afterwards the real statuses
are put back; the trials left paused and waiting are returned, for the driver to
pause in Ray's controller too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ray.tune.experiment import Trial
from ray.tune.schedulers import TrialScheduler

from raysweep._raycompat.paused_trials import released
from raysweep.schedulers.decider import ControllerStandIn, Decider

Rows = Sequence[dict[str, Any]]
TERMINAL = (Trial.TERMINATED, Trial.ERROR)


def hyperband_decider(scheduler: TrialScheduler, trials: Sequence[Trial]) -> Decider:
    """Hyperband told of the replayed trials, its controller's stand-in stopping a trial as
    Ray's does one Hyperband did not just decide on (removed while it waits, else ended)."""

    def stop(trial: Trial) -> None:
        if trial.status in TERMINAL:
            return
        if trial.status in (Trial.PENDING, Trial.PAUSED):
            decider.removed(trial)
        else:
            decider.ended(trial, trial.last_result)
        trial.status = Trial.TERMINATED

    stand_in = ControllerStandIn(lambda: trials, lambda t: t.status not in TERMINAL, stop)
    decider = Decider(scheduler, stand_in, time_attr="")  # rows past the limit: ``skip``
    return decider


@dataclass
class Replayed:
    """What the replay leaves to do in Ray's controller."""

    waiting: list[Trial] = field(default_factory=list)  # paused at a rung for their bracket
    # unfinished in the killed experiment, stopped by the replay: each with its last row
    stopped: list[tuple[Trial, dict[str, Any]]] = field(default_factory=list)


def replay_hyperband(
    scheduler: TrialScheduler,
    trials: Sequence[Trial],
    rows: Mapping[str, Rows],
    skip: Callable[[dict[str, Any]], bool],
) -> Replayed:
    """Give ``scheduler`` the history of ``trials`` (creation order); what is left to do.

    ``rows``: each trial's rows to replay (a continuing trial's up to its checkpoint).
    ``skip``: rows the scheduler was never asked about (past the stop rule).
    """
    real = {t.trial_id: t.status for t in trials}
    fed = dict.fromkeys(real, 0)
    decider = hyperband_decider(scheduler, trials)
    try:
        for trial in trials:
            trial.status = Trial.PENDING
            decider.added(trial)
        progress = True
        while progress:
            progress = False
            for trial in trials:
                if fed[trial.trial_id] < len(rows.get(trial.trial_id, ())) and _runs(
                    scheduler, trial
                ):
                    _run(decider, trial, rows[trial.trial_id], fed, skip)
                    progress = True
        for trial in trials:  # ended in the killed experiment, not in the replay
            if trial.status not in TERMINAL and real[trial.trial_id] in TERMINAL:
                error = real[trial.trial_id] == Trial.ERROR
                decider.ended(trial, None if error else trial.last_result, error=error)
                trial.status = real[trial.trial_id]
        unfinished = [t for t in trials if real[t.trial_id] not in TERMINAL]
        return Replayed(
            [t for t in unfinished if t.status == Trial.PAUSED and not released(scheduler, t)],
            [
                (t, dict(rows[t.trial_id][fed[t.trial_id] - 1]))
                for t in unfinished
                if t.status == Trial.TERMINATED and fed[t.trial_id]
            ],
        )
    finally:
        for trial in trials:
            trial.status = real[trial.trial_id]


def _runs(scheduler: TrialScheduler, trial: Trial) -> bool:
    """Whether Hyperband would run ``trial`` now (``choose_trial_to_run``'s rule)."""
    if trial.status == Trial.PENDING:
        return True
    return trial.status == Trial.PAUSED and released(scheduler, trial)


def _run(
    decider: Decider,
    trial: Trial,
    rows: Rows,
    fed: dict[str, int],
    skip: Callable[[dict[str, Any]], bool],
) -> None:
    """Feed ``trial``'s next rows until Hyperband pauses or stops it, or they run out."""
    trial.status = Trial.RUNNING
    action, last = TrialScheduler.CONTINUE, None
    while fed[trial.trial_id] < len(rows) and action == TrialScheduler.CONTINUE:
        last = dict(rows[fed[trial.trial_id]])
        fed[trial.trial_id] += 1
        if not skip(last):
            action = decider.decision(trial, last) or TrialScheduler.CONTINUE
    if action == TrialScheduler.STOP:
        decider.ended(trial, last)
        trial.status = Trial.TERMINATED
    elif action == TrialScheduler.PAUSE:
        trial.status = Trial.PAUSED
    else:  # its rows ran out while it ran: it continues (or ended) in the real experiment
        trial.status = Trial.PENDING
