"""The entry model: a LightGBM, XGBoost or CatBoost classifier of SHORT / NO_TRADE / LONG.

Fitted afresh on each training fold. Its parameters are the trial's
``<library>.<name>`` keys over raysweep's own (``gbm.build_params``: seed, threads,
CPU or the trial's GPU, determinism from ``repro.gbm_params``; the number of rounds
from ``trainable_args.num_boost_round``). The features are standardised with the
training fold's mean and standard deviation, so nothing about the validation fold
reaches the fit. Fold ``k`` > 1 trains with a seed derived from the trial's seed and
``k``, so a trial resumed at any fold repeats an uninterrupted one.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from raysweep.repro.seeds import trial_seed_for
from raysweep.trainables.context import TrialContext
from raysweep.trainables.data import Dataset
from raysweep.trainables.trading.labels import N_CLASSES
from raysweep.trainables.trading.params import Library

logger = logging.getLogger(__name__)


def standardise(train: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both arrays scaled by the training rows' mean and std (NaN kept; flat columns left at 0)."""
    mean = np.nanmean(train, axis=0)
    std = np.nanstd(train, axis=0)
    std = np.where(np.isfinite(std) & (std > 0), std, 1.0)
    mean = np.where(np.isfinite(mean), mean, 0.0)
    return ((train - mean) / std).astype(np.float32), ((other - mean) / std).astype(np.float32)


def fold_seed(seed: int, fold: int) -> int:
    """The entry model's seed on fold ``fold`` (1-based): the trial's seed on the first."""
    return seed if fold == 1 else trial_seed_for(seed, fold)


def fit_predict(
    library: Library,
    config: dict[str, Any],
    ctx: TrialContext,
    fold: int,
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_val: np.ndarray,
    names: Sequence[str],
) -> np.ndarray:
    """Class probabilities (n_val, 3) of validation rows from a model fit on the training rows.

    A training fold with fewer than two classes gets no model: every row is given
    the classes' frequencies in it (smoothed), which never passes an entry threshold
    above 1/2.
    """
    y = y_train.astype(np.int64)
    if len(np.unique(y)) < 2:
        counts = np.bincount(y, minlength=N_CLASSES) + 1.0
        return np.tile(counts / counts.sum(), (len(X_val), 1))
    from raysweep.trainables.gbm import _safe_names, build_params

    X_train, X_val = standardise(X_train, X_val)
    fold_ctx = dataclasses.replace(ctx, seed=fold_seed(ctx.seed, fold))
    dataset = Dataset(X_train, X_val, y, y[:0], "classification", N_CLASSES, list(names), "trading")
    rounds, params = build_params(library, config, fold_ctx, dataset)
    safe = _safe_names(list(names))
    proba = _FIT[library](params, rounds, X_train, y, X_val, safe)
    return np.asarray(proba, dtype=np.float64).reshape(len(X_val), N_CLASSES)


def _lightgbm(
    params: dict[str, Any], rounds: int, X: np.ndarray, y: np.ndarray, X_val: np.ndarray,
    names: list[str],
) -> np.ndarray:  # fmt: skip
    import lightgbm as lgb

    booster = lgb.train(params, lgb.Dataset(X, y, feature_name=names), num_boost_round=rounds)
    return np.asarray(booster.predict(X_val))


def _xgboost(
    params: dict[str, Any], rounds: int, X: np.ndarray, y: np.ndarray, X_val: np.ndarray,
    names: list[str],
) -> np.ndarray:  # fmt: skip
    import xgboost as xgb

    train = xgb.DMatrix(X, y, feature_names=names)
    booster = xgb.train(params, train, num_boost_round=rounds)
    return np.asarray(booster.predict(xgb.DMatrix(X_val, feature_names=names)))


def _catboost(
    params: dict[str, Any], rounds: int, X: np.ndarray, y: np.ndarray, X_val: np.ndarray,
    names: list[str],
) -> np.ndarray:  # fmt: skip
    from catboost import CatBoost, Pool

    # class_names: a fold may lack a class; the probabilities still come in 3 columns
    model = CatBoost({**params, "iterations": rounds, "class_names": list(range(N_CLASSES))})
    model.fit(Pool(X, y, feature_names=names))
    return np.asarray(
        model.predict(Pool(X_val, feature_names=names), prediction_type="Probability")
    )


_FIT = {"lightgbm": _lightgbm, "xgboost": _xgboost, "catboost": _catboost}
