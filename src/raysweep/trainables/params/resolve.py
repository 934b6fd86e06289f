"""The space hook: a built-in's library aliases become canonical names as sweep.json loads.

Registered with ``raysweep.config.hooks`` when ``raysweep.trainables`` is
imported; this module imports nothing heavy until the hook runs, so ``import
raysweep`` stays cheap for the read-only commands.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def resolve_space(trainable: str, space: Mapping[str, Any]) -> dict[str, Any]:
    """``space`` with aliases renamed to the library's canonical names (order kept).

    Keys raysweep owns or that set the number of rounds keep the name the user
    typed (the check refuses them by that name); names the library does not
    know are left for the check to explain. ValueError when two keys name the
    same parameter. Without the library installed, ``space`` comes back as is.
    """
    from raysweep.trainables.params.check import owned_reason
    from raysweep.trainables.params.names import CHECKED_TRAINABLES, ROUNDS_CANONICAL, alias_table

    if trainable not in CHECKED_TRAINABLES:
        return dict(space)
    table = alias_table(trainable) or {}
    out: dict[str, Any] = {}
    typed: dict[str, str] = {}  # canonical name -> key as written
    for key, value in space.items():
        canonical = table.get(key, key)
        if canonical in typed:
            raise ValueError(
                f"space.{key}: the same {trainable} parameter as space.{typed[canonical]} "
                f"({canonical}); keep one of them"
            )
        typed[canonical] = key
        keep = owned_reason(trainable, key, canonical, {}) or canonical == ROUNDS_CANONICAL.get(
            trainable
        )
        out[key if keep else canonical] = value
    return out
