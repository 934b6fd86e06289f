"""Exactly-once resume of a local run: replay its journal into a fresh searcher and scheduler.

A searcher chain is a function of the calls made into it (tests/search/
test_searcher_replay.py): replaying each recorded suggestion, and each finished
trial's rows and end, in the journal's order brings a new chain to where the
killed one was. Finished trials are kept as recorded and never run again;
suggested but unfinished ones run again from their first iteration, with their
recorded config and index (so the same seed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from raysweep.engines.local.controller import LocalController
from raysweep.engines.local.journal import END, SUGGEST
from raysweep.engines.local.trial import LocalTrial


@dataclass
class Replayed:
    """What a replay found: finished and unfinished trials, and suggestions that differ."""

    finished: int = 0
    unfinished: int = 0
    differing: list[int] = field(default_factory=list)  # indices the searcher now draws apart


def replay(controller: LocalController, records: list[dict[str, Any]]) -> Replayed:
    """Feed ``records`` (``RunDir.read_journal``) to the controller's searcher and scheduler."""
    seen = Replayed()
    for record in records:
        kind, trial_id = record.get("e"), str(record.get("id"))
        if kind == SUGGEST and trial_id not in controller.trials:
            recorded = dict(record["config"])
            drawn = controller.searcher.suggest(trial_id)
            if not isinstance(drawn, dict) or {**controller.constants, **drawn} != recorded:
                seen.differing.append(int(record.get("index", -1)))
            controller.add(trial_id, recorded)
        elif kind == END:
            trial = controller.trials.get(trial_id)
            if trial is not None and trial.outcome is None:
                _replay_end(controller, trial, record)
                seen.finished += 1
    controller.queue = [t for t in controller.trials.values() if t.outcome is None]
    controller.queue.sort(key=lambda t: t.index)
    seen.unfinished = len(controller.queue)
    return seen


def _replay_end(controller: LocalController, trial: LocalTrial, record: dict[str, Any]) -> None:
    """The rows and end of one finished trial, as the controller made them."""
    for row in record.get("rows") or []:
        trial.add_row(dict(row))
        controller.decider.result(trial, dict(row))  # decided when it was recorded
    trial.started = record.get("started")
    trial.error_file = record.get("error_file")
    trial.finish(str(record["status"]), float(record.get("ended") or 0.0))
    controller.complete(trial)
