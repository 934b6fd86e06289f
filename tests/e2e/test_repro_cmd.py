"""``sweep repro RUN_DIR [--trial ID]`` reruns a recorded trial and compares its metric."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from factories import make_sweep, quadratic_sweep
from raysweep import api, cli
from raysweep.errors import ConfigError
from raysweep.rundir import RunDir

pytestmark = pytest.mark.slow

QUADRATIC: dict[str, Any] = quadratic_sweep(
    name="quad",
    space={
        "x": {"type": "uniform", "low": 0, "high": 6},
        "y": {"type": "uniform", "low": -2, "high": 2},
        "steps": 4,
    },
    search={"algorithm": "random", "num_samples": 4, "max_concurrent": 2},
    seed=23,
)


RunInProcess = Callable[[Path, dict[str, Any]], Path]


def repro_in_process(run_dir: Path, trial_id: str | None = None) -> tuple[int, str]:
    out = io.StringIO()
    code = api.rerun_trial(run_dir, trial_id, out=out)
    return code, out.getvalue()


def snapshot(run_dir: Path) -> dict[str, str]:
    """sha256 of every file of a run directory except the appended log."""
    return {
        str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(run_dir.rglob("*"))
        if p.is_file() and p.name != RunDir(run_dir).log_path.name
    }


@pytest.fixture(scope="module")
def quadratic_run(
    ray_session: None, tmp_path_factory: pytest.TempPathFactory, run_in_process: RunInProcess
) -> Path:
    """:data:`QUADRATIC`, run here once; a test that changes it works on a copy."""
    return run_in_process(tmp_path_factory.mktemp("quad"), QUADRATIC)


def test_repro_best_trial_of_user_sweep_matches(
    quadratic_run: Path, sweep_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    """The sweep runs here; ``sweep repro`` reruns its best trial in a fresh process and Ray."""
    run_dir = quadratic_run
    before = snapshot(run_dir)
    best = json.loads((run_dir / "best_config.json").read_text())["trial_id"]

    repro = sweep_cli("repro", str(run_dir), timeout=240)
    assert repro.returncode == 0, repro.stdout + repro.stderr
    lines = repro.stdout.strip().splitlines()
    assert lines[-1] == "match"
    assert f"Rerunning trial {best}" in repro.stdout
    assert "Token authentication is enabled" not in repro.stdout + repro.stderr  # Ray's notice
    assert snapshot(run_dir) == before
    log = RunDir(run_dir).log_path.read_text()
    assert "match" in log and f"Rerunning trial {best}" in log


def test_unknown_trial_is_an_input_error(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "spec.json").write_text(
        json.dumps({"sha256": "x", "spec": {**QUADRATIC, "space": {"x": 1.0}}})
    )
    (run_dir / "results.json").write_text(
        json.dumps({"name": "quad", "metric": "loss", "mode": "min", "trials": []})
    )
    with pytest.raises(ConfigError, match="--trial: no trial 'nosuch'"):
        api.rerun_trial(run_dir, "nosuch")
    assert cli.main(["repro", str(run_dir), "--trial", "nosuch"]) == 2
    assert not RunDir(run_dir).log_path.exists()


def test_tampered_metric_is_a_mismatch(
    ray_session: None, tmp_path: Path, quadratic_run: Path
) -> None:
    run_dir = tmp_path / "quad"
    shutil.copytree(quadratic_run, run_dir)
    results_path = run_dir / "results.json"
    data = json.loads(results_path.read_text())
    trial = data["trials"][1]
    code, output = repro_in_process(run_dir, trial["trial_id"])
    assert code == 0, output
    assert output.strip().endswith("match")

    recorded = trial["last"]["loss"]
    trial["last"]["loss"] = recorded + 1e-9
    results_path.write_text(json.dumps(data))
    code, output = repro_in_process(run_dir, trial["trial_id"])
    assert code == 1
    assert "MISMATCH" in output
    assert repr(recorded + 1e-9) in output and repr(recorded) in output


def test_trial_stopped_early_reruns_to_its_iteration(
    ray_session: None, tmp_path: Path, run_in_process: RunInProcess
) -> None:
    data = {
        **QUADRATIC,
        "name": "asha",
        "search": {"algorithm": "random", "num_samples": 6, "max_concurrent": 1},
        "scheduler": {"type": "asha", "max_t": 4, "grace_period": 1, "reduction_factor": 2},
    }
    run_dir = run_in_process(tmp_path, data)
    stopped = [t for t in RunDir(run_dir).read_results().trials if t.iterations < 4]
    assert stopped, "ASHA stopped no trial early"
    code, output = repro_in_process(run_dir, stopped[0].trial_id)
    assert code == 0, output
    assert f"iterations={stopped[0].iterations}" in output
    assert output.strip().endswith("match")


# What the three GBM built-ins share: a small data set, 8 rounds, the validation loss.
GBM: dict[str, Any] = {
    "trainable_args": {"dataset": "breast_cancer", "num_boost_round": 8},
    "metric": "val_loss",
    "mode": "min",
}
BUILTINS: dict[str, dict[str, Any]] = {
    "lightgbm": {
        **GBM,
        "space": {
            "learning_rate": {"type": "loguniform", "low": 0.05, "high": 0.3},
            "num_leaves": {"type": "int", "low": 4, "high": 16},
            "bagging_fraction": 0.8,
            "bagging_freq": 1,
        },
    },
    "xgboost": {
        **GBM,
        "space": {
            "eta": {"type": "loguniform", "low": 0.05, "high": 0.3},
            "max_depth": {"type": "int", "low": 2, "high": 5},
            "subsample": 0.8,
        },
    },
    "catboost": {**GBM, "space": {"depth": {"type": "int", "low": 2, "high": 4}, "rsm": 0.8}},
    "torch_mlp": {
        "trainable_args": {"dataset": "wine", "epochs": 3},
        "metric": "val_accuracy",
        "mode": "max",
        "space": {
            "lr": {"type": "loguniform", "low": 0.001, "high": 0.05},
            "hidden_size": {"type": "choice", "values": [8, 16]},
            "dropout": 0.1,
        },
    },
}


@pytest.mark.parametrize("trainable", sorted(BUILTINS))
def test_repro_best_trial_of_builtin(
    ray_session: None, tmp_path: Path, run_in_process: RunInProcess, trainable: str
) -> None:
    data = make_sweep(
        trainable,
        name=trainable,
        search={"algorithm": "random", "num_samples": 2, "max_concurrent": 1},
        checkpoint={"frequency": 2},
        seed=4,
        **BUILTINS[trainable],
    )
    run_dir = run_in_process(tmp_path, data)
    code, output = repro_in_process(run_dir)
    assert code == 0, output
    assert output.strip().endswith("match")
