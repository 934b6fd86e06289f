"""Rows a resumed trial will report again are cut from its result.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from raysweep._raycompat.repair import drop_untracked_checkpoints, repair_snapshot, truncate_rows


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


def snapshot_ahead_of_rows(tmp_path: Path, checkpoints: list[int]) -> Path:
    """An experiment whose snapshot names iteration 30 while its stored rows end at 21."""
    from ray.train import Checkpoint, CheckpointConfig
    from ray.train._internal.checkpoint_manager import _CheckpointManager
    from ray.train._internal.session import _TrainingResult
    from ray.tune.trainable.metadata import _TrainingRunMetadata

    trial_dir = tmp_path / "trial_a"
    trial_dir.mkdir()
    write_rows(trial_dir / "result.json", list(range(1, 22)))
    meta = _TrainingRunMetadata()
    meta.checkpoint_manager = _CheckpointManager(CheckpointConfig(num_to_keep=3))
    for i in checkpoints:
        path = trial_dir / f"checkpoint_{i:06d}"
        path.mkdir()
        (path / "state.json").write_text(json.dumps({"step": i}))
        result = _TrainingResult(Checkpoint.from_directory(str(path)), {"training_iteration": i})
        meta.checkpoint_manager.register_checkpoint(result)
    meta.last_result = {"training_iteration": 30, "loss": 1 / 30}
    meta.update_metric("loss", 1 / 30, step=30)
    trial = {"trial_id": "a", "status": "RUNNING", "relative_logdir": "trial_a"}
    state = {"trial_data": [[json.dumps(trial), meta.get_json_state()]]}
    (tmp_path / "experiment_state-2026-11-24_00-00-00.json").write_text(json.dumps(state))
    return trial_dir


def repaired_meta(tmp_path: Path) -> Any:
    from ray.tune.trainable.metadata import _TrainingRunMetadata

    (state,) = tmp_path.glob("experiment_state-*.json")
    ((_, meta_json),) = json.loads(state.read_text())["trial_data"]
    return _TrainingRunMetadata.from_json_state(meta_json)


def test_a_snapshot_ahead_of_its_stored_rows_goes_back_to_a_checkpoint_they_reach(
    tmp_path: Path,
) -> None:
    """A kill mid-upload: the trial re-reports 21..30 instead of skipping 22..30."""
    trial_dir = snapshot_ahead_of_rows(tmp_path, checkpoints=[20, 29, 30])
    notes = repair_snapshot(tmp_path)
    assert any("stored rows end at iteration 21" in n and "iteration 20" in n for n in notes), notes
    meta = repaired_meta(tmp_path)
    assert meta.checkpoint_manager.latest_checkpoint_result.metrics["training_iteration"] == 20
    assert meta.last_result["training_iteration"] == 20
    assert meta.metric_analysis["loss"]["last"] == 1 / 20
    assert iterations(trial_dir / "result.json") == list(range(1, 21))


def test_a_snapshot_ahead_of_its_stored_rows_with_no_checkpoint_they_reach_restarts(
    tmp_path: Path,
) -> None:
    trial_dir = snapshot_ahead_of_rows(tmp_path, checkpoints=[29, 30])
    notes = repair_snapshot(tmp_path)
    assert any("restarts from scratch" in n for n in notes), notes
    meta = repaired_meta(tmp_path)
    assert meta.checkpoint_manager.latest_checkpoint_result is None
    assert meta.last_result == {}
    assert iterations(trial_dir / "result.json") == []
    assert not list(trial_dir.glob("checkpoint_*"))  # untracked now: deleted


def test_a_resumed_trial_names_its_next_checkpoint_past_every_one_it_used(tmp_path: Path) -> None:
    """The snapshot's count lags its trial: new checkpoints must not reuse named directories."""
    from ray.train._internal.storage import StorageContext
    from ray.tune.utils.serialization import TuneFunctionDecoder, TuneFunctionEncoder

    trial_dir = tmp_path / "trial_a"
    trial_dir.mkdir()
    rows = [{"training_iteration": i, "checkpoint_dir_name": f"checkpoint_{i - 1:06d}"}
            for i in range(1, 6)]  # fmt: skip
    (trial_dir / "result.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for i in (3, 4, 6):  # 6: written at the kill, named by no row yet
        (trial_dir / f"checkpoint_{i:06d}").mkdir()
    context = StorageContext(str(tmp_path.parent), tmp_path.name, trial_dir_name="trial_a")
    context.current_checkpoint_index = 1  # as the snapshot recorded it, before the kill
    storage = json.loads(json.dumps(context, cls=TuneFunctionEncoder))
    trial = {"trial_id": "a", "status": "RUNNING", "relative_logdir": "trial_a", "storage": storage}
    state = {"trial_data": [[json.dumps(trial), "{}"]]}
    snapshot = tmp_path / "experiment_state-2026-11-24_00-00-00.json"
    snapshot.write_text(json.dumps(state))

    repair_snapshot(tmp_path)

    ((trial_json, _),) = json.loads(snapshot.read_text())["trial_data"]
    repaired = json.loads(trial_json, cls=TuneFunctionDecoder, allow_cloudpickle=True)["storage"]
    assert repaired.current_checkpoint_index == 7
    assert repaired.trial_dir_name == "trial_a"
    assert (tmp_path / (snapshot.name + ".orig")).is_file()
    repair_snapshot(tmp_path)  # a second repair leaves a count already past them alone
    ((again, _),) = json.loads(snapshot.read_text())["trial_data"]
    decoded = json.loads(again, cls=TuneFunctionDecoder, allow_cloudpickle=True)
    assert decoded["storage"].current_checkpoint_index == 7
