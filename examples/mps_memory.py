"""User trainables that take a set share of their GPU's memory, through torch or XGBoost.

    "trainable": "examples.mps_memory:torch_hold"   (or xgboost_hold)

For the MPS checks (tests/e2e/test_mps_gpu.py): the share is of the physical card's
memory, read through NVML (under MPS a client's CUDA may report its own limit as the
card's size). Each reports ``loss`` (the config's ``x``), the bytes it asked for and
the MPS compute limit its process was given (-1 when none).
"""

from __future__ import annotations

import os
import time
from typing import Any

from ray import tune


def card_bytes() -> int:
    """Total memory of this trial's first GPU (its physical id: Ray's CUDA_VISIBLE_DEVICES)."""
    import pynvml

    physical = int(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0])
    pynvml.nvmlInit()
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(physical)
        return int(pynvml.nvmlDeviceGetMemoryInfo(handle).total)
    finally:
        pynvml.nvmlShutdown()


def _report(config: dict[str, Any], held: int) -> None:
    threads = float(os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "-1"))
    tune.report({"loss": float(config.get("x", 0.0)), "held_bytes": held, "mps_threads": threads})


def torch_hold(config: dict[str, Any]) -> None:
    """Allocate ``mem_fraction`` of the card with torch, hold it ``hold_s`` s, report."""
    import torch

    held = int(card_bytes() * float(config["mem_fraction"]))
    block = torch.empty(held, dtype=torch.uint8, device="cuda:0")
    block.fill_(1)
    torch.cuda.synchronize()
    time.sleep(float(config.get("hold_s", 2.0)))
    _report(config, held)


def xgboost_hold(config: dict[str, Any]) -> None:
    """Train XGBoost on the GPU with device buffers of about ``mem_fraction`` of the card.

    A multi-class model keeps its gradients and predictions on the device, about 12
    bytes per row and class, so a few host features of many rows ask XGBoost itself
    (not torch) for a set share of the card.
    """
    import numpy as np
    import xgboost as xgb

    classes = 256
    rows = max(4 * classes, int(card_bytes() * float(config["mem_fraction"])) // (12 * classes))
    rng = np.random.default_rng(int(config.get("seed", 0)))
    X = rng.random((rows, 4), dtype=np.float32)
    y = rng.integers(0, classes, rows).astype(np.float32)
    params = {"device": "cuda", "tree_method": "hist", "objective": "multi:softprob",
              "num_class": classes, "max_depth": 2, "max_bin": 16}  # fmt: skip
    booster = xgb.train(params, xgb.DMatrix(X, label=y), num_boost_round=1)
    time.sleep(float(config.get("hold_s", 2.0)))  # the booster's buffers still held
    _report(config, rows * classes * 12)
    del booster
