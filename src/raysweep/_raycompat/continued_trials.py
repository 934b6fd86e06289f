"""What deciding a restored trial's earned rungs on a Ray engine resume reads of Ray Tune.

- The iteration a restored trial continues from: the metrics of its latest
  checkpoint (``Trial.latest_checkpoint_result``, a ``_TrainingResult``).
- A restored PENDING trial the scheduler stops on its recorded rows is ended as
  Ray's controller ends a RUNNING trial its scheduler stopped: marked RUNNING
  (``TuneController._set_trial_status``, in the scheduler's view of the
  controller), its last result brought up to the deciding row
  (``Trial.update_last_result``) and handed to ``TuneController.stop_trial``, which
  tells the scheduler, the searcher and the callbacks that it completed.

Declared targets in ``_raycompat/declared.py``.
"""

from __future__ import annotations

from typing import Any

from ray.tune.experiment import Trial


def checkpoint_iteration(trial: Any, time_attr: str) -> int:
    """The ``time_attr`` of the result ``trial``'s latest checkpoint came with (0: none)."""
    latest = trial.latest_checkpoint_result
    if latest is None or latest.checkpoint is None:
        return 0
    return int((latest.metrics or {}).get(time_attr, 0))


def stop_in_controller(
    tune_controller: Any, trial: Any, row: dict[str, Any], time_attr: str
) -> None:
    """End the restored PENDING ``trial`` as stopped by its scheduler at ``row``."""
    last = dict(trial.last_result or {})
    if int(last.get(time_attr, 0)) < int(row.get(time_attr, 0)):
        trial.update_last_result({**last, **row})
    tune_controller._set_trial_status(trial, Trial.RUNNING)
    tune_controller.stop_trial(trial)
