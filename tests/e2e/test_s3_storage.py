"""Runs on S3-compatible storage: moto's server on loopback, real `sweep` processes, real Ray.

moto (``moto[server]``, the ``dev`` extra) answers S3 on 127.0.0.1 on a free
port; every `sweep` process finds it through the standard AWS variables, with
credentials and config files of its own so that nothing reaches beyond
loopback. A sweep runs on ``s3://bucket/runs``, is killed with SIGKILL (its
whole process group, Ray included), its local staging directory is deleted as
on a fresh machine, and ``sweep resume s3://...`` ends it from the bucket.

The scenarios run all at once (see :func:`scenarios`); each test reports its own.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import CRASH_CONFIG, Outcome, Sweeps, free_port, settle, together

from factories import make_sweep

REPO = Path(__file__).resolve().parents[2]
BUCKET = "sweeps"
pytestmark = pytest.mark.slow


def aws_env(tmp: Path, endpoint: str) -> dict[str, str]:
    """The environment of every `sweep` process: S3 on ``endpoint``, nothing else."""
    env = {
        k: v for k, v in os.environ.items() if not k.upper().startswith(("AWS_", "HTTP", "ALL_"))
    }
    return {
        **env,
        "PYTHONPATH": str(REPO),
        "RAY_USAGE_STATS_ENABLED": "0",
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",  # no instance-metadata lookups off loopback
        "AWS_CONFIG_FILE": str(tmp / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp / "no-aws-credentials"),
        "NO_PROXY": "127.0.0.1,localhost",
        "RAYSWEEP_STAGING_DIR": str(tmp / "staging"),
        "RAYSWEEP_STORAGE_SYNC_S": "0.5",
    }


@pytest.fixture(scope="module")
def s3() -> Iterator[str]:
    """moto's S3 server on 127.0.0.1 with one bucket; yields its endpoint URL."""
    try:
        import moto.server  # noqa: F401
    except ImportError:
        pytest.fail("moto[server] is missing: `make install` installs the dev extra")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            assert server.poll() is None, "moto's server exited"
            assert time.monotonic() < deadline, "moto's server did not start"
            time.sleep(0.1)
        bucket_fs(endpoint, create=True).create_dir(BUCKET)
        yield endpoint
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def bucket_fs(endpoint: str, create: bool = False) -> Any:
    import pyarrow.fs

    return pyarrow.fs.S3FileSystem(
        endpoint_override=endpoint,
        access_key="testing",
        secret_key="testing",
        region="us-east-1",
        allow_bucket_creation=create,
    )


def read_bytes(endpoint: str, key: str) -> bytes:
    with bucket_fs(endpoint).open_input_stream(f"{BUCKET}/{key}") as stream:
        return bytes(stream.read())


def read_json(endpoint: str, key: str) -> Any:
    return json.loads(read_bytes(endpoint, key))


def keys(endpoint: str, prefix: str) -> list[str]:
    """Every object under ``prefix`` in the bucket, relative to it."""
    import pyarrow.fs

    selector = pyarrow.fs.FileSelector(f"{BUCKET}/{prefix}", recursive=True, allow_not_found=True)
    infos = bucket_fs(endpoint).get_file_info(selector)
    return sorted(
        info.path.removeprefix(f"{BUCKET}/{prefix}/")
        for info in infos
        if info.type == pyarrow.fs.FileType.File
    )


def ended(events_file: Path) -> dict[int, float]:
    """index -> loss of every trial that ended, from a trials.jsonl."""
    found: dict[int, float] = {}
    if events_file.is_file():
        for line in events_file.read_text().splitlines():
            with contextlib.suppress(ValueError, KeyError):
                event = json.loads(line)
                if event["event"] == "ended":
                    found[event["index"]] = event["loss"]
    return found


