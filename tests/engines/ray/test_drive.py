"""engines/ray/drive.py: warm-start points go to the run's first experiment only, never to a
restore, an extension or an experiment whose searcher is continued from an earlier one."""

from __future__ import annotations

import io
from pathlib import Path

from raysweep.engines.ray.drive import _first_points, _log_warm_start
from raysweep.engines.ray.phases import Phase
from raysweep.output_log import RunLog
from raysweep.rundir import Part
from raysweep.search.points import WarmStart

WARM = WarmStart("export.json", ({"x": 0.25}, {"x": 0.75}), ())
FIRST = Phase("fit", Part("tune", 4))
EXTENSION = Phase("fit", Part("tune-ext-1", 3, start_index=4), "tune")
RESTARTED = Phase("fit", Part("tune-ext-2", 3, start_index=0), "tune-ext-1")
RESTORE = Phase("restore", Part("tune", 4))


def test_only_a_fresh_first_experiment_gets_the_points() -> None:
    assert _first_points(FIRST, WARM) == WARM.points
    assert _first_points(EXTENSION, WARM) == ()
    assert _first_points(RESTARTED, WARM) == ()  # its searcher continues from tune-ext-1
    assert _first_points(FIRST, None) == ()


def logged(tmp_path: Path, phases: list[Phase], warm: WarmStart | None) -> str:
    out = io.StringIO()
    with RunLog(tmp_path / "sweep_output.log", out) as log:
        _log_warm_start(warm, phases, log)
    return out.getvalue()


def test_the_announcement_is_made_only_where_the_points_are_used(tmp_path: Path) -> None:
    announced = logged(tmp_path, [FIRST], WARM)
    assert announced and all(line in announced for line in WARM.announcement())
    assert logged(tmp_path, [RESTORE, EXTENSION], WARM) == ""
    assert logged(tmp_path, [FIRST], None) == ""
