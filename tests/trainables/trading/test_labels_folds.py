"""Labels from the future, and walk-forward folds that never let it into training."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from raysweep.errors import ConfigError
from raysweep.trainables.trading.data import utc_ns, validate_bars
from raysweep.trainables.trading.features import valid_rows
from raysweep.trainables.trading.folds import WalkForward, fold_rows, plan_folds
from raysweep.trainables.trading.labels import LONG, NO_TRADE, SHORT, make_labels
from raysweep.trainables.trading.params import FeatureParams, LabelParams
from raysweep.trainables.trading.synthetic import SyntheticOptions, synthetic_ohlcv


def test_labels_by_hand() -> None:
    closes = [100.0, 101.0, 100.0, 99.0, 99.1, 100.0]
    stamps = pd.date_range("2024-01-01", periods=6, freq="1h", tz="UTC")
    bars = pd.DataFrame({"symbol": "X", "timestamp": stamps, "close": closes})
    labels = make_labels(bars, LabelParams(horizon=2, threshold=0.005))
    # forward returns over 2 bars: 0, -1.98%, -0.9%, +1.01%, then none
    assert labels.classes[:4].tolist() == [NO_TRADE, SHORT, SHORT, LONG]
    assert np.isnan(labels.classes[4:]).all()
    assert labels.ends_at[0] == np.datetime64("2024-01-01T02:00")
    assert np.isnat(labels.ends_at[4:]).all()


def test_labels_stay_within_their_symbol() -> None:
    bars = validate_bars(synthetic_ohlcv(SyntheticOptions(bars=100, symbols=2)), "s").frame
    labels = make_labels(bars, LabelParams(horizon=3))
    assert np.isnan(labels.classes[97:100]).all() and not np.isnan(labels.classes[100:197]).any()


def test_plan_folds_expanding_and_rolling() -> None:
    folds = plan_folds(1000, WalkForward(n_folds=4, embargo=10))
    assert [(f.train_start, f.train_end, f.val_start, f.val_end) for f in folds] == [
        (0, 490, 500, 625), (0, 615, 625, 750), (0, 740, 750, 875), (0, 865, 875, 1000)
    ]  # fmt: skip
    rolling = plan_folds(1000, WalkForward(n_folds=2, val_bars=100, min_train_bars=300,
                                           window="rolling", embargo=0))  # fmt: skip
    assert [(f.train_start, f.train_end, f.val_start) for f in rolling] == [
        (500, 800, 800), (600, 900, 900)
    ]  # fmt: skip
    with pytest.raises(ConfigError, match=r"leave 40 bar\(s\) to train the first fold"):
        plan_folds(500, WalkForward(n_folds=4, val_bars=110, embargo=20))


def test_no_training_row_sees_the_validation_fold_or_the_gap() -> None:
    """Purged and embargoed: every training label ends before the gap; no row is shared."""
    bars = validate_bars(synthetic_ohlcv(SyntheticOptions(bars=900, symbols=2)), "s").frame
    rows_at = utc_ns(bars["timestamp"])
    stamps = np.unique(rows_at)
    horizon, embargo = 7, 5
    labels = make_labels(bars, LabelParams(horizon=horizon))
    usable = valid_rows(bars, FeatureParams())
    folds = plan_folds(len(stamps), WalkForward(n_folds=3, embargo=embargo))
    for fold in folds:
        train, val = fold_rows(fold, stamps, rows_at, labels.ends_at, usable)
        gap_start = stamps[fold.val_start - embargo]
        assert labels.ends_at[train].max() < gap_start  # purged: labels end before the gap
        assert rows_at[train].max() < gap_start - np.timedelta64(horizon - 1, "h")
        assert rows_at[val].min() == stamps[fold.val_start]
        assert not set(train) & set(val)
        assert len(val) == 2 * (fold.val_end - fold.val_start)  # both symbols
        assert usable[train].all() and not np.isnan(labels.classes[train]).any()
