"""The built-in registry: arguments, reported metrics, split seed, checkpoint metadata."""

from __future__ import annotations

import importlib
from pathlib import Path

import pandas as pd
import pytest

from raysweep.errors import ConfigError, TrainableError
from raysweep.trainables.builtins import (
    ALLOWED_ARGS,
    BUILTIN_TRAINABLES,
    positive_int_arg,
    read_checkpoint_meta,
    reported_metrics,
    split_seed,
    write_checkpoint_meta,
)
from raysweep.trainables.context import TrialContext


def test_every_builtin_resolves_and_has_arguments() -> None:
    assert set(BUILTIN_TRAINABLES) == set(ALLOWED_ARGS) == {
        "lightgbm", "xgboost", "catboost", "torch_mlp", "trading"
    }  # fmt: skip
    for name, ref in BUILTIN_TRAINABLES.items():
        module, _, function = ref.partition(":")
        assert callable(getattr(importlib.import_module(module), function))
        data_args = {"data", "n_folds"} if name == "trading" else {"dataset", "target", "task"}
        assert data_args <= ALLOWED_ARGS[name]
    assert "num_boost_round" in ALLOWED_ARGS["xgboost"] and "epochs" in ALLOWED_ARGS["torch_mlp"]


def test_reported_metrics_follow_the_task(tmp_path: Path) -> None:
    assert reported_metrics("lightgbm", {"dataset": "wine"}) == [
        "val_loss", "val_accuracy", "rounds"
    ]  # fmt: skip
    assert reported_metrics("torch_mlp", {"dataset": "diabetes"}) == [
        "val_loss", "val_rmse", "val_r2", "train_loss", "epoch"
    ]  # fmt: skip
    path = tmp_path / "d.csv"
    pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [0.1, 0.2, 0.35]}).to_csv(path, index=False)
    file_args = {"dataset": str(path), "target": "y"}
    assert "val_r2" in reported_metrics("xgboost", file_args)
    assert "val_accuracy" in reported_metrics("xgboost", {**file_args, "task": "classification"})
    with pytest.raises(ConfigError, match=r"column 'z' not in d\.csv"):
        reported_metrics("xgboost", {"dataset": str(path), "target": "z"})
    with pytest.raises(ConfigError, match="unknown built-in 'sklearn'"):
        reported_metrics("sklearn", {"dataset": "wine"})


def test_split_seed_and_int_args() -> None:
    ctx = TrialContext(index=3, seed=99, metric="val_loss", mode="min")
    assert split_seed(ctx) == 0  # never the per-trial seed
    with_arg = TrialContext(index=3, seed=99, metric="m", mode="min",
                            trainable_args={"split_seed": 5})  # fmt: skip
    assert split_seed(with_arg) == 5
    assert positive_int_arg({"n": 4.0}, "n", 1) == 4 and positive_int_arg({}, "n", 7) == 7
    with pytest.raises(ConfigError, match=r"trainable_args.n: must be a positive integer"):
        positive_int_arg({"n": 0}, "n", 1)


def test_checkpoint_meta_round_trip(tmp_path: Path) -> None:
    write_checkpoint_meta(tmp_path, "xgboost", rounds=4, reports=2)
    assert read_checkpoint_meta(tmp_path, "xgboost")["rounds"] == 4
    with pytest.raises(TrainableError, match="written by 'xgboost'"):
        read_checkpoint_meta(tmp_path, "catboost")
    with pytest.raises(TrainableError, match="not a raysweep checkpoint"):
        read_checkpoint_meta(tmp_path / "missing", "catboost")
