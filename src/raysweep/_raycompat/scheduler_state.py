"""What raysweep's schedulers read of, and override in, Ray Tune's schedulers' private state.

- ``schedulers/hyperband.py`` stops a trial its bracket is done with at once
  (Ray's bracket would pause it and could miss it: the sweep never ended). That
  needs the trial's bracket (``HyperBandScheduler._trial_info``) and whether the
  bracket has halvings left (``_Bracket._halves``).
- ``schedulers/median.py`` never pauses a trial for lack of samples: it
  overrides ``MedianStoppingRule._on_insufficient_samples``, which Ray's
  ``on_trial_result`` calls (checked in its source, so an override Ray no
  longer calls is refused rather than silently ignored).

Both are declared targets (``_raycompat/declared.py``) of both engines.
"""

from __future__ import annotations

from typing import Any

from ray.tune.schedulers import TrialScheduler


def bracket_done_with(scheduler: Any, trial: Any) -> bool:
    """Whether ``trial``'s Hyperband bracket has no rung left and will not continue it."""
    bracket, _band = scheduler._trial_info[trial]
    return bool(bracket._halves == 0 and not bracket.continue_trial(trial))


class ContinueOnInsufficientSamples:
    """Mixin for Ray's MedianStoppingRule: a trial with too few others to compare continues.

    Ray's rule pauses it to give its slot to a waiting trial; a paused trial without
    checkpoints starts over, repeating its reports (schedulers/median.py says why).
    """

    def _on_insufficient_samples(self, tune_controller: Any, trial: Any, time: float) -> str:
        return str(TrialScheduler.CONTINUE)
