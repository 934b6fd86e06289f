"""Ray Tune's experiment snapshots on their period only, not forced by checkpoint rotation.

With ``CheckpointConfig(num_to_keep=N)``, Ray Tune forces a full experiment
snapshot (every trial's state, written and uploaded, the driver waiting for the
previous upload) each time a trial has saved N checkpoints since the last one,
so that the snapshot never names a checkpoint it has already deleted. With many
trials or frequent checkpoints that is most of the driver's time: 52% of its
CPU samples in a 270-trial Hyperband sweep of the early-stopping benchmark
(py-spy), which ran 5x longer than ASHA's. raysweep does not need it: before a
resume, ``runner/repair.py`` catches every unfinished trial up to its newest
checkpoint on disk, whatever the snapshot names. Snapshots still come every
``TUNE_GLOBAL_CHECKPOINT_S`` and at the end of the fit.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_PATCHED = "_raysweep_periodic_only"


@contextmanager
def periodic_snapshots_only() -> Iterator[None]:
    """While the block runs, trial checkpoints no longer force an experiment snapshot."""
    manager = _checkpoint_manager_class()
    if manager is None or getattr(manager, _PATCHED, False):
        yield  # a Ray Tune without this hook, or already in effect
        return
    original = manager.__dict__["on_trial_checkpoint"]
    manager.on_trial_checkpoint = _no_forced_snapshot
    setattr(manager, _PATCHED, True)
    try:
        yield
    finally:
        manager.on_trial_checkpoint = original
        setattr(manager, _PATCHED, False)


def _no_forced_snapshot(self: Any, trial: Any) -> None:
    """Ray's hook counts a trial's checkpoints towards a forced snapshot; count nothing."""


def _checkpoint_manager_class() -> Any:
    try:
        from ray.tune.execution.experiment_state import _ExperimentCheckpointManager
    except ImportError:
        return None
    if not callable(_ExperimentCheckpointManager.__dict__.get("on_trial_checkpoint")):
        return None
    return _ExperimentCheckpointManager
