"""The in-process executor ("execution": "local") run in this process: the run directory it
writes and the flags it refuses (errors, budgets, extensions and its agreement with Ray:
the engine contract suite, tests/engines/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from factories import make_sweep, sweep_in_process
from raysweep.repro.seeds import trial_seed_for
from raysweep.rundir import RunDir


def results(run_dir: RunDir) -> dict[str, Any]:
    return dict(json.loads(run_dir.results_path.read_text()))


def test_a_local_run_writes_the_run_directory_without_ray_tune(tmp_path: Path) -> None:
    data = make_sweep(
        "lightgbm",
        name="local",
        trainable_args={"dataset": "breast_cancer", "num_boost_round": 20, "report_every": 5},
        space={
            "learning_rate": {"type": "loguniform", "low": 0.01, "high": 0.3},
            "num_leaves": {"type": "int", "low": 4, "high": 32, "log": True},
            "objective": "binary",
        },
        # one at a time: ASHA's decisions do not depend on timing
        search={"algorithm": "optuna", "num_samples": 6, "max_concurrent": 1,
                "options": {"n_startup_trials": 3}},
        scheduler={"type": "asha", "max_t": 4, "grace_period": 1, "reduction_factor": 2},
        resources={"cpus_per_trial": 1},
        seed=7,
        checkpoint={"frequency": 2},
        execution="local",
    )  # fmt: skip
    code, run_dir, out = sweep_in_process(tmp_path, data, dashboard=False)
    assert code == 0, out
    assert "in-process (no Ray)" in out
    trials = results(run_dir)["trials"]
    assert sorted(t["index"] for t in trials) == list(range(6))
    assert {t["status"] for t in trials} <= {"completed", "stopped"}
    assert any(t["status"] == "stopped" for t in trials), "ASHA stopped no trial"
    assert all(t["seed"] == trial_seed_for(7, t["index"]) for t in trials)
    assert all(t["config"]["objective"] == "binary" for t in trials)  # constants merged
    assert not (run_dir.path / "tune").exists()
    for name in ("spec.json", "repro.json", "best_config.json", "report.html", "report.txt"):
        assert (run_dir.path / name).is_file(), name
    assert run_dir.read_state()["status"] == "completed"
    ended = [e for e in run_dir.read_events() if e["event"] == "ended"]
    assert len(ended) == 6
    returned = {r["trial_id"] for r in run_dir.read_trial_info() if r["event"] == "returned"}
    completed = {t["trial_id"] for t in trials if t["status"] == "completed"}
    assert returned <= completed  # ASHA stops a trial at max_t: completed, not returned
    assert all(t["iterations"] == 4 for t in trials if t["status"] == "completed")
    curves = run_dir.trial_curves("val_loss")
    assert all(len(curves[t["trial_id"]]) == t["iterations"] for t in trials)
    assert json.loads(run_dir.spec_path.read_text())["spec"]["execution"] == "local"


def test_local_execution_refuses_a_cluster_address(tmp_path: Path) -> None:
    from raysweep.errors import ConfigError

    with pytest.raises(ConfigError, match=r"--address 127\.0\.0\.1:6379.*execution"):
        data = make_sweep("lightgbm", name="refused", execution="local")
        sweep_in_process(tmp_path, data, dashboard=False, address="127.0.0.1:6379")
    assert not (tmp_path / "runs" / "refused").exists()


def test_the_execution_flag_overrides_the_config(tmp_path: Path) -> None:
    data = make_sweep("lightgbm", name="flag", execution="ray")  # 2 trials
    code, run_dir, out = sweep_in_process(tmp_path, data, dashboard=False, execution="local")
    assert code == 0, out
    assert run_dir.read_spec().execution == "local"
    assert run_dir.journal_path.is_file()
