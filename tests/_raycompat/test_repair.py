"""Rows a resumed trial will report again are cut from its result.json."""

from __future__ import annotations

import json
from pathlib import Path

from raysweep._raycompat.repair import drop_untracked_checkpoints, truncate_rows


def write_rows(path: Path, iterations: list[int], torn: bool = False) -> str:
    text = "".join(json.dumps({"training_iteration": i, "loss": 1 / i}) + "\n" for i in iterations)
    text += '{"training_iteration": 9' if torn else ""
    path.write_text(text)
    return text


def iterations(path: Path) -> list[int]:
    return [json.loads(line)["training_iteration"] for line in path.open()]


def test_rows_after_the_restart_point_are_cut_and_the_file_kept(tmp_path: Path) -> None:
    rows = tmp_path / "result.json"
    original = write_rows(rows, [1, 2, 3, 4, 5, 6, 7])
    assert truncate_rows(rows, restart_at=4) == 3
    assert iterations(rows) == [1, 2, 3, 4]
    assert (tmp_path / "result.json.orig").read_text() == original


def test_a_trial_that_starts_again_keeps_no_row(tmp_path: Path) -> None:
    rows = tmp_path / "result.json"
    write_rows(rows, [1, 2, 3])
    assert truncate_rows(rows, restart_at=0) == 3
    assert rows.read_text() == ""


def test_rows_up_to_the_restart_point_are_left_alone(tmp_path: Path) -> None:
    rows = tmp_path / "result.json"
    original = write_rows(rows, [1, 2, 3])
    assert truncate_rows(rows, restart_at=3) == 0
    assert rows.read_text() == original
    assert not (tmp_path / "result.json.orig").exists()
    assert truncate_rows(tmp_path / "absent.json", restart_at=1) == 0


def test_a_torn_last_row_goes_with_the_cut(tmp_path: Path) -> None:
    rows = tmp_path / "result.json"
    write_rows(rows, [1, 2, 3], torn=True)
    assert truncate_rows(rows, restart_at=3) == 1
    assert iterations(rows) == [1, 2, 3]


def test_checkpoints_a_finished_trial_no_longer_tracks_are_deleted(tmp_path: Path) -> None:
    from ray.train import Checkpoint, CheckpointConfig
    from ray.train._internal.checkpoint_manager import _CheckpointManager
    from ray.train._internal.session import _TrainingResult
    from ray.tune.trainable.metadata import _TrainingRunMetadata

    trial_dir = tmp_path / "trial_a"
    for name in ("checkpoint_000000", "checkpoint_000003", "checkpoint_000004"):
        (trial_dir / name).mkdir(parents=True)
    (trial_dir / "checkpoint_notes.txt").write_text("a file, not a checkpoint")
    meta = _TrainingRunMetadata()
    meta.checkpoint_manager = _CheckpointManager(CheckpointConfig(num_to_keep=2))
    for i in (3, 4):
        path = trial_dir / f"checkpoint_{i:06d}"
        result = _TrainingResult(Checkpoint.from_directory(str(path)), {"training_iteration": i})
        meta.checkpoint_manager.register_checkpoint(result)
    trial = {"trial_id": "a", "status": "TERMINATED", "relative_logdir": "trial_a"}
    dropped = drop_untracked_checkpoints(tmp_path, trial, meta.get_json_state())
    assert dropped == ["checkpoint_000000"]
    assert sorted(p.name for p in trial_dir.iterdir()) == [
        "checkpoint_000003",
        "checkpoint_000004",
        "checkpoint_notes.txt",
    ]
    assert drop_untracked_checkpoints(tmp_path, {"trial_id": "b"}, meta.get_json_state()) == []
