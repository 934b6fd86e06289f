"""The ``trading`` trainable: walk-forward folds, one report per fold, checkpoints between.

Per trial: load and validate the bars (cached per process), compute the features
(checked for look-ahead on a prefix of the data), the labels and the folds; then
for each fold fit the entry model (a GBM, ``model.py``, or the CNN-LSTM over
windows of bars, ``cnn_lstm.py``) on its training rows, backtest every symbol on
its validation rows, and report the metrics of all folds so far (``metrics``).
Schedulers count folds as iterations, so ASHA and Hyperband can stop a poor
configuration after its first folds. A checkpoint (``raysweep_checkpoint.json`` +
``cumulative.npz``) holds the folds done and their accumulated returns; a trial
resumed from it continues at the next fold with exactly the metrics an
uninterrupted trial reports.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from raysweep.trainables.builtins import (
    Reporter,
    ray_report,
    ray_start_checkpoint,
    read_checkpoint_meta,
    write_checkpoint_meta,
)
from raysweep.trainables.context import TrialContext
from raysweep.trainables.trading.backtest import run_backtest, signals
from raysweep.trainables.trading.data import Bars, load_bars, utc_ns
from raysweep.trainables.trading.features import FeatureFn, compute_features, valid_rows
from raysweep.trainables.trading.folds import Fold, WalkForward, fold_rows, plan_folds
from raysweep.trainables.trading.labels import Labels, make_labels
from raysweep.trainables.trading.lookahead import check_prefix
from raysweep.trainables.trading.metrics import Cumulative, periods_per_year
from raysweep.trainables.trading.model import fit_predict
from raysweep.trainables.trading.params import (
    Costs,
    FeatureParams,
    LabelParams,
    ScoreArgs,
    TradingParams,
    entry_library,
    model_config,
)

NAME = "trading"
STATE_FILE = "cumulative.npz"
ProbaFn = Callable[[Fold, np.ndarray, np.ndarray], np.ndarray]
"""``proba(fold, train_rows, val_rows) -> (len(val_rows), 3)`` class probabilities."""


@dataclass(frozen=True)
class Prepared:
    """A trial's data ready for its folds: rows sorted by (symbol, timestamp)."""

    bars: pd.DataFrame
    features: np.ndarray  # float64 (rows, features)
    ohlc: np.ndarray  # float64 (rows, 4): open, high, low, close
    symbols: np.ndarray  # each row's symbol
    names: list[str]
    labels: Labels
    usable: np.ndarray  # rows whose features have settled
    timestamps: np.ndarray  # sorted distinct timestamps, datetime64[ns] (UTC)
    rows_at: np.ndarray  # each row's timestamp, datetime64[ns] (UTC)
    folds: list[Fold]
    periods: float
    n_symbols: int


def train_trading(config: dict[str, Any], ctx: TrialContext) -> None:
    """Ray Tune trainable: the walk-forward evaluation of one configuration."""
    with ray_start_checkpoint() as start:
        fit_trading(config, ctx, ray_report, start)


def prepare(
    config: dict[str, Any],
    args: dict[str, Any],
    bars: Bars | None = None,
    extra: Sequence[FeatureFn] = (),
) -> Prepared:
    """Bars (``args`` or given), features, labels and folds for one configuration."""
    bars = bars if bars is not None else load_bars(args)
    frame = bars.frame
    fparams = FeatureParams.from_config(config)
    if args.get("check_lookahead", True):
        check_prefix(frame, lambda b: compute_features(b, fparams, extra))
    features = compute_features(frame, fparams, extra)
    rows_at = utc_ns(frame["timestamp"])
    timestamps = np.unique(rows_at)
    interval = pd.Timedelta(bars.report.interval).total_seconds()
    score = ScoreArgs.from_args(args)
    return Prepared(
        bars=frame,
        features=features.to_numpy(np.float64),
        ohlc=frame[["open", "high", "low", "close"]].to_numpy(np.float64),
        symbols=frame["symbol"].to_numpy(),
        names=[str(c) for c in features.columns],
        labels=make_labels(frame, LabelParams.from_config(config)),
        usable=valid_rows(frame, fparams),
        timestamps=timestamps,
        rows_at=rows_at,
        folds=plan_folds(len(timestamps), WalkForward.from_args(args)),
        periods=score.periods_per_year or periods_per_year(interval),
        n_symbols=len(bars.report.symbols),
    )


