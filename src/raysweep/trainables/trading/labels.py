"""Labels: the move over the next ``horizon`` bars, as SHORT / NO_TRADE / LONG.

``r = close[t + horizon] / close[t] - 1`` (per symbol); LONG when ``r > threshold``,
SHORT when ``r < -threshold``, NO_TRADE otherwise. The last ``horizon`` bars of a
symbol have no label. Labels read the future by definition: they are only ever
targets, and every training row whose label reaches past the end of its training
fold is dropped (``folds``: purging), so no label overlaps a validation fold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from raysweep.trainables.trading.data import utc_ns
from raysweep.trainables.trading.params import LabelParams

SHORT, NO_TRADE, LONG = 0, 1, 2
CLASS_NAMES: tuple[str, ...] = ("SHORT", "NO_TRADE", "LONG")
N_CLASSES = 3


@dataclass(frozen=True)
class Labels:
    """Per bar: the class (NaN without one), and when the label's horizon ends."""

    classes: np.ndarray  # float64: 0, 1, 2 or NaN
    ends_at: np.ndarray  # datetime64[ns]: timestamp of bar t + horizon (NaT without one)
    forward_return: np.ndarray  # float64


def forward_returns(bars: pd.DataFrame, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """(close[t + h] / close[t] - 1, timestamp of t + h) per bar, within each symbol."""
    grouped = bars.groupby("symbol", sort=False)
    future_close = grouped["close"].shift(-horizon).to_numpy(np.float64)
    ends_at = grouped["timestamp"].shift(-horizon)
    ret = future_close / bars["close"].to_numpy(np.float64) - 1.0
    return ret, utc_ns(ends_at)


def make_labels(bars: pd.DataFrame, params: LabelParams) -> Labels:
    """The class of every bar (see the module docstring)."""
    ret, ends_at = forward_returns(bars, params.horizon)
    classes = np.full(len(ret), float(NO_TRADE))
    classes[ret > params.threshold] = LONG
    classes[ret < -params.threshold] = SHORT
    classes[np.isnan(ret)] = np.nan
    return Labels(classes, ends_at, ret)