def killed_sweep_resumes_from_the_bucket(s3: str, tmp_path: Path) -> None:
    config = tmp_path / "sweep.json"
    config.write_text(json.dumps(CRASH_CONFIG))
    uri = f"s3://{BUCKET}/runs/crash"
    sweeps = Sweeps(tmp_path, aws_env(tmp_path, s3))
    try:
        first = sweeps.start(
            "run", "--config", str(config), "--storage", f"s3://{BUCKET}/runs", "--no-dashboard"
        )
        staged = list((tmp_path / "staging").glob("*/crash/trials.jsonl"))
        deadline = time.monotonic() + 180
        while len(ended(staged[0]) if staged else {}) < 3:
            assert first.poll() is None, sweeps.output(first)
            assert time.monotonic() < deadline, "timed out waiting for 3 trials to end"
            time.sleep(0.05)
            staged = staged or list((tmp_path / "staging").glob("*/crash/trials.jsonl"))
        finished_before_kill = ended(staged[0])
        sweeps.kill_group(first)

        assert read_json(s3, "runs/crash/state.json")["status"] == "running"
        code, out = sweeps.run("status", uri)
        assert code == 0 and "crashed" in out, out

        shutil.rmtree(tmp_path / "staging")  # a fresh machine: only the bucket is left
        code, out = sweeps.run("resume", uri, "--no-dashboard")
        assert code == 0, out
        assert "Traceback" not in out, out
    finally:
        sweeps.close()

    results = read_json(s3, "runs/crash/results.json")
    trials = results["trials"]
    assert len(trials) == CRASH_CONFIG["search"]["num_samples"]
    assert sorted(t["index"] for t in trials) == list(range(len(trials)))
    assert len({t["trial_id"] for t in trials}) == len(trials)
    assert all(t["status"] == "completed" for t in trials), trials
    by_index = {t["index"]: t for t in trials}
    for index, loss in finished_before_kill.items():
        assert by_index[index]["last"]["loss"] == loss, f"trial #{index} changed"
    state = read_json(s3, "runs/crash/state.json")
    assert state["status"] == "completed" and len(state["commands"]) == 2
    log = read_bytes(s3, "runs/crash/sweep_output.log").decode()
    assert log.count("\n$ ") == 2, log  # the killed run's lines, then the resume's
    assert read_json(s3, "runs/crash/best_config.json")["value"] == min(
        t["best_metric"] for t in trials
    )
    assert not (REPO / "runs" / "crash").exists()  # nothing went to the default ./runs

    sweeps = Sweeps(tmp_path, aws_env(tmp_path, s3))
    code, out = sweeps.run("status", uri)
    assert code == 0 and "completed" in out and "6 completed" in out, out
    code, out = sweeps.run("best", uri)
    assert code == 0 and json.loads(out)["trial_id"] in {t["trial_id"] for t in trials}, out
    code, out = sweeps.run("list", "--storage", f"s3://{BUCKET}/runs")
    assert code == 0 and "crash" in out and "completed" in out, out

    # Growing it: the extension's searcher continues from tune/'s state in the bucket.
    code, out = sweeps.run("resume", uri, "--num-samples", "8", "--no-dashboard")
    assert code == 0, out
    grown = read_json(s3, "runs/crash/results.json")["trials"]
    assert sorted(t["index"] for t in grown) == list(range(8))
    assert [t for t in grown if t["index"] < 6] == sorted(trials, key=lambda t: t["index"])
    extension = {k.split("/")[0] for k in keys(s3, "runs/crash/tune-ext-1") if "trial_" in k}
    assert len(extension) == 2, extension


