"""SIGTERM at any moment of `sweep run` ends it as `interrupted` (exit 130), resumable.

systemd and nightly jobs send SIGTERM; it used to meet the handler ``ray.init``
installs while Ray was starting (about 5 s in) and end the run as ``failed``
with exit 15. A real process, a real signal, then a real resume.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from raysweep.rundir import RunDir

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

CONFIG = {
    "name": "sigterm",
    "trainable": "examples.quadratic:fit",
    "metric": "loss",
    "mode": "min",
    "space": {"x": {"type": "uniform", "low": -5, "high": 5}, "steps": 4, "sleep_s": 0.4},
    "search": {"algorithm": "random", "num_samples": 3, "max_concurrent": 1},
    "seed": 5,
}


def _sweep(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    return subprocess.Popen(
        [sys.executable, "-m", "raysweep.cli", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


@pytest.mark.parametrize("after_s", [1, 3, 5, 8])
def test_sigterm_at_any_moment_is_an_interruption_that_resumes(
    tmp_path: Path, after_s: float
) -> None:
    config = tmp_path / "sweep.json"
    config.write_text(json.dumps(CONFIG))
    proc = _sweep("run", "--config", str(config), "--storage", str(tmp_path / "runs"))
    time.sleep(after_s)
    if proc.poll() is not None:
        pytest.fail(f"sweep ended before the signal: {proc.communicate()[0]}")
    proc.send_signal(signal.SIGTERM)
    try:
        output, _ = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    run = RunDir(tmp_path / "runs" / "sigterm")
    assert proc.returncode == 130, output
    state = run.read_state()
    assert state["status"] == "interrupted" and state["signal"] == "SIGTERM", output
    assert "sweep resume" in output

    resume = _sweep("resume", str(run.path))
    output, _ = resume.communicate(timeout=180)
    assert resume.returncode == 0, output
    result = run.read_results()
    assert len(result.trials) == 3
    assert sorted(t.index for t in result.trials) == [0, 1, 2]
    assert all(t.status == "completed" for t in result.trials)
    assert run.read_state()["status"] == "completed"
