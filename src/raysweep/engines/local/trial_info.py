"""trial_info.jsonl of local trials, in the one format of Ray trials' (trainables.trial_info)."""

from __future__ import annotations

import os
from pathlib import Path

from raysweep.trainables.context import TrialContext
from raysweep.trainables.trial_info import trial_info_line


class TrialInfoLog:
    """Appends a trial's ``start`` and ``returned`` events (index, seed, devices, pid, time).

    ``sweep status`` of a live run reads ``returned`` to tell a trial that ran to its
    end from one the scheduler stopped (``collect`` takes the outcome the controller
    recorded).
    """

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def record(self, trial_id: str, event: str, ctx: TrialContext) -> None:
        os.write(self._fd, trial_info_line(trial_id, event, ctx, node_id=None))

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
