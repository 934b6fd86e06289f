"""Factories the whole test suite shares, so each exists once.

- `sweep` in a fresh process: :func:`sweep_env`, :func:`run_sweep_cli`, and
  :func:`kill_group` for a process started in its own session;
- sweep.json data and specs of the quadratic example (``examples.quadratic:fit``):
  :func:`quadratic_sweep`, :func:`make_spec`, :data:`QUADRATIC_SPACES`;
- a built-in trainable's trial context: :func:`ctx_for`;
- a CSV data set with missing values: :func:`csv_with_missing_values`;
- a finished run directory of hand-made reports: :func:`recorded_run`.

Test modules import it as ``factories`` (tests/conftest.py puts this directory on
sys.path); tests/conftest.py offers the same helpers as fixtures. Not a test module.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from raysweep.config.schema import SweepSpec
    from raysweep.trainables.context import TrialContext

REPO = Path(__file__).resolve().parents[1]
SWEEP = [sys.executable, "-m", "raysweep.cli"]
QUADRATIC = "examples.quadratic:fit"

# The space of ``examples.quadratic:fit`` that each search algorithm explores.
QUADRATIC_SPACES: dict[str, dict[str, Any]] = {
    "grid": {"x": {"type": "grid", "values": [1.0, 2.5, 4.0]}, "steps": 4},
    "random": {"x": {"type": "uniform", "low": 0, "high": 6}, "steps": 4},
    "optuna": {
        "x": {"type": "uniform", "low": 0, "high": 6},
        "y": {"type": "int", "low": -3, "high": 3},
        "steps": 4,
    },
    "hyperopt": {
        "x": {"type": "uniform", "low": 0, "high": 6},
        "y": {"type": "choice", "values": [-1, 0, 1]},
        "steps": 4,
    },
}


def sweep_env(pythonpath: Sequence[str | Path] = (), **extra: str) -> dict[str, str]:
    """This process's environment for a `sweep` process: this checkout's code importable
    (``pythonpath`` before it), no usage stats, never an inherited RAY_ADDRESS;
    ``extra`` on top."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    # this checkout's code, also where the installed package is another checkout's
    paths = [*map(str, pythonpath), str(REPO), str(REPO / "src")]
    env.update(PYTHONPATH=os.pathsep.join(paths), RAY_USAGE_STATS_ENABLED="0")
    env.update(extra)
    return env


def run_sweep_cli(
    *args: str,
    timeout: float = 300,
    env: dict[str, str] | None = None,
    cwd: Path = REPO,
    pythonpath: Sequence[str | Path] = (),
) -> subprocess.CompletedProcess[str]:
    """``python -m raysweep.cli ARGS`` in a fresh process (so a fresh Ray), output captured.

    ``env``: variables to set on top of :func:`sweep_env`; ``pythonpath``: folders
    importable before this checkout (a user's trainable).
    """
    return subprocess.run(
        [*SWEEP, *args],
        cwd=cwd,
        env=sweep_env(pythonpath, **(env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL a process started in its own session and everything in its group
    (a `sweep` driver and its Ray: a whole-tree crash), then reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def quadratic_sweep(**fields: Any) -> dict[str, Any]:
    """sweep.json data of a small sweep; ``fields`` replace or add top-level keys.

    2 random trials of the quadratic example over x in [0, 1], one at a time, seed 42.
    """
    return {
        "name": "small",
        "trainable": QUADRATIC,
        "metric": "loss",
        "mode": "min",
        "space": {"x": {"type": "uniform", "low": 0, "high": 1}},
        "search": {"algorithm": "random", "num_samples": 2, "max_concurrent": 1},
        "seed": 42,
        **fields,
    }


def make_spec(**fields: Any) -> SweepSpec:
    """The validated spec of :func:`quadratic_sweep` with ``fields``."""
    from raysweep.config.load import parse_spec

    return parse_spec(quadratic_sweep(**fields))


def ctx_for(args: dict[str, Any], seed: int = 7, **fields: Any) -> TrialContext:
    """Trial 0 of a built-in trainable minimising ``val_loss``: ``args`` are its
    trainable_args, ``fields`` the other TrialContext fields (``cpus``, checkpoints)."""
    from raysweep.trainables.context import TrialContext

    return TrialContext(
        index=0, seed=seed, metric="val_loss", mode="min", trainable_args=args, **fields
    )


def trading_sweep(space: dict[str, Any] | None = None, **args: Any) -> dict[str, Any]:
    """sweep.json data of the built-in trading trainable on 800 synthetic bars, 2 folds;
    ``args`` are added to its trainable_args."""
    return {
        "name": "t",
        "trainable": "trading",
        "trainable_args": {"synthetic": {"bars": 800}, "n_folds": 2, **args},
        "metric": "composite",
        "mode": "max",
        "space": space or {"entry_threshold": {"type": "uniform", "low": 0.4, "high": 0.6}},
    }


def csv_with_missing_values(path: Path) -> Path:
    """60 rows of features a, b, c and a binary ``target``, every 7th ``a`` missing,
    written to ``path``: CatBoost's ``nan_mode`` Forbidden fails on it in training only
    (the parameter check's tiny sample has no missing value)."""
    rows = ["a,b,c,target"]
    for i in range(60):
        a = "" if i % 7 == 0 else str(i % 11 / 10)
        rows.append(f"{a},{(i * 7) % 13 / 13},{(i * 3) % 5},{i % 2}")
    path.write_text("\n".join(rows) + "\n")
    return path


def recorded_run(
    path: Path,
    results: dict[str, Any],
    starts: Sequence[tuple[str, float]],
    rows: dict[str, list[tuple[int, float, float]]],
) -> Path:
    """A run directory as ``sweep run`` leaves it, from hand-made records: ``results``
    (results.json), each trial's ``(trial id, start time)`` in trial_info.jsonl and its
    Ray result rows ``(training_iteration, time_total_s, value of results["metric"])``."""
    import json

    from raysweep.rundir import Part, RunDir

    run = RunDir(path)
    run.path.mkdir(parents=True)
    run.mark("running")
    run.set_parts([Part("tune", 2)])
    (run.path / "results.json").write_text(json.dumps(results))
    (run.path / "trial_info.jsonl").write_text(
        "".join(json.dumps({"trial_id": t, "event": "start", "t": at}) + "\n" for t, at in starts)
    )
    for trial_id, made in rows.items():
        folder = run.path / "tune" / f"trial_{trial_id}"
        folder.mkdir(parents=True)
        folder.joinpath("result.json").write_text("".join(json.dumps(
            {"trial_id": trial_id, "training_iteration": i, "time_total_s": s,
             results["metric"]: v}) + "\n" for i, s, v in made))  # fmt: skip
    return run.path
