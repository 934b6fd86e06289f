"""Built-in GBM trainables: LightGBM, XGBoost and CatBoost, reported round by round.

Training runs in *segments* that end where checkpoints are saved (the reports
``TrialContext.checkpoint_due`` picks: every ``checkpoint_frequency`` reports and
the scheduler's pause points; one segment when checkpointing is off). Each
segment continues from the previous segment's model as written to the
checkpoint, with a seed derived from (trial seed, first round), so a trial
resumed from a checkpoint replays exactly what an uninterrupted trial does and
ends with bit-identical metrics. Checkpoint directory:
``raysweep_checkpoint.json`` (rounds done, reports made) plus the model file
(``model.txt`` / ``model.ubj`` / ``model.cbm``).
"""

from __future__ import annotations

import functools
import logging
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from raysweep.errors import ConfigError, TrainableError
from raysweep.repro.gbm_params import (
    METRIC_KEYS,
    OWNED_KEYS,
    Library,
    gbm_params,
    metric_params,
    task_params,
)
from raysweep.repro.seeds import trial_seed_for
from raysweep.trainables.builtins import (
    Reporter,
    positive_int_arg,
    ray_report,
    ray_start_checkpoint,
    read_checkpoint_meta,
    split_seed,
    write_checkpoint_meta,
)
from raysweep.trainables.context import TrialContext
from raysweep.trainables.data import Dataset, load_dataset, val_metrics

logger = logging.getLogger(__name__)

DEFAULT_ROUNDS = 100
ROUND_KEYS: dict[str, tuple[str, ...]] = {
    "lightgbm": ("num_boost_round", "num_iterations", "num_iteration", "n_iter", "num_tree",
                 "num_trees", "num_round", "num_rounds", "nrounds", "n_estimators", "max_iter"),
    "xgboost": ("num_boost_round", "n_estimators", "num_round"),
    "catboost": ("num_boost_round", "iterations", "n_estimators", "num_trees"),
}  # fmt: skip
_LGB_ITERATION_SEEDS = ("bagging_seed", "feature_fraction_seed", "extra_seed", "drop_seed",
                        "objective_seed")  # fmt: skip
RoundHook = Callable[[int, Callable[[], dict[str, float]]], None]
RoundDue = Callable[[int], bool]  # whether round i (counted from 1) makes a report


def train_lightgbm(config: dict[str, Any], ctx: TrialContext) -> None:
    """Ray Tune trainable: LightGBM on ``ctx.trainable_args``' dataset."""
    _run("lightgbm", config, ctx)


def train_xgboost(config: dict[str, Any], ctx: TrialContext) -> None:
    """Ray Tune trainable: XGBoost on ``ctx.trainable_args``' dataset."""
    _run("xgboost", config, ctx)


def train_catboost(config: dict[str, Any], ctx: TrialContext) -> None:
    """Ray Tune trainable: CatBoost on ``ctx.trainable_args``' dataset."""
    _run("catboost", config, ctx)


def _run(library: Library, config: dict[str, Any], ctx: TrialContext) -> None:
    dataset = load_dataset(ctx.trainable_args, split_seed(ctx))
    with ray_start_checkpoint() as start:
        fit_gbm(library, config, ctx, dataset, ray_report, start)


def fit_gbm(
    library: Library,
    config: dict[str, Any],
    ctx: TrialContext,
    dataset: Dataset,
    report: Reporter,
    checkpoint_dir: Path | None = None,
    keep_checkpoints: bool = True,
) -> None:
    """Train ``library`` on ``dataset``, calling ``report`` as the trial progresses.

    Resumes from ``checkpoint_dir`` when given. Metrics: ``val_*`` plus ``rounds``.
    ``keep_checkpoints`` False (the in-process executor, which restarts an unfinished
    trial instead of resuming it): the same segments, each continuing from the model in
    memory, and reports without a checkpoint directory, for the libraries whose model
    continues bit for bit from memory as from its saved file (LightGBM, XGBoost;
    CatBoost's does not, so its checkpoints are still written and read back).
    """
    if library not in _BACKENDS:
        raise ConfigError(f"unknown GBM library {library!r}; one of {', '.join(_BACKENDS)}")
    rounds, params = build_params(library, config, ctx, dataset)
    report_every = positive_int_arg(ctx.trainable_args, "report_every", 1)
    backend = _BACKENDS[library](params, dataset, ctx)
    checkpointing = ctx.checkpointing
    ends = _segment_ends(ctx, rounds, report_every, whole=backend.whole_fit_only)
    done, reports, model = 0, 0, None
    if checkpoint_dir is not None:
        meta = read_checkpoint_meta(Path(checkpoint_dir), library)
        done, reports = int(meta["rounds"]), int(meta["reports"])
        model = backend.load(Path(checkpoint_dir))
    held: dict[str, float] = {}  # a segment's last metrics, reported with its checkpoint

    def due(i: int) -> bool:
        return i % report_every == 0 or i == rounds

    def on_round(i: int, metrics: Callable[[], dict[str, float]]) -> None:
        nonlocal reports
        if not due(i):
            return
        values = {**metrics(), "rounds": i}
        if checkpointing and i in ends:
            held.update(values)
            return
        reports += 1
        report(values, None)

    while done < rounds:
        end = min(e for e in ends if e > done)
        held.clear()
        model = backend.train(model, done, end, _segment_seed(ctx.seed, done), on_round, due)
        done = end
        if checkpointing and not keep_checkpoints and backend.exact_in_memory:
            reports += 1
            report(dict(held), None)
        elif checkpointing:
            reports += 1
            with tempfile.TemporaryDirectory(prefix="raysweep-ckpt-") as tmp:
                path = Path(tmp)
                backend.save(model, path)
                write_checkpoint_meta(path, library, rounds=done, reports=reports, seed=ctx.seed)
                model = backend.load(path)  # continue from exactly what a resume would load
                report(dict(held), path)


