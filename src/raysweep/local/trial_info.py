"""trial_info.jsonl lines of local trials, in the format of Ray trials' (trainables.wrapper)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from raysweep.trainables.context import TrialContext


class TrialInfoLog:
    """Appends a trial's ``start`` and ``returned`` events (index, seed, devices, pid, time).

    ``sweep status`` of a live run reads ``returned`` to tell a trial that ran to its
    end from one the scheduler stopped (``collect`` takes the outcome the controller
    recorded).
    """

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def record(self, trial_id: str, event: str, ctx: TrialContext) -> None:
        record = {
            "trial_id": trial_id,
            "event": event,
            "index": ctx.index,
            "seed": ctx.seed,
            "gpu_ids": [],
            "node_id": None,
            "pid": os.getpid(),
            "t": time.time(),
        }
        os.write(self._fd, (json.dumps(record) + "\n").encode())

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
