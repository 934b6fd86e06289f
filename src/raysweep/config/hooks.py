"""Hooks through which trainables take part in loading sweep.json; config never imports them.

The frozen ``SweepSpec`` is built once, so anything that rewrites the config
(a library alias resolved to its canonical name: ``num_leaf`` -> ``num_leaves``)
must happen on the raw data before validation. ``raysweep.trainables`` knows the
libraries' parameter names; it registers a space hook when the package is first
imported (importing any ``raysweep.trainables`` module does that; ``import
raysweep`` alone does not). Config depends on nothing but this list, so the
dependency runs one way: trainables -> config.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

SpaceHook = Callable[[str, Mapping[str, Any]], dict[str, Any]]
"""``hook(trainable, space) -> space``: a rewritten copy; raises ValueError naming the key."""

_SPACE_HOOKS: list[SpaceHook] = []


def register_space_hook(hook: SpaceHook) -> None:
    """Apply ``hook`` to the ``space`` of every sweep.json loaded from now on (once)."""
    if hook not in _SPACE_HOOKS:
        _SPACE_HOOKS.append(hook)


def unregister_space_hook(hook: SpaceHook) -> None:
    """Stop applying ``hook`` (for tests)."""
    if hook in _SPACE_HOOKS:
        _SPACE_HOOKS.remove(hook)


def apply_space_hooks(data: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of sweep.json ``data`` whose ``space`` went through every registered hook.

    Data that is not shaped for a hook (no string ``trainable``, no ``space``
    object) is returned as is, for the schema to explain.
    """
    out = dict(data)
    trainable, space = out.get("trainable"), out.get("space")
    if not isinstance(trainable, str) or not isinstance(space, dict):
        return out
    for hook in _SPACE_HOOKS:
        space = hook(trainable, space)
    out["space"] = space
    return out
