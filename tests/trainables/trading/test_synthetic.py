"""The synthetic generator: seeded, labelled, and with real markets' stylised facts."""

from __future__ import annotations

import numpy as np
import pandas as pd

from raysweep.trainables.trading.synthetic import (
    SyntheticOptions,
    main,
    shuffle_returns,
    synthetic_ohlcv,
)


def test_same_seed_same_bars_other_seed_other_bars() -> None:
    a = synthetic_ohlcv(SyntheticOptions(bars=1000, seed=5))
    pd.testing.assert_frame_equal(a, synthetic_ohlcv(SyntheticOptions(bars=1000, seed=5)))
    assert not np.allclose(
        a["close"], synthetic_ohlcv(SyntheticOptions(bars=1000, seed=6))["close"]
    )
    assert a.attrs["source"] == "synthetic"


def test_stylised_facts() -> None:
    bars = synthetic_ohlcv(SyntheticOptions(bars=50_000, seed=2))
    r = pd.Series(np.diff(np.log(bars["close"].to_numpy())))
    assert r.kurt() > 3  # fat tails (excess kurtosis of a normal: 0)
    assert r.abs().autocorr(1) > 0.05  # volatility clustering
    assert r.autocorr(1) > 0.02  # momentum within regimes
    volume = np.log(bars["volume"].to_numpy()[1:])
    assert np.corrcoef(volume, r.abs().rolling(24, min_periods=1).mean())[0, 1] > 0.3
    assert (bars["high"] >= bars[["open", "close"]].max(axis=1)).all()
    assert (bars["low"] <= bars[["open", "close"]].min(axis=1)).all()


def test_several_symbols_differ_and_share_timestamps() -> None:
    bars = synthetic_ohlcv(SyntheticOptions(bars=200, symbols=3, seed=1))
    assert list(bars["symbol"].unique()) == ["SYNTH-1", "SYNTH-2", "SYNTH-3"]
    closes = [g["close"].to_numpy() for _, g in bars.groupby("symbol")]
    assert not np.allclose(closes[0], closes[1])
    assert bars.groupby("symbol")["timestamp"].apply(list).map(tuple).nunique() == 1


def test_shuffled_returns_keep_each_bar_but_not_the_order() -> None:
    bars = synthetic_ohlcv(SyntheticOptions(bars=500, seed=3))
    shuffled = shuffle_returns(bars, seed=0)
    r, s = (np.diff(np.log(b["close"].to_numpy())) for b in (bars, shuffled))
    assert not np.allclose(r, s)
    assert np.allclose(np.sort(r), np.sort(s), rtol=0, atol=1e-12)
    assert (shuffled["high"] >= shuffled[["open", "close"]].max(axis=1) * (1 - 1e-12)).all()
    assert "shuffled" in shuffled.attrs["source"]


def test_command_writes_a_file(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "bars.csv"
    assert main(["--bars", "150", "--seed", "2", "--out", str(out)]) == 0
    assert len(pd.read_csv(out)) == 150 and "SYNTHETIC" in capsys.readouterr().out
