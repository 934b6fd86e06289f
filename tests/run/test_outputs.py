"""run/outputs.py: what a run writes reads the same when `sweep report` writes it again."""

from __future__ import annotations

import time
from pathlib import Path

from factories import make_spec
from raysweep.report.text import format_summary
from raysweep.results.records import SweepResult
from raysweep.run.outputs import collect_result
from raysweep.rundir import RunDir


def test_the_wall_time_is_kept_as_results_json_keeps_it(tmp_path: Path) -> None:
    """A run's report and `sweep report`'s (from results.json) once showed 1.2 s and 1.1 s."""
    run_dir = RunDir(tmp_path / "run")
    run_dir.path.mkdir()
    result = collect_result(make_spec(), run_dir, [], started=time.monotonic() - 1.15)
    again = SweepResult.from_json(result.to_json())
    assert again.wall_time_s == result.wall_time_s
    assert format_summary(again) == format_summary(result)
