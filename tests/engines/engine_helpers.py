"""The engine contract suite's sweep: a few LightGBM trials, run in this process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from factories import make_sweep, sweep_in_process
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
    """sweep.json data: a few LightGBM trials of 4 iterations on breast_cancer, one at a time;
    ``fields`` replace or add top-level keys."""
    data = make_sweep(
        "lightgbm",
        name=name,
        trainable_args={"dataset": "breast_cancer", "num_boost_round": 8, "report_every": 2},
        space={**SPACES[algorithm], "objective": "binary"},
        search={"algorithm": algorithm, "num_samples": 1 if algorithm == "grid" else 4,
                "max_concurrent": 1, "options": SEARCH_OPTIONS.get(algorithm, {})},
        scheduler=SCHEDULERS[scheduler],
        resources={"cpus_per_trial": 1},
        seed=1,  # every searcher meets a stop by ASHA and by the median rule
        execution=engine,
    )  # fmt: skip
    return {**data, **fields}


def run_contract_sweep(
    tmp_path: Path, data: dict[str, Any], **options: Any
) -> tuple[int, RunDir, str]:
    """Run ``data`` in this process, without Ray's dashboard (:func:`factories.sweep_in_process`):
    exit code, run directory, output. ``options``: further ``api.RunOptions`` fields."""
    return sweep_in_process(tmp_path, data, dashboard=False, **options)


def trials_by_index(run_dir: RunDir) -> dict[int, tuple[Any, ...]]:
    """Per trial index: config, seed, last metrics, best metric and status (results.json)."""
    trials = json.loads(run_dir.results_path.read_text())["trials"]
    return {
        t["index"]: (t["config"], t["seed"], t["last"], t["best_metric"], t["status"])
        for t in trials
    }
