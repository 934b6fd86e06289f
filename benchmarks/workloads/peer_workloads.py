"""The workloads the peer benchmark runs both ways: ``sweep run`` and plain Optuna.

Each is a sweep.json (what ``sweep run`` gets) that ``benchmarks.workloads.peer_optuna_plain``
turns into the same study. Slots are ``search.max_concurrent`` trials of one CPU
each; plain Optuna runs them as ``n_jobs``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from benchmarks.harness.common import REPO

DEMO: dict[str, Any] = json.loads((REPO / "sweeps" / "demo.json").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Workload:
    """A named sweep: its config, trial count and parallel slots."""

    name: str
    config: dict[str, Any]
    what: str

    @property
    def trials(self) -> int:
        return int(self.config["search"]["num_samples"])

    @property
    def slots(self) -> int:
        return int(self.config["search"]["max_concurrent"])


def _random_fifo(trials: int) -> dict[str, Any]:
    config = {k: v for k, v in DEMO.items() if k not in ("scheduler", "checkpoint")}
    config["name"] = f"peer_random{trials}"
    config["search"] = {"algorithm": "random", "num_samples": trials, "max_concurrent": 2}
    config["checkpoint"] = {"frequency": 0}
    return config


_XGB_DIGITS: dict[str, Any] = {
    "name": "peer_xgb_digits",
    "trainable": "xgboost",
    "trainable_args": {"dataset": "digits", "num_boost_round": 300, "report_every": 20},
    "metric": "val_loss",
    "mode": "min",
    # Tree shape and sampling fixed, so a trial's cost does not depend on what the
    # searcher draws (the two sides draw different configurations).
    "space": {
        "eta": {"type": "loguniform", "low": 0.02, "high": 0.3},
        "lambda": {"type": "loguniform", "low": 0.01, "high": 10.0},
        "alpha": {"type": "loguniform", "low": 0.001, "high": 1.0},
        "min_child_weight": {"type": "choice", "values": [1, 3, 5]},
        "max_depth": 6,
        "subsample": 0.8,
    },
    "search": {"algorithm": "optuna", "num_samples": 60, "max_concurrent": 2,
               "options": {"sampler": "tpe", "n_startup_trials": 8}},
    "resources": {"cpus_per_trial": 1},
    "seed": 20261124,
    "checkpoint": {"frequency": 0},
}  # fmt: skip

WORKLOADS: dict[str, Workload] = {
    "demo": Workload("demo", {**DEMO, "name": "peer_demo"}, "the demo: 20 trials, TPE + ASHA"),
    "random200": Workload("random200", _random_fifo(200), "200 trials, random, FIFO"),
    "xgb_digits": Workload(
        "xgb_digits", _XGB_DIGITS, "XGBoost multiclass on digits: 60 trials, TPE, FIFO"
    ),
}
