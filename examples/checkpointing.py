"""A user trainable that checkpoints and resumes through Ray Tune's own API.

    "trainable": "examples.checkpointing:fit"

It saves a checkpoint where raysweep asks for one (``checkpoint.frequency`` and,
with the ``hyperband`` scheduler, the rungs where a trial may be paused) and at
its last step. After a crash, ``sweep resume`` restarts the trial and
``tune.get_checkpoint()`` returns its last checkpoint, so it continues where it
stopped; so does a trial Hyperband paused.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any

from ray import tune

import raysweep


def fit(config: dict[str, Any]) -> None:
    """Gradient steps on (x - 3)^2, with checkpoints where the sweep wants them."""
    x, start = float(config["x"]), 0
    steps = int(config.get("steps", 20))
    checkpoint = tune.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as path, open(os.path.join(path, "state.json")) as fh:
            state = json.load(fh)
        x, start = state["x"], state["step"]
    for step in range(start + 1, steps + 1):
        time.sleep(float(config.get("sleep_s", 0.0)))  # a slower trial, for crash tests
        x -= float(config.get("lr", 0.1)) * 2 * (x - 3.0)
        metrics = {"loss": (x - 3.0) ** 2}
        if not (raysweep.trial_context().checkpoint_due(step) or step == steps):
            tune.report(metrics)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "state.json"), "w") as fh:
                json.dump({"x": x, "step": step}, fh)
            tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(tmp))
