"""The trading trainable's data summary: bars, span, interval, gaps, typical move, folds.

Registered in ``trainables/describe.py``; runs in the sweep's own process from the
bars the config check loaded (cached), so ``sweep validate`` and the start of
``sweep run`` show what every trial will train and validate on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from raysweep.trainables.describe import DataSummary
from raysweep.trainables.trading.data import Bars, load_bars, utc_ns
from raysweep.trainables.trading.folds import Fold, WalkForward, plan_folds
from raysweep.trainables.trading.params import ScoreArgs

SYNTHETIC_WARNING = (
    "the data is SYNTHETIC (trainable_args.data 'synthetic'), not prices of any market: "
    "point trainable_args.data at your bars to tune for real"
)


def describe_trading_data(args: Mapping[str, Any]) -> DataSummary:
    """Bars, span, interval, gaps, typical move per bar, and each fold's dates."""
    bars = load_bars(args)
    wf = WalkForward.from_args(args)
    stamps = np.unique(utc_ns(bars.frame["timestamp"]))
    folds = plan_folds(len(stamps), wf)
    daily = bars.report.interval >= pd.Timedelta("1D")
    move = typical_move(bars)
    lines = [
        *bars.report.lines(),
        f"typical move: {move:.3%} per bar (median |close-to-close change|); label_threshold, "
        "stop_loss and take_profit are fractions of the price: size them to it",
        f"{len(folds)} walk-forward fold(s), {wf.window} window, embargo {wf.embargo} bar(s):",
        *(f"  {_fold_text(fold, stamps, daily)}" for fold in folds),
    ]
    report = bars.report
    facts = {
        "source": report.source,
        "bars": report.rows,
        "symbols": list(report.symbols),
        "start": str(report.start),
        "end": str(report.end),
        "interval": str(report.interval),
        "gaps": len(report.gaps),
        "missing_bars": sum(g.missing_bars for g in report.gaps),
        "typical_move": round(move, 8),
        "folds": [_fold_json(fold, stamps, daily) for fold in folds],
    }
    warnings = (SYNTHETIC_WARNING,) if bars.synthetic else ()
    return DataSummary(tuple(lines), facts, warnings)


def typical_move(bars: Bars) -> float:
    """The median absolute close-to-close change of one bar, over every symbol."""
    frame = bars.frame
    changes = frame.groupby("symbol", sort=False)["close"].pct_change().abs()
    value = changes.median()
    return 0.0 if pd.isna(value) else float(value)


def _fold_text(fold: Fold, stamps: np.ndarray, daily: bool) -> str:
    train, val = _ranges(fold, stamps, daily)
    return (
        f"fold {fold.number}: train {train[0]} .. {train[1]} "
        f"({fold.train_end - fold.train_start} bars), validate {val[0]} .. {val[1]} "
        f"({fold.val_end - fold.val_start} bars)"
    )


def _fold_json(fold: Fold, stamps: np.ndarray, daily: bool) -> dict[str, Any]:
    train, val = _ranges(fold, stamps, daily)
    return {
        "fold": fold.number,
        "train": list(train),
        "validation": list(val),
        "train_bars": fold.train_end - fold.train_start,
        "validation_bars": fold.val_end - fold.val_start,
    }


def _ranges(fold: Fold, stamps: np.ndarray, daily: bool) -> tuple[tuple[str, str], tuple[str, str]]:
    """First and last timestamp of the fold's training and validation bars."""

    def at(i: int) -> str:
        stamp = pd.Timestamp(stamps[i])
        return stamp.strftime("%Y-%m-%d" if daily else "%Y-%m-%d %H:%M")

    train = (at(fold.train_start), at(fold.train_end - 1))
    return train, (at(fold.val_start), at(fold.val_end - 1))


def check_best_trial(args: Mapping[str, Any], trial_id: str, last: Mapping[str, Any]) -> list[str]:
    """A warning when the best trial made fewer trades than ``min_trades`` (default 20)."""
    trades = last.get("n_trades")
    min_trades = ScoreArgs.from_args(args).min_trades
    if not isinstance(trades, int | float) or trades >= min_trades:
        return []
    sharpe = last.get("sharpe")
    ratio = f" (sharpe {sharpe:.3g})" if isinstance(sharpe, int | float) else ""
    return [
        f"the best trial, {trial_id}, made {trades:g} trade(s) over its validation folds, "
        f"fewer than min_trades {min_trades}: too few for its metrics{ratio} to mean much. "
        "Size label_threshold, stop_loss and take_profit to the instrument's moves "
        "(the typical move per bar is in the data summary; docs/trading.md, 'Scaling the "
        "ranges to the instrument')"
    ]
