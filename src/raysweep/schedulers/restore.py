"""Early-stopping state rebuilt on resume from the rows the run already recorded.

Ray Tune saves its searcher's state with each experiment snapshot, not its
scheduler's (ray-project/ray#39900): a restored experiment's ASHA starts from
empty rungs and the median rule from no completed trials. Measured: an ASHA sweep
of 9 checkpointing trials at one slot, killed after its 4th trial started and
resumed, ran trials to the end that the uninterrupted sweep stopped at 1 or 3
iterations.

``RestoringScheduler`` wraps the fresh scheduler of a restored experiment. Ray
first adds the restored trials (newest result first); the wrapper holds them back
and, before the scheduler makes its first decision, gives it the calls the
uninterrupted controller made: each trial added in creation order, a finished
trial's recorded rows as results (rows past the stop rule skip the scheduler, as
Ray's controller does) and then its end (complete or error). A trial that
continues from a checkpoint has its rows up to that checkpoint given in that
replay too, so each rung it had reached is decided as in the uninterrupted run: a
trial the scheduler stops there is ended as stopped before it runs again
(``_raycompat/continued_trials.py``), one it keeps goes on. Recorded rows past its
checkpoint, which it reports again, are not given; any row before the iteration it
continues at that was not given yet is given when its first new result arrives, so
every iteration reaches the scheduler once. The scheduler asks a small stand-in for
the controller during that replay: the restored trials, and nothing it could change.

The asynchronous schedulers (ASHA, the median rule) decide from results alone,
so their state is rebuilt exactly when the trials ran one at a time. Synchronous
Hyperband also decides from the trials' statuses (paused, waiting for their
bracket): its history is replayed as a simulation of the killed experiment
(``schedulers/hyperband_replay.py``), and the trials it leaves waiting are paused
in Ray's controller again. The local engine refuses Hyperband.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ray.tune.experiment import Trial
from ray.tune.schedulers import HyperBandScheduler, TrialScheduler

from raysweep._raycompat.continued_trials import checkpoint_iteration, stop_in_controller
from raysweep._raycompat.paused_trials import pause_in_controller
from raysweep.schedulers.decider import ControllerStandIn, Decider
from raysweep.schedulers.hyperband_replay import TERMINAL, replay_hyperband

REBUILT = frozenset(
    {"fifo", "asha", "median", "hyperband"}
)  # scheduler types whose state a resume rebuilds


def resume_note(scheduler_type: str) -> str | None:
    """The line a resume prints when it cannot rebuild the scheduler's state (None: it can)."""
    if scheduler_type in REBUILT:
        return None
    return (
        f"note: the {scheduler_type} scheduler's state is not rebuilt after an interruption; "
        "it decides from the results it sees from now on (asha, hyperband and median are rebuilt)"
    )


@dataclass(frozen=True)
class RecordedTrial:
    """One trial of the killed experiment: its id and rows, in the order they were written."""

    trial_id: str
    rows: tuple[dict[str, Any], ...] = ()


