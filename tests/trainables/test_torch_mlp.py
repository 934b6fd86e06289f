"""Built-in torch MLP: per-epoch metrics, determinism, bit-identical resume, Ray wiring."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from factories import ctx_for
from raysweep.errors import TrainableError
from raysweep.trainables.builtins import CHECKPOINT_META, reported_metrics
from raysweep.trainables.data import load_dataset
from raysweep.trainables.torch_mlp import data_parallel_size, fit_torch_mlp, hyperparams


@pytest.fixture
def run_mlp(record_fit: Callable[..., Any]) -> Callable[..., Any]:
    """``record_fit`` of the MLP, the trial from ``ctx_for``."""
    return partial(record_fit, fit_torch_mlp, ctx_for)


@pytest.mark.parametrize("dataset", ["breast_cancer", "wine", "diabetes"])
def test_one_report_per_epoch(dataset: str, tmp_path: Path, run_mlp: Callable[..., Any]) -> None:
    args = {"dataset": dataset, "epochs": 4}
    rec = run_mlp(tmp_path, {"lr": 0.01, "hidden_size": 16}, args)
    assert [m["epoch"] for m in rec.metrics] == [1, 2, 3, 4]
    assert set(rec.metrics[-1]) == set(reported_metrics("torch_mlp", args))
    assert rec.metrics[-1]["val_loss"] < rec.metrics[0]["val_loss"]
    assert rec.metrics[-1]["train_loss"] < rec.metrics[0]["train_loss"]
    if dataset == "diabetes":
        assert rec.metrics[-1]["val_rmse"] ** 2 == pytest.approx(rec.metrics[-1]["val_loss"])
    else:
        assert rec.metrics[-1]["val_accuracy"] > 0.8


def test_same_seed_repeats_and_seed_matters(tmp_path: Path, run_mlp: Callable[..., Any]) -> None:
    args = {"dataset": "digits", "epochs": 2}
    config = {"dropout": 0.3, "batch_size": 32, "optimizer": "sgd", "lr": 0.05, "momentum": 0.9}
    a, b = run_mlp(tmp_path, config, args), run_mlp(tmp_path, config, args)
    c = run_mlp(tmp_path, config, args, seed=8)
    assert a.metrics == b.metrics
    assert a.metrics != c.metrics


def test_resume_from_checkpoint_is_bit_identical(
    tmp_path: Path, run_mlp: Callable[..., Any]
) -> None:
    args = {"dataset": "wine", "epochs": 5}
    config = {"dropout": 0.2, "lr": 0.01, "num_layers": 3, "hidden_size": 32, "batch_size": 16}
    full = run_mlp(tmp_path / "full", config, args, checkpoint_frequency=2)
    assert sorted(full.checkpoints) == [2, 4, 5]  # every 2 epochs, and the last one
    stopped = run_mlp(tmp_path / "stop", config, args, checkpoint_frequency=2, stop_after=3)
    assert stopped.metrics == full.metrics[:3]
    checkpoint = stopped.checkpoints[2]
    meta = json.loads((checkpoint / CHECKPOINT_META).read_text())
    assert (meta["trainable"], meta["epoch"], meta["reports"]) == ("torch_mlp", 2, 2)
    assert (checkpoint / "state.pt").is_file()
    resumed = run_mlp(tmp_path / "resume", config, args, checkpoint_frequency=2, resume=checkpoint)
    assert resumed.metrics == full.metrics[2:]


def test_pause_points_carry_checkpoints(tmp_path: Path, run_mlp: Callable[..., Any]) -> None:
    args = {"dataset": "wine", "epochs": 5}
    config = {"lr": 0.01, "hidden_size": 16}
    rec = run_mlp(tmp_path / "rungs", config, args, checkpoint_at=frozenset({1, 3}))
    assert sorted(rec.checkpoints) == [1, 3, 5]  # the pause points, and the last epoch
    plain = run_mlp(tmp_path / "none", config, args)
    assert not plain.checkpoints and plain.metrics == rec.metrics


def test_hyperparameters_are_checked() -> None:
    assert hyperparams({"hidden_size": 32.0})["hidden_size"] == 32
    with pytest.raises(TrainableError, match=r"unknown hyperparameters \['width'\]"):
        hyperparams({"width": 3})
    with pytest.raises(TrainableError, match="invalid optimizer 'rmsprop'"):
        hyperparams({"optimizer": "rmsprop"})
    with pytest.raises(TrainableError, match="invalid lr 0"):
        hyperparams({"lr": 0})
    with pytest.raises(TrainableError, match="invalid dropout 'x'"):
        hyperparams({"dropout": "x"})
    with pytest.raises(TrainableError, match="batch_size must be an integer >= 1"):
        hyperparams({"batch_size": 0})


def test_gpu_requests_are_checked() -> None:
    two = ctx_for({"dataset": "wine"}, gpu_ids=("0", "1"), gpu_fraction=1.0)
    assert data_parallel_size(two) == 2  # one replica per GPU
    mismatch = ctx_for({"dataset": "wine", "data_parallel": 3}, gpu_ids=("0", "1"))
    with pytest.raises(TrainableError, match="data_parallel is 3 but the trial has 2 GPUs"):
        data_parallel_size(mismatch)
    one = ctx_for({"dataset": "wine", "data_parallel": 2}, gpu_ids=("0",), gpu_fraction=1.0)
    with pytest.raises(TrainableError, match=r"set resources\.gpus_per_trial to 2"):
        data_parallel_size(one)
    assert data_parallel_size(ctx_for({"dataset": "wine", "data_parallel": 2})) == 2
    assert data_parallel_size(ctx_for({"dataset": "wine"})) == 1
    import torch

    if not torch.cuda.is_available():
        ds = load_dataset({"dataset": "wine"}, 0)
        for ctx in (two, ctx_for({"dataset": "wine"}, gpu_ids=("0",), gpu_fraction=0.5)):
            with pytest.raises(TrainableError, match="CUDA is unavailable"):
                fit_torch_mlp({}, ctx, ds, lambda m, c: None)


def _ray_trial(config: dict[str, Any]) -> None:
    """One Ray trial that dies right after its first checkpoint, then is restarted."""
    from ray import tune

    from raysweep.trainables import torch_mlp
    from raysweep.trainables.builtins import ray_report

    config = dict(config)
    args = config.pop("args")
    ctx = ctx_for(args, checkpoint_frequency=1)
    if tune.get_checkpoint() is None:

        def report(metrics: dict[str, float], checkpoint_dir: Path | None) -> None:
            ray_report(metrics, checkpoint_dir)
            raise RuntimeError("injected crash after the first checkpoint")

        torch_mlp.fit_torch_mlp(config, ctx, load_dataset(args, 0), report)
    torch_mlp.train_torch_mlp(config, ctx)


def test_ray_trial_checkpoints_and_recovers(
    ray_session: None, tmp_path: Path, run_mlp: Callable[..., Any]
) -> None:
    from ray import tune
    from ray.tune.logger import JsonLoggerCallback

    args = {"dataset": "breast_cancer", "epochs": 3}
    config = {"dropout": 0.1, "hidden_size": 16}
    tuner = tune.Tuner(
        tune.with_resources(_ray_trial, {"cpu": 1}),
        param_space={"args": args, **config},
        run_config=tune.RunConfig(
            storage_path=str(tmp_path), name="mlp", verbose=0,
            failure_config=tune.FailureConfig(max_failures=1),
            # explicit: raysweep's runner may have switched Ray's default loggers off
            callbacks=[JsonLoggerCallback()],
        ),
    )  # fmt: skip
    (result,) = list(tuner.fit())
    assert result.error is None and result.metrics is not None
    assert result.metrics["epoch"] == 3 and result.metrics["training_iteration"] == 3
    assert result.checkpoint is not None
    assert {p.name for p in Path(result.checkpoint.path).iterdir()} >= {"state.pt", CHECKPOINT_META}
    clean = run_mlp(tmp_path / "clean", config, args, checkpoint_frequency=1)
    assert result.metrics["val_loss"] == clean.metrics[-1]["val_loss"]
