"""The built-in trainables: registry, accepted arguments, reported metrics, Ray plumbing.

Import-light: nothing here imports Ray, a GBM library or torch at module level,
so config validation can use it cheaply.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from raysweep.errors import ConfigError, TrainableError
from raysweep.trainables.context import TrialContext
from raysweep.trainables.data import CLASSIFICATION_METRICS, REGRESSION_METRICS, dataset_task
from raysweep.trainables.trading.params import ARG_DEFAULTS as TRADING_ARGS
from raysweep.trainables.trading.params import METRICS as TRADING_METRICS

BUILTIN_TRAINABLES: dict[str, str] = {
    "lightgbm": "raysweep.trainables.gbm:train_lightgbm",
    "xgboost": "raysweep.trainables.gbm:train_xgboost",
    "catboost": "raysweep.trainables.gbm:train_catboost",
    "torch_mlp": "raysweep.trainables.torch_mlp:train_torch_mlp",
    "trading": "raysweep.trainables.trading.trainable:train_trading",
}

# The optional dependency (raysweep extra) each built-in needs: raysweep._imports.
# (trading needs the library of each entry model it may use: trading/checks.py.)
BUILTIN_EXTRAS: dict[str, str] = {
    "lightgbm": "lightgbm",
    "xgboost": "xgboost",
    "catboost": "catboost",
    "torch_mlp": "torch",
}
DATA_ARGS: frozenset[str] = frozenset(
    {"dataset", "target", "features", "task", "val_fraction", "split_seed"}
)
DATA_PARALLEL_ARG = "data_parallel"  # torch_mlp: replicas on CPUs (one per GPU on GPUs)
GBM_ARGS: frozenset[str] = DATA_ARGS | {"num_boost_round", "report_every"}
ALLOWED_ARGS: dict[str, set[str]] = {
    "lightgbm": set(GBM_ARGS),
    "xgboost": set(GBM_ARGS),
    "catboost": set(GBM_ARGS),
    "torch_mlp": set(DATA_ARGS | {"epochs", DATA_PARALLEL_ARG}),
    "trading": set(TRADING_ARGS),
}
# Progress counters reported next to the validation metrics.
PROGRESS_METRIC: dict[str, str] = {
    "lightgbm": "rounds",
    "xgboost": "rounds",
    "catboost": "rounds",
    "torch_mlp": "epoch",
    "trading": "fold",
}

CHECKPOINT_META = "raysweep_checkpoint.json"
CHECKPOINT_FORMAT = 1

Reporter = Callable[[dict[str, float], Path | None], None]
"""``report(metrics, checkpoint_dir)``: the directory is only valid during the call."""


def reported_metrics(name: str, trainable_args: Mapping[str, Any]) -> list[str]:
    """Metric names the built-in ``name`` reports for these ``trainable_args``.

    Ray adds its own (``training_iteration``, ``time_total_s``, ...) on top.
    """
    if name not in BUILTIN_TRAINABLES:
        raise ConfigError(
            f"trainable: unknown built-in {name!r}; built-ins: {', '.join(BUILTIN_TRAINABLES)}"
        )
    if name == "trading":
        return list(TRADING_METRICS)
    task = dataset_task(trainable_args)
    metrics = CLASSIFICATION_METRICS if task == "classification" else REGRESSION_METRICS
    extra = ["train_loss"] if name == "torch_mlp" else []
    return [*metrics, *extra, PROGRESS_METRIC[name]]


def planned_replicas(name: str, trainable_args: Mapping[str, Any], gpus_per_trial: float) -> int:
    """Data-parallel replicas per trial of a built-in: one per GPU when it has several."""
    if name != "torch_mlp":
        return 1
    if gpus_per_trial > 1:
        return round(gpus_per_trial)
    return positive_int_arg(trainable_args, DATA_PARALLEL_ARG, 1)


def positive_int_arg(args: Mapping[str, Any], key: str, default: int) -> int:
    """A positive integer from ``trainable_args`` (ConfigError naming the key otherwise)."""
    value = args.get(key, default)
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # e.g. from a quniform search space
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"trainable_args.{key}: must be a positive integer (got {value!r})")
    return value


def split_seed(ctx: TrialContext) -> int:
    """Seed of the train/validation split: the same for every trial of a sweep.

    ``trainable_args.split_seed`` when given, else the sweep's master seed when
    the context carries one (``master_seed``), else 0. Never the per-trial seed.
    """
    value = ctx.trainable_args.get("split_seed")
    if value is None:
        value = ctx.master_seed
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"trainable_args.split_seed: must be an integer >= 0 (got {value!r})")
    return value


def write_checkpoint_meta(directory: Path, trainable: str, **fields: Any) -> None:
    """Write the JSON description of a built-in trainable's checkpoint."""
    meta = {"format": CHECKPOINT_FORMAT, "trainable": trainable, **fields}
    (directory / CHECKPOINT_META).write_text(json.dumps(meta, indent=1, sort_keys=True))


def read_checkpoint_meta(directory: Path, trainable: str) -> dict[str, Any]:
    """Read a checkpoint's description, refusing one written by another trainable."""
    path = Path(directory) / CHECKPOINT_META
    try:
        meta: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise TrainableError(f"{trainable}: not a raysweep checkpoint: {path} ({exc})") from exc
    if meta.get("format") != CHECKPOINT_FORMAT or meta.get("trainable") != trainable:
        raise TrainableError(
            f"{trainable}: checkpoint {directory} was written by "
            f"{meta.get('trainable')!r} (format {meta.get('format')!r}), "
            f"not {trainable!r} (format {CHECKPOINT_FORMAT})"
        )
    return meta


def ray_report(metrics: dict[str, float], checkpoint_dir: Path | None) -> None:
    """Report to Ray Tune, attaching ``checkpoint_dir`` (persisted before returning)."""
    from ray import tune

    if checkpoint_dir is None:
        tune.report(metrics)
    else:
        tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(str(checkpoint_dir)))


@contextmanager
def ray_start_checkpoint() -> Iterator[Path | None]:
    """The checkpoint Ray Tune restores this trial from, as a local directory (or None)."""
    from ray import tune

    checkpoint = tune.get_checkpoint()
    if checkpoint is None:
        yield None
        return
    with checkpoint.as_directory() as directory:
        yield Path(directory)
