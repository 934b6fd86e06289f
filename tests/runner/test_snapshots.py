"""Trial checkpoints do not force Ray Tune's experiment snapshot while raysweep fits."""

from __future__ import annotations

from ray.tune.execution.experiment_state import _ExperimentCheckpointManager
from ray.tune.experiment import Trial

from raysweep.runner.snapshots import periodic_snapshots_only


def forces_snapshot_after_checkpoint() -> bool:
    """Whether Ray's manager (keeping 1 checkpoint per trial) now wants a forced snapshot."""
    manager = _ExperimentCheckpointManager(
        storage=None, checkpoint_period=10.0, sync_every_n_trial_checkpoints=1
    )
    manager.on_trial_checkpoint(Trial("noop", config={}, stub=True))
    return bool(manager._should_force_sync_up)


def test_checkpoint_rotation_forces_no_snapshot_inside_the_block() -> None:
    assert forces_snapshot_after_checkpoint()  # Ray's own behaviour
    with periodic_snapshots_only():
        assert not forces_snapshot_after_checkpoint()
        with periodic_snapshots_only():  # nested: still in effect, and restored only once
            assert not forces_snapshot_after_checkpoint()
        assert not forces_snapshot_after_checkpoint()
    assert forces_snapshot_after_checkpoint()
