"""User trainables whose timing is random but whose results are seeded.

    "trainable": "examples.jittery:fit"

``fit`` sleeps a random, unseeded time (from ``os.urandom``) at every step, so
trials finish in a different order on every run; its metric only uses the RNGs
raysweep seeds. Strict mode must give the same configs and metrics anyway.
"""

from __future__ import annotations

import os
import random
from typing import Any

import numpy as np
from ray import tune


def _jitter(max_s: float) -> float:
    """A sleep time in [0, max_s) that no seed controls."""
    return int.from_bytes(os.urandom(4), "little") / 2**32 * max_s


def fit(config: dict[str, Any]) -> None:
    """(x - 3)^2 + (y + 1)^2 plus seeded noise, with random sleeps between steps."""
    import time

    steps = int(config.get("steps", 4))
    max_sleep = float(config.get("max_sleep_s", 0.05))
    noise_scale = float(config.get("noise", 1.0))
    for step in range(1, steps + 1):
        time.sleep(_jitter(max_sleep))
        noise = random.gauss(0.0, noise_scale) + float(np.random.normal(0.0, noise_scale))
        loss = (config["x"] - 3.0) ** 2 + (config.get("y", 0.0) + 1.0) ** 2 + abs(noise) / step
        tune.report({"loss": loss, "step": step})
