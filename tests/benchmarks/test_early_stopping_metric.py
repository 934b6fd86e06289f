"""The early-stopping benchmark's compute count, on run-directory files written by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.suite.early_stopping import compute_to_reach_by_report, read_reports


def _write_rows(run_dir: Path, trial_id: str, rows: list[dict[str, Any]]) -> None:
    trial_dir = run_dir / "tune" / f"trial_{trial_id}"
    trial_dir.mkdir(parents=True)
    lines = [json.dumps({"trial_id": trial_id, **row}) for row in rows]
    (trial_dir / "result.json").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _row(since: int, elapsed: float, loss: float) -> dict[str, Any]:
    return {"iterations_since_restore": since, "time_since_restore": elapsed, "val_loss": loss}


def _run_dir(tmp_path: Path) -> Path:
    """Trial a: 3 reports from t=100. Trial b: 2 reports from t=100.5, paused,
    resumed at t=110 for 2 more (the segment's iterations count from 1 again)."""
    events = [
        {"event": "start", "trial_id": "a", "t": 100.0},
        {"event": "start", "trial_id": "b", "t": 100.5},
        {"event": "ended", "trial_id": "a", "t": 103.5},
        {"event": "start", "trial_id": "b", "t": 110.0},
    ]
    (tmp_path / "trials.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in events), encoding="utf-8"
    )
    _write_rows(tmp_path, "a", [_row(1, 1.0, 0.9), _row(2, 2.0, 0.8), _row(3, 3.0, 0.7)])
    _write_rows(
        tmp_path, "b",
        [_row(1, 1.0, 0.85), _row(2, 2.0, 0.6), _row(1, 1.0, 0.5), _row(2, 2.0, 0.4)],
    )  # fmt: skip
    return tmp_path


def test_reports_are_placed_on_one_clock_across_trials_and_resumes(tmp_path: Path) -> None:
    reports = read_reports(_run_dir(tmp_path), "val_loss")
    assert [(t, n, v) for t, n, v in reports] == [
        (101.0, 1, 0.9),
        (101.5, 1, 0.85),
        (102.0, 1, 0.8),
        (102.5, 1, 0.6),
        (103.0, 1, 0.7),
        (111.0, 1, 0.5),
        (112.0, 1, 0.4),
    ]


def test_compute_counts_every_trials_iterations_up_to_the_first_good_report(
    tmp_path: Path,
) -> None:
    reports = read_reports(_run_dir(tmp_path), "val_loss")
    assert compute_to_reach_by_report(reports, 0.8) == 3  # a:1, b:1, a:2
    assert compute_to_reach_by_report(reports, 0.6) == 4  # b's second report
    assert compute_to_reach_by_report(reports, 0.45) == 7
    assert compute_to_reach_by_report(reports, 0.1) is None
