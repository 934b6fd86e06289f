"""Ray Tune's schedulers driven by the local engine, through a raysweep-owned adapter.

A Ray ``TrialScheduler`` is called with its controller (``TuneController``) and
a trial. The local engine has no ``TuneController``: :class:`ControllerStandIn`
is the small typed part of one that Ray's schedulers call (``get_live_trials``,
read by the median rule's ``_on_insufficient_samples`` as Ray ships it), never
``None``. :class:`SchedulerAdapter` makes the calls in the order Ray Tune's
controller makes them and answers in raysweep's terms (stop or go on).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ray.tune.schedulers import TrialScheduler

from raysweep.local.trial import LocalTrial

if TYPE_CHECKING:
    from ray.tune.execution.tune_controller import TuneController
    from ray.tune.experiment import Trial


class ControllerStandIn:
    """What a Ray scheduler may ask of its controller, answered from the local engine's trials."""

    def __init__(self, trials: Callable[[], list[LocalTrial]]) -> None:
        self._trials = trials

    def get_live_trials(self) -> list[LocalTrial]:
        """Trials not ended yet (pending or running), in suggestion order."""
        return [t for t in self._trials() if t.live]


class SchedulerAdapter:
    """One Ray scheduler, called as Ray Tune's controller calls it, for local trials."""

    def __init__(self, scheduler: TrialScheduler, controller: ControllerStandIn) -> None:
        self.scheduler = scheduler
        # Ray annotates its controller and trial types; these stand-ins have what it reads.
        self._controller = cast("TuneController", controller)

    def added(self, trial: LocalTrial) -> None:
        self.scheduler.on_trial_add(self._controller, _as_ray(trial))

    def should_stop(self, trial: LocalTrial, row: dict[str, Any]) -> bool:
        """The scheduler's decision on a reported row: True to stop the trial now."""
        decision = self.scheduler.on_trial_result(self._controller, _as_ray(trial), row)
        return decision == TrialScheduler.STOP

    def errored(self, trial: LocalTrial) -> None:
        self.scheduler.on_trial_error(self._controller, _as_ray(trial))

    def completed(self, trial: LocalTrial, result: dict[str, Any]) -> None:
        self.scheduler.on_trial_complete(self._controller, _as_ray(trial), result)


def _as_ray(trial: LocalTrial) -> Trial:
    """A local trial where Ray's scheduler types a ``Trial`` (it reads ``trial_id``)."""
    return cast("Trial", trial)
