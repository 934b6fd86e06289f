"""A restarting trial keeps the result.json rows its driver wrote, whatever the upload holds."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from ray import tune
from ray.train import Checkpoint
from ray.train._internal.session import _TrainingResult
from ray.train._internal.storage import StorageContext
from ray.tune.experiment import Trial

from raysweep._raycompat.snapshots import cheap_snapshots
from raysweep._raycompat.trial_rows import TrialRowsLogger, remote_copy_is_newer

ROW = '{"training_iteration": 1}\n'


def iterations(path: Path) -> list[int]:
    return [json.loads(line)["training_iteration"] for line in path.read_text().splitlines()]


def restarted_trial_rows(tmp_path: Path, uploaded: str | None, local_rows: int) -> list[int]:
    """Rows after a trial with ``local_rows`` written restarts from a checkpoint at 3."""
    return iterations(restarted_trial(tmp_path, uploaded, local_rows))


def restarted_trial(tmp_path: Path, uploaded: str | None, local_rows: int) -> Path:
    """The driver's result.json after a trial restarts from a checkpoint at iteration 3."""
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
    return Path(trial.local_path, "result.json")


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


def test_rows_after_the_restart_checkpoint_are_cut_and_kept_aside(
    ray_session: None, tmp_path: Path
) -> None:
    # 4 and 5 were reported after the checkpoint at 3: the restarted trial reports 4 again
    rows = restarted_trial(tmp_path, None, local_rows=5)
    assert iterations(rows) == [1, 2, 3, 4]
    assert iterations(rows.with_name("result.json.orig")) == [1, 2, 3, 4, 5]


def failing_once(config: dict[str, Any]) -> None:
    """Checkpoints at every 3rd of 8 steps; the first run fails after step 5."""
    checkpoint, start = tune.get_checkpoint(), 0
    if checkpoint is not None:
        with checkpoint.as_directory() as path:
            start = json.loads(Path(path, "state.json").read_text())["step"]
    for step in range(start + 1, 9):
        if step % 3:
            tune.report({"loss": 1.0 / step})
        else:
            with tempfile.TemporaryDirectory() as tmp:
                Path(tmp, "state.json").write_text(json.dumps({"step": step}))
                tune.report({"loss": 1.0 / step}, checkpoint=Checkpoint.from_directory(tmp))
        marker = Path(config["marker"])
        if step == 5 and not marker.exists():
            marker.touch()
            raise RuntimeError("injected failure after step 5")


@pytest.mark.usefixtures("ray_session")
def test_a_retried_trial_reports_every_iteration_once(tmp_path: Path) -> None:
    tuner = tune.Tuner(
        failing_once,
        param_space={"marker": str(tmp_path / "failed")},
        run_config=tune.RunConfig(
            name="retry",
            storage_path=str(tmp_path / "runs"),
            verbose=0,
            callbacks=[TrialRowsLogger()],
            failure_config=tune.FailureConfig(max_failures=1),
        ),
    )
    with cheap_snapshots():  # also appends each row to the run directory
        grid = tuner.fit()
    assert (tmp_path / "failed").exists() and not grid.errors  # it did fail, and was retried
    (result,) = list(grid)
    for rows in (
        Path(result.path, "result.json"),
        tmp_path / "runs" / "retry" / Path(result.path).name / "result.json",
    ):
        assert iterations(rows) == list(range(1, 9)), rows


def test_remote_copy_replaces_only_a_shorter_or_missing_local_file() -> None:
    assert remote_copy_is_newer(None, 10)
    assert remote_copy_is_newer(5, 10)
    assert not remote_copy_is_newer(10, 10)
    assert not remote_copy_is_newer(10, 0)
    assert not remote_copy_is_newer(None, None)
    assert not remote_copy_is_newer(10, None)
