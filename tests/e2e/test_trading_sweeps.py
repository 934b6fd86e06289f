"""Trading sweeps end to end on a real local Ray: ASHA over folds, three entry models,
conditional spaces with Optuna and HyperOpt, and grid refusing a conditional space.

Tiny on purpose (1,500 synthetic bars, 3 folds, 15 boosting rounds): each trial
takes about a second on one CPU.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from factories import make_sweep
from raysweep.rundir import RunDir
from raysweep.trainables.trading.params import METRICS

pytestmark = pytest.mark.slow
MODELS = ("lightgbm", "xgboost", "catboost")
SPACE: dict[str, Any] = {
    "entry_model": {"type": "choice", "values": list(MODELS)},
    "lightgbm.num_leaves": {
        "type": "int",
        "low": 4,
        "high": 16,
        "when": {"entry_model": "lightgbm"},
    },
    "xgboost.max_depth": {"type": "int", "low": 2, "high": 4, "when": {"entry_model": "xgboost"}},
    "catboost.depth": {"type": "int", "low": 2, "high": 4, "when": {"entry_model": "catboost"}},
    "entry_threshold": {"type": "uniform", "low": 0.35, "high": 0.6},
    "label_horizon": 6,
    "max_holding": 12,
}
ACTIVE = {m: {"entry_model", f"{m}.{p}", "entry_threshold", "label_horizon", "max_holding"}
          for m, p in (("lightgbm", "num_leaves"), ("xgboost", "max_depth"),
                       ("catboost", "depth"))}  # fmt: skip


# the sweep each test runs with its own name and search
TRADING: dict[str, Any] = make_sweep(
    "trading",
    trainable_args={
        "synthetic": {"bars": 1500, "seed": 2},
        "n_folds": 3,
        "num_boost_round": 15,
        "embargo": 6,
    },
    space=SPACE,
    seed=11,
    checkpoint={"frequency": 1, "num_to_keep": 1},
)


def check_active_only(trials: list[Any]) -> set[str]:
    """Each trial's config holds exactly the parameters of its entry model; models seen."""
    for t in trials:
        assert set(t.config) == ACTIVE[t.config["entry_model"]], t.config
    return {t.config["entry_model"] for t in trials}


def test_asha_over_folds_with_each_entry_model(
    ray_session: None, tmp_path: Path, run_in_process: Callable[[Path, dict[str, Any]], Path]
) -> None:
    data = {
        **TRADING,
        "name": "trading-asha",
        "search": {"algorithm": "optuna", "num_samples": 8, "max_concurrent": 1},
        "scheduler": {"type": "asha", "max_t": 3, "grace_period": 1, "reduction_factor": 2},
    }
    result = RunDir(run_in_process(tmp_path, data)).read_results()
    assert {t.status for t in result.trials} <= {"completed", "stopped"}, result.trials
    assert check_active_only(result.trials) == set(MODELS)
    stopped = [t for t in result.trials if t.status == "stopped"]
    completed = [t for t in result.trials if t.status == "completed"]
    assert stopped and all(t.iterations < 3 for t in stopped)  # ASHA stopped some after a fold
    assert completed and all(t.iterations == 3 for t in completed)
    for t in result.trials:
        assert set(METRICS) <= set(t.last) and t.last["fold"] == t.iterations


def test_conditional_space_with_hyperopt(
    ray_session: None, tmp_path: Path, run_in_process: Callable[[Path, dict[str, Any]], Path]
) -> None:
    data = {
        **TRADING,
        "name": "trading-hyperopt",
        "trainable_args": {
            "synthetic": {"bars": 1200, "seed": 3},
            "n_folds": 2,
            "num_boost_round": 10,
            "embargo": 6,
        },
        "search": {"algorithm": "hyperopt", "num_samples": 6, "max_concurrent": 2},
    }
    result = RunDir(run_in_process(tmp_path, data)).read_results()
    assert {t.status for t in result.trials} == {"completed"}
    assert len(check_active_only(result.trials)) >= 2


def test_grid_with_a_conditional_space_exits_2(
    tmp_path: Path, sweep_cli: Callable[..., Any]
) -> None:
    space = {"entry_model": {"type": "grid", "values": ["lightgbm", "xgboost"]},
             "lightgbm.num_leaves": {"type": "grid", "values": [4, 8],
                                     "when": {"entry_model": "lightgbm"}}}  # fmt: skip
    config = tmp_path / "grid.json"
    data = {**TRADING, "name": "g", "space": space, "search": {"algorithm": "grid"}}
    config.write_text(json.dumps(data))
    proc = sweep_cli("run", "--config", str(config), "--storage", str(tmp_path / "runs"))
    assert proc.returncode == 2, proc.stderr
    assert "space.lightgbm.num_leaves.when: conditional parameters need search.algorithm" in (
        proc.stderr
    )
    assert not (tmp_path / "runs").exists()
