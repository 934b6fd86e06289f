"""Datasets for the built-in trainables: bundled sets, files, splits, errors, metrics."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, log_loss, mean_squared_error, r2_score

from raysweep.errors import ConfigError
from raysweep.trainables.data import (
    DATASET_NAMES,
    dataset_task,
    infer_task,
    load_dataset,
    val_metrics,
)


@pytest.mark.parametrize(
    ("name", "task", "n_classes"),
    [("breast_cancer", "classification", 2), ("digits", "classification", 10),
     ("wine", "classification", 3), ("diabetes", "regression", 0)],
)  # fmt: skip
def test_bundled_datasets(name: str, task: str, n_classes: int) -> None:
    ds = load_dataset({"dataset": name}, seed=0)
    assert (ds.task, ds.n_classes, ds.name) == (task, n_classes, name)
    assert ds.X_train.dtype == ds.X_val.dtype == np.float32
    assert ds.y_train.dtype == (np.int64 if task == "classification" else np.float32)
    n = len(ds.X_train) + len(ds.X_val)
    assert len(ds.X_val) == pytest.approx(0.25 * n, abs=1)
    assert len(ds.feature_names) == ds.X_train.shape[1]
    assert not ds.X_train.flags.writeable and not ds.y_val.flags.writeable
    if task == "classification":
        assert set(np.unique(ds.y_val)) == set(range(n_classes))


def test_split_is_seeded_stratified_and_cached() -> None:
    args = {"dataset": "breast_cancer", "val_fraction": 0.3}
    a, b = load_dataset(args, seed=5), load_dataset(dict(args), seed=5)
    assert a is b  # cached in-process
    c = load_dataset(args, seed=6)
    assert not np.array_equal(a.X_val, c.X_val)
    assert len(a.X_val) == len(c.X_val)
    # stratified: the validation class balance matches the training one
    assert a.y_val.mean() == pytest.approx(a.y_train.mean(), abs=0.01)
    assert load_dataset({"dataset": "breast_cancer", "val_fraction": 0.2}, 5) is not a


def test_task_override() -> None:
    ds = load_dataset({"dataset": "wine", "task": "regression"}, seed=0)
    assert (ds.task, ds.n_classes, ds.y_train.dtype) == ("regression", 0, np.float32)


def _frame(rows: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "a": rng.normal(size=rows),
            "b": rng.integers(0, 5, size=rows),
            "flag": rng.random(rows) > 0.5,
            "label": np.where(rng.random(rows) > 0.5, "yes", "no"),
            "price": rng.normal(100, 10, size=rows),
        }
    )


def test_csv_classification_with_string_labels(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    _frame().drop(columns="price").to_csv(path, index=False)
    ds = load_dataset({"dataset": str(path), "target": "label"}, seed=1)
    assert (ds.task, ds.n_classes) == ("classification", 2)
    assert ds.feature_names == ["a", "b", "flag"]
    assert ds.X_train.shape[1] == 3 and len(ds.X_train) + len(ds.X_val) == 60
    assert dataset_task({"dataset": str(path), "target": "label"}) == "classification"


def test_parquet_regression_with_features(tmp_path: Path) -> None:
    path = tmp_path / "data.parquet"
    _frame().to_parquet(path)
    args = {"dataset": str(path), "target": "price", "features": ["a", "b"], "val_fraction": 0.5}
    ds = load_dataset(args, seed=1)
    assert (ds.task, ds.n_classes, ds.feature_names) == ("regression", 0, ["a", "b"])
    assert len(ds.X_val) == 30
    assert dataset_task(args) == "regression"


def test_file_cache_follows_modification_time(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    frame = _frame()
    frame.to_csv(path, index=False)
    args = {"dataset": str(path), "target": "price", "features": ["a"]}
    first = load_dataset(args, seed=0)
    assert load_dataset(args, seed=0) is first
    frame.assign(a=frame["a"] + 1000).to_csv(path, index=False)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    second = load_dataset(args, seed=0)
    assert second is not first and second.X_train.min() > 900


def test_unknown_dataset_lists_valid_names() -> None:
    with pytest.raises(ConfigError) as err:
        load_dataset({"dataset": "iris"}, seed=0)
    assert "iris" in str(err.value)
    assert all(name in str(err.value) for name in DATASET_NAMES)
    with pytest.raises(ConfigError, match=r"trainable_args\.dataset: required"):
        load_dataset({}, seed=0)


def test_file_errors_name_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    _frame().to_csv(path, index=False)
    with pytest.raises(ConfigError, match="file not found"):
        load_dataset({"dataset": str(tmp_path / "nope.csv"), "target": "x"}, seed=0)
    with pytest.raises(ConfigError, match=r"column 'y' not in data.csv; columns: a, b, flag"):
        load_dataset({"dataset": str(path), "target": "y"}, seed=0)
    with pytest.raises(ConfigError, match=r"target: required .*columns of data.csv: a, b"):
        load_dataset({"dataset": str(path)}, seed=0)
    with pytest.raises(ConfigError, match="non-numeric columns label"):
        load_dataset({"dataset": str(path), "target": "price"}, seed=0)
    with pytest.raises(ConfigError, match=r"features: zz not usable"):
        load_dataset({"dataset": str(path), "target": "price", "features": ["zz"]}, seed=0)
    with pytest.raises(ConfigError, match=r"val_fraction: must be in \(0, 1\) \(got 1.5\)"):
        load_dataset({"dataset": "wine", "val_fraction": 1.5}, seed=0)
    with pytest.raises(ConfigError, match="task: must be one of"):
        load_dataset({"dataset": "wine", "task": "ranking"}, seed=0)
    with pytest.raises(ConfigError, match="target: only used with a file dataset, not 'wine'"):
        load_dataset({"dataset": "wine", "target": "class"}, seed=0)
    with pytest.raises(ConfigError, match="cannot split diabetes"):
        load_dataset({"dataset": "diabetes", "task": "classification"}, seed=0)


def test_infer_task() -> None:
    assert infer_task(pd.Series(["a", "b"])) == "classification"
    assert infer_task(pd.Series([True, False])) == "classification"
    assert infer_task(pd.Series([0, 1, 2, 1])) == "classification"
    assert infer_task(pd.Series(np.arange(100))) == "regression"
    assert infer_task(pd.Series([0.5, 1.5])) == "regression"


def test_val_metrics_match_sklearn() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    p = rng.random(200)
    m = val_metrics("classification", y, p)
    assert m["val_loss"] == pytest.approx(log_loss(y, p))
    assert m["val_accuracy"] == pytest.approx(accuracy_score(y, p > 0.5))
    y3 = rng.integers(0, 3, 200)
    p3 = rng.dirichlet(np.ones(3), 200)
    m3 = val_metrics("classification", y3, p3)
    assert m3["val_loss"] == pytest.approx(log_loss(y3, p3))
    assert m3["val_accuracy"] == pytest.approx(accuracy_score(y3, p3.argmax(1)))
    yr, pr = rng.normal(size=200), rng.normal(size=200)
    mr = val_metrics("regression", yr, pr)
    assert mr["val_loss"] == pytest.approx(mean_squared_error(yr, pr))
    assert mr["val_rmse"] == pytest.approx(np.sqrt(mean_squared_error(yr, pr)))
    assert mr["val_r2"] == pytest.approx(r2_score(yr, pr))
