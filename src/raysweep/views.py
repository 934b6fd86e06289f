"""Read-only views of run directories for the CLI: report, best, status, list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from raysweep.errors import SweepError
from raysweep.jsonio import read_json, write_json_atomic
from raysweep.report.export import BEST_CONFIG, RESULTS_JSON, best_config_json
from raysweep.report.records import SweepResult, TrialRecord


def load_result(run_dir: Path) -> SweepResult:
    """results.json of a run as a SweepResult."""
    path = run_dir / RESULTS_JSON
    if not path.is_file():
        raise SweepError(f"{run_dir}: no {RESULTS_JSON} yet (is the run finished?)")
    data = read_json(path)
    trials = [TrialRecord(**t) for t in data["trials"]]
    return SweepResult(name=data["name"], metric=data["metric"], mode=data["mode"], trials=trials)


def report_text(run_dir: Path) -> str:
    """report.txt of a run."""
    path = run_dir / "report.txt"
    if not path.is_file():
        raise SweepError(f"{run_dir}: no report.txt yet (is the run finished?)")
    return path.read_text(encoding="utf-8")


def best_text(run_dir: Path, top: int = 1, export: str | None = None) -> str:
    """The best trial (or the top K) as JSON; optionally exported to a file."""
    result = load_result(run_dir)
    ranked = result.ranked()
    if not ranked:
        raise SweepError(f"{run_dir}: no trial reported {result.metric!r}")
    if export:
        write_json_atomic(export, best_config_json(result, ranked[0]))
    if top <= 1:
        return json.dumps(best_config_json(result, ranked[0]), indent=2)
    return json.dumps([best_config_json(result, t) for t in ranked[:top]], indent=2)


_RAY_STATUS = {
    "TERMINATED": "finished",
    "ERROR": "errored",
    "RUNNING": "unfinished",
    "PAUSED": "unfinished",
    "PENDING": "pending",
}


def status_text(run_dir: Path) -> str:
    """Status, driver and trial counts of a live or dead run.

    A ``running`` run whose driver pid is gone shows as ``crashed``. Counts come
    from results.json for a finished run, from trials.jsonl while a driver is
    live, and otherwise from Ray's last experiment snapshots (what a resume
    will find: ``unfinished`` trials continue from their last checkpoint).
    """
    from raysweep.runner.experiments import Part, status_counts
    from raysweep.runner.state import effective_status, experiments, read_state

    state = read_state(run_dir)
    if not state:
        raise SweepError(f"{run_dir} is not a raysweep run directory (no state.json)")
    status = effective_status(state)
    lines = [f"{run_dir.name}: {status}"]
    if status == "crashed":
        lines[0] += f" (driver pid {state.get('pid')} is gone; resume with: sweep resume {run_dir})"
    elif status == "interrupted":
        lines[0] += f" by {state.get('signal', 'a signal')} (resume with: sweep resume {run_dir})"
    elif status == "running":
        lines[0] += f" (driver pid {state.get('pid')} on {state.get('host')})"
    total = _total_trials(run_dir)
    if status == "running":
        counts, source = _event_counts(run_dir), "trials.jsonl"
    elif status in ("completed", "failed") and (run_dir / RESULTS_JSON).is_file():
        counts, source = load_result(run_dir).counts(), RESULTS_JSON
    else:
        parts = [Part.from_json(p) for p in experiments(state)]
        ray_counts = status_counts(run_dir, parts)
        counts, source = {}, "Ray's last snapshot"
        for ray_status, n in ray_counts.items():
            name = _RAY_STATUS.get(ray_status, ray_status.lower())
            counts[name] = counts.get(name, 0) + n
    shown = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "none"
    lines.append(f"trials: {shown}" + (f" (of {total})" if total else "") + f" [{source}]")
    lines.append(f"updated: {state.get('updated_at')}")
    best = run_dir / BEST_CONFIG
    if best.is_file():
        data: dict[str, Any] = read_json(best)
        lines.append(f"best: {data['metric']}={data['value']} (trial {data['trial_id']})")
    return "\n".join(lines)


def _total_trials(run_dir: Path) -> int | None:
    from raysweep.config.schema import SweepSpec

    try:
        return SweepSpec.model_validate(read_json(run_dir / "spec.json")["spec"]).total_trials
    except (OSError, ValueError, KeyError):
        return None


def list_text(storage: Path) -> str:
    """One line per run directory under ``storage``."""
    from raysweep.runner.state import effective_status, read_state

    if not storage.is_dir():
        return f"no runs under {storage}"
    rows = []
    for run_dir in sorted(p for p in storage.iterdir() if (p / "state.json").is_file()):
        state = read_state(run_dir)
        best = ""
        if (run_dir / BEST_CONFIG).is_file():
            data = read_json(run_dir / BEST_CONFIG)
            best = f"{data['metric']}={data['value']}"
        status = effective_status(state)
        rows.append(f"{run_dir.name:<32} {status:<12} {state.get('updated_at', '')}  {best}")
    return "\n".join(rows) if rows else f"no runs under {storage}"


def _event_counts(run_dir: Path) -> dict[str, int]:
    from raysweep.runner.progress import EVENTS_FILE

    path = run_dir / EVENTS_FILE
    counts: dict[str, int] = {}
    if not path.is_file():
        return counts
    ended: dict[str, str] = {}
    started: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "start":
            started.add(event["trial_id"])
        else:
            ended[event["trial_id"]] = event["event"]
    for _trial_id in started - set(ended):
        counts["running"] = counts.get("running", 0) + 1
    for kind in ended.values():
        counts[kind] = counts.get(kind, 0) + 1
    return counts
