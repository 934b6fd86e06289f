"""What nightly.sh asks of raysweep: the run to resume, the night's record, rotation.

nightly.sh (bash) owns the lock, the checks, the ``sweep run``/``resume`` call,
the export and the delivery of notifications; it calls these through
``sweep nightly pending|record|rotate`` and ``sweep gpus --require``:

- :func:`pending_run`: the newest ``nightly_*`` run if it is unfinished
  (``crashed``, ``interrupted``, or still marked ``running``): the night resumes it.
- :func:`record_night`: the night's line in history.jsonl (history.py), its
  verdict (``succeeded``, ``regression``, ``failed``) and the notification JSON.
- :func:`rotate`: deletes ``nightly_*`` run directories and logs older than the
  retention, never the newest successful run and never an unfinished one.

Nothing here imports Ray.
"""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from raysweep.errors import INTERRUPTED, ConfigError, GPUError
from raysweep.history import (
    NIGHTLY_PREFIX,
    append_night,
    change_pct,
    nightly_runs,
    previous_success,
    rank_rule,
    read_history,
    worse_pct,
)
from raysweep.rundir import RunDir

UNFINISHED = ("running", "crashed", "interrupted")
LOG_TAIL_LINES = 50


def pending_run(log_dir: Path) -> RunDir | None:
    """The newest nightly run, when it is unfinished; None otherwise."""
    runs = nightly_runs(log_dir)
    if not runs:
        return None
    newest = runs[-1]
    return newest if newest.effective_status() in UNFINISHED else None


@dataclass(frozen=True)
class NightInput:
    """What nightly.sh knows at the end of a night."""

    log_dir: Path
    exit_code: int  # nightly.sh's own exit code for the night
    run_dir: RunDir | None = None  # None when the night failed before a run existed
    reason: str | None = None
    started: float | None = None  # epoch seconds when nightly.sh started
    regression_pct: float = 5.0
    log: Path | None = None  # the night's log, for the notification's tail
    resumed: bool = False


def record_night(night: NightInput) -> tuple[dict[str, Any], dict[str, Any]]:
    """Append the night to history.jsonl; returns (its line, the notification JSON).

    The event is ``succeeded`` or ``regression`` for exit code 0, else ``failed``.
    A regression: the best value is worse than the previous successful night's by
    more than ``regression_pct`` percent, in the metric's direction; both values
    are best_config.json's, ranked by the sweep's ``rank_by`` (results/ranking.py),
    and nights ranked by different rules are not compared.
    """
    nights = read_history(night.log_dir)
    now = time.time()
    started = night.started if night.started is not None else now
    line: dict[str, Any] = {
        "date": _iso(started),
        "run": night.run_dir.name if night.run_dir else None,
        "status": "succeeded" if night.exit_code == 0 else "failed",
        "exit_code": night.exit_code,
        "reason": night.reason or None,
        "trials": None,
        "completed": None,
        "wall_s": round(now - started, 3),
        "resumed": night.resumed,
        "regression_pct": night.regression_pct,
    }
    if night.exit_code == INTERRUPTED:
        line["status"] = "interrupted"
    best = _run_facts(night.run_dir, line) if night.run_dir is not None else None
    previous = previous_success(nights, exclude_run=line["run"])
    comparable = (
        best is not None
        and previous is not None
        and previous.get("metric") == best["metric"]
        and rank_rule(previous) == rank_rule(best)  # a last value against a best is no trend
    )
    if comparable and best is not None and previous is not None:
        value, before = float(best["value"]), float(previous["best"])
        change, worse = change_pct(value, before), worse_pct(value, before, best["mode"])
        line.update(
            previous_run=previous.get("run"),
            previous_best=before,
            change_pct=_finite(change),
            worse_pct=_finite(worse),
        )
        if night.exit_code == 0 and worse > night.regression_pct:
            line["status"] = "regression"
            if not line["reason"]:
                line["reason"] = (
                    f"best {best['metric']} {value:.6g} is {_pct_text(worse)} worse than "
                    f"{before:.6g} ({previous.get('run')}); threshold {night.regression_pct:g}%"
                )
    append_night(night.log_dir, line)
    event = line["status"] if line["status"] in ("succeeded", "regression") else "failed"
    payload = {
        "event": event,
        "status": line["status"],
        "run_dir": str(night.run_dir.path.resolve()) if night.run_dir else None,
        "exit_code": night.exit_code,
        "reason": line["reason"],
        "best": best,
        "previous_best": _previous_best(previous),
        "change_pct": line.get("change_pct"),
        "log": str(night.log) if night.log else None,
        "log_tail": log_tail(night.log),
    }
    return line, payload


