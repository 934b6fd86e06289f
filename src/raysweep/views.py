"""Read-only views of run directories for the CLI: report, best, status, list.

Everything here reads through RunDir and never imports Ray, so these commands
answer at once on runs of any size, live or finished.
"""

from __future__ import annotations

import json
from pathlib import Path

from raysweep.errors import SweepError
from raysweep.jsonio import write_json_atomic
from raysweep.report.export import best_config_json
from raysweep.rundir import RunDir, list_runs


def report_text(run: RunDir) -> str:
    """report.txt of a run."""
    return run.read_report()


def best_text(run: RunDir, top: int = 1, export: str | None = None) -> str:
    """The best trial (or the top K) as JSON; optionally exported to a file."""
    result = run.read_results()
    ranked = result.ranked()
    if not ranked:
        raise SweepError(f"{run}: no trial reported {result.metric!r}")
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


def status_text(run: RunDir) -> str:
    """Status, driver and trial counts of a live or dead run.

    A ``running`` run whose driver pid is gone shows as ``crashed``. Counts come
    from results.json for a finished run, from trials.jsonl while a driver is
    live, and otherwise from Ray's last experiment snapshots (what a resume
    will find: ``unfinished`` trials continue from their last checkpoint).
    """
    state = run.read_state()
    if not state:
        raise SweepError(f"{run} is not a raysweep run directory (no state.json)")
    status = run.effective_status(state)
    lines = [f"{run.name}: {status}"]
    if status == "crashed":
        lines[0] += f" (driver pid {state.get('pid')} is gone; resume with: sweep resume {run})"
    elif status == "interrupted":
        lines[0] += f" by {state.get('signal', 'a signal')} (resume with: sweep resume {run})"
    elif status == "running":
        lines[0] += f" (driver pid {state.get('pid')} on {state.get('host')})"
    total = _total_trials(run)
    if status == "running":
        counts, source = _event_counts(run), "trials.jsonl"
    elif status in ("completed", "failed") and run.has_results():
        counts, source = run.read_results().counts(), "results.json"
    else:
        counts, source = {}, "Ray's last snapshot"
        for part in run.parts(state):
            if not run.experiment_path(part).is_dir():
                continue
            for trial in run.trial_states(part):
                name = _RAY_STATUS.get(trial["status"], str(trial["status"]).lower())
                counts[name] = counts.get(name, 0) + 1
    shown = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "none"
    lines.append(f"trials: {shown}" + (f" (of {total})" if total else "") + f" [{source}]")
    lines.append(f"updated: {state.get('updated_at')}")
    best = run.read_best()
    if best is not None:
        lines.append(f"best: {best['metric']}={best['value']} (trial {best['trial_id']})")
    return "\n".join(lines)


def _total_trials(run: RunDir) -> int | None:
    try:
        return run.read_spec().total_trials
    except SweepError:
        return None


def list_text(storage: Path) -> str:
    """One line per run directory under ``storage``."""
    rows = []
    for run in list_runs(storage):
        state = run.read_state()
        best = run.read_best()
        shown = f"{best['metric']}={best['value']}" if best else ""
        status = run.effective_status(state)
        rows.append(f"{run.name:<32} {status:<12} {state.get('updated_at', '')}  {shown}")
    return "\n".join(rows) if rows else f"no runs under {storage}"


def _event_counts(run: RunDir) -> dict[str, int]:
    counts: dict[str, int] = {}
    ended: dict[str, str] = {}
    started: set[str] = set()
    for event in run.read_events():
        if event.get("event") == "start":
            started.add(event["trial_id"])
        else:
            ended[event["trial_id"]] = str(event.get("event"))
    for _trial_id in started - set(ended):
        counts["running"] = counts.get("running", 0) + 1
    for kind in ended.values():
        counts[kind] = counts.get(kind, 0) + 1
    return counts
