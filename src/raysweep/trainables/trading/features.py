"""Vectorised features of OHLCV bars, each computed from bars up to and including t.

Per symbol (windows in bars, from ``FeatureParams``):

* ``ret_<h>``: log return over the last ``h`` bars, for each ``h`` in ``return_horizons``;
* ``rsi``: Wilder's RSI over ``rsi_window`` bars, scaled to [0, 1];
* ``macd``, ``macd_hist``: (EMA fast - EMA slow) / close, and its distance to its
  ``macd_signal`` EMA;
* ``bb_pctb``: Bollinger %B: where the close sits in mean ± ``bb_std`` standard
  deviations over ``bb_window`` bars (0.5 on a flat window);
* ``atr``: Wilder's average true range over ``atr_window`` bars, / close;
* ``volume_z``: z-score of log(1 + volume) over ``volume_window`` bars (0 on a flat window).

Only trailing windows, differences with the past and exponential averages that start
at the first bar (``adjust=False``) are used, so the value at bar t never depends on
a later bar; ``lookahead.check_causal`` verifies it. The first ``FeatureParams.lookback``
bars of each symbol, where the slow averages have not settled, are marked invalid
(``valid_rows``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from raysweep.trainables.trading.params import FeatureParams

FeatureFn = Callable[[pd.DataFrame, FeatureParams], pd.DataFrame]
"""``fn(bars_of_one_symbol, params) -> columns`` with the bars' index; must use only the past."""


def feature_names(params: FeatureParams) -> list[str]:
    """The columns ``compute_features`` returns (before any extra feature function's)."""
    returns = [f"ret_{h}" for h in params.return_horizons]
    return [*returns, "rsi", "macd", "macd_hist", "bb_pctb", "atr", "volume_z"]


def compute_features(
    bars: pd.DataFrame, params: FeatureParams, extra: Sequence[FeatureFn] = ()
) -> pd.DataFrame:
    """Every feature of every bar, symbol by symbol (bars sorted by symbol, then time)."""
    parts = []
    for _, one in _by_symbol(bars):
        frames = [symbol_features(one, params), *(fn(one, params) for fn in extra)]
        parts.append(pd.concat(frames, axis=1))
    out = pd.concat(parts) if len(parts) > 1 else parts[0]
    return out.astype(np.float64)


def symbol_features(bars: pd.DataFrame, p: FeatureParams) -> pd.DataFrame:
    """The built-in features of one symbol's bars."""
    close = bars["close"].astype(np.float64)
    log_close = pd.Series(np.log(close.to_numpy()), index=bars.index)
    cols: dict[str, pd.Series] = {f"ret_{h}": log_close.diff(h) for h in p.return_horizons}
    cols["rsi"] = rsi(close, p.rsi_window)
    fast = close.ewm(span=p.macd_fast, adjust=False).mean()
    slow = close.ewm(span=p.macd_slow, adjust=False).mean()
    macd = (fast - slow) / close
    cols["macd"] = macd
    cols["macd_hist"] = macd - macd.ewm(span=p.macd_signal, adjust=False).mean()
    cols["bb_pctb"] = bollinger_pctb(close, p.bb_window, p.bb_std)
    cols["atr"] = average_true_range(bars, p.atr_window) / close
    cols["volume_z"] = zscore(np.log1p(bars["volume"].astype(np.float64)), p.volume_window)
    return pd.DataFrame(cols, index=bars.index)


def rsi(close: pd.Series, window: int) -> pd.Series:
    """Wilder's relative strength index in [0, 1] (1 when the window had no loss)."""
    delta = close.diff()
    gain = delta.clip(lower=0).ewm(alpha=1.0 / window, adjust=False).mean()
    loss = (-delta).clip(lower=0).ewm(alpha=1.0 / window, adjust=False).mean()
    total = gain + loss
    out = (gain / total.where(total > 0)).fillna(0.5)
    out.iloc[0] = np.nan  # no change before the first bar
    return out


def bollinger_pctb(close: pd.Series, window: int, width: float) -> pd.Series:
    """(close - lower band) / (upper - lower); 0.5 when the window is flat."""
    rolling = close.rolling(window, min_periods=window)
    mean, std = rolling.mean(), rolling.std(ddof=0)
    span = 2.0 * width * std
    pctb = (close - (mean - width * std)) / span.where(span > 0)
    return pctb.where(span > 0, 0.5).where(mean.notna())


def average_true_range(bars: pd.DataFrame, window: int) -> pd.Series:
    """Wilder's average true range (in price units)."""
    high, low = bars["high"].astype(np.float64), bars["low"].astype(np.float64)
    prev = bars["close"].astype(np.float64).shift(1)
    true_range = pd.concat([high - low, (high - prev).abs(), (low - prev).abs()], axis=1).max(
        axis=1
    )
    return true_range.ewm(alpha=1.0 / window, adjust=False).mean()


def zscore(values: pd.Series, window: int) -> pd.Series:
    """Trailing z-score over ``window`` bars; 0 when the window is flat."""
    rolling = values.rolling(window, min_periods=window)
    mean, std = rolling.mean(), rolling.std(ddof=0)
    z = (values - mean) / std.where(std > 0)
    return z.where(std > 0, 0.0).where(mean.notna())


def valid_rows(bars: pd.DataFrame, params: FeatureParams) -> np.ndarray:
    """True for bars past each symbol's warm-up (``params.lookback`` bars)."""
    position = bars.groupby("symbol", sort=False).cumcount().to_numpy()
    return np.asarray(position >= params.lookback)


def _by_symbol(bars: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    if "symbol" not in bars or bars["symbol"].nunique() <= 1:
        return [("", bars)]
    return [(str(s), g) for s, g in bars.groupby("symbol", sort=False)]
