"""OHLCV loading and validation: clear errors for bad files, gaps reported, files round-trip."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from raysweep.errors import ConfigError
from raysweep.trainables.trading.data import load_bars, validate_bars
from raysweep.trainables.trading.synthetic import SyntheticOptions, synthetic_ohlcv


def bars(n: int = 200, symbols: int = 1) -> pd.DataFrame:
    return synthetic_ohlcv(SyntheticOptions(bars=max(n, 100), symbols=symbols, seed=1))


def test_csv_and_parquet_round_trip(tmp_path: Path) -> None:
    frame = bars(300, symbols=2)
    for suffix in (".csv", ".parquet"):
        path = tmp_path / f"bars{suffix}"
        (frame.to_csv if suffix == ".csv" else frame.to_parquet)(path, index=False)
        loaded = load_bars({"data": str(path)})
        assert loaded.report.symbols == ("SYNTH-1", "SYNTH-2") and loaded.report.rows == 600
        assert not loaded.synthetic and loaded.report.gaps == ()
        assert str(loaded.report.interval) == "0 days 01:00:00"
    one = load_bars({"data": str(tmp_path / "bars.csv"), "symbols": ["SYNTH-2"]})
    assert one.report.symbols == ("SYNTH-2",)
    with pytest.raises(ConfigError, match=r"trainable_args.symbols: BTC not in bars\.csv"):
        load_bars({"data": str(tmp_path / "bars.csv"), "symbols": ["BTC"]})


def test_one_symbol_file_without_symbol_column_is_named_after_the_file(tmp_path: Path) -> None:
    path = tmp_path / "btcusdt.csv"
    bars(150).drop(columns="symbol").to_csv(path, index=False)
    assert load_bars({"data": str(path)}).report.symbols == ("btcusdt",)


def test_synthetic_data_is_labelled_and_seeded() -> None:
    loaded = load_bars({"data": "synthetic", "synthetic": {"bars": 500, "seed": 4}})
    assert loaded.synthetic and loaded.report.lines()[0].startswith("synthetic (seed 4): 500 bars")
    again = load_bars({"synthetic": {"bars": 500, "seed": 4}})  # "synthetic" is the default
    pd.testing.assert_frame_equal(loaded.frame, again.frame)
    with pytest.raises(ConfigError, match=r"trainable_args.synthetic.bar: unknown option"):
        load_bars({"data": "synthetic", "synthetic": {"bar": 500}})


def test_missing_columns_are_named_with_the_mapping_that_fixes_them() -> None:
    frame = bars().drop(columns=["volume", "low"])
    with pytest.raises(ConfigError, match=r"no column for low, volume; names are matched") as err:
        validate_bars(frame, "f.csv")
    assert 'trainable_args.columns, e.g. "columns": {"low": "<the column with the low>"' in str(
        err.value
    )


def test_unsorted_and_duplicated_timestamps_are_refused() -> None:
    frame = bars()
    swapped = frame.copy()
    swapped.iloc[[10, 11]] = swapped.iloc[[11, 10]].to_numpy()
    with pytest.raises(ConfigError, match=r"timestamps out of order for symbol SYNTH-1: row 11"):
        validate_bars(swapped, "f.csv")
    duplicated = pd.concat([frame.iloc[:50], frame.iloc[49:]], ignore_index=True)
    with pytest.raises(ConfigError, match=r"timestamps duplicated for symbol SYNTH-1: row 50"):
        validate_bars(duplicated, "f.csv")


def test_bad_values_are_refused() -> None:
    frame = bars()
    cases = {
        "a price <= 0": ("close", 0.0),
        "negative volume": ("volume", -1.0),
        "high below open/close": ("high", 1.0),
    }
    for message, (column, value) in cases.items():
        bad = frame.copy()
        bad.loc[7, column] = value
        with pytest.raises(ConfigError, match=f"1 bar\\(s\\) with {message}.*first at row 7"):
            validate_bars(bad, "f.csv")
    missing = frame.copy()
    missing.loc[3, "open"] = None
    with pytest.raises(ConfigError, match=r"column open: 1 missing or non-numeric value"):
        validate_bars(missing, "f.csv")
    with pytest.raises(ConfigError, match="column timestamp: cannot parse"):
        validate_bars(frame.assign(timestamp="yesterday"), "f.csv")


def test_gaps_are_reported_not_refused() -> None:
    frame = bars(300)
    holed = frame.drop(index=[*range(100, 105), 200]).reset_index(drop=True)
    report = validate_bars(holed, "f.csv").report
    assert [(g.missing_bars, str(g.after)) for g in report.gaps] == [
        (5, "2024-01-05 03:00:00+00:00"),
        (1, "2024-01-09 07:00:00+00:00"),
    ]
    lines = report.lines()
    assert lines[1] == "2 gap(s), 6 missing bar(s); largest:"
    assert lines[2] == "  SYNTH-1: 5 bar(s) after 2024-01-05 03:00 UTC"


def test_epoch_timestamps_are_read(tmp_path: Path) -> None:
    frame = bars(120)
    since = frame["timestamp"] - pd.Timestamp(0, tz="UTC")
    seconds = frame.assign(timestamp=since // pd.Timedelta("1s"))
    millis = frame.assign(timestamp=since // pd.Timedelta("1ms"))
    micros = frame.assign(timestamp=since // pd.Timedelta("1us"))
    for table in (seconds, millis, micros):
        assert validate_bars(table, "f").frame["timestamp"].iloc[1] == frame["timestamp"].iloc[1]
