"""Ray Tune's usage tag of a run's callbacks, skipped while Ray's usage stats are off.

``tune.run`` records which callbacks a run uses as a usage-stats tag
(``ray.air._internal.usage.tag_callbacks``), and to name them imports every
logging integration Ray knows, MLflow's among them. With ``mlflow`` installed
(raysweep's ``mlflow`` extra) that import is on the way to the first trial of
every ``sweep run``: a one-trial Ray sweep took 5.5 s with it and 5.0 s without
on a 2-core VM. A tag is only ever sent with the usage stats, which raysweep
turns off (``RAY_USAGE_STATS_ENABLED=0``, ``engines/ray/ray_env.py``): while they are
off, ``untagged_callbacks()`` skips it; with them on, Ray tags as it does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from raysweep._raycompat.switch import perf_patch_applies


@contextmanager
def untagged_callbacks() -> Iterator[None]:
    """While the block runs, ``tune.run`` does not tag its callbacks (usage stats off)."""
    usage = _usage_module() if perf_patch_applies() else None
    if usage is None or _usage_stats_enabled():
        yield  # switched off, usage stats on, or a Ray without this function
        return
    original = usage.tag_callbacks
    usage.tag_callbacks = _no_tag
    try:
        yield
    finally:
        usage.tag_callbacks = original


def _no_tag(callbacks: Any) -> bool:
    """``tag_callbacks`` when nothing is recorded: False, as Ray's says for no tag."""
    return False


def _usage_module() -> Any:
    try:
        from ray.air._internal import usage
    except ImportError:
        return None
    return usage if callable(getattr(usage, "tag_callbacks", None)) else None


def _usage_stats_enabled() -> bool:
    """Ray's own answer (environment variable, then its config file); on when unreadable."""
    try:
        from ray._common.usage.usage_lib import usage_stats_enabled
    except ImportError:
        return True
    try:
        return bool(usage_stats_enabled())
    except ValueError:  # an invalid RAY_USAGE_STATS_ENABLED: Ray refuses it itself
        return True
