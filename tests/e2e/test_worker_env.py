"""The environment a run sets: what trial workers start with, and Ray settings it needs.

The three probe runs start at once: nothing they check depends on timing.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import Outcome, settle, together

from factories import make_sweep

REPO = Path(__file__).resolve().parents[2]

# name -> (reproducibility.deterministic, variables set for the run)
PROBES: dict[str, tuple[bool, dict[str, str]]] = {
    "deterministic": (True, {}),
    "user set PL_DISABLE_FORK": (False, {"PL_DISABLE_FORK": "0"}),
    "new output engine": (False, {"RAY_AIR_NEW_OUTPUT": "1"}),
}


def run_probe(
    tmp_path: Path, deterministic: bool, extra_env: dict[str, str]
) -> tuple[Path, dict[str, object]]:
    """The run directory and the last result of a one-trial probe run."""
    config = make_sweep(
        "examples.device_probe:probe",
        name="env",
        space={"x": {"type": "uniform", "low": 0, "high": 1}, "hold_s": 0.0},
        search={"algorithm": "random", "num_samples": 1},
        reproducibility={"deterministic": deterministic},
    )
    path = tmp_path / "s.json"
    path.write_text(json.dumps(config))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("CUBLAS_WORKSPACE_CONFIG", None)
    env.update(extra_env)
    proc = subprocess.run(
        [sys.executable, "-m", "raysweep.cli", "run", "--config", str(path), "--storage", "runs"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = tmp_path / "runs" / "env"
    results = json.loads((run_dir / "results.json").read_text())
    return run_dir, dict(results["trials"][0]["last"])


@pytest.fixture(scope="module")
def probes(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[Any, Outcome[tuple[Path, dict[str, object]]]]]:
    runs = together(
        {
            name: functools.partial(run_probe, tmp_path_factory.mktemp("env"), *probe)
            for name, probe in PROBES.items()
        }
    )
    yield runs
    settle(runs)


def test_local_workers_start_with_the_run_environment_and_no_runtime_env(
    probes: dict[Any, Outcome[tuple[Path, dict[str, object]]]],
) -> None:
    """Inherited, not set through a Ray runtime env (which costs a process per worker start)."""
    _, last = probes["deterministic"].result()
    assert last["cublas_workspace_config"] == ":4096:8"
    assert last["pl_disable_fork"] == "1"  # what Ray Tune gives every trial actor
    assert last["runtime_env_fields"] == ""


def test_a_variable_the_user_set_otherwise_is_still_overridden_as_ray_tune_does(
    probes: dict[Any, Outcome[tuple[Path, dict[str, object]]]],
) -> None:
    _, last = probes["user set PL_DISABLE_FORK"].result()
    assert last["pl_disable_fork"] == "1"
    assert last["runtime_env_fields"] == "env_vars"


def test_ray_new_output_engine_cannot_drop_the_progress_log(
    probes: dict[Any, Outcome[tuple[Path, dict[str, object]]]],
) -> None:
    """That engine discards progress callbacks; trials.jsonl (read by resume) must survive."""
    run_dir, _ = probes["new output engine"].result()
    events = (run_dir / "trials.jsonl").read_text().splitlines()
    assert [json.loads(line)["event"] for line in events] == ["start", "ended"]
