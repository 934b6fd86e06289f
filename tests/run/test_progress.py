"""The progress display: one line per ended trial, the best so far, its event log.

Engines hand it ``TrialView``s (results/trial_view.py), never their own trial objects.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from raysweep.results.trial_view import TrialState, TrialView
from raysweep.run.progress import TrialProgress


def view(trial_id: str, last: dict[str, Any] | None = None, state: TrialState = "ended",
         **fields: Any) -> TrialView:  # fmt: skip
    return TrialView(trial_id, fields.pop("config", {}), state, last or {}, **fields)


def earlier(trial_id: str, loss: float, iterations: int, errored: bool = False) -> TrialView:
    """A trial an engine finds finished when it continues: its last ``loss``."""
    last = {"loss": loss, "training_iteration": iterations}
    return view(trial_id, last, "errored" if errored else "ended")


def test_turns_of_the_loop_draw_nothing_until_a_heartbeat_is_due(tmp_path: Path) -> None:
    out = io.StringIO()
    progress = TrialProgress(tmp_path / "trials.jsonl", "loss", "min", 10_000, out)
    progress.start()
    for _ in range(200):
        progress.tick()
    assert out.getvalue() == ""  # a heartbeat is a minute away
    progress.close()


def test_starts_and_ends_go_to_the_event_log_with_the_best_so_far(tmp_path: Path) -> None:
    out = io.StringIO()
    progress = TrialProgress(tmp_path / "trials.jsonl", "loss", "min", 2, out)
    progress.count_finished(earlier("z", 0.7, 3))  # an earlier run's
    progress.start()
    good = view("a", {"loss": 0.5, "training_iteration": 3}, "running",
                config={"x": 1, "__trial_index__": 1})  # fmt: skip
    bad = view("b", state="errored", config={"__trial_index__": 2})
    progress.trial_started(good)
    assert progress.snapshot().running == 1
    progress.trial_ended(good)
    progress.trial_ended(bad, error="ValueError: boom")
    progress.close()
    events = [json.loads(line) for line in (tmp_path / "trials.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["start", "ended", "errored"]
    assert events[1]["config"] == {"x": 1} and events[1]["index"] == 1
    assert events[2]["error"] == "ValueError: boom"
    assert progress.best == 0.5 and progress.finished == 3
    assert "[2/2] a completed after 3 iteration(s): loss=0.5; sweep best loss=0.5 (trial a)" in (
        out.getvalue()
    )
    assert "[3/2] b errored: ValueError: boom; sweep best loss=0.5 (trial a)" in out.getvalue()
    assert [e.get("status") for e in events] == [None, "completed", "errored"]


def ended(progress: TrialProgress, trial_id: str, last: float, best: float, folds: int) -> None:
    """A trial ends, its metric ``score`` last ``last`` and best ``best`` over ``folds``."""
    last_result = {"score": last, "training_iteration": folds}
    progress.trial_ended(view(trial_id, last_result, metric_analysis={"score": {"max": best}}))


def test_the_live_best_follows_rank_by_last_as_results_json_does(tmp_path: Path) -> None:
    """A trading-like sweep: cumulative scores over 4 folds, one trial cut after one."""
    out = io.StringIO()
    progress = TrialProgress(tmp_path / "t.jsonl", "score", "max", 5, out, rank_by="last")
    progress.start()
    ended(progress, "peaked", 0.009, 3.73, 4)  # best on its first fold, last over all four
    assert (progress.best, progress.best_trial) == (0.009, "peaked")
    ended(progress, "short", 5.0, 5.0, 1)  # stopped after one fold: ranks after the others
    assert (progress.best, progress.best_trial) == (0.009, "peaked")
    ended(progress, "steady", 1.1, 1.2, 4)
    assert (progress.best, progress.best_trial) == (1.1, "steady")
    progress.trial_ended(view("e", {"score": 9.0}, "errored"), error="boom")
    assert progress.best_trial == "steady"  # an errored trial is not ranked
    progress.close()
    assert out.getvalue().splitlines()[-1].endswith("sweep best score=1.1 (trial steady)")
    by_best = TrialProgress(tmp_path / "b.jsonl", "score", "max", 3, io.StringIO())
    by_best.start()
    ended(by_best, "peaked", 0.009, 3.73, 4)
    ended(by_best, "steady", 1.1, 1.2, 4)
    assert (by_best.best, by_best.best_trial) == (3.73, "peaked")
    by_best.close()


def test_a_longer_trial_sends_the_ones_before_it_behind(tmp_path: Path) -> None:
    """Under ``last``, the trials so far count as cut short once one runs longer."""
    progress = TrialProgress(tmp_path / "t.jsonl", "loss", "min", 4, io.StringIO(), rank_by="last")
    progress.count_finished(earlier("early", 0.1, 2))
    assert progress.best_trial == "early"
    progress.count_finished(earlier("b", 0.9, 9, errored=True))
    assert progress.best_trial == "early" and progress.finished == 2
    progress.count_finished(earlier("full", 0.5, 4))
    assert (progress.best, progress.best_trial) == (0.5, "full")
    progress.count_finished(earlier("cut", 0.05, 3))
    assert progress.best_trial == "full"
    progress.count_finished(earlier("better", 0.4, 4))
    assert (progress.best, progress.best_trial) == (0.4, "better")


def test_a_trial_line_says_stopped_as_results_json_will(tmp_path: Path) -> None:
    """ASHA's stopped trials were "done" on screen and "stopped" in results.json; the
    trial's own best read as the sweep's."""
    info = tmp_path / "trial_info.jsonl"
    out = io.StringIO()
    progress = TrialProgress(tmp_path / "t.jsonl", "loss", "min", 4, out, max_iterations=4,
                             info_path=info)  # fmt: skip
    progress.start()

    def end(trial_id: str, last: float, best: float, iterations: int, returned: bool) -> None:
        with info.open("a") as fh:  # what the trial's worker appends (trainables/wrapper.py)
            fh.write(json.dumps({"trial_id": trial_id, "event": "start"}) + "\n")
            if returned:
                fh.write(json.dumps({"trial_id": trial_id, "event": "returned"}) + "\n")
        last_result = {"loss": last, "training_iteration": iterations}
        progress.trial_ended(view(trial_id, last_result, metric_analysis={"loss": {"min": best}}))

    end("full", 0.3, 0.3, 4, returned=True)
    end("cut", 0.9, 0.8, 1, returned=False)  # stopped by the scheduler after one iteration
    end("ran-out", 0.5, 0.5, 4, returned=False)  # stopped at max_t: it ran its budget
    progress.close()
    lines = out.getvalue().splitlines()
    assert lines == [
        "[1/4] full completed after 4 iteration(s): loss=0.3; sweep best loss=0.3 (trial full)",
        "[2/4] cut stopped after 1 iteration(s): loss=0.9, trial best=0.8; "
        "sweep best loss=0.3 (trial full)",
        "[3/4] ran-out completed after 4 iteration(s): loss=0.5; sweep best loss=0.3 (trial full)",
    ]
    assert progress.snapshot().counts_text() == (
        "3/4 finished (2 completed, 1 stopped), 0 running, 1 pending"
    )
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [e["status"] for e in events] == ["completed", "stopped", "completed"]


def test_the_local_engines_own_outcome_decides(tmp_path: Path) -> None:
    out = io.StringIO()
    progress = TrialProgress(tmp_path / "t.jsonl", "loss", "min", 2, out, max_iterations=10)
    progress.start()
    progress.trial_ended(view("x", {"loss": 1.0, "training_iteration": 2}, outcome="stopped"))
    assert out.getvalue().startswith("[1/2] x stopped after 2 iteration(s)")
