"""Exactly-once resume of a local run: replay its journal into a fresh searcher and scheduler.

A searcher chain is a function of the calls made into it (tests/tuner/
test_searcher_replay.py): replaying each recorded suggestion, and each finished
trial's rows and end, in the journal's order brings a new chain to where the
killed one was. Finished trials are kept as recorded and never run again;
suggested but unfinished ones run again from their first iteration, with their
recorded config and index (so the same seed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ray.tune.schedulers import TrialScheduler

from raysweep.local.executor import LocalExecutor
from raysweep.local.journal import END, SUGGEST
from raysweep.local.trial import LocalTrial
from raysweep.tuner.build import TIME_ATTR


@dataclass
class Replayed:
    """What a replay found: finished and unfinished trials, and suggestions that differ."""

    finished: int = 0
    unfinished: int = 0
    differing: list[int] = field(default_factory=list)  # indices the searcher now draws apart


def replay(executor: LocalExecutor, records: list[dict[str, Any]]) -> Replayed:
    """Feed ``records`` (``RunDir.read_journal``) to the executor's searcher and scheduler."""
    seen = Replayed()
    for record in records:
        kind, trial_id = record.get("e"), str(record.get("id"))
        if kind == SUGGEST and trial_id not in executor.trials:
            recorded = dict(record["config"])
            drawn = executor.searcher.suggest(trial_id)
            if not isinstance(drawn, dict) or {**executor.constants, **drawn} != recorded:
                seen.differing.append(int(record.get("index", -1)))
            executor.add(trial_id, recorded)
        elif kind == END:
            trial = executor.trials.get(trial_id)
            if trial is not None and trial.outcome is None:
                _replay_end(executor, trial, record)
                seen.finished += 1
    executor.queue = [t for t in executor.trials.values() if t.outcome is None]
    executor.queue.sort(key=lambda t: t.index)
    seen.unfinished = len(executor.queue)
    return seen


def _replay_end(executor: LocalExecutor, trial: LocalTrial, record: dict[str, Any]) -> None:
    """The rows and end of one finished trial, as the executor made them."""
    limit = executor.spec.stop.max_iterations
    for row in record.get("rows") or []:
        trial.add_row(dict(row))
        if limit and int(row.get(TIME_ATTR, 0)) >= limit:
            continue  # the stop rule ended it here; the scheduler was not asked
        decision = executor.scheduler.on_trial_result(None, trial, dict(row))  # type: ignore[arg-type]
        if decision != TrialScheduler.STOP:
            executor.searcher.on_trial_result(trial.trial_id, dict(row))
    trial.started = record.get("started")
    trial.error_file = record.get("error_file")
    trial.finish(str(record["status"]), float(record.get("ended") or 0.0))
    executor.complete(trial)
