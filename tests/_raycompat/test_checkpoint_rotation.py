"""Checkpoint deletions wait for a stored snapshot; no snapshot is forced by rotation."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pyarrow.fs
import pytest
from ray import tune
from ray.train._internal import checkpoint_manager
from ray.train._internal.storage import _delete_fs_path
from ray.tune.execution.experiment_state import _ExperimentCheckpointManager

from raysweep._raycompat.checkpoint_rotation import DeferredDeletions, deferred_rotation
from raysweep._raycompat.snapshots import cheap_snapshots
from raysweep._raycompat.trial_rows import TrialRowsLogger

LOCAL = pyarrow.fs.LocalFileSystem()


def checkpoint_dirs(root: Path, names: list[str]) -> list[Path]:
    """Non-empty directories, as checkpoints are."""
    made = []
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "state.json").write_text("{}")
        made.append(root / name)
    return made


def test_deletions_wait_for_a_snapshot_taken_after_them(tmp_path: Path) -> None:
    first, second, third = checkpoint_dirs(tmp_path, ["c0", "c1", "c2"])
    deletions = DeferredDeletions(_delete_fs_path)
    deletions.request(LOCAL, str(first))
    deletions.request(LOCAL, str(second))
    taken_at = deletions.mark()  # a snapshot is taken now...
    deletions.request(LOCAL, str(third))  # ...and this one comes after it
    assert first.is_dir() and second.is_dir() and third.is_dir()
    assert deletions.snapshot_stored(taken_at) == 2  # ...and reaches the run directory
    assert not first.exists() and not second.exists() and third.is_dir()
    assert deletions.pending() == [str(third)]
    assert deletions.snapshot_stored(taken_at) == 0  # an older snapshot stored again


def test_a_deletion_that_fails_does_not_stop_the_others(tmp_path: Path) -> None:
    (kept,) = checkpoint_dirs(tmp_path, ["c1"])
    deletions = DeferredDeletions(_delete_fs_path)
    deletions.request(LOCAL, str(tmp_path / "gone"))  # already deleted by someone
    deletions.request(LOCAL, str(kept))
    assert deletions.snapshot_stored(deletions.mark()) == 2
    assert not kept.exists()


def test_rotation_forces_snapshots_only_outside_the_block() -> None:
    manager = _ExperimentCheckpointManager(
        storage=None, checkpoint_period=1.0, sync_every_n_trial_checkpoints=1
    )
    ray_delete = checkpoint_manager._delete_fs_path
    with deferred_rotation() as deletions:
        assert deletions is not None
        assert checkpoint_manager._delete_fs_path == deletions.request
        manager.on_trial_checkpoint("trial")
        assert not manager._should_force_sync_up
        with deferred_rotation() as inner:
            assert inner is None  # the enclosing block does it
    assert checkpoint_manager._delete_fs_path is ray_delete
    manager.on_trial_checkpoint("trial")
    assert manager._should_force_sync_up  # Ray's own rule again


def stepping(config: dict[str, Any]) -> None:
    """Reports ``steps`` results, each with a checkpoint."""
    for step in range(1, config["steps"] + 1):
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "state.json").write_text(json.dumps({"step": step}))
            tune.report({"loss": 1.0 / step}, checkpoint=tune.Checkpoint.from_directory(tmp))


@pytest.mark.usefixtures("ray_session")
def test_a_fit_ends_with_num_to_keep_checkpoints_and_every_row_stored(tmp_path: Path) -> None:
    tuner = tune.Tuner(
        stepping,
        param_space={"steps": 12, "x": tune.grid_search([1, 2])},
        run_config=tune.RunConfig(
            name="rot",
            storage_path=str(tmp_path),
            verbose=0,
            callbacks=[TrialRowsLogger()],
            checkpoint_config=tune.CheckpointConfig(num_to_keep=1),
        ),
    )
    with cheap_snapshots():
        grid = tuner.fit()
    assert not grid.errors
    trial_dirs = sorted(p for p in (tmp_path / "rot").iterdir() if p.is_dir())
    assert len(trial_dirs) == 2
    for trial_dir in trial_dirs:
        assert [p.name for p in trial_dir.glob("checkpoint_*")] == ["checkpoint_000011"]
        rows = [json.loads(line) for line in (trial_dir / "result.json").open()]
        assert [row["training_iteration"] for row in rows] == list(range(1, 13))
