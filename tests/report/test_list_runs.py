"""sweep list: every run with its status, trials, best value and start time."""

from __future__ import annotations

from pathlib import Path

from benchmarks.standalone.report_scale import synthetic_run

from raysweep.views import list_text


def test_list_shows_status_trials_best_and_start(tmp_path: Path) -> None:
    done = synthetic_run(tmp_path / "night-1", trials=20)
    live = synthetic_run(tmp_path / "night-2", trials=10)
    live.mark("running")  # this process: a live driver
    lines = list_text(tmp_path).splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "TRIALS", "BEST", "STARTED"]
    best = done.read_best()
    assert best is not None
    first = lines[1].split()
    assert first[:3] == ["night-1", "completed", "20/20"]
    assert first[3] == f"val_loss={best['value']:.6g}"
    assert first[4] == done.read_state()["created_at"]
    assert lines[2].split()[:2] == ["night-2", "running"]
    assert list_text(tmp_path / "none") == f"no runs under {tmp_path / 'none'}"
