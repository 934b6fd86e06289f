"""A run's status as data: counts, best so far, elapsed and ETA, from the run directory alone.

Live runs are read from trials.jsonl (one line per trial start and end) and
trial_info.jsonl (whether a trial returned by itself or was stopped early);
finished runs from results.json; a crashed or interrupted run from what a resume
will find, through the engines' trial sources (``engines.registry.TRIAL_SOURCES``:
Ray's last experiment snapshot, the local journal). No Ray import: instant on any run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from raysweep.engines.registry import trial_sources
from raysweep.errors import SweepError
from raysweep.results.ranking import rank_trials, rank_value
from raysweep.results.records import NODE_LOST_EVENT, ended_status
from raysweep.rundir import RunDir

ERRORS_SHOWN = 5
COUNT_ORDER = ("running", "pending", "completed", "stopped", "finished", "unfinished", "errored")


def run_status(run_dir: RunDir, now: datetime | None = None) -> dict[str, Any]:
    """Everything ``sweep status`` shows, as a JSON-ready dict."""
    state = run_dir.read_state()
    if not state:
        raise SweepError(f"{run_dir} is not a raysweep run directory (no state.json)")
    status = run_dir.effective_status(state)
    spec = _spec(run_dir)
    total = spec.total_trials if spec is not None else None
    errors: list[dict[str, Any]] = []
    if status == "running":
        counts, best, source = _live(run_dir, spec, total)
        errors = [
            {"trial_id": e["trial_id"], "index": e.get("index"), "error": _last_line(e["error"])}
            for e in run_dir.read_events()
            if e.get("event") == "errored" and e.get("error")
        ]
    elif status in ("completed", "failed") and run_dir.has_results():
        result = run_dir.read_results()
        counts, best, source = result.counts(), run_dir.read_best(), "results.json"
        errors = [
            {"trial_id": t.trial_id, "index": t.index, "error": _last_line(t.error)}
            for t in result.trials
            if t.status == "errored"
        ]
    else:
        counts, source = _resume_counts(run_dir, state)
        best = run_dir.read_best()
    info: dict[str, Any] = {
        "run": str(run_dir.path),
        "name": run_dir.name,
        "status": status,
        "error": state.get("error"),
        "pid": state.get("pid"),
        "host": state.get("host"),
        "signal": state.get("signal"),
        "trials": total,
        "counts": {k: counts[k] for k in _ordered(counts)},
        "source": source,
        "best": best,
        "errors": errors,
        "node_losses": [
            {k: e.get(k) for k in ("trial_id", "index", "node_id", "iterations")}
            for e in run_dir.read_events()
            if e.get("event") == NODE_LOST_EVENT
        ],
        "started_at": _started_at(state),
        "updated_at": state.get("updated_at"),
        "dashboard_url": state.get("dashboard_url"),
        "elapsed_s": None,
        "eta_s": None,
    }
    info["advice"] = _advice(info, state)
    if status == "running":
        elapsed = _elapsed(info["started_at"], now or datetime.now(UTC))
        info["elapsed_s"] = elapsed
        info["eta_s"] = _eta(elapsed, counts, total, spec)
    return info


def _last_line(text: str | None) -> str:
    """The line of an error text that names the exception and its message."""
    lines = (text or "").strip().splitlines()
    return lines[-1] if lines else "unknown error"


def _spec(run_dir: RunDir) -> Any:
    try:
        return run_dir.read_spec()
    except SweepError:
        return None


def _ordered(counts: dict[str, int]) -> list[str]:
    known = [k for k in COUNT_ORDER if k in counts]
    return known + sorted(k for k in counts if k not in COUNT_ORDER)


def _live(run_dir: RunDir, spec: Any, total: int | None) -> tuple[dict[str, int], Any, str]:
    """Counts and best so far of a live run from its event logs."""
    returned = {r["trial_id"] for r in run_dir.read_trial_info() if r.get("event") == "returned"}
    started: set[str] = set()
    ended: dict[str, dict[str, Any]] = {}
    for event in run_dir.read_events():
        trial_id = str(event.get("trial_id"))
        if event.get("event") == "start":
            started.add(trial_id)
        elif event.get("event") in ("ended", "errored"):
            ended[trial_id] = event
    counts: dict[str, int] = {"running": len(started - set(ended))}
    budget = spec.iteration_budget if spec is not None else None
    for trial_id, event in ended.items():
        kind = _ended_kind(trial_id, event, returned, budget)
        counts[kind] = counts.get(kind, 0) + 1
    if total is not None:
        counts["pending"] = max(0, total - len(started | set(ended)))
    best = _best_of_events(list(ended.values()), spec, returned)
    return counts, best, "trials.jsonl"


def _ended_kind(
    trial_id: str, event: dict[str, Any], returned: set[str], budget: int | None
) -> str:
    """``errored``, ``completed`` or ``stopped``: as the progress line said (its ``status``),
    else by the rule results.json follows (an event written before ``status`` was)."""
    if event["event"] == "errored":
        return "errored"
    if event.get("status") in ("completed", "stopped"):
        return str(event["status"])
    return ended_status(trial_id in returned, int(event.get("iterations") or 0), budget)


@dataclass(frozen=True)
class _EndedTrial:
    """A trial's ``ended`` event in trials.jsonl, as the ranking rule reads a trial."""

    event: dict[str, Any]
    index: int
    last: dict[str, Any]
    best_metric: float | None
    iterations: int
    status: str


