"""The trading trainable's parameters: names, defaults, and typed, validated values.

Two kinds of settings:

* hyperparameters, in sweep.json's ``space`` (tuned): the entry model
  (``entry_model`` and ``<model>.<parameter>``, e.g. ``lightgbm.num_leaves`` or
  ``cnn_lstm.hidden_size``),
  the feature windows, the labels and the trading parameters;
* ``trainable_args`` (fixed for the sweep): the data, the walk-forward scheme,
  costs and the score.

Import-light (no pandas, no GBM library): config validation reads these tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal, cast

from raysweep.errors import ConfigError

Library = Literal["lightgbm", "xgboost", "catboost"]
LIBRARIES: tuple[Library, ...] = ("lightgbm", "xgboost", "catboost")
# The entry models: the GBM libraries and the torch sequence model (trading/cnn_lstm.py).
EntryModel = Literal["lightgbm", "xgboost", "catboost", "cnn_lstm"]
ENTRY_MODELS: tuple[EntryModel, ...] = (*LIBRARIES, "cnn_lstm")
ENTRY_MODEL = "entry_model"
DEFAULT_ENTRY_MODEL: Library = "lightgbm"

FEATURE_DEFAULTS: dict[str, Any] = {
    "return_horizons": [1, 4, 16],
    "rsi_window": 14,
    "macd_fast": 12,
    "macd_slow": 26,
    "macd_signal": 9,
    "bb_window": 20,
    "bb_std": 2.0,
    "atr_window": 14,
    "volume_window": 20,
}
LABEL_DEFAULTS: dict[str, Any] = {"label_horizon": 4, "label_threshold": 0.002}
TRADING_DEFAULTS: dict[str, Any] = {
    "entry_threshold": 0.5,
    "stop_loss": 0.02,
    "take_profit": 0.04,
    "max_holding": 24,
}
# Every non-model hyperparameter the trainable reads from a trial's config.
HYPERPARAMETERS: dict[str, Any] = {
    ENTRY_MODEL: DEFAULT_ENTRY_MODEL,
    **FEATURE_DEFAULTS,
    **LABEL_DEFAULTS,
    **TRADING_DEFAULTS,
}
ARG_DEFAULTS: dict[str, Any] = {
    "data": "synthetic",  # a .csv/.parquet path, or "synthetic"
    "symbols": None,  # keep only these symbols (default: all)
    "columns": None,  # the file's column for a name: {"timestamp": "open_time"} (columns.py)
    "synthetic": {},  # options of the synthetic generator (synthetic.SyntheticOptions)
    "n_folds": 4,
    "val_bars": None,  # bars per validation fold (default: see folds.plan_folds)
    "min_train_bars": None,  # bars before the first fold (default: half the series)
    "window": "expanding",  # or "rolling": train on the last min_train_bars only
    "embargo": 12,  # bars left out between a training fold and its validation fold
    "fee_bps": 10.0,
    "slippage_bps": 5.0,
    "allow_short": True,
    "num_boost_round": 100,
    "periods_per_year": None,  # default: from the median bar interval (markets open 24/7)
    "min_trades": 20,
    "drawdown_weight": 2.0,
    "check_lookahead": True,
}
METRICS: tuple[str, ...] = (
    "composite",
    "sharpe",
    "sortino",
    "win_rate",
    "profit_rate",
    "max_drawdown",
    "n_trades",
    "turnover",
    "log_loss",
    "fold",
)


def model_key(name: str) -> tuple[EntryModel, str] | None:
    """``("lightgbm", "num_leaves")`` for ``lightgbm.num_leaves``; None for other keys."""
    library, dot, param = name.partition(".")
    if dot and param and library in ENTRY_MODELS:
        return library, param
    return None


def model_config(config: Mapping[str, Any], library: str) -> dict[str, Any]:
    """The entry model's own parameters: ``<library>.<name>`` keys with the prefix removed."""
    prefix = f"{library}."
    return {k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)}


def entry_library(config: Mapping[str, Any]) -> EntryModel:
    """The trial's entry model (ConfigError naming the valid ones)."""
    value = config.get(ENTRY_MODEL, DEFAULT_ENTRY_MODEL)
    if value not in ENTRY_MODELS:
        raise ConfigError(
            f"space.{ENTRY_MODEL}: must be one of {', '.join(ENTRY_MODELS)} (got {value!r})"
        )
    return cast(EntryModel, value)


def int_value(source: Mapping[str, Any], key: str, default: Any, where: str, low: int) -> int:
    """An integer >= ``low`` (an integral float from a search space is accepted)."""
    value = source.get(key, default)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"{where}.{key}: must be an integer >= {low} (got {value!r})")
    return value


def float_value(
    source: Mapping[str, Any],
    key: str,
    default: Any,
    where: str,
    low: float = 0.0,
    high: float | None = None,
    low_open: bool = False,
) -> float:
    """A number in [low, high] (or (low, high] with ``low_open``)."""
    value = source.get(key, default)
    ok = not isinstance(value, bool) and isinstance(value, int | float)
    if ok:
        ok = (value > low if low_open else value >= low) and (high is None or value <= high)
    if not ok:
        bracket = "(" if low_open else "["
        upper = "inf)" if high is None else f"{high:g}]"
        raise ConfigError(f"{where}.{key}: must be a number in {bracket}{low:g}, {upper} "
                          f"(got {value!r})")  # fmt: skip
    return float(value)


