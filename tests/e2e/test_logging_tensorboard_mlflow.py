"""sweep.json ``logging``: Ray Tune's TensorBoard and MLflow loggers on a real run.

TensorBoard's own reader finds the metric in each trial's event file; MLflow (a
local file tracking URI) has one run per trial with its params and metrics. The
run directory keeps its contract: the event files live in Ray's trial folders.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from factories import quadratic_sweep
from raysweep import api
from raysweep.config.load import parse_spec
from raysweep.engines.ray import loggers
from raysweep.errors import ConfigError
from raysweep.rundir import RunDir

SWEEP: dict[str, object] = quadratic_sweep(
    name="logged",
    space={"x": {"type": "uniform", "low": 0, "high": 6}, "steps": 4},
    search={"algorithm": "random", "num_samples": 3, "max_concurrent": 2},
    seed=5,
)


@pytest.fixture(scope="module")
def logged_run(ray_session: None, tmp_path_factory: pytest.TempPathFactory) -> tuple[RunDir, str]:
    tmp = tmp_path_factory.mktemp("logging")
    tracking = (tmp / "mlruns").as_uri()  # file:///...: MLflow's file store
    mlflow = {"tracking_uri": tracking, "experiment_name": "e2e"}
    config = {**SWEEP, "logging": {"tensorboard": True, "mlflow": mlflow}}
    path = tmp / "sweep.json"
    path.write_text(json.dumps(config))
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 asks for it before a file store
        code = api.run_sweep(api.RunOptions(config=path, storage=tmp / "runs"), out=out)
    assert code == 0, out.getvalue()
    return RunDir(tmp / "runs" / "logged"), tracking


def test_tensorboard_event_files_per_trial_hold_the_metric(logged_run: tuple[RunDir, str]) -> None:
    pytest.importorskip("tensorboard", reason="pip install 'raysweep[tensorboard]'")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir, _ = logged_run
    result = run_dir.read_results()
    curves = run_dir.trial_curves("loss")
    for trial in result.trials:
        folder = run_dir.path / "tune" / f"trial_{trial.trial_id}"
        assert list(folder.glob("events.out.tfevents.*")), f"no event file in {folder}"
        events = EventAccumulator(str(folder))
        events.Reload()
        assert "ray/tune/loss" in events.Tags()["scalars"]
        scalars = events.Scalars("ray/tune/loss")
        assert [round(s.value, 4) for s in scalars] == [
            round(v, 4) for _, v in curves[trial.trial_id]
        ]
    assert run_dir.has_results() and run_dir.html_report_path.is_file()  # the run directory as ever


def test_mlflow_has_one_run_per_trial_with_params_and_metrics(
    logged_run: tuple[RunDir, str],
) -> None:
    pytest.importorskip("mlflow", reason="pip install 'raysweep[mlflow]'")
    from mlflow.tracking import MlflowClient

    run_dir, tracking = logged_run
    result = run_dir.read_results()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
        client = MlflowClient(tracking_uri=tracking)
        experiment = client.get_experiment_by_name("e2e")
        assert experiment is not None
        runs = client.search_runs([experiment.experiment_id])
    by_name = {r.info.run_name: r for r in runs}
    assert sorted(by_name) == sorted(f"trial_{t.trial_id}" for t in result.trials)
    for trial in result.trials:
        logged = by_name[f"trial_{trial.trial_id}"]
        assert logged.info.status == "FINISHED"
        assert float(logged.data.params["x"]) == pytest.approx(trial.config["x"])
        assert logged.data.metrics["loss"] == pytest.approx(trial.last["loss"])
        assert logged.data.metrics["training_iteration"] == 4
        assert logged.data.tags["raysweep.sweep"] == "logged"


def test_logging_config_is_checked_before_anything_starts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match=r"logging\.wandb"):
        parse_spec({**SWEEP, "logging": {"wandb": True}})
    spec = parse_spec({**SWEEP, "logging": {"mlflow": {"tracking_uri": tmp_path.as_uri()}}})
    assert spec.logging.mlflow is not None and spec.logging.mlflow.experiment_name is None
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    if loggers.is_installed("mlflow"):
        with pytest.raises(ConfigError, match="MLflow refused"):  # MLflow 3: file store opt-in
            loggers.logger_callbacks(spec)
    monkeypatch.setattr(loggers, "is_installed", lambda module: False)
    with pytest.raises(ConfigError, match=r"pip install 'raysweep\[mlflow\]'"):
        loggers.logger_callbacks(spec)
    tb = parse_spec({**SWEEP, "logging": {"tensorboard": True}})
    with pytest.raises(ConfigError, match=r"pip install 'raysweep\[tensorboard\]'"):
        loggers.logger_callbacks(tb)
    assert loggers.logger_callbacks(parse_spec(SWEEP)) == []  # off by default
