"""A multi-objective trading sweep marks its Pareto front; checked by brute force on its trials.

``"metric": ["sharpe", "max_drawdown"], "mode": ["max", "min"]`` with Optuna's NSGA-II,
under ASHA comparing trials on the one metric named by ``scheduler.metric``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from factories import make_sweep
from raysweep.rundir import RunDir
from raysweep.views import best_text

pytestmark = pytest.mark.slow


def test_pareto_front_matches_brute_force(
    ray_session: None, tmp_path: Path, run_in_process: Callable[[Path, dict[str, Any]], Path]
) -> None:
    data = make_sweep(
        "trading",
        name="trading-pareto",
        trainable_args={
            "synthetic": {"bars": 1200, "seed": 3},
            "n_folds": 2,
            "num_boost_round": 10,
            "embargo": 6,
        },
        metric=["sharpe", "max_drawdown"],
        mode=["max", "min"],
        space={
            "entry_threshold": {"type": "uniform", "low": 0.35, "high": 0.6},
            "stop_loss": {"type": "uniform", "low": 0.005, "high": 0.05},
            "max_holding": {"type": "int", "low": 4, "high": 24},
            "label_horizon": 6,
        },
        search={
            "algorithm": "optuna",
            "num_samples": 10,
            "max_concurrent": 2,
            "options": {"sampler": "nsga2"},
        },
        scheduler={
            "type": "asha",
            "max_t": 2,
            "grace_period": 1,
            "metric": "sharpe",
            "mode": "max",
        },
        seed=5,
    )
    run_dir = RunDir(run_in_process(tmp_path, data))
    trials = json.loads(run_dir.results_path.read_text())["trials"]
    assert len(trials) == 10
    points = {
        t["trial_id"]: (t["last"]["sharpe"], t["last"]["max_drawdown"])
        for t in trials
        if t["status"] in ("completed", "stopped")
    }
    front = set()
    for me, (sharpe, drawdown) in points.items():
        beaten = False
        for other, (s, d) in points.items():
            if other != me and s >= sharpe and d <= drawdown and (s, d) != (sharpe, drawdown):
                beaten = True
        if not beaten:
            front.add(me)
    assert front
    assert {t["trial_id"] for t in trials if t.get("pareto_optimal")} == front
    assert all(t["pareto_optimal"] is (t["trial_id"] in front) for t in trials)

    listed = json.loads(best_text(run_dir))
    assert listed["objectives"] == [{"metric": "sharpe", "mode": "max"},
                                    {"metric": "max_drawdown", "mode": "min"}]  # fmt: skip
    assert {t["trial_id"] for t in listed["pareto_front"]} == front
    sharpes = [t["values"]["sharpe"] for t in listed["pareto_front"]]
    assert sharpes == sorted(sharpes, reverse=True)

    report = run_dir.report_path.read_text()
    assert f"Pareto front ({len(front)} trials) on sharpe (max), max_drawdown (min):" in report
    html = run_dir.html_report_path.read_text()
    assert 'id="plot-pareto"' in html and "Pareto-optimal" in html
