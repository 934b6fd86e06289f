"""Walk-forward folds over the series' timestamps, with an embargo and purged labels.

With ``n`` distinct timestamps, ``K`` folds of ``V`` validation bars each are the
last ``K * V`` bars, in time order. Fold ``k`` trains on the bars before its
validation fold, minus an embargo gap of ``E`` bars right before it:

    train: [start_k, val_start_k - E)   gap: E bars   validation: [val_start_k, val_start_k + V)

``window`` "expanding" starts every training fold at the first bar; "rolling" keeps
the last ``min_train_bars`` bars only. Inside a training fold a row is used only
when its features have settled and its label's horizon ends *before* the training
fold does (purging), so nothing a model learns from reaches into the gap or the
validation fold. Defaults: ``min_train_bars`` half the series, ``V = (n -
min_train_bars) // K``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

from raysweep.errors import ConfigError
from raysweep.trainables.trading.params import ARG_DEFAULTS, int_value

MIN_TRAIN_BARS = 100
Window = Literal["expanding", "rolling"]


@dataclass(frozen=True)
class WalkForward:
    """``trainable_args`` of the walk-forward scheme."""

    n_folds: int = 4
    val_bars: int | None = None
    min_train_bars: int | None = None
    window: Window = "expanding"
    embargo: int = 12

    @staticmethod
    def from_args(args: Mapping[str, Any]) -> WalkForward:
        d, where = ARG_DEFAULTS, "trainable_args"
        window = args.get("window", d["window"])
        if window not in ("expanding", "rolling"):
            raise ConfigError(f"{where}.window: 'expanding' or 'rolling' (got {window!r})")
        optional = {
            k: None if args.get(k) is None else int_value(args, k, None, where, 1)
            for k in ("val_bars", "min_train_bars")
        }
        return WalkForward(
            n_folds=int_value(args, "n_folds", d["n_folds"], where, 1),
            window=cast(Window, window),
            embargo=int_value(args, "embargo", d["embargo"], where, 0),
            **optional,
        )


@dataclass(frozen=True)
class Fold:
    """One fold as positions in the sorted distinct timestamps (ends exclusive)."""

    number: int  # 1-based
    train_start: int
    train_end: int
    val_start: int
    val_end: int


def plan_folds(n: int, wf: WalkForward) -> list[Fold]:
    """The folds over ``n`` distinct timestamps (ConfigError when they do not fit)."""
    k = wf.n_folds
    min_train = wf.min_train_bars or n // 2
    val_bars = wf.val_bars or (n - min_train) // k
    first_val = n - k * val_bars
    train_bars = first_val - wf.embargo
    if val_bars < 1 or train_bars < MIN_TRAIN_BARS:
        raise ConfigError(
            f"trainable_args: {k} fold(s) of {val_bars} validation bar(s) and an embargo of "
            f"{wf.embargo} leave {train_bars} bar(s) to train the first fold, out of {n}; "
            f"need >= {MIN_TRAIN_BARS} (fewer n_folds, smaller val_bars or more data)"
        )
    folds = []
    for i in range(k):
        val_start = first_val + i * val_bars
        train_end = val_start - wf.embargo
        start = 0 if wf.window == "expanding" else max(0, train_end - min_train)
        folds.append(Fold(i + 1, start, train_end, val_start, val_start + val_bars))
    return folds


def fold_rows(
    fold: Fold,
    timestamps: np.ndarray,
    rows_at: np.ndarray,
    label_ends: np.ndarray,
    usable: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(training rows, validation rows) of ``fold``, as row numbers in time order per symbol.

    ``timestamps``: the sorted distinct timestamps; ``rows_at``: each row's timestamp;
    ``label_ends``: when each row's label horizon ends (NaT without a label);
    ``usable``: rows whose features have settled.
    """
    train_from, train_to = timestamps[fold.train_start], timestamps[fold.train_end]
    val_from = timestamps[fold.val_start]
    val_to = timestamps[fold.val_end] if fold.val_end < len(timestamps) else None
    in_train = (rows_at >= train_from) & (rows_at < train_to)
    purged = ~np.isnat(label_ends) & (label_ends < train_to)
    train = np.flatnonzero(in_train & purged & usable)
    in_val = rows_at >= val_from
    if val_to is not None:
        in_val &= rows_at < val_to
    return train, np.flatnonzero(in_val & usable)
