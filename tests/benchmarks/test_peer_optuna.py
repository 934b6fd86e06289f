"""Smoke test of the peer benchmark: the quick variant end to end, no timing asserts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks.suite.peer_optuna import steady_per_trial_s

REPO = Path(__file__).resolve().parents[2]


def test_steady_cost_is_the_gap_between_trial_ends_over_the_second_half() -> None:
    ends = [10.0, 10.5, 11.0, 11.5, 12.0, 12.2, 12.4, 12.6, 12.8, 13.0]
    assert steady_per_trial_s(ends[::-1]) == pytest.approx(0.2)  # order does not matter
    assert steady_per_trial_s(ends[:7]) is None  # too few trials to say


@pytest.mark.slow
def test_quick_peer_benchmark_runs_both_ways_and_splits_raysweeps_time(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("RAYSWEEP_BENCH_PYTHONPATH", None)
    cmd = [sys.executable, "-m", "benchmarks.run", "peer_optuna", "--quick", "--trials", "10"]
    cmd += ["--results-dir", str(tmp_path)]
    proc = subprocess.run(
        cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "peer_optuna.quick.json").read_text(encoding="utf-8"))
    assert data["params"]["workloads"] == ["demo"] and data["params"]["trials"] == 10

    plain, ours = data["runs"]["optuna:demo"][0], data["runs"]["raysweep:demo"][0]
    local = data["runs"]["local:demo"][0]
    assert plain["returncode"] == 0 and ours["returncode"] == 0 and local["returncode"] == 0
    assert plain["extra"]["finished"] == 10  # the same number of trials every way
    assert ours["extra"]["finished"] == 10
    assert local["extra"]["finished"] == 10
    assert 0 < local["extra"]["start_to_first_trial_s"] < local["process_s"]
    assert 0 < local["extra"]["last_trial_to_exit_s"] < local["process_s"]
    for key in ("cli_start_s", "ray_start_s", "fit_to_first_trial_body_s"):
        assert ours["extra"][key] > 0, key
    assert 0 < ours["extra"]["cli_start_s"] < ours["process_s"]
    assert ours["teardown_s"] > 0 and plain["teardown_s"] > 0
    for run in (plain, ours, local):  # all found a validation loss in the same range
        assert 0 < run["extra"]["best"] < 0.7

    variants = data["variants"]
    assert variants["demo: plain Optuna"]["process_s"]["n"] == 1
    assert variants["demo: sweep run"]["process_s"]["n"] == 1
    ratio = data["figures"]["demo_process_ratio"]["median"]  # the target: execution local
    assert ratio == pytest.approx(local["process_s"] / plain["process_s"])
    ray_ratio = data["figures"]["demo_process_ratio_ray"]["median"]
    assert ray_ratio == pytest.approx(ours["process_s"] / plain["process_s"])
    names = [t["name"] for t in data["targets"]]
    assert any("whole process" in n for n in names) and any("steady" in n for n in names)
    assert "Against plain Optuna" in proc.stdout
