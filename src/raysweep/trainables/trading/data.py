"""OHLCV bars from a CSV or Parquet file (or the synthetic generator), validated.

Columns: ``timestamp``, ``open``, ``high``, ``low``, ``close``, ``volume``, and
``symbol`` when the file holds several symbols, found as common tools name them
(``columns.py``: any case, aliases, an unnamed index column, ``trainable_args.columns``).
Refused with an error that says
where (``ConfigError``, exit 2 when ``sweep validate``/``run`` checks the data):
a missing column, an unparseable timestamp, timestamps out of order or duplicated
within a symbol, missing or non-positive prices, negative volume, a bar whose
high/low do not bound its open and close. Gaps (a step longer than 1.5 times the
symbol's usual interval) are allowed and *reported* (``DataReport.lines``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from raysweep.errors import ConfigError
from raysweep.trainables.trading.columns import columns_arg, standard_columns
from raysweep.trainables.trading.synthetic import SOURCE, SyntheticOptions, synthetic_ohlcv

PRICE_COLUMNS: tuple[str, ...] = ("open", "high", "low", "close")
SUFFIXES: tuple[str, ...] = (".csv", ".parquet", ".pq")
GAP_FACTOR = 1.5
_CACHE_SIZE = 4
_cache: OrderedDict[Hashable, Bars] = OrderedDict()
_lock = threading.Lock()


@dataclass(frozen=True)
class Gap:
    """A stretch of missing bars in one symbol."""

    symbol: str
    after: pd.Timestamp
    missing_bars: int


@dataclass(frozen=True)
class DataReport:
    """What was loaded, and the gaps found."""

    source: str
    rows: int
    symbols: tuple[str, ...]
    start: pd.Timestamp
    end: pd.Timestamp
    interval: pd.Timedelta
    gaps: tuple[Gap, ...] = field(default=())

    def lines(self, limit: int = 3) -> list[str]:
        """A summary line, then one line for the gaps and one per gap (the ``limit`` largest)."""
        more = ", ..." if len(self.symbols) > 5 else ""
        out = [
            f"{self.source}: {self.rows} bars, {len(self.symbols)} symbol(s) "
            f"({', '.join(self.symbols[:5])}{more}), {stamp_text(self.start)} .. "
            f"{stamp_text(self.end)}, interval {interval_text(self.interval)}"
        ]
        if self.gaps:
            missing = sum(g.missing_bars for g in self.gaps)
            out.append(f"{len(self.gaps)} gap(s), {missing} missing bar(s); largest:")
            largest = sorted(self.gaps, key=lambda g: -g.missing_bars)[:limit]
            out.extend(
                f"  {g.symbol}: {g.missing_bars} bar(s) after {stamp_text(g.after)}"
                for g in largest
            )
        return out


def stamp_text(stamp: pd.Timestamp) -> str:
    """``2004-08-19 13:00 UTC`` (a time-zone-naive stamp without the zone)."""
    zone = " UTC" if stamp.tzinfo is not None and stamp.utcoffset() == pd.Timedelta(0) else ""
    return stamp.strftime("%Y-%m-%d %H:%M") + zone


def interval_text(interval: pd.Timedelta) -> str:
    """``1h``, ``15min``, ``1d``, ``30s``: the largest whole unit."""
    seconds = int(interval.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{interval.total_seconds():g}s"


@dataclass(frozen=True)
class Bars:
    """Validated bars sorted by (symbol, timestamp); ``symbol`` always present."""

    frame: pd.DataFrame
    report: DataReport

    @property
    def synthetic(self) -> bool:
        return self.report.source.startswith(SOURCE)


def load_bars(args: Mapping[str, Any]) -> Bars:
    """The bars ``trainable_args`` name (``data``: a path or "synthetic"), validated and cached."""
    data = args.get("data", "synthetic")
    if not isinstance(data, str) or not data:
        raise ConfigError(
            f"trainable_args.data: a .csv/.parquet path or 'synthetic' (got {data!r})"
        )
    symbols = _symbols_arg(args.get("symbols"))
    columns = columns_arg(args.get("columns"))
    if data == SOURCE:
        if columns:
            raise ConfigError("trainable_args.columns: only used with a data file")
        options = SyntheticOptions.from_args(args.get("synthetic"))
        key: Hashable = (SOURCE, options, symbols)
    else:
        if args.get("synthetic"):
            raise ConfigError("trainable_args.synthetic: only used with data 'synthetic'")
        path = _path(data)
        key = (str(path), path.stat().st_mtime_ns, symbols, columns)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    if data == SOURCE:
        frame, source = synthetic_ohlcv(options), f"{SOURCE} (seed {options.seed})"
    else:
        frame, source = read_file(path), path.name
    bars = validate_bars(frame, source, symbols, columns)
    with _lock:
        _cache[key] = bars
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return bars


def read_file(path: Path) -> pd.DataFrame:
    """The raw table of a CSV or Parquet file (ConfigError when unreadable)."""
    try:
        if path.suffix.lower() == ".csv":
            return pd.read_csv(path)
        frame = pd.read_parquet(path)
    except Exception as exc:
        raise ConfigError(f"trainable_args.data: cannot read {path}: {exc}") from None
    # a frame written with its index (a DatetimeIndex) keeps it as the index: make it a column
    return frame if isinstance(frame.index, pd.RangeIndex) else frame.reset_index()


def validate_bars(
    frame: pd.DataFrame,
    source: str,
    symbols: tuple[str, ...] | None = None,
    columns: tuple[tuple[str, str], ...] = (),
) -> Bars:
    """Check and normalise raw bars (see the module docstring for what is refused).

    ``columns``: (name, file column) pairs of ``trainable_args.columns``.
    """
    where = f"trainable_args.data ({source})"
    out = standard_columns(frame, where, columns).copy()
    if "symbol" not in out:
        out.insert(0, "symbol", Path(source).stem or "data")
    out["symbol"] = out["symbol"].astype(str)
    out["timestamp"] = _timestamps(out["timestamp"], where)
    for column in (*PRICE_COLUMNS, "volume"):
        out[column] = _numbers(out[column], column, where)
    if symbols is not None:
        unknown = sorted(set(symbols) - set(out["symbol"]))
        if unknown:
            raise ConfigError(
                f"trainable_args.symbols: {', '.join(unknown)} not in {source}; it has: "
                f"{', '.join(sorted(out['symbol'].unique())[:20])}"
            )
        out = out[out["symbol"].isin(symbols)]
    _check_order(out, where)
    _check_prices(out, where)
    out = out.sort_values(["symbol", "timestamp"], kind="stable").reset_index(drop=True)
    interval, gaps = find_gaps(out)
    report = DataReport(
        source=source,
        rows=len(out),
        symbols=tuple(out["symbol"].unique()),
        start=out["timestamp"].min(),
        end=out["timestamp"].max(),
        interval=interval,
        gaps=gaps,
    )
    return Bars(out, report)


def find_gaps(frame: pd.DataFrame) -> tuple[pd.Timedelta, tuple[Gap, ...]]:
    """The usual bar interval (median step) and every gap, per symbol."""
    steps = frame.groupby("symbol", sort=False)["timestamp"].diff()
    interval = steps.median()
    if pd.isna(interval) or interval <= pd.Timedelta(0):
        raise ConfigError("trainable_args.data: need at least 2 bars per symbol")
    long = steps > interval * GAP_FACTOR
    gaps = tuple(
        Gap(str(sym), frame["timestamp"].iloc[i - 1], round(step / interval) - 1)
        for i, sym, step in zip(
            np.flatnonzero(long.to_numpy()),
            frame["symbol"].to_numpy()[long.to_numpy()],
            steps[long],
            strict=True,
        )
    )
    return pd.Timedelta(interval), gaps


def utc_ns(stamps: pd.Series) -> np.ndarray:
    """Timestamps as naive UTC ``datetime64[ns]`` (what the folds and labels compare)."""
    values = pd.DatetimeIndex(stamps)
    if values.tz is not None:
        values = values.tz_convert("UTC").tz_localize(None)
    return np.asarray(values.as_unit("ns").to_numpy())


def _check_order(frame: pd.DataFrame, where: str) -> None:
    for symbol, stamps in frame.groupby("symbol", sort=False)["timestamp"]:
        step = stamps.diff().to_numpy()[1:]
        bad = np.flatnonzero(step <= np.timedelta64(0))
        if not len(bad):
            continue
        i = int(bad[0]) + 1
        row, before = stamps.index[i], stamps.index[i - 1]
        kind = "duplicated" if step[bad[0]] == np.timedelta64(0) else "out of order"
        raise ConfigError(
            f"{where}: timestamps {kind} for symbol {symbol}: row {row} ({stamps.iloc[i]}) "
            f"after row {before} ({stamps.iloc[i - 1]}); timestamps must increase strictly "
            "within each symbol (sort the file, drop duplicates)"
        )


def _check_prices(frame: pd.DataFrame, where: str) -> None:
    prices = frame[list(PRICE_COLUMNS)].to_numpy()
    checks = {
        "a price <= 0": (prices <= 0).any(axis=1),
        "negative volume": frame["volume"].to_numpy() < 0,
        "high below open/close or low above them": (
            (frame["high"] < frame[["open", "close"]].max(axis=1) * (1 - 1e-9))
            | (frame["low"] > frame[["open", "close"]].min(axis=1) * (1 + 1e-9))
        ).to_numpy(),
    }
    for what, bad in checks.items():
        if bad.any():
            row = frame.index[int(np.argmax(bad))]
            raise ConfigError(f"{where}: {int(bad.sum())} bar(s) with {what}, first at row {row}")


def _timestamps(column: pd.Series, where: str) -> pd.Series:
    try:
        if pd.api.types.is_numeric_dtype(column):
            return pd.to_datetime(column, unit=_epoch_unit(column.abs().max()), utc=True)
        return pd.to_datetime(column, utc=True)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{where}: column timestamp: cannot parse ({exc})") from None


def _epoch_unit(largest: float) -> str:
    """Seconds, milliseconds, microseconds or nanoseconds since 1970, by magnitude."""
    for unit, below in (("s", 1e11), ("ms", 1e14), ("us", 1e17)):
        if largest < below:
            return unit
    return "ns"


def _numbers(column: pd.Series, name: str, where: str) -> pd.Series:
    values = pd.to_numeric(column, errors="coerce")
    bad = values.isna()
    if bad.any():
        row = column.index[int(np.argmax(bad.to_numpy()))]
        raise ConfigError(f"{where}: column {name}: {int(bad.sum())} missing or non-numeric "
                          f"value(s), first at row {row} ({column.loc[row]!r})")  # fmt: skip
    return values.astype(np.float64)


def _symbols_arg(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Sequence) or not value or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"trainable_args.symbols: a list of symbol names (got {value!r})")
    return tuple(value)


def _path(name: str) -> Path:
    path = Path(name).expanduser()
    if path.suffix.lower() not in SUFFIXES:
        raise ConfigError(
            f"trainable_args.data: {name!r} is neither 'synthetic' nor a .csv/.parquet file"
        )
    if not path.is_file():
        raise ConfigError(f"trainable_args.data: file not found: {path}")
    return path.resolve()
