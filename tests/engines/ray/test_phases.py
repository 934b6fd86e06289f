"""What a resume will do, decided from the run directory alone (no Ray started)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from factories import make_sweep, quadratic_sweep
from raysweep._raycompat.experiment_state import read_trial_states
from raysweep.config.load import parse_spec
from raysweep.config.schema import SweepSpec
from raysweep.engines.ray.experiments import is_finished
from raysweep.engines.ray.phases import Phase, plan_phases, recorded_parts
from raysweep.errors import ConfigError, ResumeError
from raysweep.run.resume_spec import resumed_spec, spec_changes
from raysweep.rundir import Part, RunDir

CONFIG: dict[str, Any] = quadratic_sweep(
    name="plan",
    space={"x": {"type": "uniform", "low": 0, "high": 5}, "steps": 3},
    search={"algorithm": "random", "num_samples": 4, "max_concurrent": 2},
    seed=1,
)


def spec(**search: Any) -> SweepSpec:
    data = json.loads(json.dumps(CONFIG))
    data["search"].update(search)
    return parse_spec(data)


def make_part(run_dir: Path, name: str, statuses: list[str] | None) -> None:
    """A minimal Ray experiment dir: tuner.pkl and (unless None) one snapshot."""
    exp = run_dir / name
    exp.mkdir(parents=True)
    (exp / "tuner.pkl").write_bytes(pickle.dumps({"stand-in": True}))
    if statuses is None:
        return
    trial_data = [
        [json.dumps({"trial_id": f"{name}-{i}", "status": s, "config": {"x": i}}), "{}"]
        for i, s in enumerate(statuses)
    ]
    state = {"trial_data": trial_data, "runner_data": {}, "stats": {}}
    (exp / "experiment_state-2026-01-01_00-00-00.json").write_text(json.dumps(state))


def test_finished_run_has_nothing_to_do(tmp_path: Path) -> None:
    make_part(tmp_path, "tune", ["TERMINATED"] * 4)
    assert plan_phases(RunDir(tmp_path), [Part("tune", 4)], spec(), retry_errored=False) == []


def test_unfinished_trials_are_restored(tmp_path: Path) -> None:
    make_part(tmp_path, "tune", ["TERMINATED", "RUNNING", "PENDING"])
    phases = plan_phases(RunDir(tmp_path), [Part("tune", 4)], spec(), retry_errored=False)
    assert phases == [Phase("restore", Part("tune", 4))]


def test_too_few_trials_created_is_unfinished(tmp_path: Path) -> None:
    make_part(tmp_path, "tune", ["TERMINATED", "TERMINATED"])
    assert not is_finished(RunDir(tmp_path), Part("tune", 4), retry_errored=False)


def test_errored_trials_are_kept_unless_retried(tmp_path: Path) -> None:
    make_part(tmp_path, "tune", ["TERMINATED", "ERROR", "TERMINATED", "TERMINATED"])
    parts = [Part("tune", 4)]
    assert plan_phases(RunDir(tmp_path), parts, spec(), retry_errored=False) == []
    assert plan_phases(RunDir(tmp_path), parts, spec(), retry_errored=True) == [
        Phase("restore", Part("tune", 4))
    ]


def test_more_samples_add_an_extension_that_continues_the_searcher(tmp_path: Path) -> None:
    make_part(tmp_path, "tune", ["TERMINATED"] * 4)
    phases = plan_phases(
        RunDir(tmp_path), [Part("tune", 4)], spec(num_samples=7), retry_errored=False
    )
    assert phases == [Phase("fit", Part("tune-ext-1", 3, start_index=4), "tune")]


def test_unfinished_extension_is_restored_then_nothing_added(tmp_path: Path) -> None:
    make_part(tmp_path, "tune", ["TERMINATED"] * 4)
    make_part(tmp_path, "tune-ext-1", ["TERMINATED", "RUNNING"])
    parts = [Part("tune", 4), Part("tune-ext-1", 3, 4)]
    phases = plan_phases(RunDir(tmp_path), parts, spec(num_samples=7), retry_errored=False)
    assert phases == [Phase("restore", Part("tune-ext-1", 3, 4))]


def test_no_snapshot_yet_starts_the_experiment_over(tmp_path: Path) -> None:
    make_part(tmp_path, "tune", None)
    phases = plan_phases(RunDir(tmp_path), [Part("tune", 4)], spec(), retry_errored=False)
    assert phases == [Phase("fit", Part("tune", 4))]


def test_killed_before_any_experiment_starts_fresh(tmp_path: Path) -> None:
    parts = recorded_parts(RunDir(tmp_path), {"status": "running"}, spec())
    assert parts == []
    assert plan_phases(RunDir(tmp_path), parts, spec(), False) == [Phase("fit", Part("tune", 4))]


def test_missing_tune_dir_is_refused(tmp_path: Path) -> None:
    state = {"status": "interrupted", "experiments": [Part("tune", 4).to_json()]}
    parts = recorded_parts(RunDir(tmp_path), state, spec())
    with pytest.raises(ResumeError, match=r"tune is missing"):
        plan_phases(RunDir(tmp_path), parts, spec(), retry_errored=False)
    with pytest.raises(ResumeError, match=r"tune is missing"):
        recorded_parts(RunDir(tmp_path), {"status": "completed"}, spec())


def test_corrupt_snapshot_and_tuner_pkl_are_refused(tmp_path: Path) -> None:
    make_part(tmp_path, "tune", ["TERMINATED"])
    snapshot = next((tmp_path / "tune").glob("experiment_state-*.json"))
    snapshot.write_text('{"trial_data": [')
    with pytest.raises(ResumeError, match=r"experiment_state-.*corrupt"):
        read_trial_states(tmp_path / "tune")
    (tmp_path / "tune" / "tuner.pkl").write_bytes(b"not a pickle")
    with pytest.raises(ResumeError, match=r"tuner.pkl is corrupt"):
        plan_phases(RunDir(tmp_path), [Part("tune", 4)], spec(), retry_errored=False)


def test_spec_changes_list_dotted_paths_old_and_new() -> None:
    old = spec()
    new_data = json.loads(json.dumps(CONFIG))
    new_data["seed"] = 2
    new_data["space"]["x"]["high"] = 6
    new_data["space"]["y"] = 1
    changes = spec_changes(old, parse_spec(new_data))
    assert changes == ["seed: 1 → 2", "space.x.high: 5.0 → 6.0", "space.y: (unset) → 1"]


def test_resumed_spec_refuses_a_changed_config_and_lists_fields(tmp_path: Path) -> None:
    changed = json.loads(json.dumps(CONFIG))
    changed["search"]["algorithm"] = "optuna"
    with pytest.raises(ResumeError) as info:
        resumed_spec(RunDir(tmp_path), spec(), parse_spec(changed))
    assert 'search.algorithm: "random" → "optuna"' in str(info.value)


def test_resumed_spec_allows_max_concurrent_and_growing_num_samples(tmp_path: Path) -> None:
    resumed = resumed_spec(RunDir(tmp_path), spec(), spec(max_concurrent=1), num_samples=6)
    assert (resumed.search.max_concurrent, resumed.search.num_samples) == (1, 6)
    resumed = resumed_spec(RunDir(tmp_path), spec(), None, max_concurrent=3)
    assert resumed.search.max_concurrent == 3
    with pytest.raises(ConfigError, match=r"cannot shrink \(got 3 < 4"):
        resumed_spec(RunDir(tmp_path), spec(), None, num_samples=3)
    resumed = resumed_spec(RunDir(tmp_path), spec(max_concurrent=None), None, max_concurrent=2)
    assert resumed.search.max_concurrent == 2


def test_num_samples_in_the_file_is_a_change_without_the_flag(tmp_path: Path) -> None:
    with pytest.raises(ResumeError, match=r"search.num_samples: 4 → 6"):
        resumed_spec(RunDir(tmp_path), spec(), spec(num_samples=6))


def test_resumed_spec_accepts_a_spec_json_written_before_alias_resolution(tmp_path: Path) -> None:
    import raysweep.trainables  # noqa: F401  (registers the library alias hook)

    space = {"num_leaf": {"type": "int", "low": 8, "high": 64}, "eta": 0.1}
    data = make_sweep("lightgbm", name="aliases", space=space)
    before_resolution = SweepSpec.model_validate(data)  # as an older raysweep recorded it
    config = parse_spec(data)  # the same file, aliases resolved
    assert "num_leaves" in config.space and "num_leaf" in before_resolution.space
    resumed = resumed_spec(RunDir(tmp_path), before_resolution, config)
    assert resumed == before_resolution  # the run goes on with spec.json as recorded
    changed = json.loads(json.dumps(data))
    changed["space"]["num_leaf"]["high"] = 128
    with pytest.raises(ResumeError, match=r"space.num_leaves.high: 64 → 128"):
        resumed_spec(RunDir(tmp_path), before_resolution, parse_spec(changed))
