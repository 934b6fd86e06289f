"""The Ray engine's progress adapter: Ray Tune's callback calls into ``run.progress``.

Being a ``TrialProgressCallback``, it replaces the one Ray Tune would add, which
formats every trial's whole result even when it prints nothing (~10% of the
driver's time per no-op trial, measured with `python -m benchmarks.run knobs`).
"""

from __future__ import annotations

from typing import Any

from ray.tune.progress_reporter import TrialProgressCallback

from raysweep.engines.ray.trial_view import error_text, trial_view
from raysweep.run.progress import TrialProgress


class ProgressCallback(TrialProgress, TrialProgressCallback):
    """``TrialProgress`` fed by Ray Tune's callback events.

    A restored experiment's trials that had already finished are counted on the
    first event (Ray Tune hands them over with the others). A trial Ray Tune stops
    on its own, with every other live one, when the time budget runs out
    (``stop_all``) gets no ``on_trial_complete``: it is recorded as ended at the end
    of that step, as the local engine records the trial its budget stops.
    """

    _primed = False
    _live: dict[str, Any]  # trials started here, not yet ended (made in setup)

    def setup(
        self,
        stop: Any = None,
        num_samples: int | None = None,
        total_num_samples: int | None = None,
        **info: Any,
    ) -> None:
        self._live = {}
        self.start()

    def _prime(self, trials: list[Any], current: Any) -> None:
        """Count the trials a restored experiment had already finished (once)."""
        if self._primed:
            return
        self._primed = True
        for other in trials:
            if other is not current and str(other.status) in ("TERMINATED", "ERROR"):
                self.count_finished(trial_view(other))

    def running(self) -> int:
        """The trials started here that Ray runs now (a paused Hyperband trial is not)."""
        return sum(1 for t in self._live.values() if str(t.status) == "RUNNING")

    def on_trial_result(
        self, iteration: int, trials: list[Any], trial: Any, result: dict[Any, Any], **info: Any
    ) -> None:
        """Intermediate results are not printed (one line per finished trial)."""

    def on_trial_start(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        self._prime(trials, trial)
        self._live[trial.trial_id] = trial
        self.trial_started(trial_view(trial))

    def on_trial_complete(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        self._prime(trials, trial)
        self._ended(trial)
        self.trial_ended(trial_view(trial))

    def on_trial_error(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        self._prime(trials, trial)
        self._ended(trial)
        self.trial_ended(trial_view(trial), error_text(trial))

    def on_step_end(self, iteration: int, trials: list[Any], **info: Any) -> None:
        """A redraw; and the end of every trial Ray Tune stopped in this step unannounced.

        (An interrupted run's trials stay RUNNING through its last step: they are
        resumed, not ended.)
        """
        for trial in [t for t in self._live.values() if str(t.status) == "TERMINATED"]:
            self._ended(trial)
            self.trial_ended(trial_view(trial))
        self.tick()

    def _ended(self, trial: Any) -> None:
        self._live.pop(trial.trial_id, None)

    def on_experiment_end(self, trials: list[Any], **info: Any) -> None:
        self.close()