class RestoringScheduler(TrialScheduler):
    """``inner``, given the recorded history of a restored experiment before it decides.

    Args:
        inner: the freshly built scheduler of the experiment.
        recorded: the trials of the killed experiment in creation order, with their rows.
        time_attr: the result key that counts iterations.
        stop_at: the stop rule's iteration limit (``stop.max_iterations``), if any.
    """

    def __init__(
        self,
        inner: TrialScheduler,
        recorded: Sequence[RecordedTrial],
        time_attr: str,
        stop_at: int | None = None,
    ) -> None:
        self.inner = inner
        self._recorded = {r.trial_id: r for r in recorded}
        self._order = [r.trial_id for r in recorded]
        self._time_attr, self._stop_at = time_attr, stop_at
        self._restored: dict[str, Trial] = {}
        self._held: dict[str, tuple[dict[str, Any], ...]] = {}
        self._given: dict[str, int] = {}  # a continuing trial: the last iteration replayed
        self._ended: set[str] = set()  # continuing trials Hyperband's replay stopped
        self._replayed = False

    # -- the history ------------------------------------------------------------------
    def _replay(self, tune_controller: Any) -> None:
        if self._replayed:
            return
        self._replayed = True
        trials = [self._restored[i] for i in self._order if i in self._restored]
        stand_in = ControllerStandIn(lambda: trials, lambda t: t.status not in TERMINAL)
        decider = Decider(self.inner, stand_in, self._time_attr, self._stop_at)
        if isinstance(self.inner, HyperBandScheduler):
            history = {t.trial_id: self._earned_rows(t) for t in trials}
            replayed = replay_hyperband(self.inner, trials, history, decider.past_limit)
            for waiting in replayed.waiting:
                pause_in_controller(tune_controller, waiting)
            for trial, row in replayed.stopped:  # ended by its bracket: ended in Ray's too
                self._ended.add(trial.trial_id)
                stop_in_controller(tune_controller, trial, row, self._time_attr)
            return
        for trial in trials:
            rows = self._recorded[trial.trial_id].rows
            decider.added(trial)
            if trial.status in (Trial.TERMINATED, Trial.ERROR):
                for row in rows:
                    decider.result(trial, dict(row))  # decided when it was reported
                if trial.status == Trial.ERROR:
                    decider.ended(trial, None, error=True)
                elif rows:
                    decider.ended(trial, rows[-1])
            elif rows:
                self._earned(tune_controller, decider, trial, rows)

    def _earned(
        self, controller: Any, decider: Decider, trial: Trial, rows: Sequence[dict[str, Any]]
    ) -> None:
        """A continuing trial's rows up to its checkpoint, each decided as when reported."""
        for row in self._earned_rows(trial):
            self._given[trial.trial_id] = int(row.get(self._time_attr, 0))
            if decider.past_limit(row):
                continue
            if decider.result(trial, dict(row)):
                stop_in_controller(controller, trial, dict(row), self._time_attr)
                return
        self._held[trial.trial_id] = tuple(rows)

    def _earned_rows(self, trial: Trial) -> tuple[dict[str, Any], ...]:
        """``trial``'s recorded rows, up to its checkpoint if it continues (it reports the
        rows after that again)."""
        rows = self._recorded[trial.trial_id].rows
        if trial.status in (Trial.TERMINATED, Trial.ERROR):
            return rows
        upto = checkpoint_iteration(trial, self._time_attr)
        return tuple(r for r in rows if int(r.get(self._time_attr, 0)) <= upto)

    def _continue(self, controller: Any, trial: Trial, result: dict[str, Any]) -> None:
        """A continuing trial's first new result: first its recorded rows before it."""
        rows = self._held.pop(trial.trial_id, None)
        if rows:
            at, given = int(result.get(self._time_attr, 0)), self._given.pop(trial.trial_id, 0)
            decider = Decider(self.inner, controller, self._time_attr, self._stop_at)
            for row in rows:
                if given < int(row.get(self._time_attr, 0)) < at:
                    decider.result(trial, dict(row))

    # -- TrialScheduler ---------------------------------------------------------------
    @property
    def metric(self) -> str | None:
        return self.inner.metric

    @property
    def supports_buffered_results(self) -> bool:
        return bool(self.inner.supports_buffered_results)

    def set_search_properties(self, metric: str | None, mode: str | None, **spec: Any) -> bool:
        return bool(self.inner.set_search_properties(metric, mode, **spec))

    def on_trial_add(self, tune_controller: Any, trial: Trial) -> None:
        if not self._replayed and trial.trial_id in self._recorded:
            self._restored[trial.trial_id] = trial
            return
        self._replay(tune_controller)
        self.inner.on_trial_add(tune_controller, trial)

    def on_trial_error(self, tune_controller: Any, trial: Trial) -> None:
        self._replay(tune_controller)
        self._held.pop(trial.trial_id, None)
        self.inner.on_trial_error(tune_controller, trial)

    def on_trial_result(self, tune_controller: Any, trial: Trial, result: dict[str, Any]) -> str:
        self._replay(tune_controller)
        self._continue(tune_controller, trial, result)
        return str(self.inner.on_trial_result(tune_controller, trial, result))

    def on_trial_complete(self, tune_controller: Any, trial: Trial, result: dict[str, Any]) -> None:
        self._replay(tune_controller)
        self._continue(tune_controller, trial, result)
        if trial.trial_id not in self._ended:  # Hyperband's replay has ended it already
            self.inner.on_trial_complete(tune_controller, trial, result)

    def on_trial_remove(self, tune_controller: Any, trial: Trial) -> None:
        self._replay(tune_controller)
        self._held.pop(trial.trial_id, None)
        if trial.trial_id not in self._ended:
            self.inner.on_trial_remove(tune_controller, trial)

    def choose_trial_to_run(self, tune_controller: Any) -> Trial | None:
        self._replay(tune_controller)
        return self.inner.choose_trial_to_run(tune_controller)

    def debug_string(self) -> str:
        return str(self.inner.debug_string())

    def save(self, checkpoint_path: str) -> None:
        self.inner.save(checkpoint_path)

    def restore(self, checkpoint_path: str) -> None:
        self.inner.restore(checkpoint_path)

    def __getattr__(self, name: str) -> Any:  # anything else Ray or raysweep reads of it
        if name == "inner":  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)
