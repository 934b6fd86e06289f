"""A user trainable: a plain Ray Tune function, unchanged, run by raysweep.

    "trainable": "examples.quadratic:fit"

raysweep seeds Python, NumPy and torch before calling it; ``raysweep.trial_seed()``
gives the seed if the function wants its own generator.
"""

from __future__ import annotations

import random
import time
from typing import Any

from ray import tune


def fit(config: dict[str, Any]) -> None:
    """Minimise (x - 3)^2 + (y + 1)^2 with seeded noise that shrinks each step."""
    steps = int(config.get("steps", 10))
    sleep_s = float(config.get("sleep_s", 0.0))
    fail_above = config.get("fail_above")
    if fail_above is not None and config["x"] > fail_above:
        raise RuntimeError(f"deliberate failure: x={config['x']:.3f} > {fail_above}")
    for step in range(1, steps + 1):
        noise = random.gauss(0.0, 1.0) / step
        loss = (config["x"] - 3.0) ** 2 + (config.get("y", 0.0) + 1.0) ** 2 + abs(noise)
        if sleep_s:
            time.sleep(sleep_s)
        tune.report({"loss": loss, "step": step})


def cumulative(config: dict[str, Any]) -> None:
    """Reports a ``score`` (to maximise) over ``steps`` folds as the trading trainable
    does, each value covering the folds so far: ``10 x`` after the first, then lower."""
    for step in range(1, int(config.get("steps", 4)) + 1):
        tune.report({"score": 10.0 * config["x"] / step, "step": step})


def noop(config: dict[str, Any]) -> None:
    """Reports once and returns: measures scheduling overhead."""
    tune.report({"loss": float(config.get("x", 0.0))})


def sleeper(config: dict[str, Any]) -> None:
    """Sleeps ``sleep_s`` seconds, then reports once."""
    time.sleep(float(config.get("sleep_s", 1.0)))
    tune.report({"loss": float(config.get("x", 0.0))})
