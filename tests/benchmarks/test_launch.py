"""How the benchmarks read a sweep's trial events: steady rate and where fit time goes."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.harness.launch import Launch, fit_phases, trial_events


def write_events(path: Path, events: list[tuple[str, float]]) -> None:
    lines = [
        json.dumps({"event": e, "trial_id": f"t{i}", "t": t}) for i, (e, t) in enumerate(events)
    ]
    path.write_text("\n".join(lines) + "\n{torn", encoding="utf-8")


def test_trial_events_give_the_span_and_the_second_half_rate(tmp_path: Path) -> None:
    starts = [("start", 100.0 + i) for i in range(10)]
    ends = [("ended", 102.0 + i) for i in range(9)] + [("errored", 111.0)]
    write_events(tmp_path / "trials.jsonl", starts + ends)
    events = trial_events(tmp_path / "trials.jsonl")
    assert events["finished"] == 10
    assert events["first_start_t"] == 100.0
    assert events["first_end_t"] == 102.0 and events["last_end_t"] == 111.0
    assert events["steady_trials_per_s"] == 4 / 4.0  # ends 107..111: 4 intervals in 4 s


def test_no_events_leave_the_span_empty(tmp_path: Path) -> None:
    events = trial_events(tmp_path / "missing.jsonl")
    assert events == {
        "finished": 0,
        "steady_trials_per_s": None,
        "first_start_t": None,
        "first_end_t": None,
        "last_end_t": None,
    }


def test_fit_phases_are_measured_from_the_fit_start() -> None:
    started = 1000.0
    launch = Launch(variant="x", returncode=0, process_s=30.0)
    launch.extra["timings"] = {"fit_start": 5.0, "fit_end": 25.0}  # relative to started
    launch.extra.update(first_start_t=1007.0, first_end_t=1012.5, last_end_t=1024.0)
    assert fit_phases(launch, started) == {
        "to_first_trial_start_s": 2.0,
        "to_first_trial_end_s": 7.5,
        "after_last_trial_s": 1.0,
    }
    assert fit_phases(Launch(variant="y", returncode=1, process_s=1.0), started) == {}