def _best_of_events(
    events: list[dict[str, Any]], spec: Any, returned: set[str]
) -> dict[str, Any] | None:
    """The best ended trial so far, by the sweep's ranking rule (results/ranking.py);
    ``returned``: the trials that ran to their end (the others were stopped early)."""
    if spec is None:
        return None
    metric, mode = spec.metric, spec.mode
    ended = [
        _EndedTrial(
            event=event,
            index=position,  # ties: the trial that ended first
            last={metric: event.get(metric)},
            best_metric=event.get("best", event.get(metric)),
            iterations=int(event.get("iterations") or 0),
            status=_ended_kind(str(event.get("trial_id")), event, returned, spec.iteration_budget),
        )
        for position, event in enumerate(events)
        if event["event"] == "ended"
    ]
    ranked = rank_trials(ended, metric, mode, spec.ranking)
    if not ranked:
        return None
    event = ranked[0].event
    return {
        "metric": metric,
        "mode": mode,
        "value": rank_value(ranked[0], metric, spec.ranking),
        "trial_id": event["trial_id"],
        "config": event.get("config"),
    }


def _resume_counts(run_dir: RunDir, state: dict[str, Any]) -> tuple[dict[str, int], str]:
    """Trials as a resume will find them, from the first trial source that holds the run."""
    for source in trial_sources():
        if source.holds(run_dir):
            return source.counts(run_dir, state), source.label
    return {}, "none"


def _started_at(state: dict[str, Any]) -> str | None:
    commands = state.get("commands") or []
    return str(commands[-1]["at"]) if commands else state.get("created_at")


def _elapsed(started_at: str | None, now: datetime) -> float | None:
    if not started_at:
        return None
    start = datetime.strptime(started_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return max(0.0, (now - start).total_seconds())


def _eta(elapsed: float | None, counts: dict[str, int], total: int | None, spec: Any) -> Any:
    """Seconds left: from the pace of finished trials, capped by the time budget."""
    if elapsed is None:
        return None
    budget = getattr(getattr(spec, "stop", None), "time_budget_s", None)  # seconds
    left_by_budget = max(0.0, budget - elapsed) if budget else None
    done = sum(counts.get(k, 0) for k in ("completed", "stopped", "errored"))
    if total is None or done == 0:
        return left_by_budget
    left = elapsed / done * max(0, total - done)
    return min(left, left_by_budget) if left_by_budget is not None else left


def format_status(info: dict[str, Any]) -> str:
    """The status for people: a few lines."""
    run, status = info["run"], info["status"]
    head = f"{info['name']}: {status}"
    if status == "crashed":
        head += f" (driver pid {info['pid']} is gone; resume with: sweep resume {run})"
    elif status == "interrupted":
        head += f" by {info['signal'] or 'a signal'} (resume with: sweep resume {run})"
    elif status == "running":
        head += f" (driver pid {info['pid']} on {info['host']})"
    counts = info["counts"]
    shown = ", ".join(f"{n} {k}" for k, n in counts.items()) or "none"
    total = f" (of {info['trials']})" if info["trials"] else ""
    lines = [head]
    if info.get("error") and status == "failed":
        lines.append(f"error: {info['error']}")
    lines.append(f"trials: {shown}{total} [{info['source']}]")
    if info["elapsed_s"] is not None:
        eta = info["eta_s"]
        lines.append(
            f"elapsed: {_duration(info['elapsed_s'])}"
            + (f", ETA {_duration(eta)}" if eta is not None else ", ETA unknown")
        )
    best = info["best"]
    if best is not None:
        lines.append(f"best: {best['metric']}={_short(best['value'])} (trial {best['trial_id']})")
        if best.get("config"):
            lines.append(f"best config: {json.dumps(_short(best['config']), default=str)}")
    for error in info["errors"][:ERRORS_SHOWN]:
        lines.append(f"errored: trial {error['trial_id']} (#{error['index']}): {error['error']}")
    if len(info["errors"]) > ERRORS_SHOWN:
        lines.append(f"  ... and {len(info['errors']) - ERRORS_SHOWN} more (sweep status --json)")
    for loss in info.get("node_losses", []):
        lines.append(
            f"node lost: node {str(loss['node_id'])[:12]} died under trial {loss['trial_id']} "
            f"(#{loss['index']}) after iteration {loss['iterations']}; retried from its checkpoint"
        )
    if info.get("advice"):
        lines.append(f"what to do: {info['advice']}")
    if info["dashboard_url"] and status == "running":
        lines.append(f"dashboard: {info['dashboard_url']}")
    lines.append(f"updated: {info['updated_at']}")
    return "\n".join(lines)


def _advice(info: dict[str, Any], state: dict[str, Any]) -> str | None:
    """What to do about a failed run: what failed is on the lines above."""
    if info["status"] != "failed":
        return None
    if info["error"]:
        config = _config_flag(state)
        again = f"sweep run --config {config} --name {info['name']}-2" if config else "sweep run"
        return (
            "fix what the error names (the config, or the trainable's code), then start a new "
            f"run: {again} (a resume would keep this run's spec.json)"
        )
    if info["errors"]:
        return (
            "no trial succeeded; fix what the errors name (results.json and report.txt hold "
            f"each trial's traceback), then rerun them: sweep resume {info['run']} "
            "--retry-errored (or start a new run)"
        )
    return f"see the run's log: {info['run']}/sweep_output.log"


def _config_flag(state: dict[str, Any]) -> str | None:
    """The ``--config`` of the command that started the run, when it was ``sweep run``."""
    for command in state.get("commands") or []:
        argv = [str(a) for a in command.get("argv") or []]
        if "--config" in argv[:-1]:
            return argv[argv.index("--config") + 1]
    return None


def _short(value: Any) -> Any:
    """Floats to 6 significant digits, as the progress lines show them (lists and dicts too)."""
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {k: _short(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_short(v) for v in value]
    return value


def _duration(seconds: float) -> str:
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"
