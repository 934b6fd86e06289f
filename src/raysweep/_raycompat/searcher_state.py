"""What raysweep's searchers set and read of Ray Tune's searchers' private state.

- A wrapping searcher (``search/wrapping.py``: strict, window, indexed, conditional)
  takes the metric and mode its inner searcher settled on: Ray's ``Searcher``
  keeps them in ``_metric``/``_mode`` behind read-only properties.
- ``search/optuna.py`` tells Optuna which trials were pruned: it needs the
  Optuna trial Ray asked for a Tune trial (``OptunaSearch._ot_trials``), the
  study (``_ot_study``) and the trials Ray already told
  (``_completed_trials``).

Both are declared targets (``_raycompat/declared.py``) of both engines.
"""

from __future__ import annotations

from typing import Any


def adopt_metric_mode(wrapper: Any, inner: Any) -> None:
    """Give the wrapping searcher ``wrapper`` the metric and mode of ``inner``."""
    wrapper._metric, wrapper._mode = inner.metric, inner.mode


def optuna_pending(search: Any, trial_id: str) -> bool:
    """Whether OptunaSearch asked Optuna for ``trial_id`` and has not told its result yet."""
    return trial_id in search._ot_trials and trial_id not in search._completed_trials


def optuna_trial_and_study(search: Any, trial_id: str) -> tuple[Any, Any]:
    """The Optuna trial OptunaSearch asked for ``trial_id``, and its study."""
    return search._ot_trials[trial_id], search._ot_study


def optuna_told(search: Any, trial_id: str) -> None:
    """Record that ``trial_id``'s result was told to Optuna (as OptunaSearch does)."""
    search._completed_trials.add(trial_id)
