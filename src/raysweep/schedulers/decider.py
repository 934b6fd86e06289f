"""The one place Ray Tune's controller order is written: a searcher, a scheduler and the stop
rule told of a trial's start, results and end as Ray's ``TuneController`` tells them.

Ray's controller, for each result of a trial: a result at or past the stop rule's
iteration limit ends the trial without asking the scheduler or telling the searcher;
otherwise the scheduler decides, and the searcher hears the result only when the
trial goes on. When a trial ends, the scheduler hears it first (its last result, or
the error), then the searcher. :class:`Decider` makes those calls for the local
engine's live trials, for its resume replay (``engines/local/replay.py``) and for the Ray
engine's resume replay of a scheduler (``schedulers/restore.py``, no searcher: Ray
restores that from its snapshot).

Ray's schedulers are called with their controller. Outside Ray's loop (a local run, a
replay) it is :class:`ControllerStandIn`, the one stand-in: the live trials and, for
Hyperband's replay (``schedulers/hyperband_replay.py``, which also decides from trial
statuses), a way to stop a trial.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ray.tune.schedulers import TrialScheduler
from ray.tune.search import Searcher


class ControllerStandIn:
    """What a Ray scheduler may ask of its controller outside Ray's loop: the live trials
    (the median rule reads ``get_live_trials`` when too few trials can be compared) and
    ``stop_trial`` (Hyperband's, for the trials of a bracket it ends).

    Args:
        trials: the trials, in the order the caller keeps them.
        live: whether a trial has not ended yet.
        stop: how a trial is stopped; None where no scheduler stops one this way.
    """

    def __init__(
        self,
        trials: Callable[[], Sequence[Any]],
        live: Callable[[Any], bool],
        stop: Callable[[Any], None] | None = None,
    ) -> None:
        self._trials, self._live, self._stop = trials, live, stop

    def get_live_trials(self) -> list[Any]:
        """Trials not ended yet, in the order the caller keeps them."""
        return [t for t in self._trials() if self._live(t)]

    def stop_trial(self, trial: Any) -> None:
        if self._stop is None:
            raise RuntimeError(f"trial {trial.trial_id}: this run cannot stop a trial that way")
        self._stop(trial)


class Decider:
    """A scheduler (and a searcher, where the caller owns one) told in Ray's controller order.

    Args:
        scheduler: a Ray Tune ``TrialScheduler``.
        controller: what the scheduler is called with as its controller.
        time_attr: the result key that counts iterations.
        stop_at: the stop rule's iteration limit (``stop.max_iterations``), if any.
        searcher: told of results and ends after the scheduler; None: not told here.
    """

    def __init__(
        self,
        scheduler: TrialScheduler,
        controller: Any,
        time_attr: str,
        stop_at: int | None = None,
        searcher: Searcher | None = None,
    ) -> None:
        self.scheduler, self.controller, self.searcher = scheduler, controller, searcher
        self.time_attr, self.stop_at = time_attr, stop_at

    def added(self, trial: Any) -> None:
        """A trial was created."""
        self.scheduler.on_trial_add(self.controller, trial)

    def past_limit(self, row: dict[str, Any]) -> bool:
        """Whether the stop rule ends a trial at ``row`` (its scheduler is not asked)."""
        return bool(self.stop_at and int(row.get(self.time_attr, 0)) >= self.stop_at)

    def decision(self, trial: Any, row: dict[str, Any]) -> str | None:
        """The scheduler's decision on a reported row (CONTINUE, PAUSE or STOP); None where
        the stop rule ends the trial there and the scheduler is not asked."""
        if self.past_limit(row):
            return None
        return str(self.scheduler.on_trial_result(self.controller, trial, row))

    def result(self, trial: Any, row: dict[str, Any], stop_now: bool = False) -> bool:
        """A reported row; True when the trial stops here. ``stop_now``: the run ends it
        anyway (its time budget ran out), as the stop rule does."""
        if stop_now:
            return True
        decision = self.decision(trial, row)
        if decision is None or decision == TrialScheduler.STOP:
            return True
        if self.searcher is not None:
            self.searcher.on_trial_result(trial.trial_id, row)
        return False

    def removed(self, trial: Any) -> None:
        """A trial that never ran (or waits) was taken out of the run."""
        self.scheduler.on_trial_remove(self.controller, trial)

    def ended(self, trial: Any, result: dict[str, Any] | None, error: bool = False) -> None:
        """The trial ended: with ``result`` its last one, or failed (``error``)."""
        if error:
            self.scheduler.on_trial_error(self.controller, trial)
        else:
            self.scheduler.on_trial_complete(self.controller, trial, dict(result or {}))
        if self.searcher is None:
            return
        if error:
            self.searcher.on_trial_complete(trial.trial_id, error=True)
        else:
            self.searcher.on_trial_complete(trial.trial_id, result=dict(result or {}))