def evaluate_fold(
    data: Prepared,
    fold: Fold,
    proba: ProbaFn,
    trading: TradingParams,
    costs: Costs,
    cumulative: Cumulative,
) -> None:
    """Fit/predict ``fold``, backtest each symbol on its validation rows, add to ``cumulative``."""
    train, val = fold_rows(fold, data.timestamps, data.rows_at, data.labels.ends_at, data.usable)
    p = proba(fold, train, val)
    val_stamps = data.timestamps[fold.val_start : fold.val_end]
    portfolio = np.zeros(len(val_stamps))
    trade_returns = []
    symbols = data.symbols[val]
    for symbol in pd.unique(symbols):
        mine = symbols == symbol
        rows = val[mine]
        o, h, lo, c = data.ohlc[rows].T
        direction = signals(p[mine], trading.entry_threshold, costs.allow_short)
        result = run_backtest(o, h, lo, c, direction, trading, costs)
        at = np.searchsorted(val_stamps, data.rows_at[rows])
        portfolio += np.bincount(at, weights=result.bar_returns, minlength=len(val_stamps))
        trade_returns.append(result.trades.net_return)
    labelled = ~np.isnan(data.labels.classes[val])
    truth = data.labels.classes[val][labelled].astype(np.int64)
    picked = p[labelled][np.arange(len(truth)), truth]
    losses = -np.log(np.clip(picked, 1e-15, 1.0))
    trades = np.concatenate(trade_returns) if trade_returns else np.empty(0)
    cumulative.add(portfolio / data.n_symbols, trades, len(val), losses)


def fit_trading(
    config: dict[str, Any],
    ctx: TrialContext,
    report: Reporter,
    checkpoint_dir: Path | None = None,
    bars: Bars | None = None,
    extra: Sequence[FeatureFn] = (),
) -> None:
    """Evaluate ``config`` fold by fold, calling ``report`` after each (resuming when given one)."""
    args = dict(ctx.trainable_args)
    library = entry_library(config)
    params = model_config(config, library)
    trading, costs, score = (
        TradingParams.from_config(config),
        Costs.from_args(args),
        ScoreArgs.from_args(args),
    )
    data = prepare(config, args, bars, extra)
    cumulative, done = Cumulative(), 0
    if checkpoint_dir is not None:
        done = int(read_checkpoint_meta(Path(checkpoint_dir), NAME)["folds"])
        with np.load(Path(checkpoint_dir) / STATE_FILE, allow_pickle=False) as state:
            cumulative = Cumulative.from_arrays(dict(state))

    def proba(fold: Fold, train: np.ndarray, val: np.ndarray) -> np.ndarray:
        if library == "cnn_lstm":  # a sequence model: windows of earlier bars, not rows alone
            from raysweep.trainables.trading.cnn_lstm import fit_predict_cnn_lstm

            return fit_predict_cnn_lstm(params, ctx, fold.number, data.features, data.symbols,
                                        data.labels.classes, train, val)  # fmt: skip
        X, y = data.features[train], data.labels.classes[train]
        return fit_predict(library, params, ctx, fold.number, X, y, data.features[val], data.names)

    for fold in data.folds[done:]:
        evaluate_fold(data, fold, proba, trading, costs, cumulative)
        metrics = {**cumulative.metrics(data.periods, score), "fold": float(fold.number)}
        if not ctx.checkpoint_due(fold.number):
            report(metrics, None)
            continue
        with tempfile.TemporaryDirectory(prefix="raysweep-ckpt-") as tmp:
            path = Path(tmp)
            np.savez(path / STATE_FILE, allow_pickle=False, **cumulative.to_arrays())
            write_checkpoint_meta(path, NAME, folds=fold.number, reports=fold.number, seed=ctx.seed)
            report(metrics, path)