def _run_facts(run_dir: RunDir, line: dict[str, Any]) -> dict[str, Any] | None:
    """Fill the line with the run's trials, metric and best; returns the best (or None)."""
    state = run_dir.read_state()
    record = run_dir.read_warm_start(state)
    line["warm_start"] = len(record.get("points", [])) if record else 0
    if run_dir.has_results():
        result = run_dir.read_results()
        line["trials"] = len(result.trials)
        line["completed"] = result.succeeded
        line["metric"], line["mode"] = result.metric, result.mode
    best = run_dir.read_best()
    if best is None or best.get("value") is None:
        return None
    line.update(
        metric=best["metric"],
        mode=best["mode"],
        best=best["value"],
        best_trial=best.get("trial_id"),
        best_config=best.get("config"),
    )
    if best.get("rank_by"):  # best_config.json's value is the trial's last, not its best
        line["rank_by"] = best["rank_by"]
    return {"run": run_dir.name, **best}


def _previous_best(previous: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if previous is None:
        return None
    return {
        "run": previous.get("run"),
        "date": previous.get("date"),
        "trial_id": previous.get("best_trial"),
        "metric": previous.get("metric"),
        "mode": previous.get("mode"),
        "value": previous.get("best"),
        "config": previous.get("best_config"),
    }


def log_tail(path: Path | None, lines: int = LOG_TAIL_LINES) -> str:
    """The last ``lines`` lines of a log file ("" when there is none)."""
    if path is None or not path.is_file():
        return ""
    with path.open("rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(max(0, size - 256 * 1024))
        text = fh.read().decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def rotate(log_dir: Path, keep_days: float, now: float | None = None) -> list[Path]:
    """Delete nightly run directories and logs older than ``keep_days``; returns what went.

    Kept whatever their age: the newest run that completed, and every run that
    is unfinished (running, crashed, interrupted: the next night may resume it).
    Age is the directory's (or log's) modification time. Only ``nightly_*``
    entries directly in ``log_dir`` are considered.
    """
    if keep_days < 0 or math.isnan(keep_days):
        raise ConfigError(f"--keep-days: must be >= 0 (got {keep_days})")
    log_dir = Path(log_dir)
    cutoff = (time.time() if now is None else now) - keep_days * 86400
    runs = nightly_runs(log_dir)
    completed = [r for r in runs if r.effective_status() == "completed"]
    keep = {completed[-1].path} if completed else set()
    keep |= {r.path for r in runs if r.effective_status() in UNFINISHED}
    keep |= {path.with_suffix(".log") for path in keep}  # a kept run's log, when named alike
    removed: list[Path] = []
    if not log_dir.is_dir():
        return removed
    ages = {run_dir.path: run_dir.modified_at() for run_dir in runs}
    for entry in sorted(log_dir.glob(f"{NIGHTLY_PREFIX}*")):
        if entry in keep or entry.is_symlink():
            continue
        if ages.get(entry, entry.stat().st_mtime) >= cutoff:
            continue
        if entry.is_dir():
            shutil.rmtree(entry)
        elif entry.is_file() and entry.suffix == ".log":
            entry.unlink()
        else:
            continue
        removed.append(entry)
    return removed


def require_gpus(flag: str) -> Any:
    """The NVML inventory, after checking that ``flag``'s GPUs exist (GPUError otherwise).

    ``flag`` is what ``--gpus`` takes: ``none`` (nothing to check), ``all`` (at
    least one GPU) or ids like ``0,1``.
    """
    from raysweep.gpu.allocation import parse_gpus_flag, resolve_gpus
    from raysweep.gpu.inventory import read_inventory

    selection = parse_gpus_flag(flag)
    if selection.mode in ("none", "unset"):
        return read_inventory()
    inventory = read_inventory()
    if selection.mode == "all":
        if not inventory.gpus:
            raise GPUError(f"--gpus all: {inventory.error or 'no NVIDIA GPU found'}")
        return inventory
    resolve_gpus(selection, inventory, 0.0, allow_cpu=False)  # GPUError naming missing ids
    return inventory


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _finite(value: float) -> float | None:
    return round(value, 4) if math.isfinite(value) else None


def _pct_text(value: float) -> str:
    return "infinitely" if math.isinf(value) else f"{value:.1f}%"


__all__ = [
    "NightInput",
    "log_tail",
    "pending_run",
    "record_night",
    "require_gpus",
    "rotate",
]
