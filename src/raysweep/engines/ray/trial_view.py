"""Ray Tune's ``Trial`` -> ``TrialView``: the one place the Ray engine's trials are read
for collect and the progress display."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from raysweep.results.trial_view import TrialState, TrialView, read_error_text

# Ray's trial statuses; a paused trial (Hyperband) waits like a pending one
_STATES: dict[str, TrialState] = {
    "PENDING": "pending",
    "PAUSED": "pending",
    "RUNNING": "running",
    "TERMINATED": "ended",
    "ERROR": "errored",
}


def trial_view(trial: Any) -> TrialView:
    """``trial`` (Ray Tune's) as raysweep reads it; a failed trial's error text read now."""
    state = _STATES.get(str(trial.status), "pending")
    return TrialView(
        trial_id=str(trial.trial_id),
        config=dict(trial.config or {}),
        state=state,
        last_result=dict(trial.last_result or {}),
        metric_analysis=dict(trial.metric_analysis or {}),
        error=error_text(trial) if state == "errored" else None,
    )


def error_text(trial: Any) -> str:
    """A failed Ray trial's error text: Ray's ``error_file``, else the copy in its trial
    folder (which outlives Ray's session directory)."""
    copy = str(Path(trial.path) / "error.txt") if trial.path else None
    return read_error_text(trial.error_file, copy)
