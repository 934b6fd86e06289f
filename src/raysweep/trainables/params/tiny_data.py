"""A tiny stand-in for a sweep's dataset, on which parameter values are checked up front.

It has the real dataset's task, number of classes, number of features and
feature names, so parameters that depend on them (``num_class``,
``monotone_constraints``, class weights, feature weights by name) are checked as
the trials will meet them; its 48 rows are random. Bundled datasets' shapes are
written down here (importing scikit-learn's loaders costs 1.5 s; a test checks
them against scikit-learn); for a file only the header and the target column
are read, as ``dataset_task`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from raysweep.trainables.data import (
    Dataset,
    Task,
    _columns,
    _data_path,
    _features_arg,
    _read,
    _target_arg,
    _task_arg,
    infer_task,
)

ROWS = 48
_CANCER = ("radius", "texture", "perimeter", "area", "smoothness", "compactness", "concavity",
           "concave points", "symmetry", "fractal dimension")  # fmt: skip
_WINE = ("alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols",
         "flavanoids", "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue",
         "od280/od315_of_diluted_wines", "proline")  # fmt: skip


@dataclass(frozen=True)
class DataShape:
    """What parameters can depend on: the task, classes and feature names."""

    task: Task
    n_classes: int  # 0 for regression
    feature_names: tuple[str, ...]


BUNDLED_SHAPES: dict[str, DataShape] = {
    "breast_cancer": DataShape(
        "classification",
        2,
        (
            *(f"mean {n}" for n in _CANCER),
            *(f"{n} error" for n in _CANCER),
            *(f"worst {n}" for n in _CANCER),
        ),
    ),
    "digits": DataShape(
        "classification", 10, tuple(f"pixel_{r}_{c}" for r in range(8) for c in range(8))
    ),
    "wine": DataShape("classification", 3, _WINE),
    "diabetes": DataShape(
        "regression", 0, ("age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6")
    ),
}


def data_shape(args: Mapping[str, Any]) -> DataShape:
    """The shape of the dataset ``trainable_args`` names (ConfigError when it is wrong)."""
    name = args.get("dataset")
    task = _task_arg(args.get("task"))
    if isinstance(name, str) and name in BUNDLED_SHAPES:
        shape = BUNDLED_SHAPES[name]
        if task is None or task == shape.task:
            return shape
        n_classes = 0 if task == "regression" else 2
        return DataShape(task, n_classes, shape.feature_names)
    path = _data_path(str(name))
    columns = _columns(path)
    target = _target_arg(args.get("target"), path, columns)
    features = _features_arg(args.get("features")) or tuple(c for c in columns if c != target)
    values = _read(path, [target])[target]
    task = task or infer_task(values)
    n_classes = int(values.nunique()) if task == "classification" else 0
    return DataShape(task, n_classes, tuple(features))


def tiny_dataset(shape: DataShape) -> Dataset:
    """48 random rows of ``shape``, each class present; train and validation alike."""
    rng = np.random.default_rng(0)
    X = rng.random((ROWS, len(shape.feature_names))).astype(np.float32)
    if shape.task == "classification":
        y = (np.arange(ROWS) % max(shape.n_classes, 2)).astype(np.int64)
    else:
        y = rng.random(ROWS).astype(np.float32)
    return Dataset(X, X, y, y, shape.task, shape.n_classes, list(shape.feature_names), "tiny")
