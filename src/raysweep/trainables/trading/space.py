"""The trading trainable's space hook: entry model parameters' aliases resolve per library.

``lightgbm.num_leaf`` becomes ``lightgbm.num_leaves`` as sweep.json loads, through
the same resolution the GBM built-ins use (``params.resolve.resolve_space``),
applied to each library's ``<library>.`` keys. Registered by
``raysweep.trainables``; imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raysweep.trainables.trading.params import model_key

TRADING = "trading"


def resolve_trading_space(trainable: str, space: Mapping[str, Any]) -> dict[str, Any]:
    """``space`` with each ``<library>.<alias>`` renamed to ``<library>.<canonical>`` (order kept).

    ValueError (naming both keys) when two keys name the same parameter.
    """
    if trainable != TRADING:
        return dict(space)
    from raysweep.trainables.params.resolve import resolve_space

    groups: dict[str, list[str]] = {}
    for key in space:
        parsed = model_key(key)
        if parsed is not None and parsed[0] != "cnn_lstm":  # raysweep's own names: no aliases
            groups.setdefault(parsed[0], []).append(key)
    renamed: dict[str, str] = {}
    for library, keys in groups.items():
        prefix = f"{library}."
        own = {k[len(prefix) :]: space[k] for k in keys}
        try:
            resolved = resolve_space(library, own)
        except ValueError as exc:
            raise ValueError(str(exc).replace("space.", f"space.{prefix}")) from None
        for key, new in zip(keys, resolved, strict=True):
            renamed[key] = prefix + new
    return {renamed.get(k, k): v for k, v in space.items()}
