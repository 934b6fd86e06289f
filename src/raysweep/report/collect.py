"""Ray's experiment state -> SweepResult. The only report module that reads Ray objects."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from raysweep.report.records import SweepResult, TrialRecord, TrialStatus, clean_number
from raysweep.repro.seeds import trial_seed_for
from raysweep.search.indexed import INDEX_KEY
from raysweep.trainables.wrapper import TRIAL_INFO_FILE

_RAY_BOOKKEEPING = {
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
    trials: list[Any],
    name: str,
    metric: str,
    mode: str,
    master_seed: int,
    events_path: Path | None = None,
    max_iterations: int | None = None,
) -> SweepResult:
    """Build a SweepResult from Ray Tune Trial objects (ResultGrid or ExperimentAnalysis).

    A trial is ``completed`` when its function returned by itself or it reached
    ``max_iterations`` (the scheduler's max_t or the stop rule); a trial ended
    earlier by the scheduler is ``stopped``.
    """
    events = _read_events(events_path)
    infos = _read_trial_info(events_path.parent / TRIAL_INFO_FILE if events_path else None)
    records = [
        _record(t, metric, mode, master_seed, events.get(t.trial_id, {}), infos.get(t.trial_id, {}))
        for t in trials
    ]
    for record in records:
        if record.status == "stopped" and max_iterations and record.iterations >= max_iterations:
            record.status = "completed"
    records.sort(key=lambda r: (r.index, r.trial_id))  # suggestion order
    return SweepResult(name=name, metric=metric, mode=mode, trials=records)


def _record(
    trial: Any,
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
        for k, v in (trial.last_result or {}).items()
        if k not in _RAY_BOOKKEEPING and not isinstance(v, dict)
    }
    return TrialRecord(
        trial_id=trial.trial_id,
        index=index,
        status=_status(trial, info),
        config=config,
        seed=int(info.get("seed", trial_seed_for(master_seed, index))),
        iterations=int(last.get("training_iteration") or 0),
        last=last,
        best_metric=_best(trial, metric, mode),
        error=_error(trial),
        started_at=_iso(event.get("started")),
        ended_at=_iso(event.get("t")) if event.get("event") in ("ended", "errored") else None,
        gpu_ids=[str(g) for g in info.get("gpu_ids", [])],
        node_id=info.get("node_id"),
    )


def _status(trial: Any, info: dict[str, Any]) -> TrialStatus:
    status = str(trial.status)
    if status == "ERROR":
        return "errored"
    if status == "TERMINATED":
        return "completed" if info.get("returned", not info) else "stopped"
    if status == "RUNNING":
        return "running"
    return "pending"


def _best(trial: Any, metric: str, mode: str) -> float | None:
    analysis = getattr(trial, "metric_analysis", {}) or {}
    value = analysis.get(metric, {}).get(mode)
    if value is None:
        value = (trial.last_result or {}).get(metric)
    value = clean_number(value)
    return float(value) if isinstance(value, int | float) else None


def _error(trial: Any) -> str | None:
    if str(trial.status) != "ERROR":
        return None
    candidates = [getattr(trial, "error_file", None)]
    path = getattr(trial, "path", None)
    if path:  # the copy in the run directory outlives Ray's session directory
        candidates.append(str(Path(path) / "error.txt"))
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(candidate).read_text(encoding="utf-8", errors="replace").strip()
    return "trial failed (no error text was kept)"


def _read_trial_info(path: Path | None) -> dict[str, dict[str, Any]]:
    """Per trial id: index, seed, devices, and whether the function returned by itself."""
    infos: dict[str, dict[str, Any]] = {}
    for record in _read_jsonl(path):
        info = infos.setdefault(record["trial_id"], {"returned": False})
        info.update({k: v for k, v in record.items() if k != "event"})
        if record.get("event") == "returned":
            info["returned"] = True
    return infos


def _read_jsonl(path: Path | None) -> list[dict[str, Any]]:
    """The records of a JSON-lines file, skipping a torn last line."""
    if path is None or not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def _read_events(path: Path | None) -> dict[str, dict[str, Any]]:
    """Latest start/end event per trial id from trials.jsonl (tolerates a torn last line)."""
    latest: dict[str, dict[str, Any]] = {}
    for event in _read_jsonl(path):
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
