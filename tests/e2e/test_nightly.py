"""nightly.sh for real: real bash, real `sweep`, real Ray, a tiny CPU sweep per night.

Each night runs in its own session (start_new_session) so a SIGKILL of its
process group takes Ray with it, as a crash of the machine's job would; Ray's
temp dir is private to this module (RAY_TMPDIR) so no other Ray on the machine
is joined. Notifications go to an HTTP server on 127.0.0.1 in this process.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import Outcome, settle

from factories import SilentPort, kill_group, make_sweep
from raysweep.rundir import RunDir

REPO = Path(__file__).resolve().parents[2]
NIGHTLY = REPO / "nightly.sh"
SWEEP = Path(sys.executable).with_name("sweep")
pytestmark = pytest.mark.slow


def sweep_config(work: Path, num_samples: int = 3, sleep_s: float = 0.0, **extra: Any) -> Path:
    """A tiny random sweep of tests/e2e/nightly_trainable.py, written to work/sweep.json."""
    data = make_sweep(
        "nightly_trainable:fit",
        name="nightly-test",
        space={
            "x": {"type": "uniform", "low": 0, "high": 6},
            "steps": 2,
            "sleep_s": sleep_s,
            "offset_file": str(work / "offset.txt"),
        },
        search={"algorithm": "random", "num_samples": num_samples, "max_concurrent": 1},
        seed=17,
    )
    data.update(extra)
    path = work / "sweep.json"
    path.write_text(json.dumps(data))
    return path


class Receiver:
    """An HTTP server on 127.0.0.1 that keeps every JSON body POSTed to it."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        posts = self.posts

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                posts.append(json.loads(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


@pytest.fixture(scope="module")
def ray_tmp() -> Iterator[str]:
    """A short private Ray temp dir (Ray's socket paths must stay under 107 bytes)."""
    path = tempfile.mkdtemp(prefix="rn", dir="/tmp")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@dataclass
class Nights:
    """A working directory whose nights share a log dir, an export and settings."""

    work: Path
    ray_tmp: str
    settings: dict[str, str] = field(default_factory=dict)
    procs: list[subprocess.Popen[str]] = field(default_factory=list)

    @property
    def log_dir(self) -> Path:
        return self.work / "sweep_logs"

    @property
    def export(self) -> Path:
        return self.work / "models" / "best_configs_latest.json"

    def env(self, **overrides: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k != "RAY_ADDRESS" and not k.lower().endswith("_proxy")
        }
        empty = self.work / "empty.env"
        empty.touch()
        env.update(
            PYTHONPATH=f"{REPO}{os.pathsep}{REPO / 'tests' / 'e2e'}",
            RAY_USAGE_STATS_ENABLED="0",
            RAY_TMPDIR=self.ray_tmp,
            SWEEP_BIN=str(SWEEP),
            SWEEP_ENV_FILE=str(empty),
            SWEEP_CONFIG=str(self.work / "sweep.json"),
            SWEEP_RUN_ARGS="--no-dashboard",
        )
        env.update(self.settings)
        env.update(overrides)
        return env

    def start(self, **overrides: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            ["bash", str(NIGHTLY)],
            cwd=self.work,
            env=self.env(**overrides),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc

    def run(self, timeout: float = 240, **overrides: str) -> tuple[int, str]:
        proc = self.start(**overrides)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            raise
        return proc.returncode, out

    def runs(self) -> list[RunDir]:
        return sorted(
            (RunDir(p) for p in self.log_dir.glob("nightly_*") if p.is_dir()),
            key=lambda r: r.name,
        )

    def history(self) -> list[dict[str, Any]]:
        path = self.log_dir / "history.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]

    def close(self) -> None:
        for proc in self.procs:
            kill_group(proc)


@pytest.fixture
def nights(tmp_path: Path, ray_tmp: str) -> Iterator[Nights]:
    group = Nights(tmp_path, ray_tmp)
    yield group
    group.close()


# -- two nights: a success, then a warm-started regression ---------------------------


@dataclass
class TwoNights:
    nights: Nights
    first: tuple[int, str]
    first_export: dict[str, Any]
    second: tuple[int, str]
    posts: list[dict[str, Any]]


@pytest.fixture(scope="module")
def two_nights(
    tmp_path_factory: pytest.TempPathFactory, ray_tmp: str, receiver: Receiver, killed: Killed
) -> Iterator[TwoNights]:
    """Two nights in a row. The timed part of :func:`killed` goes first, alone; the
    night after it (untimed) runs alongside these two (it notifies no one)."""
    work = tmp_path_factory.mktemp("two_nights")
    group = Nights(work, ray_tmp, settings={"SWEEP_NOTIFY_URL": receiver.url})
    sweep_config(work, num_samples=3)
    (work / "offset.txt").write_text("0")
    seen = len(receiver.posts)
    first = group.run()
    first_export = json.loads(group.export.read_text()) if group.export.is_file() else {}
    sweep_config(work, num_samples=4)  # 2 of the 3 exported points, then the searcher's 2
    (work / "offset.txt").write_text("10")  # the data changed: every score is 10 worse
    second = group.run()
    yield TwoNights(group, first, first_export, second, receiver.posts[seen:])
    group.close()


def test_a_successful_night_leaves_run_log_export_and_history(two_nights: TwoNights) -> None:
    code, out = two_nights.first
    assert code == 0, out
    group = two_nights.nights
    run_dir = group.runs()[0]
    assert run_dir.effective_status() == "completed" and len(run_dir.read_results().trials) == 3
    logs = sorted(group.log_dir.glob("nightly_*.log"))
    assert logs and "night over: succeeded (exit 0)" in logs[0].read_text()
    assert f"starting {Path('sweep_logs') / run_dir.name}" in logs[0].read_text()
    export = two_nights.first_export
    best = run_dir.read_best()
    assert best is not None and export["configurations"][0] == best["config"]
    assert len(export["configurations"]) == 3
    assert (export["metric"], export["mode"], export["value"]) == ("loss", "min", best["value"])
    assert export["run"] == run_dir.name and export["generated_at"].endswith("Z")
    first = group.history()[0]
    assert first["run"] == run_dir.name and first["status"] == "succeeded"
    assert first["trials"] == 3 and first["best"] == best["value"]


def test_the_next_night_evaluates_the_previous_top_configs_first(two_nights: TwoNights) -> None:
    code, out = two_nights.second
    assert code == 0, out  # a regression is still a successful night
    second_run = two_nights.nights.runs()[1]
    trials = sorted(second_run.read_results().trials, key=lambda t: t.index)
    previous = [c["x"] for c in two_nights.first_export["configurations"]]
    # the 3 exported configurations would take 3 of the 4 trials: capped at half, said so
    assert [t.config["x"] for t in trials[:2]] == previous[:2]
    # then random search's own samples at indices 2 and 3 (the seed's: index 2 is the first
    # night's trial 2 again, index 3 is new)
    assert trials[3].config["x"] not in previous
    record = second_run.read_warm_start()
    assert record is not None and len(record["points"]) == 2
    log = second_run.log_path.read_text()
    assert "Warm start: 2 configuration(s)" in log
    assert "1 configuration(s) dropped: earlier configurations take at most half" in log


def test_a_regression_is_notified_with_both_bests(two_nights: TwoNights) -> None:
    first_run, second_run = two_nights.nights.runs()
    posts = [p for p in two_nights.posts if p["event"] == "regression"]
    assert len(posts) == 1 and len(two_nights.posts) == 1  # the good night sent nothing
    post = posts[0]
    assert post["run_dir"] == str(second_run.path) and post["exit_code"] == 0
    assert post["best"]["value"] >= 10 > post["previous_best"]["value"]
    assert post["previous_best"]["run"] == first_run.name
    assert post["best"]["run"] == second_run.name and post["change_pct"] > 5
    assert "worse than" in post["reason"] and "REGRESSION" in two_nights.second[1]
    assert "exported the top 10 configurations" in post["log_tail"]


def test_sweep_history_shows_the_nights_in_order_with_their_change(
    two_nights: TwoNights,
) -> None:
    group = two_nights.nights
    first_run, second_run = group.runs()
    shown = subprocess.run(
        [str(SWEEP), "history", str(group.log_dir)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    rows = [line for line in shown if "nightly_" in line]
    assert first_run.name in rows[0] and "succeeded" in rows[0] and "3/3" in rows[0]
    assert second_run.name in rows[1] and "regression" in rows[1] and "4/4" in rows[1]
    change = group.history()[1]["change_pct"]
    assert f"{change:+.1f}%" in rows[1]
    data = json.loads(
        subprocess.run(
            [str(SWEEP), "history", str(group.log_dir), "--json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert [r["run"] for r in data] == [first_run.name, second_run.name]
    assert data[1]["previous_run"] == first_run.name and data[1]["change_pct"] > 5


# -- overlap, SIGKILL and resume --------------------------------------------------------


@dataclass
class Killed:
    nights: Nights
    second: tuple[int, str, float]
    run_dir: RunDir
    runs_after_overlap: int  # run directories once night B has exited and A is killed
    history_after_overlap: bool  # whether history.jsonl existed then
    status_after_kill: str  # the run's effective status before the night after
    night_after: Outcome[tuple[int, str]]  # that night, running in the background


def wait_for_lock(path: Path, timeout: float = 60) -> None:
    """Wait until no process holds the flock on ``path`` (the kernel drops it at exit)."""
    deadline = time.monotonic() + timeout
    with path.open("a") as fh:
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
                continue
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            return


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory, ray_tmp: str) -> Iterator[Killed]:
    """Night A runs; night B starts while A holds the lock; then A is SIGKILLed mid-run.

    What the tests check of that moment is recorded; then the night after starts in
    the background (its tests wait for it).
    """
    work = tmp_path_factory.mktemp("killed")
    group = Nights(work, ray_tmp)
    sweep_config(work, num_samples=4, sleep_s=1.0)
    first = group.start()
    deadline = time.monotonic() + 180
    run_dir: RunDir | None = None
    while time.monotonic() < deadline and first.poll() is None:
        runs = group.runs()
        if runs and any(e.get("event") != "start" for e in runs[0].read_events()):
            run_dir = runs[0]
            break  # one trial has ended, the others have not
        time.sleep(0.2)
    if run_dir is None:
        group.close()
        pytest.fail(f"night A never got a trial done: {first.communicate()[0]}")
    began = time.monotonic()
    code, out = group.run(timeout=60)
    second = (code, out, time.monotonic() - began)
    kill_group(first)
    wait_for_lock(group.log_dir / ".nightly.lock")  # the killed processes finish dying
    runs_after_overlap = len(group.runs())
    history_after_overlap = (group.log_dir / "history.jsonl").exists()
    status_after_kill = run_dir.effective_status()
    night_after = Outcome(group.run)
    yield Killed(
        group, second, run_dir, runs_after_overlap, history_after_overlap, status_after_kill,
        night_after,
    )  # fmt: skip
    settle({"night after": night_after})
    group.close()


def test_an_overlapping_night_exits_0_at_once_and_runs_nothing(killed: Killed) -> None:
    code, out, took = killed.second
    assert code == 0, out
    assert took < 10
    assert "another night is still running (pid" in out
    assert killed.runs_after_overlap == 1  # exactly one sweep
    assert not killed.history_after_overlap


def test_the_night_after_a_sigkill_resumes_that_run(killed: Killed) -> None:
    group, run_dir = killed.nights, killed.run_dir
    assert killed.status_after_kill == "crashed"
    code, out = killed.night_after.result()
    assert code == 0, out
    assert f"resuming the unfinished run {Path('sweep_logs') / run_dir.name}" in out
    assert group.runs() == [run_dir]  # no new run directory
    trials = run_dir.read_results().trials
    assert len(trials) == 4 and sorted(t.index for t in trials) == [0, 1, 2, 3]
    assert run_dir.effective_status() == "completed"
    (line,) = group.history()
    assert line["run"] == run_dir.name and line["resumed"] and line["status"] == "succeeded"


# -- failing nights ---------------------------------------------------------------------


FAILURES = {
    "invalid config": ({"SWEEP_CONFIG": "bad.json"}, 2, "search.algorithm"),
    "missing GPU": ({"SWEEP_GPUS": "97"}, 6, "SWEEP_GPUS=97: GPU 97"),
    "full disk": ({"SWEEP_MIN_FREE_GB": "100000000"}, 5, "SWEEP_MIN_FREE_GB=100000000"),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_a_failing_night_notifies_and_keeps_the_previous_export(
    nights: Nights, receiver: Receiver, case: str
) -> None:
    settings, expected_code, reason = FAILURES[case]
    sweep_config(nights.work)
    bad = json.loads((nights.work / "sweep.json").read_text())
    bad["search"]["algorithm"] = "bayes"
    (nights.work / "bad.json").write_text(json.dumps(bad))
    nights.export.parent.mkdir(parents=True)
    nights.export.write_text('{"configurations": [{"x": 1.0}], "run": "yesterday"}\n')
    before = nights.export.read_bytes()
    seen = len(receiver.posts)
    hook = nights.work / "hook.json"
    code, out = nights.run(
        SWEEP_NOTIFY_URL=receiver.url, SWEEP_NOTIFY_CMD=f"cat > {hook}", **settings
    )
    assert code == expected_code, out
    (post,) = receiver.posts[seen:]
    assert post["event"] == "failed" and post["exit_code"] == expected_code
    assert reason in post["reason"], post["reason"]
    assert "FAILED" in post["log_tail"] and reason in post["log_tail"]
    assert json.loads(hook.read_text()) == post  # SWEEP_NOTIFY_CMD got the same JSON
    assert nights.export.read_bytes() == before
    assert [p.name for p in nights.export.parent.iterdir()] == [nights.export.name]
    (line,) = nights.history()
    assert line["status"] == "failed" and line["exit_code"] == expected_code


def test_a_night_whose_cluster_never_answers_fails_alerting_and_the_next_night_runs(
    nights: Nights, receiver: Receiver
) -> None:
    sweep_config(nights.work, num_samples=1)
    seen = len(receiver.posts)
    with SilentPort() as cluster:  # a head that accepts connections and never answers
        code, out = nights.run(
            timeout=120,  # the night used to hang here until killed, holding the lock
            SWEEP_NOTIFY_URL=receiver.url,
            SWEEP_RUN_ARGS=f"--no-dashboard --address {cluster.address}",
            RAYSWEEP_CONNECT_TIMEOUT_S="3",
        )
    assert code == 2, out
    (post,) = receiver.posts[seen:]
    assert post["event"] == "failed" and post["exit_code"] == 2
    assert f"cannot join the Ray cluster at {cluster.address}" in post["reason"], post["reason"]
    assert "no Ray cluster answered in 3 s" in post["reason"]
    assert nights.runs() == []  # nothing half-made
    wait_for_lock(nights.log_dir / ".nightly.lock", timeout=5)  # released with the night
    code, out = nights.run()  # the next night, on the local Ray
    assert code == 0, out
    (run_dir,) = nights.runs()
    assert run_dir.effective_status() == "completed"
    assert [n["status"] for n in nights.history()] == ["failed", "succeeded"]


def test_an_undeliverable_notification_never_hides_the_exit_code(nights: Nights) -> None:
    sweep_config(nights.work)
    code, out = nights.run(
        SWEEP_GPUS="97", SWEEP_NOTIFY_URL="http://127.0.0.1:9/closed", SWEEP_NOTIFY_CMD="exit 3"
    )
    assert code == 6, out
    assert "warning: notification to http://127.0.0.1:9/closed failed" in out
    assert "warning: SWEEP_NOTIFY_CMD failed (exit 3)" in out


# -- rotation -------------------------------------------------------------------------


def fake_run(log_dir: Path, name: str, status: str, days_old: float) -> Path:
    """A run directory left by an earlier night (status only), aged with touch."""
    run_dir = RunDir(log_dir / name)
    run_dir.path.mkdir(parents=True)
    run_dir.mark("running")
    if status == "crashed":
        dead = subprocess.Popen(["true"])
        dead.wait()
        run_dir.update_state(pid=dead.pid)
    else:
        run_dir.mark(status)  # type: ignore[arg-type]
    subprocess.run(["touch", "-d", f"{days_old} days ago", str(run_dir.path)], check=True)
    return run_dir.path


def test_rotation_removes_old_runs_but_keeps_newest_success_and_unfinished(
    nights: Nights,
) -> None:
    log_dir = nights.log_dir
    removed = [
        fake_run(log_dir, "nightly_20260101_020000", "completed", 40),
        fake_run(log_dir, "nightly_20260103_020000", "failed", 38),
    ]
    kept = [
        fake_run(log_dir, "nightly_20260102_020000", "completed", 39),  # newest success
        fake_run(log_dir, "nightly_20260104_020000", "crashed", 37),
        fake_run(log_dir, "nightly_20260105_020000", "interrupted", 36),
    ]
    old_log = log_dir / "nightly_20260101_020000.log"
    old_log.write_text("an old night\n")
    subprocess.run(["touch", "-d", "40 days ago", str(old_log)], check=True)
    removed.append(old_log)
    sweep_config(nights.work)
    code, out = nights.run(SWEEP_GPUS="97", SWEEP_KEEP_DAYS="14")  # a quick night: no sweep
    assert code == 6, out
    assert [p for p in removed if p.exists()] == []
    assert [p for p in kept if not p.exists()] == []
    night_logs = list(log_dir.glob("nightly_*.log"))
    assert len(night_logs) == 1 and "removed" in night_logs[0].read_text()


@pytest.mark.parametrize(
    ("settings", "code", "reason"),
    [
        ({"SWEEP_LOG_DIR": "/proc/version/logs"}, 3, "lock trouble: cannot use /proc/version"),
        ({"SWEEP_BIN": "/nonexistent/sweep"}, 4, "the sweep command does not run"),
    ],
    ids=["lock trouble", "no sweep command"],
)
def test_a_night_without_lock_or_sweep_still_notifies(
    nights: Nights, receiver: Receiver, settings: dict[str, str], code: int, reason: str
) -> None:
    sweep_config(nights.work)
    seen = len(receiver.posts)
    done, out = nights.run(SWEEP_NOTIFY_URL=receiver.url, **settings)
    assert done == code, out
    (post,) = receiver.posts[seen:]
    assert post["event"] == "failed" and post["exit_code"] == code
    assert post["reason"].startswith(reason) and post["best"] is None
    if code == 4:  # the setting to fix is named; the night is in history.jsonl all the same
        assert "SWEEP_BIN=/nonexistent/sweep: no such command; set SWEEP_BIN" in post["reason"]
        (night,) = nights.history()
        assert (night["status"], night["exit_code"], night["reason"]) == (
            "failed",
            4,
            post["reason"],
        )


def test_a_copy_without_its_venv_names_sweep_bin_and_the_night_is_in_history(
    tmp_path: Path, ray_tmp: str
) -> None:
    """nightly.sh copied elsewhere, no sweep on PATH nor .venv beside it, SWEEP_BIN unset:
    the night failed with "the sweep command does not run" and never showed in history."""
    copy = tmp_path / "deploy-copy"
    copy.mkdir()
    shutil.copy(NIGHTLY, copy / "nightly.sh")
    group = Nights(tmp_path, ray_tmp)
    sweep_config(tmp_path)
    env = {k: v for k, v in group.env().items() if k != "SWEEP_BIN"}
    env["PATH"] = os.pathsep.join(
        d for d in env.get("PATH", "").split(os.pathsep) if not (Path(d) / "sweep").exists()
    )
    done = subprocess.run(["bash", str(copy / "nightly.sh")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 4, done.stdout + done.stderr
    assert "SWEEP_BIN is not set, and there is no sweep on PATH nor " in done.stdout
    assert f"{copy}/.venv/bin/sweep: no such command; set SWEEP_BIN to the sweep" in done.stdout
    (night,) = group.history()
    assert night["status"] == "failed" and night["exit_code"] == 4 and night["run"] is None
    shown = subprocess.run([str(SWEEP), "history", str(group.log_dir)], capture_output=True,
                           text=True, check=True).stdout  # fmt: skip
    assert "failed" in shown and "the sweep command does not run: SWEEP_BIN is not set" in shown
