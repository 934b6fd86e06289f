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
    """Train XGBoost on the GPU over ``mem_fraction`` of the card in float32 features.

    The features are made on the GPU (torch), so the host never holds them; XGBoost
    then copies them into its own device matrix (about twice their size), which is
    where a greedy trial outgrows its share.
    """
    import torch
    import xgboost as xgb

    columns = 32
    rows = max(1024, int(card_bytes() * float(config["mem_fraction"])) // (4 * columns))
    generator = torch.Generator(device="cuda").manual_seed(int(config.get("seed", 0)))
    X = torch.rand((rows, columns), device="cuda", generator=generator)
    y = (X[:, 0] > 0.5).float()
    train = xgb.DMatrix(X, label=y)
    xgb.train({"device": "cuda", "tree_method": "hist", "max_depth": 4}, train, 4)
    time.sleep(float(config.get("hold_s", 2.0)))
    _report(config, rows * columns * 4)
