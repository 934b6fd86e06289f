"""A raysweep run of the search-quality benchmark as observations, as the peers record theirs.

Each report of each trial is one observation costing one fidelity step, in the order
reports were made: ``[budget used, wall s, value, regret, fidelity, own regret]``
(search_quality_clock.py has the peers' side). ``own regret`` is the regret of what
``sweep best`` returns once that report is in: the best trial under the sweep's
``rank_by``, ranked by raysweep's own rule (``raysweep.results.ranking.rank_trials``):
``"best"`` by each trial's best value so far, ``"last"`` by its last one, a trial cut
short ranking after every trial that ran longer. A trial that has not ended by then
counts as cut there ("stopped"): what ``sweep best`` returns had the sweep ended at
that report.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.workloads.search_quality_problems import Problem


@dataclass
class _Seen:
    """A trial as far as its reports so far: what ``rank_trials`` reads."""

    index: int
    final_status: str
    total: int  # the reports it made in the whole run
    reports: int = 0  # its reports so far
    iterations: int = 0
    last: dict[str, Any] = field(default_factory=dict)
    best_metric: float | None = None

    @property
    def status(self) -> str:
        return self.final_status if self.reports >= self.total else "stopped"

    def report(self, value: float, iteration: int, metric: str, mode: str) -> None:
        self.reports, self.iterations, self.last = self.reports + 1, iteration, {metric: value}
        if self.best_metric is None or (value < self.best_metric) == (mode == "min"):
            self.best_metric = value


def observations(path: Path, problem: Problem, popen_t: float) -> list[list[Any]]:
    """``[budget used, wall s, value, regret, fidelity, own regret]`` per report, in the
    order reports were made.

    The value is the one the trial reported at that step (negated where the sweep
    maximizes its metric, as the problem's ``value`` is), made at the trial's start plus
    its ``time_total_s``, at the fidelity of its ``training_iteration``. A trial run
    again from its start (Hyperband's pause without a checkpoint) pays for its steps
    again. ``regret``: this report's configuration's, where the problem's is cheap or
    the value is the best so far (else infinite); ``own regret``: ``sweep best``'s
    (module docstring).
    """
    from raysweep.results.ranking import rank_trials
    from raysweep.rundir import ITER, RunDir

    run_dir = RunDir(path)
    results = json.loads((path / "results.json").read_text(encoding="utf-8"))
    metric, mode = str(results["metric"]), str(results.get("mode", "min"))
    rank_by = str(results.get("rank_by", "best"))
    sign = -1.0 if mode == "max" else 1.0  # the problem's value is minimized
    starts: dict[str, list[float]] = {}
    for record in run_dir.read_trial_info():
        if record.get("event") == "start":
            starts.setdefault(str(record["trial_id"]), []).append(float(record["t"]))
    made = []  # (wall s, trial id, metric, fidelity)
    trials = {str(t["trial_id"]): t for t in results["trials"]}
    seen: dict[str, _Seen] = {}
    for trial_id, rows in run_dir.trial_rows((ITER, "time_total_s", metric)).items():
        begun, attempt, previous, before = sorted(starts.get(trial_id, [popen_t])), 0, 0, len(made)
        for row in rows:
            if int(row[ITER]) <= previous:  # the trial started again from its first step
                attempt = min(attempt + 1, len(begun) - 1)
            previous = int(row[ITER])
            if metric in row:
                wall = begun[attempt] + float(row["time_total_s"]) - popen_t
                made.append((wall, trial_id, float(row[metric]), int(row[ITER])))
        trial = trials[trial_id]
        seen[trial_id] = _Seen(int(trial["index"]), str(trial["status"]), len(made) - before)
    made.sort(key=lambda m: m[0])
    ids = {id(t): k for k, t in seen.items()}
    regrets: dict[str, float] = {}  # per trial, as computed

    def regret_of(trial_id: str) -> float:
        if trial_id not in regrets:
            regrets[trial_id] = problem.regret(trials[trial_id]["config"])
        return regrets[trial_id]

    out: list[list[Any]] = []
    best = math.inf  # the best value so far
    for used, (wall, trial_id, raw, fidelity) in enumerate(made, 1):
        seen[trial_id].report(raw, fidelity, metric, mode)
        value = sign * raw
        regret = regret_of(trial_id) if value < best or problem.cheap_regret else math.inf
        best = min(best, value)
        returned = rank_trials(seen.values(), metric, mode, rank_by)[0]
        out.append(
            [float(used), wall, value, regret, float(fidelity), regret_of(ids[id(returned)])]
        )
    return out


def slot_use(path: Path, slots: int) -> float | None:
    """The share of ``slots`` x the run's span that its trials ran: each trial from its
    start to its last report, the span from the first start to the last report (None
    without a report)."""
    from raysweep.rundir import RunDir

    run_dir = RunDir(path)
    starts: dict[str, float] = {}
    for record in run_dir.read_trial_info():
        if record.get("event") == "start":
            starts.setdefault(str(record["trial_id"]), float(record["t"]))
    ends = {}
    for trial_id, rows in run_dir.trial_rows(("time_total_s",)).items():
        if rows and trial_id in starts:
            ends[trial_id] = starts[trial_id] + max(float(r.get("time_total_s", 0)) for r in rows)
    if not ends:
        return None
    busy = sum(ends[t] - starts[t] for t in ends)
    span = max(ends.values()) - min(starts[t] for t in ends)
    return busy / (slots * span) if span > 0 else None