def build_params(
    library: Library, config: dict[str, Any], ctx: TrialContext, dataset: Dataset
) -> tuple[int, dict[str, Any]]:
    """(rounds, library params): task defaults < user config < raysweep-owned keys."""
    user = dict(config)
    rounds = positive_int_arg(ctx.trainable_args, "num_boost_round", DEFAULT_ROUNDS)
    for key in ROUND_KEYS[library]:
        if key in user:
            rounds = positive_int_arg(user, key, rounds)
            del user[key]
    reserved = OWNED_KEYS[library] | METRIC_KEYS[library]
    dropped = sorted(k for k in user if k in reserved)
    if dropped:
        logger.warning("%s: ignoring %s; raysweep sets these per trial", library, dropped)
    user = {k: v for k, v in user.items() if k not in reserved}
    owned = gbm_params(
        library, ctx.seed, ctx.cpus, ctx.uses_gpu, ctx.deterministic, ctx.gpu_ids, ctx.gpu_fraction
    )
    for warning in owned.warnings:
        logger.warning("%s: %s", library, warning)
    task_defaults = task_params(library, dataset.task, dataset.n_classes)
    params = {**owned.params, **task_defaults, **user}
    params.update({k: v for k, v in owned.params.items() if k in OWNED_KEYS[library]})
    params.update(metric_params(library, dataset.task, dataset.n_classes))
    return rounds, params


