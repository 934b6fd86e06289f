"""Plain result records: what the report, export and CLI read. No Ray here."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from raysweep.results.ranking import DEFAULT_RANK_BY, rank_trials, rank_value

TrialStatus = Literal["completed", "stopped", "errored", "running", "pending"]
# trials.jsonl's event for a trial whose node died; the trial was retried elsewhere
NODE_LOST_EVENT = "node_lost"


@dataclass
class TrialRecord:
    """One trial as recorded in results.json."""

    trial_id: str
    index: int
    status: TrialStatus
    config: dict[str, Any]
    seed: int
    iterations: int
    last: dict[str, Any]
    best_metric: float | None
    error: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    gpu_ids: list[str] = field(default_factory=list)
    node_id: str | None = None
    pareto_optimal: bool | None = None  # a multi-objective sweep's front (report/pareto.py)
    # each node that died under the trial: {"node_id", "iterations" done, "at"}; the trial
    # was retried from its last checkpoint on another node
    node_losses: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        if data["pareto_optimal"] is None:  # one objective: results.json as it always was
            del data["pareto_optimal"]
        if not data["node_losses"]:  # no node lost: results.json as it always was
            del data["node_losses"]
        return data


WALL_TIME_DECIMALS = 3  # results.json's wall_time_s: milliseconds


@dataclass
class SweepResult:
    """A whole sweep: its objective and every trial, in suggestion order."""

    name: str
    metric: str
    mode: str
    trials: list[TrialRecord]
    wall_time_s: float | None = None
    rank_by: str = DEFAULT_RANK_BY  # the spec's ranking rule (results/ranking.py)
    # what the trainable says about the result (trainables/describe.py: the trading best
    # trial's trades below min_trades); shown at the end of the run and in the reports
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "metric": self.metric, "mode": self.mode}
        if self.rank_by != DEFAULT_RANK_BY:  # results.json of "best" sweeps as it always was
            data["rank_by"] = self.rank_by
        if self.wall_time_s is not None:  # the driver's wall time, for the reports
            data["wall_time_s"] = round(self.wall_time_s, WALL_TIME_DECIMALS)
        if self.warnings:  # results.json without warnings as it always was
            data["warnings"] = list(self.warnings)
        data["trials"] = [t.to_json() for t in self.trials]
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> SweepResult:
        """The inverse of :meth:`to_json` (results.json)."""
        wall = data.get("wall_time_s")
        return SweepResult(
            name=data["name"],
            metric=data["metric"],
            mode=data["mode"],
            trials=[TrialRecord(**t) for t in data["trials"]],
            wall_time_s=None if wall is None else float(wall),
            rank_by=str(data.get("rank_by", DEFAULT_RANK_BY)),
            warnings=[str(w) for w in data.get("warnings", [])],
        )

    def counts(self) -> dict[str, int]:
        """Number of trials per status."""
        out: dict[str, int] = {}
        for trial in self.trials:
            out[trial.status] = out.get(trial.status, 0) + 1
        return out

    def ranked(self) -> list[TrialRecord]:
        """Trials with a metric, best first by the sweep's ``rank_by`` (ties by index)."""
        return rank_trials(self.trials, self.metric, self.mode, self.rank_by)

    def value(self, trial: TrialRecord) -> float | None:
        """The value that ranks ``trial``: its last or its best metric (``rank_by``)."""
        return rank_value(trial, self.metric, self.rank_by)

    def best(self) -> TrialRecord | None:
        """The best trial, or None when no trial reported the metric."""
        ranked = self.ranked()
        return ranked[0] if ranked else None

    @property
    def succeeded(self) -> int:
        return sum(1 for t in self.trials if t.status in ("completed", "stopped"))


def ended_status(returned: bool, iterations: int, budget: int | None) -> TrialStatus:
    """A trial that ended without an error: ``completed`` when its function returned by
    itself or it ran its whole iteration ``budget`` (the scheduler's max_t, the stop rule);
    ``stopped`` when its scheduler ended it earlier."""
    if returned or (budget is not None and iterations >= budget):
        return "completed"
    return "stopped"


def clean_number(value: Any) -> Any:
    """NaN and infinities become None so the JSON stays standard."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
