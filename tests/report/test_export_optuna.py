"""sweep export-optuna on a run directory: the study Optuna loads matches results.json."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
from benchmarks.standalone.report_scale import synthetic_run

from factories import run_sweep_cli
from raysweep.rundir import RunDir

STATES = {"completed": "COMPLETE", "stopped": "PRUNED", "errored": "FAIL"}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    return synthetic_run(tmp_path_factory.mktemp("export") / "syn", trials=50)


def check_study(study: optuna.Study, run_dir: RunDir) -> None:
    """Same trials, states and (complete ones) values as results.json, with curves."""
    result = run_dir.read_results()
    assert len(study.trials) == len(result.trials)
    curves = run_dir.trial_curves(result.metric)
    for frozen, record in zip(study.trials, result.trials, strict=True):
        assert frozen.user_attrs["raysweep_trial_id"] == record.trial_id
        assert frozen.state.name == STATES[record.status]
        if record.status == "completed":
            assert frozen.value == record.last["val_loss"]
        assert frozen.intermediate_values == dict(curves.get(record.trial_id, []))
        assert frozen.params == {k: v for k, v in record.config.items() if k != "objective"}
    assert study.direction == optuna.study.StudyDirection.MINIMIZE
    assert study.metric_names == ["val_loss"]


@pytest.mark.parametrize("kind", ["sqlite", "journal"])
def test_export_loads_with_optuna(run_dir: RunDir, tmp_path: Path, kind: str) -> None:
    url = f"sqlite:///{tmp_path}/s.db" if kind == "sqlite" else str(tmp_path / "s.log")
    done = run_sweep_cli(
        "export-optuna", str(run_dir.path), "--storage", url, "--study-name", "night-1"
    )
    assert done.returncode == 0, done.stderr
    assert "study 'night-1'" in done.stdout and "50 trials" in done.stdout
    storage = url if kind == "sqlite" else optuna.storages.journal.JournalStorage(
        optuna.storages.journal.JournalFileBackend(url)
    )  # fmt: skip
    check_study(optuna.load_study(study_name="night-1", storage=storage), run_dir)


def test_a_taken_study_name_or_a_bad_storage_is_invalid_input(
    run_dir: RunDir, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    assert run_sweep_cli("export-optuna", str(run_dir.path), "--storage", url).returncode == 0
    again = run_sweep_cli("export-optuna", str(run_dir.path), "--storage", url)
    assert again.returncode == 2 and "already exists" in again.stderr
    bad = run_sweep_cli(
        "export-optuna", str(run_dir.path), "--storage", f"sqlite:///{tmp_path}/no/such/x.db"
    )
    assert bad.returncode == 2 and "cannot open the Optuna storage" in bad.stderr
    optuna_default = optuna.load_study(study_name="syn", storage=url)  # default: the run's name
    assert len(optuna_default.trials) == 50
