"""Run directories on remote storage, without a server: fsspec's ``memory://`` filesystem.

A ``memory://`` URI goes through the same path as ``s3://`` and ``gs://``
(``storage.open_location``: pyarrow, else fsspec wrapped for pyarrow), so
RunDir's store, staging, log upload and experiment copies are checked here;
tests/e2e/test_s3_storage.py runs the real thing against moto's S3 server.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from factories import quadratic_sweep
from raysweep.config.load import parse_spec
from raysweep.errors import ConfigError, ResumeError, SweepError
from raysweep.results.records import SweepResult, TrialRecord
from raysweep.rundir import Part, RunDir, list_runs
from raysweep.staging import PLACEHOLDER, Publisher
from raysweep.storage import (
    FsStore,
    Location,
    check_storage,
    is_uri,
    local_path,
    open_location,
    staging_dir,
)

SPEC = quadratic_sweep(
    name="r",
    space={"x": {"type": "uniform", "low": 0, "high": 1}},
    search={"algorithm": "random", "num_samples": 2},
    seed=0,
)


@pytest.fixture()
def bucket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh ``memory://`` prefix, with the staging directory under tmp_path."""
    monkeypatch.setenv("RAYSWEEP_STAGING_DIR", str(tmp_path / "staging"))
    return f"memory://b{uuid.uuid4().hex[:8]}/runs"


def test_uris_and_local_paths_are_told_apart() -> None:
    assert is_uri("s3://bucket/runs") and is_uri("gs://b/p") and is_uri("memory://b")
    assert not is_uri("runs") and not is_uri("/shared/runs") and not is_uri(Path("runs"))
    assert not is_uri("file:///shared/runs") and not is_uri("C:\\runs")
    assert local_path("file:///shared/runs") == Path("/shared/runs")
    assert local_path("runs/x") == Path("runs/x")


def test_a_location_keeps_its_query_and_names_its_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    base = Location("s3://bkt/runs?endpoint_override=127.0.0.1:9000&scheme=http", None, "bkt/runs")
    run = base.child("night")
    assert run.uri == "s3://bkt/runs/night?endpoint_override=127.0.0.1:9000&scheme=http"
    assert (run.path, run.name) == ("bkt/runs/night", "night")
    assert run.parent() == base
    assert "127.0.0.1:9000" in run.endpoint()
    plain = Location("s3://bkt/runs", None, "bkt/runs")
    assert plain.endpoint() == "AWS's default S3 endpoint"
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
    assert plain.endpoint() == "endpoint http://127.0.0.1:4566"
    assert Location("gs://b/p", None, "b/p").endpoint() == "gs storage"


def test_an_unknown_scheme_is_a_config_error_naming_it() -> None:
    with pytest.raises(ConfigError, match="nosuchfs://x/y"):
        open_location("nosuchfs://x/y")


def test_the_staging_directory_is_keyed_by_the_uri(bucket: str, tmp_path: Path) -> None:
    one, two = open_location(f"{bucket}/a"), open_location(f"{bucket}2/a")
    assert staging_dir(one).name == "a" and staging_dir(one) != staging_dir(two)
    assert staging_dir(one).is_relative_to(tmp_path / "staging")


class _Unreachable:
    """A pyarrow-like filesystem whose every request fails, as a closed port does."""

    type_name = "s3"

    def open_output_stream(self, path: str) -> Any:
        raise OSError("Could not connect to server")

    open_input_stream = open_output_stream


