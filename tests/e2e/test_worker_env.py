"""The environment a run sets: what trial workers start with, and Ray settings it needs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_probe(
    tmp_path: Path, deterministic: bool, extra_env: dict[str, str] | None = None
) -> dict[str, object]:
    config = {
        "name": "env",
        "trainable": "examples.device_probe:probe",
        "metric": "loss",
        "mode": "min",
        "space": {"x": {"type": "uniform", "low": 0, "high": 1}, "hold_s": 0.0},
        "search": {"algorithm": "random", "num_samples": 1},
        "reproducibility": {"deterministic": deterministic},
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(config))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("CUBLAS_WORKSPACE_CONFIG", None)
    env.update(extra_env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "raysweep.cli", "run", "--config", str(path), "--storage", "runs"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((tmp_path / "runs" / "env" / "results.json").read_text())
    return dict(results["trials"][0]["last"])


def test_local_workers_start_with_the_run_environment_and_no_runtime_env(tmp_path: Path) -> None:
    """Inherited, not set through a Ray runtime env (which costs a process per worker start)."""
    last = run_probe(tmp_path, deterministic=True)
    assert last["cublas_workspace_config"] == ":4096:8"
    assert last["pl_disable_fork"] == "1"  # what Ray Tune gives every trial actor
    assert last["runtime_env_fields"] == ""


def test_a_variable_the_user_set_otherwise_is_still_overridden_as_ray_tune_does(
    tmp_path: Path,
) -> None:
    last = run_probe(tmp_path, deterministic=False, extra_env={"PL_DISABLE_FORK": "0"})
    assert last["pl_disable_fork"] == "1"
    assert last["runtime_env_fields"] == "env_vars"


def test_ray_new_output_engine_cannot_drop_the_progress_log(tmp_path: Path) -> None:
    """That engine discards progress callbacks; trials.jsonl (read by resume) must survive."""
    run_probe(tmp_path, deterministic=False, extra_env={"RAY_AIR_NEW_OUTPUT": "1"})
    events = (tmp_path / "runs" / "env" / "trials.jsonl").read_text().splitlines()
    assert [json.loads(line)["event"] for line in events] == ["start", "ended"]
