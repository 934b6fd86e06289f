"""Datasets and validation metrics shared by the built-in trainables.

A dataset is one of scikit-learn's bundled sets (no download) or a CSV/Parquet
file. It is split once per sweep with ``train_test_split(random_state=seed)``
(stratified for classification); the caller passes a seed that is the same for
every trial of a sweep, so all trials are scored on the same validation rows.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from raysweep.errors import ConfigError, TrainableError

Task = Literal["classification", "regression"]
TASKS: tuple[Task, ...] = ("classification", "regression")
DATASET_NAMES: tuple[str, ...] = ("breast_cancer", "digits", "wine", "diabetes")
FILE_SUFFIXES: tuple[str, ...] = (".csv", ".parquet", ".pq")
CLASSIFICATION_METRICS: tuple[str, ...] = ("val_loss", "val_accuracy")
REGRESSION_METRICS: tuple[str, ...] = ("val_loss", "val_rmse", "val_r2")
DEFAULT_VAL_FRACTION = 0.25
# An integer target with at most this many distinct values is taken as class labels.
MAX_INFERRED_CLASSES = 20

_BUNDLED_TASKS: dict[str, Task] = {
    "breast_cancer": "classification",
    "digits": "classification",
    "wine": "classification",
    "diabetes": "regression",
}
_CACHE_SIZE = 8
_cache: OrderedDict[Hashable, Dataset] = OrderedDict()
_cache_lock = threading.Lock()


@dataclass(eq=False)
class Dataset:
    """A train/validation split. Arrays are read-only and shared between trials.

    ``X_*`` are float32; ``y_*`` are int64 class indices (0..n_classes-1) for
    classification and float32 for regression, where ``n_classes`` is 0.
    """

    X_train: np.ndarray
    X_val: np.ndarray
    y_train: np.ndarray
    y_val: np.ndarray
    task: Task
    n_classes: int
    feature_names: list[str]
    name: str


def load_dataset(args: Mapping[str, Any], seed: int) -> Dataset:
    """Load and split the dataset named by ``trainable_args``.

    ``seed`` must be the same for every trial of a sweep (the built-ins pass
    ``trainable_args.split_seed`` or the sweep's master seed), so every trial sees
    the same split. Results are cached in-process, keyed on the dataset, the
    file's modification time, target, features, task, val_fraction and seed.
    """
    name = args.get("dataset")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"trainable_args.dataset: required; {_dataset_choices()}")
    val_fraction = _val_fraction(args.get("val_fraction", DEFAULT_VAL_FRACTION))
    task = _task_arg(args.get("task"))
    features = _features_arg(args.get("features"))
    target = args.get("target")
    if target is not None and not isinstance(target, str):
        raise ConfigError(f"trainable_args.target: must be a column name (got {target!r})")
    path = None if name in DATASET_NAMES else _data_path(name)
    for arg, value in (("target", target), ("features", features)):
        if path is None and value is not None:
            raise ConfigError(f"trainable_args.{arg}: only used with a file dataset, not {name!r}")
    mtime = path.stat().st_mtime_ns if path is not None else None
    key = (name, str(path), mtime, target, features, task, val_fraction, seed)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    if path is None:
        X, y, names = _load_bundled(name)
        task = task or _BUNDLED_TASKS[name]
    else:
        X, y, names, task = _load_file(path, target, features, task)
    dataset = _split(name, X, y, names, task, val_fraction, seed)
    with _cache_lock:
        _cache[key] = dataset
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return dataset


def dataset_task(args: Mapping[str, Any]) -> Task:
    """The task a dataset will be trained as, without loading the features.

    Bundled sets are known; for files only the target column is read.
    """
    name = args.get("dataset")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"trainable_args.dataset: required; {_dataset_choices()}")
    task = _task_arg(args.get("task"))
    if task is not None:
        return task
    if name in DATASET_NAMES:
        return _BUNDLED_TASKS[name]
    path = _data_path(name)
    target = _target_arg(args.get("target"), path, _columns(path))
    return infer_task(_read(path, [target])[target])


def infer_task(target: Any) -> Task:
    """Classification for non-numeric or boolean targets and integers with few values."""
    import pandas as pd

    series = pd.Series(target)
    if pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
        return "classification"
    if pd.api.types.is_integer_dtype(series) and series.nunique() <= MAX_INFERRED_CLASSES:
        return "classification"
    return "regression"


def val_metrics(task: Task, y_true: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    """Validation metrics from predictions.

    Classification: ``pred`` holds probabilities, shape (n,) for P(class 1) or
    (n, k); returns ``val_loss`` (log loss) and ``val_accuracy``. Regression:
    returns ``val_loss`` (MSE), ``val_rmse`` and ``val_r2``.
    """
    p = np.asarray(pred, dtype=np.float64)
    if task == "regression":
        y = np.asarray(y_true, dtype=np.float64)
        err = p.reshape(y.shape) - y
        mse = float(np.mean(err * err))
        sst = float(np.sum((y - y.mean()) ** 2))
        r2 = 1.0 - float(np.sum(err * err)) / sst if sst > 0 else 0.0
        return {"val_loss": mse, "val_rmse": float(np.sqrt(mse)), "val_r2": r2}
    labels = np.asarray(y_true, dtype=np.int64)
    eps = 1e-15
    if p.ndim == 1:
        p1 = np.clip(p, eps, 1 - eps)
        loss = -np.mean(np.where(labels == 1, np.log(p1), np.log1p(-p1)))
        accuracy = np.mean((p > 0.5) == (labels == 1))
    else:
        if p.ndim != 2 or p.shape[1] <= int(labels.max(initial=0)):
            raise TrainableError(
                f"expected class probabilities of shape (n, n_classes), got {p.shape}; "
                "use an objective that outputs probabilities (e.g. multi:softprob)"
            )
        probs = np.clip(p, eps, None)
        probs /= probs.sum(axis=1, keepdims=True)
        loss = -np.mean(np.log(probs[np.arange(len(labels)), labels]))
        accuracy = np.mean(np.argmax(p, axis=1) == labels)
    return {"val_loss": float(loss), "val_accuracy": float(accuracy)}


def _dataset_choices() -> str:
    return f"one of {', '.join(DATASET_NAMES)} or a path to a .csv or .parquet file"


def _val_fraction(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise ConfigError(f"trainable_args.val_fraction: must be in (0, 1) (got {value!r})")
    return float(value)


def _task_arg(value: Any) -> Task | None:
    if value is None:
        return None
    if value not in TASKS:
        raise ConfigError(f"trainable_args.task: must be one of {', '.join(TASKS)} (got {value!r})")
    return cast(Task, value)


def _features_arg(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise ConfigError(f"trainable_args.features: must be a non-empty list (got {value!r})")
    if not all(isinstance(v, str) for v in value):
        raise ConfigError(f"trainable_args.features: must be column names (got {value!r})")
    return tuple(value)


def _data_path(name: str) -> Path:
    path = Path(name).expanduser()
    if path.suffix.lower() not in FILE_SUFFIXES:
        raise ConfigError(f"trainable_args.dataset: unknown dataset {name!r}; {_dataset_choices()}")
    if not path.is_file():
        raise ConfigError(f"trainable_args.dataset: file not found: {path}")
    return path.resolve()


def _read(path: Path, columns: list[str] | None = None) -> Any:
    import pandas as pd

    try:
        if path.suffix.lower() == ".csv":
            return pd.read_csv(path, usecols=columns)
        return pd.read_parquet(path, columns=columns)
    except Exception as exc:
        raise ConfigError(f"trainable_args.dataset: cannot read {path}: {exc}") from exc


def _columns(path: Path) -> list[str]:
    if path.suffix.lower() == ".csv":
        import pandas as pd

        try:
            return [str(c) for c in pd.read_csv(path, nrows=0).columns]
        except Exception as exc:
            raise ConfigError(f"trainable_args.dataset: cannot read {path}: {exc}") from exc
    import pyarrow.parquet as pq

    try:
        return list(pq.read_schema(path).names)
    except Exception as exc:
        raise ConfigError(f"trainable_args.dataset: cannot read {path}: {exc}") from exc


def _target_arg(target: Any, path: Path, columns: list[str]) -> str:
    if not isinstance(target, str) or not target:
        raise ConfigError(
            f"trainable_args.target: required when dataset is a file; "
            f"columns of {path.name}: {', '.join(columns)}"
        )
    if target not in columns:
        raise ConfigError(
            f"trainable_args.target: column {target!r} not in {path.name}; "
            f"columns: {', '.join(columns)}"
        )
    return target


def _load_bundled(name: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    from sklearn import datasets

    loader = getattr(datasets, f"load_{name}")
    bunch = loader()
    names = [str(n) for n in getattr(bunch, "feature_names", [])]
    if len(names) != bunch.data.shape[1]:
        names = [f"f{i}" for i in range(bunch.data.shape[1])]
    return np.asarray(bunch.data), np.asarray(bunch.target), names


def _load_file(
    path: Path, target: Any, features: tuple[str, ...] | None, task: Task | None
) -> tuple[np.ndarray, np.ndarray, list[str], Task]:
    import pandas as pd

    frame = _read(path)
    columns = [str(c) for c in frame.columns]
    target = _target_arg(target, path, columns)
    feature_cols = list(features) if features else [c for c in columns if c != target]
    missing = [c for c in feature_cols if c not in columns]
    if missing or target in feature_cols:
        bad = missing or [target]
        raise ConfigError(
            f"trainable_args.features: {', '.join(bad)} not usable as features; "
            f"columns: {', '.join(columns)}"
        )
    if not feature_cols:
        raise ConfigError(f"trainable_args.dataset: {path.name} has no feature columns")
    x_frame = frame[feature_cols]
    non_numeric = [
        c
        for c in feature_cols
        if not (pd.api.types.is_numeric_dtype(x_frame[c]) or pd.api.types.is_bool_dtype(x_frame[c]))
    ]
    if non_numeric:
        raise ConfigError(
            f"trainable_args.features: non-numeric columns {', '.join(non_numeric)}; "
            "encode them in the file or list numeric columns in trainable_args.features"
        )
    y_series = frame[target]
    if y_series.isna().any():
        raise ConfigError(
            f"trainable_args.target: column {target!r} has {int(y_series.isna().sum())} "
            "missing values"
        )
    task = task or infer_task(y_series)
    if task == "regression" and not pd.api.types.is_numeric_dtype(y_series):
        raise ConfigError(f"trainable_args.target: column {target!r} is not numeric")
    return x_frame.to_numpy(dtype=np.float32), y_series.to_numpy(), feature_cols, task


def _split(
    name: str,
    X: np.ndarray,
    y: np.ndarray,
    names: list[str],
    task: Task,
    val_fraction: float,
    seed: int,
) -> Dataset:
    from sklearn.model_selection import train_test_split

    n_classes = 0
    if task == "classification":
        classes, y = np.unique(y, return_inverse=True)
        n_classes = len(classes)
        if n_classes < 2:
            raise ConfigError(f"trainable_args.target: {name} has a single class")
        y = y.astype(np.int64)
    else:
        y = y.astype(np.float32)
    try:
        X_train, X_val, y_train, y_val = train_test_split(
            X.astype(np.float32),
            y,
            test_size=val_fraction,
            random_state=seed % 2**32,
            stratify=y if task == "classification" else None,
        )
    except ValueError as exc:
        raise ConfigError(f"trainable_args.val_fraction: cannot split {name}: {exc}") from exc
    X_train, X_val, y_train, y_val = (_frozen(a) for a in (X_train, X_val, y_train, y_val))
    return Dataset(X_train, X_val, y_train, y_val, task, n_classes, names, name)


def _frozen(array: np.ndarray) -> np.ndarray:
    out = np.ascontiguousarray(array)
    out.flags.writeable = False
    return out
