"""Which column of a bars file is which, for files as common tools export them.

Each of ``timestamp``, ``open``, ``high``, ``low``, ``close``, ``volume`` (and
``symbol``, optional) is found, in this order:

1. ``trainable_args.columns``: the file's column for a name, e.g.
   ``{"timestamp": "open_time", "volume": "Volume USDT"}``;
2. a column with the name itself or one of its aliases (:data:`ALIASES`), compared
   without regard to case, spaces, ``-``, ``_`` or ``<>`` (``Open``, ``CLOSE``,
   ``Date``, ``Gmt time``, ``<VOL>``);
3. the timestamp only: an unnamed first column, as a pandas index written by
   ``to_csv()`` reads back (``Unnamed: 0``, e.g. backtesting.py's EURUSD.csv), or a
   Parquet file's index, unless it only counts rows (0, 1, 2, ...).

A name still without a column is refused with the ``columns`` mapping that would
fix it, naming the file's own columns.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from raysweep.errors import ConfigError

REQUIRED: tuple[str, ...] = ("timestamp", "open", "high", "low", "close", "volume")
OPTIONAL: tuple[str, ...] = ("symbol",)
# Accepted names per column, most specific first (a file with "datetime" and "time" uses the first).
ALIASES: dict[str, tuple[str, ...]] = {
    "timestamp": ("timestamp", "datetime", "date_time", "open_time", "gmt_time", "date", "time"),
    "open": ("open",),
    "high": ("high",),
    "low": ("low",),
    "close": ("close",),
    "volume": ("volume", "vol", "tick_volume"),
    "symbol": ("symbol", "ticker"),
}
UNNAMED = re.compile(r"^(unnamed:_?0|index|)$")  # as _normal writes them


def columns_arg(value: Any) -> tuple[tuple[str, str], ...]:
    """``trainable_args.columns`` as sorted (name, file column) pairs (ConfigError if malformed)."""
    if value is None:
        return ()
    where = "trainable_args.columns"
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{where}: an object from a column name to the file's column, e.g. "
            f'{{"timestamp": "open_time"}} (got {value!r})'
        )
    known = (*REQUIRED, *OPTIONAL)
    for name, column in value.items():
        if name not in known:
            raise ConfigError(f"{where}.{name}: not a column name; one of {', '.join(known)}")
        if not isinstance(column, str) or not column:
            raise ConfigError(f"{where}.{name}: the file's column name, a string (got {column!r})")
    return tuple(sorted(value.items()))


def standard_columns(
    frame: pd.DataFrame, where: str, mapping: tuple[tuple[str, str], ...] = ()
) -> pd.DataFrame:
    """``frame``'s bar columns under the standard names (and ``symbol`` when it has one)."""
    columns = [str(c) for c in frame.columns]
    found: dict[str, str] = {}
    for name, column in mapping:
        if column not in columns:
            raise ConfigError(
                f"trainable_args.columns.{name}: {where} has no column {column!r}; "
                f"it has: {', '.join(columns)}"
            )
        found[name] = column
    for name in (*REQUIRED, *OPTIONAL):
        if name not in found:
            match = _by_name(name, columns, set(found.values()), where)
            if match is not None:
                found[name] = match
    if "timestamp" not in found and columns and _is_index_column(frame, columns[0]):
        found["timestamp"] = columns[0]
    missing = [name for name in REQUIRED if name not in found]
    if missing:
        raise ConfigError(_missing_text(missing, columns, found, where))
    out = frame.loc[:, [found[n] for n in (*OPTIONAL, *REQUIRED) if n in found]]
    out.columns = [n for n in (*OPTIONAL, *REQUIRED) if n in found]
    return out


def _normal(name: str) -> str:
    return re.sub(r"[\s_\-]+", "_", name.strip().strip("<>").strip().lower())


def _by_name(name: str, columns: list[str], taken: set[str], where: str) -> str | None:
    """The one column named ``name`` or its most specific alias present (ConfigError if two)."""
    for alias in ALIASES[name]:
        matches = [c for c in columns if c not in taken and _normal(c) == alias]
        if len(matches) > 1:
            raise ConfigError(
                f"{where}: columns {', '.join(map(repr, matches))} both read as {name!r}; "
                f'choose one with trainable_args.columns, e.g. "columns": '
                f"{json.dumps({name: matches[0]})}"
            )
        if matches:
            return matches[0]
    return None


def _is_index_column(frame: pd.DataFrame, column: str) -> bool:
    """An unnamed first column that holds more than row numbers."""
    if not UNNAMED.match(_normal(column)):
        return False
    values = frame[column]
    if pd.api.types.is_integer_dtype(values):
        return not np.array_equal(values.to_numpy(), np.arange(len(values)))
    return True


def _missing_text(missing: list[str], columns: list[str], found: dict[str, str], where: str) -> str:
    free = [c for c in columns if c not in found.values()]
    guess = {}
    for name in missing:
        near = difflib.get_close_matches(name, [_normal(c) for c in free], n=1, cutoff=0.4)
        column = next((c for c in free if near and _normal(c) == near[0]), None)
        guess[name] = column or f"<the column with the {name}>"
        if column is not None:
            free.remove(column)
    aliases = ", ".join(a for a in ALIASES["timestamp"] if a != "timestamp")
    return (
        f"{where}: no column for {', '.join(missing)}; names are matched without regard to "
        f"case, and the timestamp may also be called {aliases} or be an unnamed first column "
        f"(a pandas index); the file has: {', '.join(columns)}. Map them with "
        f'trainable_args.columns, e.g. "columns": {json.dumps(guess)}'
    )
