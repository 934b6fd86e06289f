"""The progress display: its cost does not grow with the number of trials; its event log."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from raysweep.run.progress import TrialProgress


class CountedTrials(list[Any]):
    """An engine's list of trials, counting how often it is walked."""

    walks = 0

    def __iter__(self) -> Iterator[Any]:
        self.walks += 1
        return super().__iter__()


def test_turns_of_the_loop_walk_no_trial_list_between_drawings(tmp_path: Path) -> None:
    """At 10,000 trials a count of running trials per turn made each trial cost more."""
    out = io.StringIO()
    progress = TrialProgress(tmp_path / "trials.jsonl", "loss", "min", 10_000, out)
    progress.start()
    trials = CountedTrials([object()] * 10_000)
    for _ in range(200):
        progress.tick(trials)
    assert trials.walks == 0
    assert out.getvalue() == ""  # a heartbeat is a minute away
    progress.close([])


def test_starts_and_ends_go_to_the_event_log_with_the_best_so_far(tmp_path: Path) -> None:
    out = io.StringIO()
    progress = TrialProgress(tmp_path / "trials.jsonl", "loss", "min", 2, out, 1, 0.7)
    progress.start()
    good = SimpleNamespace(trial_id="a", config={"x": 1, "__trial_index__": 1},
                           last_result={"loss": 0.5, "training_iteration": 3})  # fmt: skip
    bad = SimpleNamespace(trial_id="b", config={"__trial_index__": 2}, last_result={})
    progress.trial_started(good, [good])
    assert progress.snapshot([good]).running == 1
    progress.trial_ended(good, [good])
    progress.trial_ended(bad, [good, bad], error="ValueError: boom")
    progress.close([good, bad])
    events = [json.loads(line) for line in (tmp_path / "trials.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["start", "ended", "errored"]
    assert events[1]["config"] == {"x": 1} and events[1]["index"] == 1
    assert events[2]["error"] == "ValueError: boom"
    assert progress.best == 0.5 and progress.finished == 3
    assert "[2/2] a done loss=0.5" in out.getvalue()
