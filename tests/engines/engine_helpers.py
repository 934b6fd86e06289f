"""The engine contract suite's sweep: a few LightGBM trials, run in this process."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from raysweep import api
from raysweep.rundir import RunDir

# Each searcher's space over the same two LightGBM parameters (grid: 2 x 2 points).
SPACES: dict[str, dict[str, Any]] = {
    "grid": {
        "learning_rate": {"type": "grid", "values": [0.05, 0.2]},
        "num_leaves": {"type": "grid", "values": [4, 16]},
    },
    "random": {
        "learning_rate": {"type": "loguniform", "low": 0.01, "high": 0.3},
        "num_leaves": {"type": "int", "low": 4, "high": 32, "log": True},
    },
}
SPACES["optuna"] = SPACES["mf-tpe"] = SPACES["hyperopt"] = SPACES["random"]
SEARCH_OPTIONS: dict[str, dict[str, Any]] = {
    "optuna": {"n_startup_trials": 2},
    "mf-tpe": {"n_startup_trials": 2},
}
SCHEDULERS: dict[str, dict[str, Any]] = {
    "fifo": {"type": "fifo"},
    "asha": {"type": "asha", "max_t": 4, "grace_period": 1, "reduction_factor": 2},
    "median": {"type": "median", "grace_period": 1, "min_samples_required": 1},
}


def contract_sweep(name: str, algorithm: str = "random", scheduler: str = "fifo",
                   engine: str = "local", **fields: Any) -> dict[str, Any]:  # fmt: skip
    """sweep.json data: a few LightGBM trials of 4 iterations on breast_cancer, one at a time."""
    return {
        "name": name,
        "trainable": "lightgbm",
        "trainable_args": {"dataset": "breast_cancer", "num_boost_round": 8, "report_every": 2},
        "metric": "val_loss",
        "mode": "min",
        "space": {**SPACES[algorithm], "objective": "binary"},
        "search": {"algorithm": algorithm, "num_samples": 1 if algorithm == "grid" else 4,
                   "max_concurrent": 1, "options": SEARCH_OPTIONS.get(algorithm, {})},
        "scheduler": SCHEDULERS[scheduler],
        "resources": {"cpus_per_trial": 1},
        "seed": 1,  # every searcher meets a stop by ASHA and by the median rule
        "execution": engine,
        **fields,
    }  # fmt: skip


def run_contract_sweep(
    tmp_path: Path, data: dict[str, Any], **options: Any
) -> tuple[int, RunDir, str]:
    """Run ``data`` in this process (``sweep run``'s path); exit code, run directory, output.

    ``options``: further ``api.RunOptions`` fields (``dry_run=True``, ...).
    """
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / f"{data['name']}.json"
    path.write_text(json.dumps(data))
    out = io.StringIO()
    run_options = api.RunOptions(config=path, storage=tmp_path / "runs", dashboard=False, **options)
    code = api.run_sweep(run_options, out=out)
    return code, RunDir(tmp_path / "runs" / data["name"]), out.getvalue()


def trials_by_index(run: RunDir) -> dict[int, tuple[Any, ...]]:
    """Per trial index: config, seed, last metrics, best metric and status (results.json)."""
    trials = json.loads(run.results_path.read_text())["trials"]
    return {
        t["index"]: (t["config"], t["seed"], t["last"], t["best_metric"], t["status"])
        for t in trials
    }
