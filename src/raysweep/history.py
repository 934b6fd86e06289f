"""Night-by-night history of nightly.sh: ``<log dir>/history.jsonl`` and ``sweep history``.

nightly.sh appends one JSON line per night (``sweep nightly record``, see
raysweep/nightly.py), every night, failed ones included: when the ``sweep`` command
itself cannot run, nightly.sh writes the line on its own (``run`` null, ``status``
``failed``, exit code 4 and the reason naming ``SWEEP_BIN``). A line::

    {"date": "2026-11-24T02:00:01Z", "run": "nightly_20261124_020001",
     "status": "succeeded" | "regression" | "failed" | "interrupted",
     "exit_code": 0, "reason": null, "trials": 40, "completed": 39,
     "metric": "val_loss", "mode": "min", "best": 0.108, "best_trial": "a1b2c3d4",
     "best_config": {...}, "previous_run": "nightly_20261123_020002",
     "previous_best": 0.104, "change_pct": 3.8, "worse_pct": 3.8,
     "regression_pct": 5.0, "wall_s": 1834.2, "resumed": false, "warm_start": 10}

A sweep ranked by its trials' last values (``"rank_by": "last"``, the trading
trainable's default) adds ``"rank_by": "last"``: its ``best`` is then the best
trial's last value, and it is compared only with nights ranked the same way.

``change_pct`` is the relative change of the best value against the previous
successful night's (signed, in the value's own terms); ``worse_pct`` is the
same change in the metric's direction (positive = worse), which decides a
regression. ``sweep history`` reads these lines and the run directories (a
night that has not ended yet, or was killed, shows from its run directory) and
never imports Ray.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from raysweep.rundir import RunDir, list_runs, read_jsonl

HISTORY_FILE = "history.jsonl"
NIGHTLY_PREFIX = "nightly_"
SUCCESS = ("succeeded", "regression")  # a night that ended well (a regression still did)
DEFAULT_LOG_DIR = Path("sweep_logs")


def history_path(log_dir: Path) -> Path:
    """``<log dir>/history.jsonl``."""
    return Path(log_dir) / HISTORY_FILE


def read_history(log_dir: Path) -> list[dict[str, Any]]:
    """The nights recorded in ``log_dir``, oldest first (a torn line is skipped)."""
    return read_jsonl(history_path(log_dir))


def append_night(log_dir: Path, record: Mapping[str, Any]) -> None:
    """Append one night to history.jsonl as a single write (lines never interleave)."""
    path = history_path(log_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(dict(record), default=str) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def nightly_runs(log_dir: Path) -> list[RunDir]:
    """The ``nightly_*`` run directories in ``log_dir``, oldest first (names sort by time)."""
    return [r for r in list_runs(Path(log_dir)) if r.name.startswith(NIGHTLY_PREFIX)]


def previous_success(
    nights: Sequence[Mapping[str, Any]], exclude_run: str | None = None
) -> dict[str, Any] | None:
    """The newest night that succeeded with a best value (not ``exclude_run``'s)."""
    for night in reversed(nights):
        ok = night.get("status") in SUCCESS and _number(night.get("best")) is not None
        if ok and (exclude_run is None or night.get("run") != exclude_run):
            return dict(night)
    return None


def rank_rule(record: Mapping[str, Any]) -> str:
    """The ranking rule of a history line or best_config.json (absent: ``best``)."""
    return str(record.get("rank_by") or "best")


def change_pct(value: float, previous: float) -> float:
    """Signed relative change of ``value`` against ``previous``, in percent.

    ``previous`` 0: 0 when equal, else an infinite change in the value's direction.
    """
    if previous == 0:
        return 0.0 if value == 0 else math.copysign(math.inf, value)
    return (value - previous) / abs(previous) * 100.0


def worse_pct(value: float, previous: float, mode: str) -> float:
    """How much worse ``value`` is than ``previous`` in percent (negative: better)."""
    change = change_pct(value, previous)
    return change if mode == "min" else -change


def changed_params(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[str]:
    """``name: old→new`` for each parameter that differs between two best configs."""
    if not before or not after:
        return []
    missing = object()
    out = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name, missing), after.get(name, missing)
        if old != new:
            out.append(f"{name}: {_short(old, missing)}→{_short(new, missing)}")
    return out


def history_rows(log_dir: Path) -> list[dict[str, Any]]:
    """Every night, oldest first: history.jsonl's lines, then unfinished runs not in it yet.

    Each row gets ``changed``: the parameters in which its best config differs
    from the previous successful night's.
    """
    log_dir = Path(log_dir)
    rows = [dict(n) for n in read_history(log_dir)]
    recorded = {row.get("run") for row in rows}
    for run_dir in nightly_runs(log_dir):
        if run_dir.name in recorded:
            continue
        state = run_dir.read_state()
        status = run_dir.effective_status(state)
        if status in ("completed", "failed"):
            status = f"{status} (not recorded)"
        rows.append(
            {"date": state.get("created_at"), "run": run_dir.name, "status": status, "trials": None}
        )
    previous: dict[str, Any] | None = None
    for row in rows:
        row["changed"] = changed_params((previous or {}).get("best_config"), row.get("best_config"))
        if row.get("status") in SUCCESS and row.get("best") is not None:
            previous = row
    return rows


def history_text(log_dir: Path) -> str:
    """The night-by-night table of ``sweep history``."""
    rows = history_rows(log_dir)
    if not rows:
        return f"no nights recorded in {history_path(log_dir)}"
    metric = next((f" ({r['metric']}, {r['mode']}{_rule(r)})" for r in rows if r.get("metric")), "")
    header = f"{'date':<17} {'run':<24} {'status':<12} {'trials':>7} {'best':>12} {'change':>9}"
    lines = [f"nights in {log_dir}{metric}", header + "  best config changes"]
    for row in rows:
        trials, done = row.get("trials"), row.get("completed")
        shown_trials = "" if trials is None else (trials if done is None else f"{done}/{trials}")
        lines.append(
            f"{_date(row.get('date')):<17} {row.get('run') or '-'!s:<24} "
            f"{row.get('status')!s:<12} {shown_trials!s:>7} {_value(row.get('best')):>12} "
            f"{_pct(row.get('change_pct')):>9}  {_changes(row)}"
        )
    return "\n".join(lines)


def _rule(row: Mapping[str, Any]) -> str:
    return ", ranked by the last value" if rank_rule(row) == "last" else ""


def _changes(row: Mapping[str, Any]) -> str:
    if row.get("status") not in SUCCESS:
        return str(row.get("reason") or "")
    return ", ".join(row.get("changed") or []) or "-"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    return float(value)


def _short(value: Any, missing: object) -> str:
    if value is missing:
        return "(unset)"
    if isinstance(value, float):
        return f"{value:.4g}"
    return json.dumps(value, default=str)


def _date(value: Any) -> str:
    text = str(value or "-")
    return text.replace("T", " ")[:16]


def _value(value: Any) -> str:
    number = _number(value)
    return "-" if number is None else f"{number:.6g}"


def _pct(value: Any) -> str:
    number = _number(value)
    if number is None:
        return "-"
    if math.isinf(number):
        return "+inf%" if number > 0 else "-inf%"
    return f"{number:+.1f}%"