@dataclass(frozen=True)
class FeatureParams:
    """Feature windows (bars). Every feature at bar t uses bars <= t only."""

    return_horizons: tuple[int, ...] = (1, 4, 16)
    rsi_window: int = 14
    macd_fast: int = 12
    macd_slow: int = 26
    macd_signal: int = 9
    bb_window: int = 20
    bb_std: float = 2.0
    atr_window: int = 14
    volume_window: int = 20

    @staticmethod
    def from_config(config: Mapping[str, Any]) -> FeatureParams:
        d = FEATURE_DEFAULTS
        horizons = config.get("return_horizons", d["return_horizons"])
        if isinstance(horizons, int | float) and not isinstance(horizons, bool):
            horizons = [horizons]
        if not isinstance(horizons, list | tuple) or not horizons:
            raise ConfigError(
                f"space.return_horizons: must be a non-empty list of bars (got {horizons!r})"
            )
        parsed = tuple(
            int_value({"return_horizons": h}, "return_horizons", None, "space", 1) for h in horizons
        )
        ints = {
            k: int_value(config, k, d[k], "space", 2)
            for k in ("rsi_window", "macd_fast", "macd_slow", "macd_signal", "bb_window",
                      "atr_window", "volume_window")
        }  # fmt: skip
        if ints["macd_fast"] >= ints["macd_slow"]:
            raise ConfigError(
                f"space.macd_fast: must be < macd_slow (got {ints['macd_fast']} >= "
                f"{ints['macd_slow']})"
            )
        bb_std = float_value(config, "bb_std", d["bb_std"], "space", 0.0, low_open=True)
        return FeatureParams(return_horizons=tuple(sorted(set(parsed))), bb_std=bb_std, **ints)

    @property
    def lookback(self) -> int:
        """Bars of history the slowest feature needs before its value settles."""
        return max(*self.return_horizons, self.rsi_window, self.macd_slow + self.macd_signal,
                   self.bb_window, self.atr_window, self.volume_window) + 1  # fmt: skip


@dataclass(frozen=True)
class LabelParams:
    """LONG when the return over the next ``horizon`` bars exceeds ``threshold``, etc."""

    horizon: int = 4
    threshold: float = 0.002

    @staticmethod
    def from_config(config: Mapping[str, Any]) -> LabelParams:
        d = LABEL_DEFAULTS
        return LabelParams(
            horizon=int_value(config, "label_horizon", d["label_horizon"], "space", 1),
            threshold=float_value(config, "label_threshold", d["label_threshold"], "space"),
        )


@dataclass(frozen=True)
class TradingParams:
    """Entry threshold on the predicted probability, exits as fractions of the entry price.

    ``stop_loss`` or ``take_profit`` 0 turns that exit off; ``max_holding`` is in bars.
    """

    entry_threshold: float = 0.5
    stop_loss: float = 0.02
    take_profit: float = 0.04
    max_holding: int = 24

    @staticmethod
    def from_config(config: Mapping[str, Any]) -> TradingParams:
        d = TRADING_DEFAULTS
        return TradingParams(
            entry_threshold=float_value(
                config, "entry_threshold", d["entry_threshold"], "space", 0.0, 1.0
            ),
            stop_loss=float_value(config, "stop_loss", d["stop_loss"], "space", 0.0, 1.0),
            take_profit=float_value(config, "take_profit", d["take_profit"], "space"),
            max_holding=int_value(config, "max_holding", d["max_holding"], "space", 1),
        )

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Costs:
    """Per-side costs in basis points of the traded notional."""

    fee_bps: float = 10.0
    slippage_bps: float = 5.0
    allow_short: bool = True

    @property
    def fee(self) -> float:
        return self.fee_bps / 1e4

    @property
    def slippage(self) -> float:
        return self.slippage_bps / 1e4

    @staticmethod
    def from_args(args: Mapping[str, Any]) -> Costs:
        d = ARG_DEFAULTS
        allow_short = args.get("allow_short", d["allow_short"])
        if not isinstance(allow_short, bool):
            raise ConfigError(f"trainable_args.allow_short: must be true or false "
                              f"(got {allow_short!r})")  # fmt: skip
        return Costs(
            fee_bps=float_value(args, "fee_bps", d["fee_bps"], "trainable_args", 0.0, 1e4),
            slippage_bps=float_value(
                args, "slippage_bps", d["slippage_bps"], "trainable_args", 0.0, 1e4
            ),
            allow_short=allow_short,
        )


@dataclass(frozen=True)
class ScoreArgs:
    """How the composite score weighs its parts (docs/trading.md)."""

    min_trades: int = 20
    drawdown_weight: float = 2.0
    periods_per_year: float | None = None

    @staticmethod
    def from_args(args: Mapping[str, Any]) -> ScoreArgs:
        d = ARG_DEFAULTS
        ppy = args.get("periods_per_year")
        return ScoreArgs(
            min_trades=int_value(args, "min_trades", d["min_trades"], "trainable_args", 1),
            drawdown_weight=float_value(
                args, "drawdown_weight", d["drawdown_weight"], "trainable_args"
            ),
            periods_per_year=None
            if ppy is None
            else float_value(args, "periods_per_year", None, "trainable_args", 0.0, low_open=True),
        )
