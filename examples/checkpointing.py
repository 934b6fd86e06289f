"""A user trainable that checkpoints and resumes through Ray Tune's own API.

    "trainable": "examples.checkpointing:fit"

After a crash, ``sweep resume`` restarts the trial and ``tune.get_checkpoint()``
returns its last checkpoint, so it continues where it stopped.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

from ray import tune


def fit(config: dict[str, Any]) -> None:
    """Gradient steps on (x - 3)^2 with a checkpoint after every step."""
    x, start = float(config["x"]), 0
    checkpoint = tune.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as path, open(os.path.join(path, "state.json")) as fh:
            state = json.load(fh)
        x, start = state["x"], state["step"]
    for step in range(start + 1, int(config.get("steps", 20)) + 1):
        x -= float(config.get("lr", 0.1)) * 2 * (x - 3.0)
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "state.json"), "w") as fh:
                json.dump({"x": x, "step": step}, fh)
            tune.report({"loss": (x - 3.0) ** 2}, checkpoint=tune.Checkpoint.from_directory(tmp))
