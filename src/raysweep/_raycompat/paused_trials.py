"""What rebuilding synchronous Hyperband on resume reads of, and sets in, Ray Tune's privates.

- Whether Hyperband has released a paused trial: its bracket
  (``HyperBandScheduler._trial_info``) lists it in ``_Bracket.trials_to_unpause``.
- A restored trial that was paused waiting for the rest of its bracket must be
  PAUSED in the controller again: Ray's restore makes every unfinished trial
  PENDING, and Hyperband runs a PENDING trial past its rung before its bracket is
  halved. ``TuneController._set_trial_status`` is the method Ray hands its
  schedulers for that (it is in the scheduler's view of the controller).

Declared targets in ``_raycompat/declared.py``.
"""

from __future__ import annotations

from typing import Any

from ray.tune.experiment import Trial


def released(scheduler: Any, trial: Any) -> bool:
    """Whether Hyperband's bracket of ``trial`` lets the paused ``trial`` run again."""
    bracket, _band = scheduler._trial_info[trial]
    return trial in bracket.trials_to_unpause


def pause_in_controller(tune_controller: Any, trial: Any) -> None:
    """Mark a restored PENDING ``trial`` PAUSED in Ray's controller (waiting for its bracket)."""
    tune_controller._set_trial_status(trial, Trial.PAUSED)
