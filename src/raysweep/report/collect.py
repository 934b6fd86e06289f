"""An engine's trials (``TrialView``s) and the run's event logs -> SweepResult."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from raysweep.report.pareto import mark_pareto
from raysweep.repro.seeds import trial_seed_for
from raysweep.results.records import (
    NODE_LOST_EVENT,
    SweepResult,
    TrialRecord,
    TrialStatus,
    clean_number,
    ended_status,
)
from raysweep.results.trial_view import INDEX_KEY, NO_ERROR_TEXT, TrialView

if TYPE_CHECKING:
    from raysweep.config.schema import SweepSpec
    from raysweep.rundir import RunDir

# Keys an engine adds to every result (Ray Tune's; not what the trainable reported)
RAY_BOOKKEEPING = {
    "config",
    "date",
    "hostname",
    "node_ip",
    "pid",
    "time_since_restore",
    "iterations_since_restore",
    "timesteps_since_restore",
    "experiment_tag",
    "checkpoint_dir_name",
    "should_checkpoint",
    "trial_id",
    "timesteps_total",
    "episodes_total",
    "time_this_iter_s",
    "timestamp",
    "time_total_s",
    "done",
}


def collect(
    trials: Sequence[TrialView],
    name: str,
    metric: str,
    mode: str,
    master_seed: int,
    events: Sequence[dict[str, Any]] = (),
    trial_info: Sequence[dict[str, Any]] = (),
    max_iterations: int | None = None,
    objectives: Sequence[tuple[str, str]] = (),
) -> SweepResult:
    """Build a SweepResult from an engine's trials.

    ``objectives``: ``(metric, mode)`` pairs of a multi-objective sweep; each record
    is then marked ``pareto_optimal`` (report/pareto.py).

    A trial is ``completed`` when its function returned by itself or it reached
    ``max_iterations`` (the scheduler's max_t or the stop rule); a trial ended
    earlier by the scheduler is ``stopped``. ``events`` and ``trial_info`` are the
    run's trials.jsonl and trial_info.jsonl records (``RunDir.read_events`` etc.).
    """
    latest = _latest_events(events)
    infos = _merge_trial_info(trial_info)
    records = [
        _record(t, metric, mode, master_seed, latest.get(t.trial_id, {}), infos.get(t.trial_id, {}))
        for t in trials
        if not _never_started(t, latest, infos)
    ]
    losses = node_losses(events)
    for record in records:
        record.node_losses = losses.get(record.trial_id, [])
    for record in records:
        if record.status == "stopped":
            record.status = ended_status(False, record.iterations, max_iterations or None)
    records.sort(key=lambda r: (r.index, r.trial_id))  # suggestion order
    mark_pareto(records, objectives)
    return SweepResult(name=name, metric=metric, mode=mode, trials=records)


def collect_spec_trials(
    spec: SweepSpec, run_dir: RunDir, trials: Sequence[TrialView]
) -> SweepResult:
    """:func:`collect` of ``trials`` with the spec's objective, ranking and the run's event logs."""
    result = collect(
        trials,
        spec.name,
        spec.metric,
        spec.mode,
        spec.seed,
        run_dir.read_events(),
        run_dir.read_trial_info(),
        max_iterations=spec.iteration_budget,
        objectives=spec.objective_pairs,
    )
    result.rank_by = spec.ranking
    return result


def _record(
    trial: TrialView,
    metric: str,
    mode: str,
    master_seed: int,
    event: dict[str, Any],
    info: dict[str, Any],
) -> TrialRecord:
    config = dict(trial.config or {})
    index = int(config.pop(INDEX_KEY, -1))
    last = {
        k: clean_number(v)
        for k, v in trial.last_result.items()
        if k not in RAY_BOOKKEEPING and not isinstance(v, dict)
    }
    status = _status(trial, info)
    return TrialRecord(
        trial_id=trial.trial_id,
        index=index,
        status=status,
        config=config,
        seed=int(info.get("seed", trial_seed_for(master_seed, index))),
        iterations=int(last.get("training_iteration") or 0),
        last=last,
        best_metric=_best(trial, metric, mode),
        error=(trial.error or NO_ERROR_TEXT) if status == "errored" else None,
        started_at=_iso(event.get("started")),
        ended_at=_iso(event.get("t")) if event.get("event") in ("ended", "errored") else None,
        gpu_ids=[str(g) for g in info.get("gpu_ids", [])],
        node_id=info.get("node_id"),
    )


def _never_started(trial: TrialView, latest: dict[str, Any], infos: dict[str, Any]) -> bool:
    """A trial the engine ended before it ever ran: the run stopped (its time budget ran
    out, say) while the trial waited for its worker. No start was recorded, no trial_info
    line and no result: it is not one of the run's trials (as the trials never suggested
    are not)."""
    return (
        trial.state == "ended"
        and trial.outcome is None
        and trial.trial_id not in latest
        and trial.trial_id not in infos
        and not trial.iterations
    )


def _status(trial: TrialView, info: dict[str, Any]) -> TrialStatus:
    """The engine's ``outcome`` when it decided one, else from the trial's state.

    A Ray trial ended by its scheduler and one that returned both just end:
    trial_info.jsonl's ``returned`` tells them apart.
    """
    if trial.outcome is not None:
        return trial.outcome
    if trial.state == "ended":
        return "completed" if info.get("returned", not info) else "stopped"
    return trial.state


def _best(trial: TrialView, metric: str, mode: str) -> float | None:
    value = clean_number(trial.best_value(metric, mode))
    return float(value) if isinstance(value, int | float) else None


def _merge_trial_info(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per trial id: index, seed, devices, and whether the function returned by itself."""
    infos: dict[str, dict[str, Any]] = {}
    for record in records:
        info = infos.setdefault(record["trial_id"], {"returned": False})
        info.update({k: v for k, v in record.items() if k != "event"})
        if record.get("event") == "returned":
            info["returned"] = True
    return infos


def node_losses(events: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Per trial id, the nodes that died under it (trials.jsonl's ``node_lost`` events)."""
    losses: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        if event.get("event") == NODE_LOST_EVENT:
            losses.setdefault(event["trial_id"], []).append(
                {
                    "node_id": event.get("node_id"),
                    "iterations": event.get("iterations"),
                    "at": _iso(event.get("t")),
                }
            )
    return losses


def _latest_events(events: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Latest start/end event per trial id from trials.jsonl records."""
    latest: dict[str, dict[str, Any]] = {}
    for event in events:
        if event.get("event") == NODE_LOST_EVENT:
            continue
        merged = latest.setdefault(event["trial_id"], {})
        if event.get("event") == "start":
            merged.setdefault("started", event.get("t"))
        else:
            merged.update({k: v for k, v in event.items() if v is not None})
    return latest


def _iso(epoch: Any) -> str | None:
    if not isinstance(epoch, int | float):
        return None
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