def _segment_ends(ctx: TrialContext, rounds: int, report_every: int, whole: bool) -> set[int]:
    """The rounds after which a segment ends (and a checkpoint is written when checkpointing)."""
    if whole or not ctx.checkpointing:
        return {rounds}
    reports = -(-rounds // report_every)  # the last report comes at ``rounds``
    due = (k * report_every for k in range(1, reports) if ctx.checkpoint_due(k))
    return {*due, rounds}


def _segment_seed(seed: int, start: int) -> int:
    """The trial seed for the first segment, a derived one for a segment from ``start``."""
    return seed if start == 0 else trial_seed_for(seed, start)


def _safe_names(names: list[str]) -> list[str]:
    """Feature names every library accepts (no spaces, brackets or JSON characters)."""
    out: list[str] = []
    for i, name in enumerate(names):
        safe = re.sub(r"[^\w.\-]+", "_", name) or f"f{i}"
        out.append(safe if safe not in out else f"{safe}_{i}")
    return out


class _LightGBM:
    whole_fit_only = False
    exact_in_memory = True  # continuing the booster in memory = from its saved model text

    def __init__(self, params: dict[str, Any], dataset: Dataset, ctx: TrialContext) -> None:
        self.params, self.data = params, dataset
        self.names = _safe_names(dataset.feature_names)

    def _feval(self, preds: np.ndarray, _: Any) -> list[tuple[str, float, bool]]:
        values = val_metrics(self.data.task, self.data.y_val, preds)
        return [(name, value, name in ("val_accuracy", "val_r2")) for name, value in values.items()]

    def train(
        self, model: Any, start: int, end: int, seed: int, on_round: RoundHook, due: RoundDue
    ) -> Any:
        import lightgbm as lgb

        params = dict(self.params)
        if start > 0:  # row/column sampling RNGs restart with every booster: reseed them
            params.update(dict.fromkeys(_LGB_ITERATION_SEEDS, seed))
        d = self.data
        train_set = lgb.Dataset(d.X_train, d.y_train, feature_name=self.names)
        val_set = lgb.Dataset(d.X_val, d.y_val, reference=train_set)
        evaluating = start  # LightGBM evaluates each round once, before its callbacks

        def feval(preds: np.ndarray, data: Any) -> list[tuple[str, float, bool]]:
            nonlocal evaluating
            evaluating += 1  # the metrics are computed only for the rounds that report
            return self._feval(preds, data) if due(evaluating) else []

        def callback(env: Any) -> None:
            values = {name: value for _, name, value, _ in env.evaluation_result_list}
            on_round(start + env.iteration - env.begin_iteration + 1, lambda: values)

        return lgb.train(
            params,
            train_set,
            num_boost_round=end - start,
            init_model=model,
            valid_sets=[val_set],
            valid_names=["val"],
            feval=feval,
            callbacks=[callback],
            keep_training_booster=True,
        )

    def save(self, model: Any, directory: Path) -> None:
        (directory / "model.txt").write_text(model.model_to_string(num_iteration=-1))

    def load(self, directory: Path) -> Any:
        import lightgbm as lgb

        return lgb.Booster(model_str=(directory / "model.txt").read_text())


class _XGBoost:
    whole_fit_only = False
    exact_in_memory = True  # continuing the booster in memory = from its saved UBJSON

    def __init__(self, params: dict[str, Any], dataset: Dataset, ctx: TrialContext) -> None:
        import xgboost as xgb

        self.params, self.data = params, dataset
        names = _safe_names(dataset.feature_names)
        self.dtrain = xgb.DMatrix(dataset.X_train, dataset.y_train, feature_names=names)
        self.dval = xgb.DMatrix(dataset.X_val, dataset.y_val, feature_names=names)

    def train(
        self, model: Any, start: int, end: int, seed: int, on_round: RoundHook, due: RoundDue
    ) -> Any:
        import xgboost as xgb

        booster = xgb.Booster({**self.params, "seed": seed}, [self.dtrain], model_file=model)
        for i in range(start, end):
            booster.update(self.dtrain, iteration=i)
            on_round(i + 1, lambda: self._metrics(booster))
        return booster

    def _metrics(self, booster: Any) -> dict[str, float]:
        return val_metrics(self.data.task, self.data.y_val, booster.predict(self.dval))

    def save(self, model: Any, directory: Path) -> None:
        (directory / "model.ubj").write_bytes(bytes(model.save_raw("ubj")))

    def load(self, directory: Path) -> Any:
        return bytearray((directory / "model.ubj").read_bytes())


class _CatBoost:
    exact_in_memory = False  # a fit continued in memory differs from one continued from file

    def __init__(self, params: dict[str, Any], dataset: Dataset, ctx: TrialContext) -> None:
        from catboost import Pool

        self.params, self.data = params, dataset
        # CatBoost on GPU supports neither Python callbacks nor training continuation.
        self.whole_fit_only = ctx.uses_gpu
        if self.whole_fit_only:
            logger.warning(
                "catboost: on GPU, metrics arrive after the whole fit and no mid-training "
                "checkpoints are written (schedulers cannot stop it early)"
            )
        names = _safe_names(dataset.feature_names)
        self.train_pool = Pool(dataset.X_train, dataset.y_train, feature_names=names)
        self.val_pool = Pool(dataset.X_val, dataset.y_val, feature_names=names)

    def _metrics(self, history: dict[str, list[float]], index: int) -> dict[str, float]:
        if self.data.task == "regression":
            rmse = float(history["RMSE"][index])
            return {
                "val_loss": rmse * rmse,
                "val_rmse": rmse,
                "val_r2": float(history["R2"][index]),
            }
        loss = history["Logloss" if self.data.n_classes == 2 else "MultiClass"][index]
        return {"val_loss": float(loss), "val_accuracy": float(history["Accuracy"][index])}

    def train(
        self, model: Any, start: int, end: int, seed: int, on_round: RoundHook, due: RoundDue
    ) -> Any:
        from catboost import CatBoost

        params = {**self.params, "random_seed": seed, "iterations": end - start}
        fitted = CatBoost(params)
        if self.whole_fit_only:
            if model is not None:
                raise TrainableError("catboost: CatBoost cannot continue training on a GPU")
            fitted.fit(self.train_pool, eval_set=self.val_pool)
            history = fitted.get_evals_result()["validation"]
            for i in range(end - start):
                on_round(start + i + 1, functools.partial(self._metrics, history, i))
            return fitted
        trainable = self

        class Callback:
            # CatBoost turns exceptions raised in callbacks (including the SystemExit Ray
            # uses to stop a trial) into CatBoostError: stop training and re-raise after.
            error: BaseException | None = None

            def after_iteration(self, info: Any) -> bool:
                history = info.metrics["validation"]
                try:
                    on_round(start + info.iteration, lambda: trainable._metrics(history, -1))
                except BaseException as exc:
                    self.error = exc
                    return False
                return True

        callback = Callback()
        fitted.fit(self.train_pool, eval_set=self.val_pool, init_model=model, callbacks=[callback])
        if callback.error is not None:
            raise callback.error
        return fitted

    def save(self, model: Any, directory: Path) -> None:
        model.save_model(str(directory / "model.cbm"))

    def load(self, directory: Path) -> Any:
        from catboost import CatBoost

        model = CatBoost()
        model.load_model(str(directory / "model.cbm"))
        return model


_BACKENDS: dict[str, Any] = {"lightgbm": _LightGBM, "xgboost": _XGBoost, "catboost": _CatBoost}
