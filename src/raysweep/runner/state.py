"""state.json: the run's status, timestamps and every command line that touched it."""

from __future__ import annotations

import os
import socket
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from raysweep.jsonio import read_json, write_json_atomic

STATE_FILE = "state.json"
Status = Literal["running", "completed", "failed", "interrupted"]


def utc_now() -> str:
    """Current time as an ISO-8601 UTC string with a Z suffix."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_state(run_dir: Path) -> dict[str, Any]:
    """state.json as a dict ({} when absent)."""
    path = run_dir / STATE_FILE
    return read_json(path) if path.is_file() else {}


def mark(run_dir: Path, status: Status, **fields: Any) -> dict[str, Any]:
    """Set the run's status (and extra fields), recording this process as the driver."""
    state = read_state(run_dir)
    now = utc_now()
    state.setdefault("created_at", now)
    state.setdefault("commands", [])
    state.update(status=status, updated_at=now, pid=os.getpid(), host=socket.gethostname())
    if status == "running":
        state["commands"].append({"argv": sys.argv, "at": now, "pid": os.getpid()})
        for stale in ("finished_at", "exit_code", "signal", "error"):
            state.pop(stale, None)
    else:
        state["finished_at"] = now
    state.update(fields)
    write_json_atomic(run_dir / STATE_FILE, state)
    return state


def update(run_dir: Path, **fields: Any) -> dict[str, Any]:
    """Set fields of state.json without touching the status."""
    state = read_state(run_dir)
    state.update(fields, updated_at=utc_now())
    write_json_atomic(run_dir / STATE_FILE, state)
    return state


def experiments(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The run's Ray Tune experiment parts, oldest first (see runner/experiments.py)."""
    return list(state.get("experiments", []))


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def effective_status(state: dict[str, Any]) -> str:
    """``crashed`` for a run marked running whose driver process is gone, else its status."""
    status = str(state.get("status", "unknown"))
    local = state.get("host") == socket.gethostname()
    if status == "running" and local and not pid_alive(int(state.get("pid", -1))):
        return "crashed"
    return status
