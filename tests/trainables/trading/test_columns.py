"""Bars files as common tools write them: backtesting.py's, pandas ``to_csv()`` with its
index, an exchange's kline export; and ``trainable_args.columns`` for anything else."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from factories import fx_hourly_bars
from raysweep.errors import ConfigError
from raysweep.trainables.trading.data import load_bars


def test_backtesting_py_shape_with_an_unnamed_timestamp_and_capitalised_names(
    tmp_path: Path,
) -> None:
    path = tmp_path / "EURUSD.csv"
    fx_hourly_bars(600).to_csv(path)
    assert path.read_text().splitlines()[0] == ",Open,High,Low,Close,Volume"
    bars = load_bars({"data": str(path)})
    report = bars.report
    assert report.rows == 600 and report.symbols == ("EURUSD",)
    assert str(report.start) == "2004-08-19 00:00:00+00:00"
    assert report.interval == pd.Timedelta("1h")
    assert len(report.gaps) == 5 and {g.missing_bars for g in report.gaps} == {48}  # weekends
    assert list(bars.frame.columns) == ["symbol", "timestamp", "open", "high", "low", "close",
                                        "volume"]  # fmt: skip
    assert bars.frame["close"].iloc[0] == pytest.approx(fx_hourly_bars(600)["Close"].iloc[0])


def test_pandas_to_csv_with_its_index(tmp_path: Path) -> None:
    frame = fx_hourly_bars(300)
    named = tmp_path / "named.csv"
    frame.rename_axis("Date").to_csv(named)  # a named DatetimeIndex: "Date,Open,..."
    counted = tmp_path / "counted.csv"  # a RangeIndex beside a timestamp column
    frame.rename_axis("timestamp").reset_index().rename(columns=str.lower).to_csv(counted)
    assert counted.read_text().startswith(",timestamp,open,high,low,close,volume")
    parquet = tmp_path / "indexed.parquet"  # Parquet keeps the DatetimeIndex as an index
    frame.to_parquet(parquet)
    expected = load_bars({"data": str(named)}).frame[["timestamp", "close"]]
    for path in (counted, parquet):
        got = load_bars({"data": str(path)}).frame[["timestamp", "close"]]
        pd.testing.assert_frame_equal(got, expected)


def test_exchange_export_with_open_time_in_milliseconds(tmp_path: Path) -> None:
    frame = fx_hourly_bars(300)
    millis = (frame.index - pd.Timestamp("1970-01-01")) // pd.Timedelta("1ms")
    klines = pd.DataFrame(
        {
            "open_time": millis,
            **{c.lower(): frame[c].to_numpy() for c in ("Open", "High", "Low", "Close", "Volume")},
            "close_time": millis + 3_599_999,
            "quote_asset_volume": frame["Volume"].to_numpy() * 1.2,
            "number_of_trades": np.arange(300),
        }
    )
    path = tmp_path / "BTCUSDT-1h.csv"
    klines.to_csv(path, index=False)
    bars = load_bars({"data": str(path)})
    assert str(bars.report.start) == "2004-08-19 00:00:00+00:00"
    assert bars.report.interval == pd.Timedelta("1h")


def test_a_columns_mapping_for_anything_else(tmp_path: Path) -> None:
    frame = fx_hourly_bars(300).rename(columns={"Volume": "Vol."}).rename_axis("Gmt time")
    path = tmp_path / "dukascopy.csv"
    frame.to_csv(path)
    with pytest.raises(ConfigError) as refused:
        load_bars({"data": str(path)})
    message = str(refused.value)
    assert "no column for volume" in message and "Gmt time, Open, High, Low, Close, Vol." in message
    assert message.endswith('"columns": {"volume": "Vol."}')  # the mapping that fixes it
    bars = load_bars({"data": str(path), "columns": {"volume": "Vol."}})
    assert bars.frame["volume"].sum() == frame["Vol."].sum()
    with pytest.raises(ConfigError, match=r"trainable_args.columns.volume: .* no column 'vol'"):
        load_bars({"data": str(path), "columns": {"volume": "vol"}})
    with pytest.raises(ConfigError, match=r"trainable_args.columns.price: not a column name"):
        load_bars({"data": str(path), "columns": {"price": "Close"}})


def test_a_row_counter_is_not_a_timestamp(tmp_path: Path) -> None:
    path = tmp_path / "counted.csv"
    fx_hourly_bars(200).reset_index(drop=True).to_csv(path)  # ",Open,..." holding 0, 1, 2, ...
    with pytest.raises(ConfigError, match="no column for timestamp"):
        load_bars({"data": str(path)})
