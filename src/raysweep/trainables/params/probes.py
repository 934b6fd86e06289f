"""Each built-in's own parameter validation, run on the tiny dataset: one round, one thread, CPU.

A probe takes a trial config (``space`` values) and builds the library's
parameters exactly as the trial will (``gbm.build_params``: raysweep's seed,
threads, device and metric settings, the task's objective), then trains one round
on the tiny dataset. It returns the library's message when the library refuses
them, and the keys the library says it does not know or does not use.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from raysweep.errors import SweepError
from raysweep.repro.seeds import trial_seed_for
from raysweep.trainables.context import TrialContext
from raysweep.trainables.data import Dataset

_XGB_UNUSED = re.compile(r"Parameters: \{(.*?)\} are not used", re.DOTALL)
_XGB_PREFIX = re.compile(r"^\[\d\d:\d\d:\d\d\] (WARNING: )?\S+:\d+: ")
_CATBOOST_PREFIX = re.compile(r"^\S+\.(cpp|h):\d+: ")
_CATBOOST_UNKNOWN = re.compile(r"Unknown option \{(.*?)\}")
_MAX_MESSAGE = 400


@dataclass(frozen=True)
class Outcome:
    """What the library said about one set of parameters."""

    error: str | None = None  # its message when it refused them
    ignored: frozenset[str] = frozenset()  # keys it does not know or does not use


Probe = Callable[[dict[str, Any]], Outcome]


def make_probe(
    trainable: str,
    trainable_args: Mapping[str, Any],
    dataset: Dataset,
    deterministic: bool,
    master_seed: int,
) -> Probe:
    """The probe for built-in ``trainable`` on ``dataset`` (imports its library)."""
    ctx = TrialContext(
        index=0,
        seed=trial_seed_for(master_seed, 0),
        metric="val_loss",
        mode="min",
        trainable_args=dict(trainable_args),
        cpus=1,
        deterministic=deterministic,
        master_seed=master_seed,
    )
    if trainable == "torch_mlp":
        return _torch_mlp_probe(ctx)
    train = {"lightgbm": _lightgbm, "xgboost": _xgboost, "catboost": _catboost}[trainable](
        dataset, ctx.seed
    )

    def probe(config: dict[str, Any]) -> Outcome:
        from raysweep.trainables.gbm import build_params

        try:
            _, params = build_params(trainable, config, ctx, dataset)  # type: ignore[arg-type]
        except SweepError as exc:
            return Outcome(str(exc))
        return train(params)

    return probe


def _torch_mlp_probe(ctx: TrialContext) -> Probe:
    from raysweep.trainables.builtins import positive_int_arg
    from raysweep.trainables.torch_mlp import DEFAULT_EPOCHS, NAME, hyperparams

    def probe(config: dict[str, Any]) -> Outcome:
        try:
            hyperparams(config)
            positive_int_arg({**ctx.trainable_args, **config}, "epochs", DEFAULT_EPOCHS)
        except SweepError as exc:
            return Outcome(str(exc).removeprefix(f"{NAME}: "))
        return Outcome()

    return probe


def _safe_feature_names(dataset: Dataset) -> list[str]:
    from raysweep.trainables.gbm import _safe_names

    return _safe_names(dataset.feature_names)


def _lightgbm(dataset: Dataset, seed: int) -> Callable[[dict[str, Any]], Outcome]:
    from raysweep.trainables.params.native_lightgbm import LightGBMError, train_one_round

    names = _safe_feature_names(dataset)

    def train(params: dict[str, Any]) -> Outcome:
        try:
            train_one_round(params, dataset.X_train, dataset.y_train, names)
        except LightGBMError as exc:
            return Outcome(_short(str(exc)))
        return Outcome()

    return train


def _xgboost(dataset: Dataset, seed: int) -> Callable[[dict[str, Any]], Outcome]:
    import xgboost as xgb

    names = _safe_feature_names(dataset)
    dtrain = xgb.DMatrix(dataset.X_train, dataset.y_train, feature_names=names)

    def train(params: dict[str, Any]) -> Outcome:
        # XGBoost reports keys it does not use as warnings, at verbosity >= 1 (a global setting)
        with warnings.catch_warnings(record=True) as caught, xgb.config_context(verbosity=1):
            warnings.simplefilter("always")
            try:
                booster = xgb.Booster({**params, "seed": seed}, [dtrain])
                booster.update(dtrain, iteration=0)
                error = None
            except Exception as exc:  # XGBoostError, or TypeError/ValueError from its Python layer
                error = _xgboost_message(exc)
        ignored: set[str] = set()
        for warning in caught:
            match = _XGB_UNUSED.search(str(warning.message))
            if match:
                ignored |= {n.strip().strip('"') for n in match.group(1).split(",") if n.strip()}
        return Outcome(error, frozenset(ignored))

    return train


def _catboost(dataset: Dataset, seed: int) -> Callable[[dict[str, Any]], Outcome]:
    from catboost import CatBoost, Pool

    names = _safe_feature_names(dataset)
    pool = Pool(dataset.X_train, dataset.y_train, feature_names=names)

    def train(params: dict[str, Any]) -> Outcome:
        try:
            model = CatBoost({**params, "random_seed": seed, "iterations": 1})
            model.fit(pool, eval_set=pool)
        except Exception as exc:  # CatBoostError, or TypeError/ValueError from its Python layer
            lines = [_CATBOOST_PREFIX.sub("", line) for line in str(exc).strip().splitlines()]
            message = _short("; ".join(line for line in lines if line))
            unknown = set(_CATBOOST_UNKNOWN.findall(message))
            return Outcome(message or type(exc).__name__, frozenset(unknown))
        return Outcome()

    return train


def _xgboost_message(exc: Exception) -> str:
    text = str(exc).split("Stack trace:")[0]
    lines = [_XGB_PREFIX.sub("", line).strip() for line in text.strip().splitlines()]
    return _short("; ".join(line for line in lines if line)) or type(exc).__name__


def _short(text: str) -> str:
    text = " ".join(text.split()) if "\n" in text else text.strip()
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."