def unreachable_or_missing_storage_exits_2(s3: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "sweep.json"
    config.write_text(json.dumps(CRASH_CONFIG))
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    sweeps = Sweeps(tmp_path, aws_env(tmp_path, closed), cwd=work)

    code, out = sweeps.run("run", "--config", str(config), "--storage", f"s3://{BUCKET}/runs")
    assert code == 2, out
    assert f"s3://{BUCKET}/runs" in out and closed in out, out
    assert "Traceback" not in out, out
    code, out = sweeps.run("resume", f"s3://{BUCKET}/runs/crash")
    assert code == 2 and closed in out and "Traceback" not in out, out
    assert list(work.iterdir()) == [] and not (tmp_path / "staging").exists()

    sweeps = Sweeps(tmp_path, aws_env(tmp_path, s3), cwd=work)
    code, out = sweeps.run("run", "--config", str(config), "--storage", "s3://no-such-bucket/r")
    assert code == 2 and "s3://no-such-bucket/r" in out, out
    assert list(work.iterdir()) == [] and not (tmp_path / "staging").exists()


def checkpointing_trial_continues_from_the_bucket(s3: str, tmp_path: Path) -> None:
    """The scenario of the checkpointing test below."""
    steps, lr = 150, 0.01
    config = tmp_path / "ckpt.json"
    data = make_sweep(
        "examples.checkpointing:fit",
        name="ckpt",
        space={"x": {"type": "uniform", "low": -5, "high": 5}, "steps": steps, "lr": lr},
        search={"algorithm": "random", "num_samples": 1, "max_concurrent": 1},
        checkpoint={"frequency": 1, "num_to_keep": 2},
        seed=11,
    )
    config.write_text(json.dumps(data))
    sweeps = Sweeps(tmp_path, aws_env(tmp_path, s3))

    def reached() -> int:
        found = [k.split("/")[1] for k in keys(s3, "runs/ckpt/tune") if "/checkpoint_" in k]
        return max((int(name.split("_")[1]) for name in found), default=-1)

    try:
        proc = sweeps.start(
            "run", "--config", str(config), "--storage", f"s3://{BUCKET}/runs", "--no-dashboard"
        )
        deadline = time.monotonic() + 180
        while reached() < 30:
            assert proc.poll() is None, sweeps.output(proc)
            assert time.monotonic() < deadline, "timed out waiting for checkpoint 30"
            time.sleep(0.2)
        sweeps.kill_group(proc)
        assert reached() < steps - 1, "the trial finished before the kill"
        shutil.rmtree(tmp_path / "staging")
        code, out = sweeps.run("resume", f"s3://{BUCKET}/runs/ckpt", "--no-dashboard")
        assert code == 0, out
        assert "restarts from scratch" not in out, out
    finally:
        sweeps.close()

    (trial,) = read_json(s3, "runs/ckpt/results.json")["trials"]
    x = trial["config"]["x"]
    for _ in range(steps):
        x -= lr * 2 * (x - 3.0)
    assert trial["last"]["loss"] == (x - 3.0) ** 2, (trial, out)  # bit-identical
    assert trial["iterations"] == steps, (trial, out)
    trial_dir = f"runs/ckpt/tune/trial_{trial['trial_id']}"
    rows = [json.loads(line) for line in read_bytes(s3, f"{trial_dir}/result.json").splitlines()]
    iterations = [r["training_iteration"] for r in rows]
    assert iterations == list(range(1, steps + 1)), (iterations, out)
    kept = {k.split("/")[0] for k in keys(s3, trial_dir) if k.startswith("checkpoint_")}
    assert len(kept) == 2, (kept, out)  # num_to_keep


SCENARIOS = {
    "killed": killed_sweep_resumes_from_the_bucket,
    "unreachable": unreachable_or_missing_storage_exits_2,
    "checkpointing": checkpointing_trial_continues_from_the_bucket,
}


@pytest.fixture(scope="module")
def scenarios(
    s3: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[Any, Outcome[None]]]:
    """Every scenario of this module, all at once against the one S3 server.

    Nothing they check depends on timing (each waits for what it needs before a
    kill), and each has a directory, a staging directory and a run name of its own.
    """
    runs = together(
        {
            name: functools.partial(scenario, s3, tmp_path_factory.mktemp(name))
            for name, scenario in SCENARIOS.items()
        }
    )
    yield runs
    settle(runs)


def test_killed_sweep_resumes_from_the_bucket_with_exactly_num_samples_trials(
    scenarios: dict[Any, Outcome[None]],
) -> None:
    scenarios["killed"].result()


def test_unreachable_or_missing_storage_exits_2_naming_it(
    scenarios: dict[Any, Outcome[None]],
) -> None:
    scenarios["unreachable"].result()


def test_checkpointing_trial_continues_from_its_checkpoint_in_the_bucket(
    scenarios: dict[Any, Outcome[None]],
) -> None:
    """examples/checkpointing.py, killed mid-trial: the resume continues from the bucket.

    Ray's workers write each checkpoint to the bucket; after the kill the resume
    catches the snapshot up with them (``_raycompat/repair.py`` on a staging
    copy, written back), and the trial ends bit-identical to an uninterrupted one.
    """
    scenarios["checkpointing"].result()
