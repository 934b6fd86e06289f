"""What ``sweep validate`` / ``sweep run`` check for the trading trainable before anything starts.

* ``trainable_args``: the data loads and validates (``data``), the folds fit in it,
  costs and score settings are in range;
* ``space`` names: the trading hyperparameters (``params.HYPERPARAMETERS``) and
  ``<model>.<name>`` for an entry model ``entry_model`` can take; anything else
  is refused with the nearest valid names;
* ``space`` values: the constants, then each sampled parameter's corners (low, high,
  every choice), are read as a trial reads them; a corner that fails alone is
  tried with every corner of each other parameter, as for the GBM built-ins;
* each entry model's own parameters go through that library's check
  (``params.check.check_params``: owned keys, names, values through the library);
  ``cnn_lstm``'s through ``CnnLstmParams`` (names, ranges, every corner).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raysweep._imports import require
from raysweep.config.schema import SweepSpec, is_sampled
from raysweep.errors import ConfigError
from raysweep.trainables.params.corners import corners
from raysweep.trainables.params.names import did_you_mean, nearest
from raysweep.trainables.params.tiny_data import DataShape
from raysweep.trainables.trading.cnn_lstm_params import CNN_LSTM, CnnLstmParams
from raysweep.trainables.trading.params import (
    ENTRY_MODEL,
    ENTRY_MODELS,
    HYPERPARAMETERS,
    Costs,
    FeatureParams,
    LabelParams,
    ScoreArgs,
    TradingParams,
    model_key,
)

_READERS = (FeatureParams.from_config, LabelParams.from_config, TradingParams.from_config)


def check_trading(spec: SweepSpec) -> None:
    """ConfigError naming the first bad argument, key or value of a trading sweep."""
    check_args(spec.trainable_args)
    libraries = entry_models(spec.space)
    for library in libraries:
        require("torch" if library == CNN_LSTM else library, f"entry_model {library!r}")
    for key in spec.space:
        if key in HYPERPARAMETERS:
            continue
        parsed = model_key(key)
        if parsed is None:
            known = [*HYPERPARAMETERS, *(f"{lib}.<parameter>" for lib in libraries)]
            hint = did_you_mean(nearest(key, known))
            raise ConfigError(
                f"space.{key}: unknown trading parameter{hint}; entry model parameters are "
                f"written <library>.<name> (e.g. lightgbm.num_leaves)"
            )
        if parsed[0] not in libraries:
            raise ConfigError(
                f"space.{key}: entry_model never takes {parsed[0]!r} "
                f"(it takes: {', '.join(libraries)})"
            )
    check_values(spec.space)
    for library in libraries:
        check_model(spec, library)


def check_args(args: Mapping[str, Any]) -> None:
    """The data, folds, costs and score settings of ``trainable_args``."""
    from raysweep.trainables.trading.data import load_bars, utc_ns
    from raysweep.trainables.trading.folds import WalkForward, plan_folds

    Costs.from_args(args)
    ScoreArgs.from_args(args)
    wf = WalkForward.from_args(args)
    bars = load_bars(args)
    plan_folds(len(set(utc_ns(bars.frame["timestamp"]).tolist())), wf)


def entry_models(space: Mapping[str, Any]) -> list[str]:
    """The libraries ``entry_model`` can take (ConfigError for any other value)."""
    value = space.get(ENTRY_MODEL, HYPERPARAMETERS[ENTRY_MODEL])
    values = [c.value for c in corners(value)] if is_sampled(value) else [value]
    for v in values:
        if v not in ENTRY_MODELS:
            raise ConfigError(
                f"space.{ENTRY_MODEL}: {v!r} is not an entry model; one of "
                f"{', '.join(ENTRY_MODELS)}"
            )
    return list(dict.fromkeys(values))


def check_values(space: Mapping[str, Any]) -> None:
    """Every trading hyperparameter's constants and corners, read as a trial reads them."""
    own = {k: v for k, v in space.items() if k in HYPERPARAMETERS and k != ENTRY_MODEL}
    constants = {k: v for k, v in own.items() if not is_sampled(v)}
    error = _error(constants)
    if error is not None:
        raise ConfigError(error)
    sampled = {k: [c.value for c in corners(v)] for k, v in own.items() if is_sampled(v)}
    for key, values in sampled.items():
        for value in values:
            error = _error({**constants, key: value})
            if error is None:
                continue
            others = [(o, w) for o, ws in sampled.items() if o != key for w in ws]
            if not any(_error({**constants, key: value, o: w}) is None for o, w in others):
                raise ConfigError(f"{error} (at {key}={value!r})")


def check_model(spec: SweepSpec, library: str) -> None:
    """``library``'s parameters in ``space`` through its own check, named by their full key."""
    from raysweep.trainables.params.check import check_params
    from raysweep.trainables.trading.features import feature_names

    prefix = f"{library}."
    own = {k[len(prefix) :]: v for k, v in spec.space.items() if k.startswith(prefix)}
    if library == CNN_LSTM:
        check_cnn_lstm(own)
        return
    args = {k: v for k, v in spec.trainable_args.items() if k == "num_boost_round"}
    shape = DataShape("classification", 3, tuple(feature_names(FeatureParams())))
    try:
        check_params(library, own, args, shape, spec.reproducibility.deterministic, spec.seed)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("space.", f"space.{prefix}", 1)) from None


def check_cnn_lstm(own: Mapping[str, Any]) -> None:
    """The ``cnn_lstm.<name>`` parameters: names, constants, then each sampled one's corners."""
    constants = {k: v for k, v in own.items() if not is_sampled(v)}
    CnnLstmParams.from_config(constants)
    for key, value in own.items():
        if is_sampled(value):
            for corner in corners(value):
                try:
                    CnnLstmParams.from_config({**constants, key: corner.value})
                except ConfigError as exc:
                    raise ConfigError(f"{exc} (at {CNN_LSTM}.{key}={corner.value!r})") from None


def _error(config: dict[str, Any]) -> str | None:
    """The error a trial would raise reading ``config`` (None when it reads)."""
    for reader in _READERS:
        try:
            reader(config)
        except ConfigError as exc:
            return str(exc)
    return None
