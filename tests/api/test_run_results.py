"""results.json agrees with Ray's own view; errors are recorded; best_config matches."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from factories import quadratic_sweep
from raysweep import api
from raysweep.jsonio import read_json


@pytest.fixture(scope="module")
def failing_run(
    ray_session: None, tmp_path_factory: pytest.TempPathFactory
) -> tuple[int, Path, str]:
    tmp = tmp_path_factory.mktemp("failing")
    config = quadratic_sweep(
        name="some-fail",
        space={
            "x": {"type": "grid", "values": [0.5, 2.0, 3.5, 5.0, 6.5]},
            "steps": 3,
            "fail_above": 4.0,
        },
        search={"algorithm": "grid", "num_samples": 1, "max_concurrent": 2},
        seed=1,
    )
    path = tmp / "s.json"
    path.write_text(json.dumps(config))
    out = io.StringIO()
    code = api.run_sweep(api.RunOptions(config=path, storage=tmp / "runs"), out=out)
    return code, tmp / "runs" / "some-fail", out.getvalue()


def test_errored_trials_are_recorded_while_others_finish(
    failing_run: tuple[int, Path, str],
) -> None:
    code, run_dir, output = failing_run
    assert code == 0
    trials = read_json(run_dir / "results.json")["trials"]
    by_x = {t["config"]["x"]: t for t in trials}
    for x in (5.0, 6.5):
        assert by_x[x]["status"] == "errored"
        assert f"deliberate failure: x={x:.3f} > 4.0" in by_x[x]["error"]
    for x in (0.5, 2.0, 3.5):
        assert by_x[x]["status"] == "completed" and by_x[x]["error"] is None
        assert by_x[x]["iterations"] == 3
    assert "2 errored" in output and "errored: RuntimeError: deliberate failure" in output
    report = (run_dir / "report.txt").read_text()
    assert "Errors:" in report and "deliberate failure" in report


def test_results_agree_with_ray_experiment_analysis(failing_run: tuple[int, Path, str]) -> None:
    from ray.tune import ExperimentAnalysis

    _, run_dir, _ = failing_run
    analysis = ExperimentAnalysis(str(run_dir / "tune"))
    ours = {t["trial_id"]: t for t in read_json(run_dir / "results.json")["trials"]}
    assert set(ours) == {t.trial_id for t in analysis.trials}
    for trial in analysis.trials:
        record = ours[trial.trial_id]
        if trial.status == "ERROR":
            assert record["status"] == "errored"
            continue
        assert record["last"]["loss"] == trial.last_result["loss"]
        assert record["iterations"] == trial.last_result["training_iteration"]
        assert record["config"] == {k: v for k, v in trial.config.items() if k != "__trial_index__"}
        assert record["index"] == trial.config["__trial_index__"]


def test_best_config_matches_best_record(failing_run: tuple[int, Path, str]) -> None:
    _, run_dir, _ = failing_run
    trials = read_json(run_dir / "results.json")["trials"]
    ok = [t for t in trials if t["status"] != "errored"]
    best = min(ok, key=lambda t: t["best_metric"])
    assert read_json(run_dir / "best_config.json") == {
        "trial_id": best["trial_id"],
        "metric": "loss",
        "mode": "min",
        "value": best["best_metric"],
        "config": best["config"],
    }
    assert best["config"]["x"] == 3.5
    csv_lines = (run_dir / "results.csv").read_text().splitlines()
    assert len(csv_lines) == 1 + len(trials)
