"""Ray's per-trial rows read without Ray: RunDir.trial_curves over every part of a run."""

from __future__ import annotations

import json
from pathlib import Path

from raysweep._raycompat.experiment_state import read_trial_rows
from raysweep.rundir import Part, RunDir


def _rows(folder: Path, trial_id: str, rows: list[dict[str, object]], tail: str = "") -> None:
    folder.mkdir(parents=True)
    text = "".join(json.dumps({"trial_id": trial_id, **r}) + "\n" for r in rows)
    (folder / "result.json").write_text(text + tail)


def test_rows_keep_the_keys_asked_for_and_skip_torn_lines(tmp_path: Path) -> None:
    _rows(tmp_path / "trial_a", "a", [{"training_iteration": 1, "loss": 2.0, "config": {}}],
          tail='{"trial_id": "a", "training_it')  # fmt: skip
    _rows(tmp_path / "trial_b", "b", [])
    (tmp_path / "trial_c").mkdir()  # no result.json yet
    rows = read_trial_rows(tmp_path, ("training_iteration", "loss"))
    assert rows == {"a": [{"training_iteration": 1, "loss": 2.0}]}


def test_curves_of_every_part_in_iteration_order(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path / "run")
    run_dir.path.mkdir()
    run_dir.mark("running")
    run_dir.set_parts([Part("tune", 1), Part("tune-ext-1", 1, 1)])
    _rows(run_dir.path / "tune" / "trial_a", "a", [
        {"training_iteration": 2, "loss": 1.5}, {"training_iteration": 1, "loss": 3.0},
        {"training_iteration": 3, "loss": float("nan")}, {"training_iteration": 4},
    ])  # fmt: skip
    _rows(run_dir.path / "tune-ext-1" / "trial_b", "b", [{"training_iteration": 1, "loss": 0.5}])
    assert run_dir.trial_curves("loss") == {"a": [(1, 3.0), (2, 1.5)], "b": [(1, 0.5)]}
    assert run_dir.trial_curves("other") == {"a": [], "b": []}


def test_rows_of_both_engines_in_the_order_reported_restarts_kept(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path / "run")
    run_dir.path.mkdir()
    run_dir.mark("running")
    run_dir.set_parts([Part("tune", 1)])
    once = [{"training_iteration": 1, "v": 3.0}, {"training_iteration": 2, "v": 2.0}]
    restarted = once + once
    _rows(run_dir.path / "tune" / "trial_a", "a", restarted)
    run_dir.journal_path.parent.mkdir()
    end = {"e": "end", "id": "b", "rows": [{"training_iteration": 1, "v": 1.0, "x": 0}]}
    run_dir.journal_path.write_text(
        json.dumps({"e": "suggest", "id": "b"}) + "\n" + json.dumps(end)
    )
    rows = run_dir.trial_rows(("training_iteration", "v"))
    assert rows == {"a": restarted, "b": [{"training_iteration": 1, "v": 1.0}]}
    assert run_dir.trial_curves("v") == {"a": [(1, 3.0), (2, 2.0)], "b": [(1, 1.0)]}
