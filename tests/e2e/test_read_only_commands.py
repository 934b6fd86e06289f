"""`sweep status`, `best`, `list` and `report` read the run directory and import no Ray."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from factories import quadratic_sweep
from raysweep.config.load import parse_spec
from raysweep.results.records import SweepResult, TrialRecord
from raysweep.rundir import Part, RunDir

REPO = Path(__file__).resolve().parents[2]


def finished_run(path: Path, trials: int = 5) -> RunDir:
    """A finished run directory written through RunDir, as the driver writes it."""
    run_dir = RunDir(path)
    path.mkdir(parents=True)
    spec = parse_spec(
        quadratic_sweep(
            name=path.name,
            space={"x": {"type": "uniform", "low": 0, "high": 1}},
            search={"algorithm": "random", "num_samples": trials},
            seed=0,
        )
    )
    run_dir.write_spec(spec)
    run_dir.mark("running")
    run_dir.set_parts([Part("tune", trials)])
    records = [
        TrialRecord(
            trial_id=f"t{i:05d}",
            index=i,
            status="completed",
            config={"x": i / trials},
            seed=1000 + i,
            iterations=4,
            last={"loss": (i - trials / 2) ** 2, "training_iteration": 4},
            best_metric=float((i - trials / 2) ** 2),
        )
        for i in range(trials)
    ]
    result = SweepResult(name=path.name, metric="loss", mode="min", trials=records)
    run_dir.write_results(result)
    run_dir.write_report("report\n")
    run_dir.mark("completed", exit_code=0)
    return run_dir


def _imported_modules(*args: str) -> tuple[str, set[str]]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "raysweep.cli", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    modules = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            modules.add(line.rsplit("|", 1)[1].strip())
    return done.stdout, modules


@pytest.mark.parametrize("command", ["status", "best", "list", "report"])
def test_read_only_command_imports_no_ray(tmp_path: Path, command: str) -> None:
    run_dir = finished_run(tmp_path / "runs" / "done")
    args = (
        ["list", "--storage", str(run_dir.path.parent)]
        if command == "list"
        else [command, str(run_dir.path)]
    )
    out, modules = _imported_modules(*args)
    assert "raysweep.views" in modules  # the measurement saw the command's imports
    assert not [m for m in modules if m == "ray" or m.startswith("ray.")]
    if command == "status":
        assert "done: completed" in out and "5 completed" in out
    if command == "best":
        assert '"trial_id"' in out
    if command == "list":
        assert "done" in out and "completed" in out
