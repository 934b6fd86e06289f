"""The ``cnn_lstm`` trading entry model on CUDA (marked ``gpu``): mixed precision, repeatable.

The CPU path is in tests/trainables/trading/test_cnn_lstm.py.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from factories import make_sweep
from raysweep.rundir import RunDir
from raysweep.trainables.context import TrialContext
from raysweep.trainables.trading.trainable import fit_trading

pytestmark = pytest.mark.gpu
CliRunner = Callable[..., subprocess.CompletedProcess[str]]
ARGS = {"data": "synthetic", "synthetic": {"bars": 3000, "seed": 3, "symbols": 2},
        "n_folds": 2, "embargo": 6}  # fmt: skip
CONFIG = {
    "entry_model": "cnn_lstm",
    "label_horizon": 6,
    "entry_threshold": 0.4,
    "cnn_lstm.seq_len": 32,
    "cnn_lstm.hidden_size": 64,
    "cnn_lstm.epochs": 3,
}


def fit_on_cuda(seed: int = 5) -> list[dict[str, float]]:
    metrics: list[dict[str, float]] = []
    ctx = TrialContext(index=0, seed=seed, metric="composite", mode="max", trainable_args=ARGS,
                       gpu_ids=("0",), gpu_fraction=1.0, deterministic=True)  # fmt: skip
    fit_trading(CONFIG, ctx, lambda values, _: metrics.append(values))
    return metrics


def test_trains_on_cuda_under_autocast_and_repeats_exactly() -> None:
    import torch

    torch.cuda.init()  # before CUDA starts, the caching allocator knows no device to reset
    torch.cuda.reset_peak_memory_stats(0)
    first = fit_on_cuda()
    assert torch.cuda.max_memory_allocated(0) > 0  # the model and the data were on the GPU
    assert [m["fold"] for m in first] == [1.0, 2.0]
    assert all(np.isfinite(v) for m in first for v in m.values())
    assert fit_on_cuda() == first  # deterministic mode on CUDA: bit for bit


def test_a_packed_cnn_lstm_sweep_finishes(tmp_path: Path, sweep_cli: CliRunner) -> None:
    """Four trials at a quarter GPU each through the CLI (MPS where available)."""
    data = make_sweep(
        "trading",
        name="cnn-lstm-packed",
        trainable_args=ARGS,
        space={
            **CONFIG,
            "cnn_lstm.learning_rate": {"type": "loguniform", "low": 3e-4, "high": 3e-3},
        },
        search={"algorithm": "random", "num_samples": 4},
        resources={"cpus_per_trial": 1, "gpus_per_trial": 0.25, "gpu_sharing": "auto"},
        seed=4,
        checkpoint={"frequency": 1, "num_to_keep": 1},
    )
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(data))
    ran = sweep_cli("run", "--config", str(path), "--storage", str(tmp_path), "--gpus", "0")
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    trials = RunDir(tmp_path / "cnn-lstm-packed").read_results().trials
    assert [t.status for t in trials] == ["completed"] * 4
    assert all(t.gpu_ids == ["0"] for t in trials)
