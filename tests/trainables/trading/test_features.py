"""Features: their definitions on small series, and the look-ahead check that guards them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from raysweep.trainables.trading.data import validate_bars
from raysweep.trainables.trading.features import (
    compute_features,
    feature_names,
    rsi,
    valid_rows,
    zscore,
)
from raysweep.trainables.trading.lookahead import LookAheadError, check_causal, check_prefix
from raysweep.trainables.trading.params import FeatureParams
from raysweep.trainables.trading.synthetic import SyntheticOptions, synthetic_ohlcv

PARAMS = FeatureParams(return_horizons=(1, 3), rsi_window=5, macd_fast=3, macd_slow=6,
                       macd_signal=3, bb_window=5, atr_window=4, volume_window=5)  # fmt: skip


def market(bars: int = 600, symbols: int = 2) -> pd.DataFrame:
    frame = synthetic_ohlcv(SyntheticOptions(bars=bars, symbols=symbols, seed=11))
    return validate_bars(frame, "synthetic").frame


def test_columns_and_simple_values() -> None:
    bars = market(symbols=1)
    features = compute_features(bars, PARAMS)
    assert list(features.columns) == feature_names(PARAMS) == [
        "ret_1", "ret_3", "rsi", "macd", "macd_hist", "bb_pctb", "atr", "volume_z"
    ]  # fmt: skip
    close = bars["close"].to_numpy()
    assert np.allclose(features["ret_3"].to_numpy()[3:], np.log(close[3:] / close[:-3]))
    valid = valid_rows(bars, PARAMS)
    assert not valid[: PARAMS.lookback].any() and valid[PARAMS.lookback :].all()
    assert not features[valid].isna().any().any()
    assert features["rsi"][valid].between(0, 1).all()


def test_rsi_and_zscore_by_hand() -> None:
    close = pd.Series([1.0, 2.0, 1.0, 1.0])  # changes +1, -1, 0; Wilder alpha 1/2
    gain = [1.0, 0.5, 0.25]  # ewm(adjust=False) of 1, 0, 0 starting at the first change
    loss = [0.0, 0.5, 0.25]
    expected = [g / (g + q) for g, q in zip(gain, loss, strict=True)]
    assert np.allclose(rsi(close, 2).to_numpy()[1:], expected)
    assert np.isnan(rsi(close, 2).iloc[0])
    z = zscore(pd.Series([1.0, 2.0, 3.0, 3.0, 3.0]), 3).to_numpy()
    assert np.isnan(z[:2]).all() and np.isclose(z[2], 1.0 / np.sqrt(2.0 / 3.0)) and z[4] == 0.0


def test_built_in_features_are_causal_per_symbol() -> None:
    bars = market(symbols=2)
    check_causal(bars, lambda b: compute_features(b, PARAMS))
    check_prefix(bars, lambda b: compute_features(b, FeatureParams()), rows=300)


def test_a_planted_leak_is_caught() -> None:
    """A feature that reads one bar ahead (close.shift(-1)) is named by the check."""

    def leak(bars: pd.DataFrame, params: FeatureParams) -> pd.DataFrame:
        future = np.log(bars["close"].shift(-1) / bars["close"])
        return pd.DataFrame({"next_return": future}, index=bars.index)

    bars = market(symbols=2)
    with pytest.raises(LookAheadError, match=r"read the future: next_return at .*") as caught:
        check_causal(bars, lambda b: compute_features(b, PARAMS, [leak]))
    assert "ret_1" not in str(caught.value)


def test_a_whole_series_normalisation_is_caught() -> None:
    """Subtler than a shift: scaling by the mean of the whole series (future included)."""

    def demeaned(bars: pd.DataFrame, params: FeatureParams) -> pd.DataFrame:
        close = bars["close"]
        return pd.DataFrame({"close_vs_mean": close / close.mean()}, index=bars.index)

    with pytest.raises(LookAheadError, match="close_vs_mean"):
        check_causal(market(symbols=1), lambda b: compute_features(b, PARAMS, [demeaned]))
