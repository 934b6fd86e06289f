"""A trial of the local engine: its suggestion, its rows, and the outcome the engine recorded.

Collect and the progress display read it as a ``TrialView`` (:meth:`LocalTrial.view`),
its ``outcome`` (``completed``, ``stopped`` or ``errored``) as the controller decided
it; Ray Tune's schedulers, through ``schedulers.decider``, read ``trial_id``. ``status``
is raysweep's own (results.json's ``status`` words).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from raysweep.results.trial_view import INDEX_KEY, TrialState, TrialView, read_error_text

PENDING, RUNNING = "pending", "running"
OUTCOMES = ("completed", "stopped", "errored")


@dataclass(eq=False)  # hashed by identity: Ray's median rule keys its results by trial
class LocalTrial:
    """One trial: its suggestion, the rows it reported, and how it ended."""

    trial_id: str
    config: dict[str, Any]  # as suggested, with the trial index (``__trial_index__``)
    status: str = PENDING
    last_result: dict[str, Any] = field(default_factory=dict)
    metric_analysis: dict[str, dict[str, float]] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    error_file: str | None = None  # where the error text of a failed trial is kept
    outcome: str | None = None  # completed, stopped or errored, once it ended
    started: float | None = None
    ended: float | None = None

    @property
    def index(self) -> int:
        return int(self.config.get(INDEX_KEY, -1))

    @property
    def params(self) -> dict[str, Any]:
        """The hyperparameters the trainable gets (the config without the trial index)."""
        return {k: v for k, v in self.config.items() if k != INDEX_KEY}

    def add_row(self, row: dict[str, Any]) -> None:
        """Keep a reported row; track each number's min, max and last like Ray does."""
        self.rows.append(row)
        self.last_result = row
        for key, value in row.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            if isinstance(value, float) and math.isnan(value):
                continue
            seen = self.metric_analysis.get(key)
            if seen is None:
                self.metric_analysis[key] = {"min": value, "max": value, "last": value}
            else:
                seen.update(min=min(seen["min"], value), max=max(seen["max"], value), last=value)

    def restart(self) -> None:
        """Forget the rows of an attempt that is run again (a retry, or a resume)."""
        self.rows.clear()
        self.last_result = {}
        self.metric_analysis = {}

    def view(self) -> TrialView:
        """The trial as collect and the progress display read it (a copy, as of now)."""
        state: TrialState = "pending"
        if self.outcome is not None:
            state = "errored" if self.outcome == "errored" else "ended"
        elif self.status == RUNNING:
            state = "running"
        return TrialView(
            trial_id=self.trial_id,
            config=dict(self.config),
            state=state,
            last_result=dict(self.last_result),
            metric_analysis={k: dict(v) for k, v in self.metric_analysis.items()},
            outcome=self.outcome,  # type: ignore[arg-type]  # one of OUTCOMES (finish)
            error=self.error_text() if self.outcome == "errored" else None,
        )

    def error_text(self) -> str:
        """A failed trial's error text, from its ``error_file``."""
        return read_error_text(self.error_file)

    def end_record(self) -> dict[str, Any]:
        """The journal's ``end`` record of this trial."""
        return {
            "id": self.trial_id,
            "index": self.index,
            "status": self.outcome,
            "rows": self.rows,
            "error_file": self.error_file,
            "started": self.started,
            "ended": self.ended,
        }

    def finish(self, outcome: str, ended: float) -> None:
        """Record how the trial ended (one of ``OUTCOMES``), as the controller decided."""
        if outcome not in OUTCOMES:
            raise ValueError(f"trial {self.trial_id}: unknown outcome {outcome!r}")
        self.outcome = outcome
        self.status = outcome
        self.ended = ended

    @property
    def live(self) -> bool:
        """Not ended yet (pending or running): what a scheduler's controller calls live."""
        return self.outcome is None
