"""What Ray Tune's public Tuner and ResultGrid do not give: restored configs, Trial objects.

- ``Tuner.restore`` brings back the TuneConfig and RunConfig pickled in
  ``tuner.pkl``; a resume needs this process's callbacks and run-time overrides
  (``--max-concurrent``), so the freshly built ones replace them on the
  Tuner's ``_local_tuner`` (absent with Ray Client: the pickled ones are used).
- ``ResultGrid`` exposes ``Result`` objects; raysweep's collector needs Ray's
  Trial objects (status, metric analysis, error file), which the grid keeps in
  ``_experiment_analysis``. Reading them back with the public
  ``ExperimentAnalysis(path)`` would re-read every trial's rows from disk.
"""

from __future__ import annotations

from typing import Any


def replace_restored_configs(tuner: Any, tune_config: Any, callbacks: list[Any]) -> None:
    """Give a restored Tuner this process's TuneConfig and callbacks."""
    local = getattr(tuner, "_local_tuner", None)
    if local is None:
        return
    local._tune_config = tune_config
    local.get_run_config().callbacks = callbacks


def grid_trials(grid: Any) -> list[Any]:
    """Ray's Trial objects behind a ResultGrid."""
    return list(grid._experiment_analysis.trials)
