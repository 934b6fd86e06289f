"""The progress callback's cost does not grow with the number of trials."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from raysweep.driver.progress import ProgressCallback


class CountedTrials(list[Any]):
    """Ray Tune's list of trials, counting how often it is walked."""

    walks = 0

    def __iter__(self) -> Iterator[Any]:
        self.walks += 1
        return super().__iter__()


def test_turns_of_ray_tunes_loop_walk_no_trial_list_between_drawings(tmp_path: Path) -> None:
    """At 10,000 trials a count of running trials per turn made each trial cost more."""
    out = io.StringIO()
    progress = ProgressCallback(tmp_path / "trials.jsonl", "loss", "min", 10_000, out)
    progress.setup()
    trials = CountedTrials([object()] * 10_000)
    for _ in range(200):
        progress.on_step_end(0, trials)
    assert trials.walks == 0
    assert out.getvalue() == ""  # a heartbeat is a minute away
    progress.on_experiment_end([])
