"""One switch that turns raysweep's performance-only Ray patches off.

Six patches change how fast Ray Tune runs, not what it computes
(``registry_cache``, ``actor_env``, ``actor_reuse``, ``result_buffer``,
``entry_encoder``, ``usage_tags``). When a new Ray misbehaves,
``RAYSWEEP_RAY_PATCHES=off`` runs the sweep on Ray Tune's own behaviour for all
of them, so the upgrade can be debugged without raysweep's speed-ups in the
way; their targets are then not required at start-up either. The patches that
keep resume exactly-once (snapshots, rotation, repair, trial rows) and signals
stay on: without them a run is not what raysweep promises. docs/ray-compat.md lists them.
"""

from __future__ import annotations

import os

from raysweep.errors import ConfigError

PATCHES_ENV = "RAYSWEEP_RAY_PATCHES"
PERF_PATCHES = (
    "registry_cache",
    "actor_env",
    "actor_reuse",
    "result_buffer",
    "entry_encoder",
    "usage_tags",
)
_ON, _OFF = ("", "on"), ("off",)


def perf_patches_on() -> bool:
    """Whether the performance-only patches apply (``RAYSWEEP_RAY_PATCHES`` unset or ``on``).

    ConfigError (exit 2) naming the value when it is neither ``on`` nor ``off``.
    """
    value = os.environ.get(PATCHES_ENV, "").strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    raise ConfigError(
        f"{PATCHES_ENV}={os.environ[PATCHES_ENV]!r}: expected 'on' (the default) or 'off' "
        f"(Ray Tune's own behaviour instead of {', '.join(PERF_PATCHES)})"
    )


def perf_patch_applies() -> bool:
    """``perf_patches_on()`` for a patch about to apply: an invalid value (refused at
    start-up by ``check_ray``) counts as on."""
    try:
        return perf_patches_on()
    except ConfigError:
        return True
