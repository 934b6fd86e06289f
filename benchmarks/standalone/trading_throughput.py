"""Trading throughput: features and the backtest of one fold on 100,000 bars, no model.

What a trading trial spends outside its entry model: computing the features of the
whole series (with the per-trial look-ahead check on its first 3,000 bars), the
labels and the fold's rows, then backtesting the fold and computing its metrics.
The fold is the whole series (100,000 validation bars) and the probabilities are
random, so about a third of the bars carry a signal: a worst case for the
backtest's chain of trades. Target: well under a second, so a trial's time is
its model's. ``python -m benchmarks.run trading_throughput [--bars N] [--repeats R]``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.harness.common import machine, prog, summarize, versions
from raysweep.trainables.trading.backtest import run_backtest, signals
from raysweep.trainables.trading.data import utc_ns, validate_bars
from raysweep.trainables.trading.features import compute_features, valid_rows
from raysweep.trainables.trading.folds import Fold, fold_rows
from raysweep.trainables.trading.labels import make_labels
from raysweep.trainables.trading.lookahead import check_prefix
from raysweep.trainables.trading.metrics import Cumulative
from raysweep.trainables.trading.params import (
    Costs,
    FeatureParams,
    LabelParams,
    ScoreArgs,
    TradingParams,
)
from raysweep.trainables.trading.synthetic import SyntheticOptions, synthetic_ohlcv

TARGET_S = 0.5


def one_pass(bars_frame: Any, seed: int) -> dict[str, float]:
    """Seconds per stage of one trial's non-model work on ``bars_frame`` (one fold)."""
    timings: dict[str, float] = {}

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        out = fn()
        timings[name] = time.perf_counter() - start
        return out

    fp, trading = FeatureParams(), TradingParams(max_holding=48)
    timed("lookahead_check", lambda: check_prefix(bars_frame, lambda b: compute_features(b, fp)))
    features = timed("features", lambda: compute_features(bars_frame, fp))
    labels = timed("labels", lambda: make_labels(bars_frame, LabelParams()))
    rows_at = utc_ns(bars_frame["timestamp"])
    stamps = np.unique(rows_at)
    fold = Fold(1, 0, 0, 0, len(stamps))
    _, val = timed(
        "fold_rows",
        lambda: fold_rows(fold, stamps, rows_at, labels.ends_at, valid_rows(bars_frame, fp)),
    )
    proba = np.random.default_rng(seed).dirichlet([1.0, 1.0, 1.0], len(val))
    ohlc = bars_frame[["open", "high", "low", "close"]].to_numpy(np.float64)[val]

    def backtest() -> Any:
        direction = signals(proba, 0.5, allow_short=True)
        return run_backtest(*ohlc.T, direction, trading, Costs())

    result = timed("backtest", backtest)

    def metrics() -> dict[str, float]:
        cum = Cumulative()
        cum.add(result.bar_returns, result.trades.net_return, len(val), np.zeros(len(val)))
        return cum.metrics(8766.0, ScoreArgs())

    timed("metrics", metrics)
    timings["total"] = sum(timings.values())
    timings["trades"] = float(len(result.trades))
    assert features.shape[0] == len(bars_frame)
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog("trading_throughput"), description=__doc__.splitlines()[0]
    )
    parser.add_argument("--bars", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    frame = validate_bars(synthetic_ohlcv(SyntheticOptions(bars=args.bars, seed=1)), "bench").frame
    one_pass(frame, 0)  # warm-up: imports, first-call costs
    runs = [one_pass(frame, seed) for seed in range(args.repeats)]
    stages = {k: summarize(r[k] for r in runs) for k in runs[0]}
    result = {
        "benchmark": "trading_throughput",
        "bars": args.bars,
        "repeats": args.repeats,
        "stages": stages,
        "target_total_s": TARGET_S,
        "met": stages["total"]["median"] < TARGET_S,
        "machine": machine(),
        "versions": versions(),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"trading throughput: {args.bars} bars, one fold, {args.repeats} repeats (median, min-max)"
    )
    for name, s in stages.items():
        if name == "trades":
            print(f"  {'trades':<16} {s['median']:.0f}")
            continue
        print(
            f"  {name:<16} {s['median'] * 1e3:8.1f} ms  ({s['min'] * 1e3:.1f}-{s['max'] * 1e3:.1f})"
        )
    verdict = "met" if result["met"] else "MISSED"
    print(f"target: total < {TARGET_S} s: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
