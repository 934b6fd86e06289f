"""The one format of a trial_info.jsonl line, for Ray's trials and the local engine's.

``sweep status`` of a live run reads ``returned`` to tell a trial that ran to its end
from one the scheduler stopped; ``sweep repro`` and the report read the index, seed and
devices of each trial from ``start``.
"""

from __future__ import annotations

import json
import os
import time

from raysweep.trainables.context import TrialContext


def trial_info_line(trial_id: str, event: str, ctx: TrialContext, node_id: str | None) -> bytes:
    """One line: the trial, the event (``start`` or ``returned``), its index, seed,
    devices, node, process and wall time."""
    record = {
        "trial_id": trial_id,
        "event": event,
        "index": ctx.index,
        "seed": ctx.seed,
        "gpu_ids": list(ctx.gpu_ids),
        "node_id": node_id,
        "pid": os.getpid(),
        "t": time.time(),
    }
    return (json.dumps(record) + "\n").encode()
