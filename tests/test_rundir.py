"""RunDir: the run directory's files, read and written in one place, without Ray."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from factories import quadratic_sweep
from raysweep.config.load import parse_spec
from raysweep.errors import ResumeError, SweepError
from raysweep.results.records import SweepResult, TrialRecord
from raysweep.rundir import Part, RunDir, list_runs, read_jsonl

SPEC = quadratic_sweep(
    name="r",
    space={"x": {"type": "uniform", "low": 0, "high": 1}},
    search={"algorithm": "random", "num_samples": 2},
    seed=0,
)


def record(i: int, value: float | None, status: str = "completed") -> TrialRecord:
    return TrialRecord(
        trial_id=f"t{i}",
        index=i,
        status=status,  # type: ignore[arg-type]
        config={"x": i},
        seed=i,
        iterations=1,
        last={"loss": value},
        best_metric=value,
    )


def test_spec_round_trips_with_its_hash(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path)
    with pytest.raises(ResumeError, match="not a raysweep run directory"):
        run_dir.read_spec()
    spec = parse_spec(SPEC)
    run_dir.write_spec(spec)
    assert run_dir.read_spec() == spec
    assert len(json.loads(run_dir.spec_path.read_text())["sha256"]) == 64
    run_dir.spec_path.write_text("{")
    with pytest.raises(ResumeError, match="unreadable or corrupt"):
        run_dir.read_spec()


def test_state_records_each_command_and_a_dead_driver_reads_as_crashed(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path / "r")
    run_dir.path.mkdir()
    assert run_dir.read_state() == {} and not run_dir.is_run()
    run_dir.mark("running")
    run_dir.set_parts([Part("tune", 3), Part("tune-ext-1", 2, 3)])
    state = run_dir.mark("interrupted", signal="SIGTERM")
    assert state["status"] == "interrupted" and len(state["commands"]) == 1
    assert run_dir.parts() == [Part("tune", 3), Part("tune-ext-1", 2, 3)]
    run_dir.mark("running")
    assert "signal" not in run_dir.read_state() and run_dir.effective_status() == "running"
    run_dir.update_state(pid=2**22 + 12345)  # no such process
    assert run_dir.effective_status() == "crashed"
    assert list_runs(tmp_path) == [run_dir]


def test_results_best_and_csv_are_written_together(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path)
    with pytest.raises(SweepError, match=r"no results\.json yet"):
        run_dir.read_results()
    result = SweepResult("r", "loss", "min", [record(0, 0.5), record(1, 0.2), record(2, None)])
    run_dir.write_results(result)
    assert run_dir.read_results() == result
    assert run_dir.read_best() == {
        "trial_id": "t1", "metric": "loss", "mode": "min", "value": 0.2, "config": {"x": 1},
    }  # fmt: skip
    assert run_dir.results_csv_path.read_text().count("\n") == 4
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]  # atomic writes


def test_no_best_config_without_a_metric(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path)
    run_dir.write_results(SweepResult("r", "loss", "min", [record(0, None, "errored")]))
    assert run_dir.read_best() is None and not run_dir.best_path.exists()


def test_packing_record_is_checked(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path)
    assert run_dir.read_packing() is None
    run_dir.write_packing({"gpus_per_trial": 0.25})
    assert run_dir.read_packing() == {"gpus_per_trial": 0.25}
    run_dir.packing_path.write_text('{"gpus_per_trial": 3}')
    with pytest.raises(ResumeError, match=r"gpu_auto\.json is unreadable or corrupt"):
        run_dir.read_packing()


def test_jsonl_skips_torn_and_foreign_lines(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    assert read_jsonl(path) == []
    path.write_text('{"a": 1}\n[1, 2]\n{"b": 2}\n{"c"')
    assert read_jsonl(path) == [{"a": 1}, {"b": 2}]


def test_experiment_folders_are_named_here(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path)
    assert run_dir.experiment_path(Part("tune", 1)) == tmp_path / "tune"
    assert run_dir.experiment_path("tune-ext-2") == tmp_path / "tune-ext-2"
    assert not run_dir.has_snapshot(Part("tune", 1)) and run_dir.trial_states(Part("tune", 1)) == []
