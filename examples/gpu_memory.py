"""A torch user trainable that takes a set share of its GPU's memory, to test packings.

    "trainable": "examples.gpu_memory:hold"

Each trial allocates ``mem_fraction`` of the whole card's memory on its GPU,
holds it ``hold_s`` seconds and reports ``loss`` (the config's ``x``) and the
bytes it held. With ``gpus_per_trial`` 0.25, a trial asking for more than its
quarter fails alone with CUDA out-of-memory: torch is imported with this module,
so raysweep caps the trial's allocator at its share before the trial starts.
"""

from __future__ import annotations

import time
from typing import Any

import torch
from ray import tune


def hold(config: dict[str, Any]) -> None:
    """Allocate ``mem_fraction`` of the card, hold it ``hold_s`` s, then report."""
    total = torch.cuda.get_device_properties(0).total_memory
    held = int(total * float(config["mem_fraction"]))
    block = torch.empty(held, dtype=torch.uint8, device="cuda:0")
    block.fill_(1)
    torch.cuda.synchronize()
    time.sleep(float(config.get("hold_s", 2.0)))
    tune.report({"loss": float(config.get("x", 0.0)), "held_bytes": held})
    del block
    torch.cuda.empty_cache()
