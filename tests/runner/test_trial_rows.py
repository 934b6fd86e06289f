"""A restarting trial keeps the result.json rows its driver wrote, whatever the upload holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ray.train import Checkpoint
from ray.train._internal.session import _TrainingResult
from ray.train._internal.storage import StorageContext
from ray.tune.experiment import Trial

from raysweep.runner.trial_rows import TrialRowsLogger, remote_copy_is_newer

ROW = '{"training_iteration": 1}\n'


def iterations(path: Path) -> list[int]:
    return [json.loads(line)["training_iteration"] for line in path.read_text().splitlines()]


def restarted_trial_rows(tmp_path: Path, uploaded: str | None, local_rows: int) -> list[int]:
    """Rows after a trial with ``local_rows`` written restarts from a checkpoint."""
    storage = StorageContext(storage_path=str(tmp_path / "runs"), experiment_dir_name="exp")
    trial = Trial("fit", config={}, storage=storage, stub=True)
    trial.init_local_path()
    logger = TrialRowsLogger()
    logger.log_trial_start(trial)
    for iteration in range(1, local_rows + 1):
        logger.log_trial_result(iteration, trial, {"training_iteration": iteration})
    logger.log_trial_end(trial)
    if local_rows == 0:
        Path(trial.local_path, "result.json").unlink()  # a new driver process: nothing local
    remote_dir = Path(trial.storage.trial_fs_path)
    remote_dir.mkdir(parents=True, exist_ok=True)
    if uploaded is not None:
        (remote_dir / "result.json").write_text(uploaded)
    checkpoint_dir = tmp_path / "checkpoint"
    checkpoint_dir.mkdir()
    trial.run_metadata.checkpoint_manager.register_checkpoint(
        _TrainingResult(Checkpoint.from_directory(str(checkpoint_dir)), {"training_iteration": 3})
    )
    logger.log_trial_start(trial)
    logger.log_trial_result(4, trial, {"training_iteration": 4})
    logger.log_trial_end(trial)
    return iterations(Path(trial.local_path, "result.json"))


@pytest.mark.parametrize(
    ("uploaded", "expected"),
    [
        ("", [1, 2, 3, 4]),  # an upload caught half-way (Ray's own logger keeps only [4])
        (ROW, [1, 2, 3, 4]),  # an upload from before the last rows (Ray's: [1, 4])
        (None, [1, 2, 3, 4]),  # nothing uploaded yet
    ],
)
def test_restart_in_the_same_driver_keeps_local_rows(
    ray_session: None, tmp_path: Path, uploaded: str | None, expected: list[int]
) -> None:
    assert restarted_trial_rows(tmp_path, uploaded, local_rows=3) == expected


def test_restart_in_a_new_driver_continues_the_uploaded_rows(
    ray_session: None, tmp_path: Path
) -> None:
    uploaded = "".join(json.dumps({"training_iteration": i}) + "\n" for i in (1, 2, 3))
    assert restarted_trial_rows(tmp_path, uploaded, local_rows=0) == [1, 2, 3, 4]


def test_remote_copy_replaces_only_a_shorter_or_missing_local_file() -> None:
    assert remote_copy_is_newer(None, 10)
    assert remote_copy_is_newer(5, 10)
    assert not remote_copy_is_newer(10, 10)
    assert not remote_copy_is_newer(10, 0)
    assert not remote_copy_is_newer(None, None)
    assert not remote_copy_is_newer(10, None)
