"""No look-ahead end to end: on a series whose future returns are shuffled, no strategy has an edge.

The best of a few strategies on a synthetic series is evaluated on copies of that
series whose bar order is shuffled: its Sharpe ratio stays within the noise of
zero across shuffles. The same pipeline fed one leaked feature (the future
return) shows a large edge on the same shuffled series, so the test can fail.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from raysweep.trainables.context import TrialContext
from raysweep.trainables.trading.data import validate_bars
from raysweep.trainables.trading.features import FeatureFn
from raysweep.trainables.trading.synthetic import SyntheticOptions, shuffle_returns, synthetic_ohlcv
from raysweep.trainables.trading.trainable import fit_trading

BARS, FOLDS, SHUFFLES = 4000, 3, 8
ARGS = {"n_folds": FOLDS, "num_boost_round": 20, "fee_bps": 0, "slippage_bps": 0}
BASE = {"entry_model": "lightgbm", "label_threshold": 0.004, "stop_loss": 0.03,
        "take_profit": 0.06, "lightgbm.num_leaves": 15, "lightgbm.learning_rate": 0.1}  # fmt: skip
CANDIDATES = [
    {**BASE, "label_horizon": 24, "entry_threshold": 0.55, "max_holding": 48},
    {**BASE, "label_horizon": 4, "entry_threshold": 0.45, "max_holding": 12},
]


def final_metrics(
    config: dict[str, Any], bars: pd.DataFrame, extra: list[FeatureFn] | None = None
) -> dict[str, float]:
    args = {**ARGS, "check_lookahead": extra is None}
    ctx = TrialContext(index=0, seed=7, metric="composite", mode="max", trainable_args=args)
    reports: list[dict[str, float]] = []
    report = lambda m, _: reports.append(m)  # noqa: E731
    fit_trading(config, ctx, report, bars=validate_bars(bars, "t"), extra=extra or ())
    assert [r["fold"] for r in reports] == [1.0, 2.0, 3.0]
    return reports[-1]


def test_best_strategy_has_no_edge_on_shuffled_returns() -> None:
    real = synthetic_ohlcv(SyntheticOptions(bars=BARS, seed=4))
    best = max(CANDIDATES, key=lambda c: final_metrics(c, real)["composite"])
    sharpes = np.array(
        [final_metrics(best, shuffle_returns(real, seed))["sharpe"] for seed in range(SHUFFLES)]
    )
    val_bars = (BARS - BARS // 2) // FOLDS * FOLDS
    noise = math.sqrt(24 * 365.25 / val_bars)  # std of an annualised Sharpe ratio without edge
    assert abs(sharpes.mean()) < 3 * noise / math.sqrt(SHUFFLES), sharpes
    assert (np.abs(sharpes) < 4 * noise).all(), sharpes

    def leak(bars: pd.DataFrame, params: Any) -> pd.DataFrame:
        ahead = best["label_horizon"]
        return pd.DataFrame(
            {"peek": np.log(bars["close"].shift(-ahead) / bars["close"])}, index=bars.index
        )

    leaked = final_metrics(best, shuffle_returns(real, 0), [leak])
    assert leaked["sharpe"] > 3 * noise > sharpes.mean()
