"""sweep export-optuna on a real run: optuna.load_study agrees with results.json, and
optuna-dashboard serves the study on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import optuna
import pytest
from e2e_helpers import free_port

from factories import quadratic_sweep, run_sweep_cli
from raysweep.rundir import RunDir

REPO = Path(__file__).resolve().parents[2]
STATES = {"completed": "COMPLETE", "stopped": "PRUNED", "errored": "FAIL"}


@pytest.fixture(scope="module")
def finished_run(
    ray_session: None, tmp_path_factory: pytest.TempPathFactory, run_in_process: Callable[..., Path]
) -> RunDir:
    """6 trials: ASHA stops some early, one fails on purpose."""
    tmp = tmp_path_factory.mktemp("export-e2e")
    config = quadratic_sweep(
        name="export-e2e",
        space={
            "x": {"type": "uniform", "low": 0, "high": 6},
            "y": {"type": "int", "low": -3, "high": 3},
            "steps": 8,
            "fail_above": 5.5,
        },
        search={"algorithm": "optuna", "num_samples": 6, "max_concurrent": 2},
        scheduler={"type": "asha", "max_t": 8, "grace_period": 2},
        seed=7,
    )
    return RunDir(run_in_process(tmp, config))


def get_json(url: str, timeout_s: float = 60) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                return json.load(answer)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def test_exported_study_matches_results_json(finished_run: RunDir, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/optuna.db"
    done = run_sweep_cli("export-optuna", str(finished_run.path), "--storage", url)
    assert done.returncode == 0, done.stderr
    result = finished_run.read_results()
    statuses = {t.status for t in result.trials}
    assert {"completed", "stopped", "errored"} <= statuses  # every kind is exercised
    study = optuna.load_study(study_name="export-e2e", storage=url)
    assert len(study.trials) == len(result.trials)
    for frozen, record in zip(study.trials, result.trials, strict=True):
        assert frozen.state.name == STATES[record.status], record.trial_id
        assert frozen.user_attrs["raysweep_trial_id"] == record.trial_id
        assert frozen.params == {"x": record.config["x"], "y": record.config["y"]}
        if record.status == "completed":
            assert frozen.value == record.last["loss"]
            assert len(frozen.intermediate_values) == record.iterations == 8
        if record.status == "stopped":
            assert 0 < len(frozen.intermediate_values) == record.iterations < 8
        if record.status == "errored":
            assert "deliberate failure" in frozen.user_attrs["error"]
    assert study.best_trial.value == min(
        t.last["loss"] for t in result.trials if t.status == "completed"
    )


def test_optuna_dashboard_serves_the_study(finished_run: RunDir, tmp_path: Path) -> None:
    journal = tmp_path / "study.log"  # a JournalStorage file this time
    done = run_sweep_cli("export-optuna", str(finished_run.path), "--storage", str(journal),
                 "--study-name", "night-1")  # fmt: skip
    assert done.returncode == 0, done.stderr
    binary = shutil.which("optuna-dashboard", path=str(Path(sys.executable).parent))
    if binary is None:
        pytest.skip("optuna-dashboard is not installed (pip install 'raysweep[dev]')")
    port = free_port()
    server = subprocess.Popen(
        [binary, str(journal), "--host", "127.0.0.1", "--port", str(port), "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        summaries = get_json(f"http://127.0.0.1:{port}/api/studies")["study_summaries"]
        names = {s["study_name"]: s for s in summaries}
        assert "night-1" in names
        study = get_json(f"http://127.0.0.1:{port}/api/studies/{names['night-1']['study_id']}")
        assert len(study["trials"]) == len(finished_run.read_results().trials)
    finally:
        server.terminate()
        output, _ = server.communicate(timeout=30)
    assert "Traceback" not in output, output