def test_the_storage_check_names_the_uri_and_endpoint(
    bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    down = Location("s3://bkt/runs", _Unreachable(), "bkt/runs")
    with pytest.raises(ConfigError) as caught:
        check_storage(down)
    message = str(caught.value)
    assert "s3://bkt/runs" in message and "http://127.0.0.1:1" in message
    assert "Could not connect" in message and "Nothing was written" in message
    up = open_location(bucket)
    check_storage(up)  # written, read back and deleted
    assert FsStore(up).names() == []


def test_run_files_live_at_the_uri_and_only_the_staged_logs_locally(bucket: str) -> None:
    run_dir = RunDir.under(bucket, "r")
    assert str(run_dir) == f"{bucket}/r" and run_dir.name == "r" and run_dir.is_remote
    assert RunDir(str(run_dir)) == run_dir and run_dir.resolved() is run_dir
    assert not run_dir.exists()
    run_dir.create()
    run_dir.write_spec(parse_spec(SPEC))
    run_dir.mark("running")
    run_dir.set_parts([Part("tune", 2)])
    trials = [
        TrialRecord(
            trial_id=f"t{i}", index=i, status="completed", config={"x": i}, seed=i,
            iterations=1, last={"loss": float(i)}, best_metric=float(i),
        )
        for i in range(2)
    ]  # fmt: skip
    run_dir.write_results(SweepResult(name="r", metric="loss", mode="min", trials=trials))
    run_dir.write_report("report\n")
    assert list(run_dir.path.iterdir()) == []  # nothing of the run's own files is staged
    again = RunDir(str(run_dir))
    assert again.read_spec() == parse_spec(SPEC) and again.parts() == [Part("tune", 2)]
    assert again.read_results().trials == trials and again.read_best()["trial_id"] == "t0"
    assert again.read_report() == "report\n" and again.is_run()
    assert json.loads(again.store.read_bytes("state.json") or b"")["status"] == "running"
    assert list_runs(bucket) == [run_dir]
    with pytest.raises(SweepError, match=f"{bucket}/none: no results.json"):
        RunDir(f"{bucket}/none").read_results()


def test_staged_logs_are_uploaded_and_pulled_back_on_a_fresh_machine(bucket: str) -> None:
    run_dir = RunDir.under(bucket, "r")
    run_dir.create()
    run_dir.path.mkdir(parents=True, exist_ok=True)
    with run_dir.synced():
        run_dir.events_path.write_text('{"event": "start", "trial_id": "a"}\n')
    assert run_dir.store.read_bytes("trials.jsonl") == run_dir.events_path.read_bytes()
    for path in run_dir.path.iterdir():  # a fresh machine: no staging
        path.unlink()
    fresh = RunDir(str(run_dir))
    assert fresh.read_events() == [{"event": "start", "trial_id": "a"}]
    with fresh.synced():  # pulled first, then appended to
        assert fresh.events_path.is_file()
        with fresh.events_path.open("a") as events:
            events.write('{"event": "ended", "trial_id": "a"}\n')
    assert [e["event"] for e in RunDir(str(run_dir)).read_events()] == ["start", "ended"]


def test_the_publisher_uploads_only_what_changed(bucket: str, tmp_path: Path) -> None:
    store = FsStore(open_location(bucket))
    log = tmp_path / "log"
    log.write_text("one\n")
    publisher = Publisher(store, {"sweep_output.log": log, "absent": tmp_path / "x"}, 60)
    assert publisher.publish() == 1 and publisher.publish() == 0
    log.write_text("one\ntwo\n")
    assert publisher.publish() == 1 and store.read_bytes("sweep_output.log") == b"one\ntwo\n"


def _experiment(run_dir: RunDir) -> None:
    """A Ray experiment folder on the storage: a snapshot, a trial and two checkpoints."""
    trial = json.dumps({"trial_id": "a", "status": "RUNNING", "config": {"x": 1}})
    run_dir.store.write_bytes(
        "tune/experiment_state-2026.json", json.dumps({"trial_data": [[trial, "{}"]]}).encode()
    )
    run_dir.store.write_bytes("tune/trial_a/result.json", b'{"training_iteration": 1}\n')
    run_dir.store.write_bytes("tune/trial_a/checkpoint_000000/state.json", b"{}")
    run_dir.store.write_bytes("tune/trial_a/checkpoint_000001/state.json", b"{}")


def test_experiment_folders_are_read_through_the_store(bucket: str) -> None:
    run_dir = RunDir.under(bucket, "r")
    part = Part("tune", 1)
    assert not run_dir.has_experiment(part) and not run_dir.has_snapshot(part)
    _experiment(run_dir)
    assert run_dir.has_experiment("tune") and run_dir.has_snapshot(part)
    assert run_dir.trial_states(part) == [
        {"trial_id": "a", "status": "RUNNING", "config": {"x": 1}}
    ]
    location = open_location(str(run_dir))
    assert run_dir.ray_experiment(part) == (f"{location.path}/tune", run_dir.store.location.fs)
    with pytest.raises(ResumeError, match=f"{bucket}/r/tune/tuner.pkl is missing"):
        run_dir.check_restorable(part)
    run_dir.store.write_bytes("tune/experiment_state-2027.json", b"{")
    with pytest.raises(ResumeError, match=f"{bucket}/r/tune/experiment_state-2027.json is"):
        run_dir.trial_states(part)


def test_a_local_copy_of_an_experiment_writes_back_what_changed(bucket: str) -> None:
    run_dir = RunDir.under(bucket, "r")
    _experiment(run_dir)
    with run_dir.local_experiment("tune") as local:
        trial = local / "trial_a"
        assert (trial / "checkpoint_000001" / PLACEHOLDER).is_file()  # contents stay remote
        assert not (trial / "checkpoint_000001" / "state.json").exists()
        (trial / "result.json").write_text("")
        (trial / "result.json.orig").write_text("kept")
        for placeholder in (trial / "checkpoint_000000").iterdir():
            placeholder.unlink()
        (trial / "checkpoint_000000").rmdir()
    names = run_dir.store.names("tune/trial_a")
    assert names == ["checkpoint_000001", "result.json", "result.json.orig"]
    assert run_dir.store.read_bytes("tune/trial_a/result.json") == b""
    assert run_dir.store.read_bytes("tune/trial_a/checkpoint_000001/state.json") == b"{}"
    with pytest.raises(RuntimeError), run_dir.local_experiment("tune") as local:
        (local / "trial_a" / "result.json").write_text("lost")
        raise RuntimeError("a failed repair writes nothing back")
    assert run_dir.store.read_bytes("tune/trial_a/result.json") == b""


def test_learning_curves_of_a_remote_run_are_read_from_the_bucket(bucket: str) -> None:
    run_dir = RunDir.under(bucket, "r")
    run_dir.mark("running")
    run_dir.set_parts([Part("tune", 1)])
    rows = [{"trial_id": "a", "training_iteration": i, "loss": 1.0 / i} for i in (1, 2)]
    run_dir.store.write_bytes(
        "tune/trial_a/result.json", "".join(json.dumps(r) + "\n" for r in rows).encode()
    )
    assert run_dir.trial_curves("loss") == {"a": [(1, 1.0), (2, 0.5)]}


def test_resource_usage_is_read_from_staging_while_there_else_from_the_bucket(
    bucket: str,
) -> None:
    run_dir = RunDir.under(bucket, "r")
    run_dir.store.write_json("resource_usage.json", {"from": "bucket"})
    assert run_dir.read_usage() == {"from": "bucket"}
    run_dir.path.mkdir(parents=True)
    run_dir.usage_path.write_text(json.dumps({"from": "this invocation"}))
    assert run_dir.read_usage() == {"from": "this invocation"}
