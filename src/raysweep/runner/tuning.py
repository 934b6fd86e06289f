"""Ray Tune performance settings raysweep applies before Ray Tune is imported."""

from __future__ import annotations

import os

# Per-trial CSV/TensorBoard loggers cost time per result; results.json comes from
# our own collector and ExperimentAnalysis needs only the JSON logger added back.
RAY_ENV_DEFAULTS: dict[str, str] = {
    "TUNE_DISABLE_AUTO_CALLBACK_LOGGERS": "1",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AIR_NEW_OUTPUT": "0",
}


def apply_ray_env_defaults() -> None:
    """Set the defaults above unless the user set them."""
    for key, value in RAY_ENV_DEFAULTS.items():
        os.environ.setdefault(key, value)
