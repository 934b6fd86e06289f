"""sweep run's progress: a live display in a real terminal (tmux), plain lines in a pipe.

In tmux (Debian's ``tmux``, installed here when missing) the pane, read with
``capture-pane``, shows the counts, the best so far and the timing while trials
run and when they are done; in a pipe the same run prints one plain line per
trial, heartbeat lines while trials run, and no terminal control codes. The two
runs go at once (see :func:`runs`).
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import Outcome, debian_tool, settle, together

from factories import quadratic_sweep

REPO = Path(__file__).resolve().parents[2]
TRIALS = 6
SWEEP = quadratic_sweep(
    name="live",
    # 4 steps of 0.5 s: each trial runs ~2 s, long enough to be seen running
    space={"x": {"type": "uniform", "low": 0, "high": 6}, "steps": 4, "sleep_s": 0.5},
    search={"algorithm": "random", "num_samples": TRIALS, "max_concurrent": 2},
    seed=3,
)
RAY_TABLES = ("Trial status", "Current time:", "Logical resource usage")  # Ray's own output


def sweep_command(tmp_path: Path) -> list[str]:
    config = tmp_path / "live.json"
    config.write_text(json.dumps(SWEEP))
    return [sys.executable, "-m", "raysweep.cli", "run", "--config", str(config),
            "--storage", str(tmp_path / "runs"), "--no-dashboard"]  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[Any, Outcome[None]]]:
    """Both runs at once: what each checks holds however long its trials take."""
    started = together(
        {
            name: functools.partial(scenario, tmp_path_factory.mktemp(name))
            for name, scenario in (("terminal", live_display), ("pipe", plain_lines))
        }
    )
    yield started
    settle(started)


def test_live_display_in_a_terminal(runs: dict[Any, Outcome[None]]) -> None:
    runs["terminal"].result()


def test_plain_lines_and_heartbeats_in_a_pipe(runs: dict[Any, Outcome[None]]) -> None:
    runs["pipe"].result()


def live_display(tmp_path: Path) -> None:
    """``tmux -L <own socket>``: a server of this run's own, killed at the end."""
    tmux_server = [debian_tool("tmux"), "-L", f"raysweep-test-{os.getpid()}"]
    try:
        check_live_display(tmux_server, tmp_path)
    finally:
        subprocess.run([*tmux_server, "kill-server"], capture_output=True, timeout=30)


def check_live_display(tmux_server: list[str], tmp_path: Path) -> None:
    command = shlex.join(sweep_command(tmp_path))
    shell = (
        f"cd {shlex.quote(str(REPO))} && PYTHONPATH={shlex.quote(str(REPO))} {command}; "
        "echo SWEEP-EXIT=$?; sleep 600"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "RAY_ADDRESS")}
    subprocess.run(
        [*tmux_server, "new-session", "-d", "-s", "sweep", "-x", "150", "-y", "50", shell],
        check=True, env=env, timeout=30,
    )  # fmt: skip
    frames: list[str] = []
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        pane = subprocess.run(
            [*tmux_server, "capture-pane", "-p", "-t", "sweep"],
            capture_output=True, text=True, timeout=30,
        ).stdout  # fmt: skip
        frames.append(pane)
        if "SWEEP-EXIT=" in pane:
            break
        time.sleep(0.3)
    final = frames[-1]
    assert "SWEEP-EXIT=0" in final, final
    running = [f for f in frames if " running, " in f and f"/{TRIALS} finished" in f and "━" in f]
    assert any(" 0 running" not in f for f in running), "never saw trials running live"
    assert any(f"0/{TRIALS} finished" not in f and "best loss=" in f for f in running)
    assert f"{TRIALS}/{TRIALS} finished ({TRIALS} completed), 0 running, 0 pending" in final
    assert "best loss=" in final and "(trial " in final and "elapsed " in final
    for n in range(1, TRIALS + 1):
        assert final.count(f"[{n}/{TRIALS}] ") == 1  # each trial's line once
    assert not [t for t in RAY_TABLES if t in final]
    log = (tmp_path / "runs" / "live" / "sweep_output.log").read_text()
    for n in range(1, TRIALS + 1):
        assert log.count(f"[{n}/{TRIALS}] ") == 1  # kept in the run's log, without the panel
    assert "━" not in log


def plain_lines(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(PYTHONPATH=str(REPO), RAYSWEEP_HEARTBEAT_S="1", TERM="xterm")
    done = subprocess.run(
        sweep_command(tmp_path), cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    lines = out.splitlines()
    trial_lines = [line for line in lines if line.startswith("[") and f"/{TRIALS}] " in line]
    assert [line.split("]")[0] for line in trial_lines] == [f"[{n}/{TRIALS}" for n in range(1, 7)]
    beats = [line for line in lines if line.startswith("[heartbeat] ")]
    assert beats, out  # trials of ~2 s and a 1 s heartbeat
    assert any(" running, " in b and "best loss=" in b and "elapsed " in b for b in beats)
    assert "\x1b[" not in out and "━" not in out  # plain text: no live display in a pipe
    assert not [t for t in RAY_TABLES if t in out + done.stderr]
    log = (tmp_path / "runs" / "live" / "sweep_output.log").read_text()
    assert all(line in log for line in trial_lines)  # the same lines in the run's log
