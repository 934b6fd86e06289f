"""The look-ahead check: a feature at bar t must not change when later bars are removed.

``check_causal`` computes the features on the whole series and again on the series
cut at a few timestamps; on the bars both see, every value must agree. A feature
that reads the future (a ``shift(-1)``, a centred window, a normalisation over the
whole series, a label leaking into the inputs) changes when the future is cut off
and is named in the error. The trading trainable runs it at the start of every
trial on the first ``CHECK_BARS`` bars of the data (a few milliseconds).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from raysweep.errors import TrainableError
from raysweep.trainables.trading.data import utc_ns

CHECK_BARS = 3000
CUT_FRACTIONS: tuple[float, ...] = (0.5, 0.7, 0.9)


class LookAheadError(TrainableError):
    """A feature's past values depend on later bars."""


def check_causal(
    bars: pd.DataFrame,
    compute: Callable[[pd.DataFrame], pd.DataFrame],
    cuts: Sequence[float] = CUT_FRACTIONS,
    rtol: float = 1e-9,
) -> None:
    """LookAheadError naming every feature column whose past changes when the future is cut.

    ``bars`` sorted by (symbol, timestamp); ``compute(bars) -> features`` with the
    bars' index. ``cuts``: where to cut, as fractions of the distinct timestamps.
    """
    full = compute(bars)
    rows_at = utc_ns(bars["timestamp"])
    stamps = np.unique(rows_at)
    leaks: dict[str, str] = {}
    for fraction in cuts:
        cut = stamps[min(len(stamps) - 1, max(1, int(len(stamps) * fraction)))]
        part = compute(bars[rows_at < cut])
        for column in full.columns:
            if column in leaks:
                continue
            before = full.loc[part.index, column].to_numpy(np.float64)
            after = part[column].to_numpy(np.float64)
            same = np.isclose(before, after, rtol=rtol, atol=1e-12, equal_nan=True)
            if not same.all():
                first = part.index[int(np.argmin(same))]
                leaks[column] = (
                    f"{column} at {bars.loc[first, 'timestamp']} is {before[np.argmin(same)]:.6g} "
                    f"with the whole series, {after[np.argmin(same)]:.6g} with bars before "
                    f"{pd.Timestamp(cut, tz='UTC')}"
                )
    if leaks:
        raise LookAheadError(
            "look-ahead: these features change when later bars are removed, so they read "
            "the future: " + "; ".join(leaks.values())
        )


def check_prefix(
    bars: pd.DataFrame, compute: Callable[[pd.DataFrame], pd.DataFrame], rows: int = CHECK_BARS
) -> None:
    """``check_causal`` on the first ``rows`` timestamps (all symbols): cheap enough per trial."""
    rows_at = utc_ns(bars["timestamp"])
    stamps = np.unique(rows_at)
    if len(stamps) > rows:
        bars = bars[rows_at < stamps[rows]]
    check_causal(bars, compute)
