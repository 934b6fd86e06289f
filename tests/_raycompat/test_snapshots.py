"""Experiment snapshots: written in Ray's format, copied incrementally, never half-read."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pyarrow.fs
import pytest
from ray import tune
from ray.train._internal import storage
from ray.tune.execution.tune_controller import TuneController
from ray.tune.logger import JsonLoggerCallback
from ray.tune.utils.serialization import TuneFunctionEncoder

from raysweep._raycompat.snapshots import IncrementalUploader, cheap_snapshots, upload_changed

LOCAL = pyarrow.fs.LocalFileSystem()


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def staging(root: Path, trials: int) -> Path:
    """A driver staging directory: a snapshot, a searcher state and per-trial rows."""
    root.mkdir(parents=True)
    (root / "experiment_state-x.json").write_text('{"trial_data": []}')
    (root / "searcher-state-x.pkl").write_bytes(b"\x80\x04N.")
    for i in range(trials):
        trial = root / f"trial_{i}"
        trial.mkdir(parents=True)
        (trial / "params.json").write_text(json.dumps({"x": i}))
        (trial / "result.json").write_text('{"training_iteration": 1}\n')
    return root


def test_first_upload_copies_everything_then_only_what_changed(tmp_path: Path) -> None:
    source, dest = staging(tmp_path / "staging", trials=3), tmp_path / "run"
    uploader = IncrementalUploader()
    assert uploader.upload(str(source), LOCAL, str(dest)) == 2 + 3 * 2
    assert tree(dest) == tree(source)

    with (source / "trial_1" / "result.json").open("a") as rows:
        rows.write('{"training_iteration": 2}\n')
    (source / "trial_3").mkdir()
    (source / "trial_3" / "result.json").write_text('{"training_iteration": 1}\n')
    # the two top-level files every time, plus the changed and the new trial file
    assert uploader.upload(str(source), LOCAL, str(dest)) == 2 + 2
    assert tree(dest) == tree(source)
    assert uploader.upload(str(source), LOCAL, str(dest)) == 2


class RecordingFS:
    """The local filesystem, keeping the order in which files were moved into place."""

    type_name = "local"

    def __init__(self) -> None:
        self.landed: list[str] = []

    def create_dir(self, path: str, recursive: bool = True) -> None:
        LOCAL.create_dir(path, recursive=recursive)

    def open_output_stream(self, path: str) -> Any:
        return LOCAL.open_output_stream(path)

    def move(self, src: str, dest: str) -> None:
        LOCAL.move(src, dest)
        self.landed.append(dest)


def test_the_snapshot_lands_after_the_trial_rows_it_names(tmp_path: Path) -> None:
    """A kill mid-upload must not leave a snapshot newer than the stored rows."""
    source, dest = staging(tmp_path / "staging", trials=2), tmp_path / "run"
    fs = RecordingFS()
    IncrementalUploader().upload(str(source), fs, str(dest))
    names = [Path(path).relative_to(dest).as_posix() for path in fs.landed]
    top = [i for i, name in enumerate(names) if "/" not in name]
    rows = [i for i, name in enumerate(names) if name.endswith("/result.json")]
    assert len(top) == 2 and len(rows) == 2, names
    assert max(rows) < min(top), names


def test_a_snapshot_replaced_atomically_is_linked_into_a_local_run_dir(tmp_path: Path) -> None:
    source, dest = staging(tmp_path / "staging", trials=2), tmp_path / "run"
    snapshot = source / "experiment_state-x.json"
    uploader = IncrementalUploader()
    uploader.replaced_atomically(str(snapshot))
    assert uploader.upload(str(source), LOCAL, str(dest)) == 2 + 2 * 2
    stored = dest / "experiment_state-x.json"
    assert stored.stat().st_ino == snapshot.stat().st_ino  # linked, not copied
    assert (dest / "searcher-state-x.pkl").stat().st_ino != (
        source / "searcher-state-x.pkl"
    ).stat().st_ino

    newer = source / ".experiment_state-x.json.1.tmp"
    newer.write_text('{"trial_data": [1]}')
    os.replace(newer, snapshot)  # how raysweep's save_to_dir writes it
    assert stored.read_text() == '{"trial_data": []}'  # the stored one is as it was
    uploader.upload(str(source), LOCAL, str(dest))
    assert stored.read_text() == '{"trial_data": [1]}'
    assert not list(dest.glob("*.raysweep-tmp"))


class CheckingFS(RecordingFS):
    """Records, at each trial file moved into place, whether a snapshot was already stored."""

    def __init__(self, snapshot: Path) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.seen: list[bool] = []

    def move(self, src: str, dest: str) -> None:
        self.seen.append(self.snapshot.exists())
        super().move(src, dest)


def test_a_linked_snapshot_still_lands_after_the_trial_rows(tmp_path: Path) -> None:
    source, dest = staging(tmp_path / "staging", trials=2), tmp_path / "run"
    uploader = IncrementalUploader()
    uploader.replaced_atomically(str(source / "experiment_state-x.json"))
    fs = CheckingFS(dest / "experiment_state-x.json")
    uploader.upload(str(source), fs, str(dest))
    assert len(fs.seen) == 2 * 2 + 1 and not any(fs.seen[:-1])  # the searcher state is last
    assert (dest / "experiment_state-x.json").is_file()


def test_a_file_replaced_with_the_same_size_is_copied_again(tmp_path: Path) -> None:
    source, dest = staging(tmp_path / "staging", trials=1), tmp_path / "run"
    uploader = IncrementalUploader()
    uploader.upload(str(source), LOCAL, str(dest))
    params = source / "trial_0" / "params.json"
    replacement = params.with_name("new.json")
    replacement.write_text(json.dumps({"x": 7}))  # same length as {"x": 0}
    os.replace(replacement, params)  # a new inode, as an atomic write makes
    uploader.upload(str(source), LOCAL, str(dest))
    assert (dest / "trial_0" / "params.json").read_text() == '{"x": 7}'


def test_temp_files_of_atomic_writes_are_not_copied(tmp_path: Path) -> None:
    source, dest = staging(tmp_path / "staging", trials=1), tmp_path / "run"
    (source / ".experiment_state-x.json.abc123.tmp").write_text("{half")
    IncrementalUploader().upload(str(source), LOCAL, str(dest))
    assert not list(dest.glob(".*.tmp"))
    assert not list(dest.rglob("*.raysweep-tmp"))  # top-level files land by rename


def test_outside_a_fit_ray_keeps_its_own_functions() -> None:
    ray_upload, ray_save = storage._upload_to_fs_path, TuneController.save_to_dir
    with cheap_snapshots():
        assert storage._upload_to_fs_path is upload_changed
        with cheap_snapshots():  # nested: nothing more to replace
            assert storage._upload_to_fs_path is upload_changed
        assert storage._upload_to_fs_path is upload_changed
    assert storage._upload_to_fs_path is ray_upload
    assert TuneController.save_to_dir is ray_save


def counting(config: dict[str, Any]) -> None:
    """Reports ``steps`` results."""
    for step in range(config["steps"]):
        tune.report({"loss": config["x"] * step})


@pytest.mark.usefixtures("ray_session")
def test_a_fit_leaves_a_snapshot_ray_reads_and_every_row(tmp_path: Path) -> None:
    tuner = tune.Tuner(
        counting,
        param_space={"x": tune.grid_search([1.0, 2.0, 3.0]), "steps": 4},
        tune_config=tune.TuneConfig(metric="loss", mode="min"),
        run_config=tune.RunConfig(
            name="snap",
            storage_path=str(tmp_path),
            verbose=0,
            callbacks=[JsonLoggerCallback()],  # raysweep turns Ray's automatic loggers off
        ),
    )
    with cheap_snapshots():
        tuner.fit()
    exp_dir = tmp_path / "snap"
    (state_file,) = exp_dir.glob("experiment_state-*.json")
    text = state_file.read_text(encoding="utf-8")
    ray_text = io.StringIO()
    json.dump(json.loads(text), ray_text, cls=TuneFunctionEncoder)  # as Ray writes it
    assert text == ray_text.getvalue()
    assert len(json.loads(text)["trial_data"]) == 3
    rows = [p.read_text().splitlines() for p in exp_dir.glob("*/result.json")]
    assert sorted(map(len, rows)) == [4, 4, 4]
    results = tune.Tuner.restore(str(exp_dir), counting).get_results()
    assert sorted(r.metrics["loss"] for r in results) == [3.0, 6.0, 9.0]
