"""The Ray dashboard of a run (on by default, loopback only, token auth) and live status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from factories import quadratic_sweep
from raysweep.rundir import RunDir

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

CONFIG: dict[str, Any] = quadratic_sweep(
    name="dash",
    space={"x": {"type": "uniform", "low": -5, "high": 5}, "steps": 3, "sleep_s": 0.5},
    search={"algorithm": "random", "num_samples": 6, "max_concurrent": 1},
    seed=3,
)


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    return env


def _start(tmp_path: Path, *flags: str, **changes: Any) -> tuple[subprocess.Popen[str], RunDir]:
    config = tmp_path / "sweep.json"
    config.write_text(json.dumps({**CONFIG, **changes}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "raysweep.cli", "run", "--config", str(config),
         "--storage", str(tmp_path / "runs"), *flags],
        cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    return proc, RunDir(tmp_path / "runs" / changes.get("name", CONFIG["name"]))


def _wait(what: str, check: Any, proc: subprocess.Popen[str], timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if proc.poll() is not None:
            pytest.fail(f"sweep ended before {what}: {proc.communicate()[0]}")
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def _finish(proc: subprocess.Popen[str]) -> str:
    try:
        out, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    assert proc.returncode == 0, out
    return out


def _get(url: str, token: str | None) -> int:
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def _ended(run_dir: RunDir) -> bool:
    return any(e.get("event") == "ended" for e in run_dir.read_events())


def test_dashboard_on_loopback_with_token_auth_and_live_status(tmp_path: Path) -> None:
    proc, run_dir = _start(tmp_path)
    _wait("the dashboard URL", lambda: "dashboard_url" in run_dir.read_state(), proc)
    _wait("a finished trial", lambda: _ended(run_dir), proc)
    url = run_dir.read_state()["dashboard_url"]
    port = int(url.rsplit(":", 1)[1])
    assert url.startswith("http://127.0.0.1:")
    token = (Path.home() / ".ray" / "auth_token").read_text().strip()
    assert _get(f"{url}/api/version", token) == 200
    assert _get(f"{url}/api/version", None) in (401, 403)
    listening = {
        c.laddr.ip
        for c in psutil.net_connections("tcp")
        if c.status == "LISTEN" and c.laddr.port == port
    }
    assert listening == {"127.0.0.1"}

    status = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "raysweep.cli", "status", str(run_dir.path),
         "--json"],
        cwd=REPO, env=_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert status.returncode == 0, status.stderr[-2000:]
    imported = [
        line.rsplit("|", 1)[1].strip() for line in status.stderr.splitlines() if "|" in line
    ]
    assert "raysweep.status" in imported
    assert not [m for m in imported if m == "ray" or m.startswith("ray.")]
    info = json.loads(status.stdout)
    assert info["status"] == "running" and info["trials"] == 6
    assert sum(info["counts"].values()) == 6 and info["counts"]["completed"] >= 1
    assert info["best"]["metric"] == "loss" and "x" in info["best"]["config"]
    assert info["dashboard_url"] == url and info["elapsed_s"] is not None

    text = subprocess.run(
        [sys.executable, "-m", "raysweep.cli", "status", str(run_dir.path)],
        cwd=REPO, env=_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert "dash: running" in text.stdout and "best: loss=" in text.stdout
    assert f"dashboard: {url}" in text.stdout and "ETA" in text.stdout

    out = _finish(proc)
    assert f"Ray dashboard: {url}" in out and "ray get-auth-token" in out
    assert "ssh -N -L" in out
    final = json.loads(
        subprocess.run(
            [sys.executable, "-m", "raysweep.cli", "status", str(run_dir.path), "--json"],
            cwd=REPO, env=_env(), capture_output=True, text=True, timeout=60,
        ).stdout
    )  # fmt: skip
    assert final["status"] == "completed" and final["counts"] == {"completed": 6}


@pytest.fixture(scope="module")
def side_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, tuple[subprocess.Popen[str], RunDir]]]:
    """The two short runs below, started at once after the first test.

    Neither checks anything timed, and they cannot clash: one starts no dashboard
    (Ray's minimal one serves no HTTP). Each test waits for its own.
    """
    started = {
        "none": _start(
            tmp_path_factory.mktemp("none"), "--no-dashboard",
            search={"algorithm": "random", "num_samples": 2},
        ),
        "beyond loopback": _start(
            tmp_path_factory.mktemp("beyond"), "--dashboard-host", "0.0.0.0",
            search={"algorithm": "random", "num_samples": 1},
        ),
    }  # fmt: skip
    yield started
    for proc, _ in started.values():
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_no_dashboard_starts_none(
    side_runs: dict[str, tuple[subprocess.Popen[str], RunDir]],
) -> None:
    proc, run_dir = side_runs["none"]
    out = _finish(proc)
    assert "dashboard_url" not in run_dir.read_state() and "Ray dashboard" not in out


def test_dashboard_beyond_loopback_is_warned_about(
    side_runs: dict[str, tuple[subprocess.Popen[str], RunDir]],
) -> None:
    proc, run_dir = side_runs["beyond loopback"]
    out = _finish(proc)
    assert "WARNING: the Ray dashboard listens on 0.0.0.0" in out
    assert any("0.0.0.0" in w for w in run_dir.read_manifest()["warnings"])
