"""What the command line and the process environment say about where a run's engine works,
resolved before any engine is chosen (no engine imported here)."""

from __future__ import annotations

import math
import os

from raysweep.errors import ConfigError

JOB_CONFIG_ENV = "RAY_JOB_CONFIG_JSON_ENV_VAR"  # set by Ray for a Ray Job's entrypoint
CONNECT_TIMEOUT_ENV = "RAYSWEEP_CONNECT_TIMEOUT_S"
DEFAULT_CONNECT_TIMEOUT_S = 60.0


def in_ray_job() -> bool:
    """Whether this process is a Ray Job's entrypoint (``ray job submit``)."""
    return JOB_CONFIG_ENV in os.environ


def connect_timeout_s(flag: float | None) -> float:
    """Joining a cluster's time limit: ``--connect-timeout``, else the variable, else 60 s."""
    if flag is not None:
        value, named = flag, f"--connect-timeout {flag:g}"
    else:
        raw = os.environ.get(CONNECT_TIMEOUT_ENV, "").strip()
        if not raw:
            return DEFAULT_CONNECT_TIMEOUT_S
        named = f"{CONNECT_TIMEOUT_ENV}={raw}"
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ConfigError(f"{named}: expected a number of seconds > 0")
    return value
