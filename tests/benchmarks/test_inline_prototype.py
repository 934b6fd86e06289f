"""The in-process prototype drives raysweep's searcher and ASHA without starting Ray."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_demo_runs_in_process_with_the_sweeps_searcher_and_asha() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.inline_prototype", "--workload", "demo"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["trials"] == 20
    assert out["ray_started"] is False
    assert out["stopped_early"] > 0  # ASHA's decisions stopped trials at their reports
    assert 0.0 < out["best"] < 0.69  # below log loss of a coin flip: the trials trained
