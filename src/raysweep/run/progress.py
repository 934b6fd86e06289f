"""A run's progress on show, and its append-only event log (trials.jsonl), for any engine.

The display (run/live.py) is a live panel on a terminal and plain lines elsewhere.
An engine tells :class:`TrialProgress` when a trial starts and ends and when its loop
turns; the Ray engine does so through a Ray Tune callback (``engines/ray/progress.py``).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from raysweep.config.rank_rule import DEFAULT_RANK_BY
from raysweep.results.records import ended_status
from raysweep.results.trial_view import TrialView
from raysweep.run.live import Display, Snapshot, make_display
from raysweep.run.live_best import LiveBest
from raysweep.run.returned import ReturnedTrials

OUTCOMES = ("completed", "stopped", "errored")


class TrialProgress:
    """Shows one line per finished trial and appends it to ``trials.jsonl``.

    ``terminal``: the stream a live display may draw on (when it is a terminal);
    the trial lines then go to it and to ``log_path``, else to ``out``, with a
    heartbeat line every minute without one (run/live.py).

    Each line costs O(1): results.json is written once at the end, not per trial.
    The best so far follows the sweep's ``rank_by`` (run/live_best.py). On a
    resumed or extended run the count and best start from what is already done:
    :meth:`count_finished` for each trial an engine finds finished when it continues.

    An ended trial is ``completed`` or ``stopped`` by the rule results.json follows
    (``results.records.ended_status``): whether its function returned (the engine's
    ``outcome``, else trial_info.jsonl at ``info_path``) or it ran ``max_iterations``.
    """

    def __init__(
        self,
        events_path: Path,
        metric: str,
        mode: str,
        total: int,
        out: IO[str],
        terminal: IO[str] | None = None,
        log_path: Path | None = None,
        rank_by: str = DEFAULT_RANK_BY,
        max_iterations: int | None = None,
        info_path: Path | None = None,
    ) -> None:
        self.events_path = events_path  # RunDir.events_path
        self.metric = metric
        self.mode = mode
        self.total = total
        self.out = out
        self.finished = 0
        self._best = LiveBest(mode, rank_by)
        self.best: float | None = None
        self.best_trial: str | None = None
        self.started: dict[str, float] = {}
        self._events: IO[str] | None = None
        self.terminal = terminal
        self.log_path = log_path  # RunDir.log_path: where a live display's lines are kept
        self._display: Display | None = None
        self._setup_at = time.monotonic()
        self._finished_here = 0
        self._running: set[str] = set()
        self.outcomes = dict.fromkeys(OUTCOMES, 0)
        self.max_iterations = max_iterations  # SweepSpec.iteration_budget
        self._returned = ReturnedTrials(info_path)

    def __getstate__(self) -> dict[str, Any]:
        # Ray pickles the run config (tuner.pkl); open streams stay with this process.
        state = self.__dict__.copy()
        state["out"] = None
        state["_events"] = None
        state["terminal"] = None
        state["_display"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.out = sys.stdout

    def start(self) -> None:
        """Open the event log and the display (before the first trial starts)."""
        self._load_start_times()
        self._events = self.events_path.open("a", encoding="utf-8")
        self._setup_at = time.monotonic()
        self._finished_here = 0
        self._display = make_display(self.out, self.terminal, self.log_path)

    def _load_start_times(self) -> None:
        """A resumed trial keeps the start time of its first attempt."""
        if not self.events_path.is_file():
            return
        for line in self.events_path.read_text(encoding="utf-8").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "start":
                self.started.setdefault(event["trial_id"], event["t"])

    def count_finished(self, trial: TrialView) -> None:
        """Count ``trial``, finished before this invocation (a restored experiment's); an
        errored trial is counted and not ranked."""
        self.finished += 1
        errored = trial.state == "errored"
        self.outcomes["errored" if errored else self._ended_status(trial)] += 1
        if not errored:
            self._consider(trial)

    def _consider(self, trial: TrialView) -> None:
        """An ended trial for the best so far: its last result and best value."""
        last = trial.last_result.get(self.metric)
        best = trial.best_value(self.metric, self.mode)
        self._best.add(trial.trial_id, last, best, trial.iterations)
        self.best, self.best_trial = self._best.value, self._best.trial_id

    def _ended_status(self, trial: TrialView) -> str:
        """``completed`` or ``stopped``, as results.json will say (see the class docstring)."""
        if trial.outcome in ("completed", "stopped"):  # the engine decided it
            returned = trial.outcome == "completed"
        else:
            returned = self._returned.returned(trial.trial_id)
        return ended_status(returned, trial.iterations, self.max_iterations)

    def trial_started(self, trial: TrialView) -> None:
        """``trial`` started or restarted."""
        self.started.setdefault(trial.trial_id, time.time())
        self._running.add(trial.trial_id)
        self._append(
            {"event": "start", "trial_id": trial.trial_id, "index": trial.index, "t": time.time()}
        )

    def trial_ended(self, trial: TrialView, error: str | None = None) -> None:
        """``trial`` ended (``error``: its error text, when it failed)."""
        self._running.discard(trial.trial_id)
        self._finish(trial, "errored" if error is not None else "ended", error)

    def tick(self) -> None:
        """Every turn of the engine's loop (~10 a second): redraw, or a heartbeat when due."""
        if self._display is not None:
            self._display.tick(self.snapshot)

    def snapshot(self) -> Snapshot:
        """Counts, best so far, elapsed and ETA (from this invocation's pace) right now."""
        elapsed = time.monotonic() - self._setup_at
        running = self.running()
        left = max(self.total - self.finished, 0)
        eta = elapsed / self._finished_here * left if self._finished_here else None
        return Snapshot(
            self.total, self.finished, running, self.metric, self.best, self.best_trial,
            elapsed, eta, dict(self.outcomes),
        )  # fmt: skip

    def running(self) -> int:
        """Trials running now: started here and not ended."""
        return len(self._running)

    def close(self) -> None:
        """Close the display (with a last snapshot) and the event log."""
        if self._display is not None:
            self._display.close(self.snapshot())
            self._display = None
        if self._events is not None:
            self._events.close()
            self._events = None

    def _finish(self, trial: TrialView, event: str, error: str | None) -> None:
        self.finished += 1
        self._finished_here += 1
        status = "errored" if error is not None else self._ended_status(trial)
        self.outcomes[status] += 1
        result = trial.last_result
        value = result.get(self.metric)
        trial_best = trial.best_value(self.metric, self.mode)
        if error is None:
            self._consider(trial)
        self._append(
            {
                "event": event,
                "trial_id": trial.trial_id,
                "index": trial.index,
                "t": time.time(),
                "started": self.started.get(trial.trial_id),
                "status": status,
                "iterations": result.get("training_iteration"),
                self.metric: value,
                "best": trial_best if isinstance(trial_best, int | float) else None,
                "config": trial.params,
                "error": error,
            }
        )
        if self._display is None:  # a trial ended before setup (never, with Ray Tune)
            self._display = make_display(self.out, self.terminal, self.log_path)
        line = self._line(trial.trial_id, status, result, trial_best, error)
        self._display.line(line, self.snapshot)

    def _line(
        self,
        trial_id: str,
        status: str,
        result: Mapping[str, Any],
        trial_best: Any,
        error: str | None,
    ) -> str:
        """``[4/10] a1b2 stopped after 2 iteration(s): loss=0.52, trial best=0.48; sweep
        best loss=0.31 (trial c3d4)``: the trial's own values, then the sweep's best."""
        head = f"[{self.finished}/{self.total}] {trial_id} {status}"
        if error is not None:
            head += ": " + ((error or "").strip().splitlines() or ["unknown error"])[-1][:160]
        else:
            value = result.get(self.metric)
            shown = f"{self.metric}={_number(value)}" if _is_number(value) else "no metric"
            if _is_number(trial_best) and trial_best != value:
                shown += f", trial best={_number(trial_best)}"
            done = result.get("training_iteration", 0)
            head += f" after {done} iteration(s): {shown}"
        if self.best is None:
            return f"{head}; sweep best {self.metric}=-"
        return f"{head}; sweep best {self.metric}={_number(self.best)} (trial {self.best_trial})"

    def _append(self, record: dict[str, Any]) -> None:
        if self._events is None:
            self._events = self.events_path.open("a", encoding="utf-8")
        self._events.write(json.dumps(record, default=str) + "\n")
        self._events.flush()


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number(value: Any) -> str:
    return f"{value:.6g}"
