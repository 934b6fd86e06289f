"""What sweep validate refuses in a trading sweep, before anything starts (exit 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from factories import trading_sweep
from raysweep.config.load import parse_spec
from raysweep.errors import ConfigError
from raysweep.trainables.checks import check_trainable
from raysweep.trainables.trading.synthetic import SyntheticOptions, synthetic_ohlcv


def check(data: dict[str, Any]) -> None:
    check_trainable(parse_spec(data))


def test_a_good_space_passes_and_aliases_resolve_per_library() -> None:
    space = {
        "entry_model": {"type": "choice", "values": ["lightgbm", "xgboost"]},
        "lightgbm.num_leaf": {"type": "int", "low": 4, "high": 64},
        "xgboost.eta": {"type": "loguniform", "low": 0.01, "high": 0.3},
        "stop_loss": {"type": "uniform", "low": 0.01, "high": 0.05},
        "return_horizons": [1, 8],
    }
    spec = parse_spec(trading_sweep(space))
    assert list(spec.space) == ["entry_model", "lightgbm.num_leaves", "xgboost.learning_rate",
                                "stop_loss", "return_horizons"]  # fmt: skip
    check_trainable(spec)


@pytest.mark.parametrize(
    ("space", "message"),
    [
        ({"rsi_windw": 3}, r"space\.rsi_windw: unknown trading parameter; did you mean rsi_window"),
        ({"entry_model": "sklearn"}, r"space\.entry_model: 'sklearn' is not an entry model"),
        ({"catboost.depth": 4}, r"space\.catboost\.depth: entry_model never takes 'catboost'"),
        ({"lightgbm.num_levas": 4}, r"space\.lightgbm\.num_levas: unknown LightGBM parameter"),
        ({"lightgbm.num_threads": 4}, r"space\.lightgbm\.num_threads: not a parameter to set here"),
        ({"lightgbm.num_leaves": -4}, r"space\.lightgbm\.num_leaves: LightGBM refuses"),
        ({"stop_loss": 2}, r"space\.stop_loss: must be a number in \[0, 1\]"),
        (
            {"macd_fast": {"type": "int", "low": 5, "high": 40}},
            r"space\.macd_fast: must be < macd_slow \(got 40 >= 26\)",
        ),
    ],
)
def test_bad_spaces_name_the_key(space: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check(trading_sweep(space))


def test_interacting_ranges_pass_when_some_pair_works() -> None:
    space = {"macd_fast": {"type": "int", "low": 5, "high": 40},
             "macd_slow": {"type": "int", "low": 20, "high": 60}}  # fmt: skip
    check(trading_sweep(space))


def test_bad_arguments_and_data_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"trainable_args\.windows: unknown argument"):
        check(trading_sweep(windows=3))
    with pytest.raises(ConfigError, match=r"trainable_args\.fee_bps: must be a number"):
        check(trading_sweep(fee_bps=-1))
    with pytest.raises(ConfigError, match="need >= 100"):
        check(trading_sweep(n_folds=8, val_bars=100))
    path = tmp_path / "bars.csv"
    synthetic_ohlcv(SyntheticOptions(bars=300)).drop(columns="volume").to_csv(path, index=False)
    with pytest.raises(ConfigError, match=r"no column for volume"):
        check(trading_sweep(data=str(path), synthetic=None))
    with pytest.raises(ConfigError, match="metric: trainable 'trading' does not report 'sharp'"):
        check({**trading_sweep(), "metric": "sharp"})
