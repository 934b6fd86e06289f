"""The trainable of the nightly tests: a quadratic whose score a file moves between nights.

``config["offset_file"]`` holds a number added to every loss, so a test makes a
night score worse (a regression) by writing a larger one, as fresh data would.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ray import tune


def fit(config: dict[str, Any]) -> None:
    """Report (x - 3)^2 + offset once per step, sleeping ``sleep_s`` before each."""
    offset_file = Path(str(config["offset_file"]))
    offset = float(offset_file.read_text()) if offset_file.is_file() else 0.0
    for step in range(1, int(config.get("steps", 2)) + 1):
        time.sleep(float(config.get("sleep_s", 0.0)))
        tune.report({"loss": (float(config["x"]) - 3.0) ** 2 + offset, "step": step})
