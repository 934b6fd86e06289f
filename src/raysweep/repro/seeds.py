"""Seeds: the per-trial seed rule, seeding every RNG in the process, and DataLoader workers."""

from __future__ import annotations

import os
import random
import sys
from types import ModuleType
from typing import Any

import numpy as np

SEED_RULE = (
    "int(numpy.random.SeedSequence([master_seed, trial_index]).generate_state(1)[0]) & 0x7FFFFFFF"
)


def trial_seed_for(master_seed: int, index: int) -> int:
    """Per-trial seed from the master seed and the trial's suggestion index.

    Never depends on worker, GPU or completion order. Fits in 31 bits so every
    library (LightGBM, CatBoost, torch) accepts it.
    """
    state = np.random.SeedSequence([master_seed, index]).generate_state(1)[0]
    return int(state) & 0x7FFFFFFF


def seed_everything(seed: int) -> None:
    """Seed Python ``random``, NumPy's global state, torch (CPU and every CUDA device).

    Also sets ``PYTHONHASHSEED`` for child processes. torch is only touched when
    it is already imported, so non-torch trials do not pay for importing it; a
    trial seeds a torch it imports later through ``repro.trial_start``.
    """
    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch = sys.modules.get("torch")
    if torch is not None:
        seed_torch(torch, seed)


def seed_torch(torch: ModuleType, seed: int) -> None:
    """Seed torch's CPU generator and every CUDA device's (lazily, if CUDA is not up yet)."""
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def dataloader_kwargs(seed: int) -> dict[str, Any]:
    """``generator`` and ``worker_init_fn`` for a ``torch.utils.data.DataLoader``.

    ``DataLoader(dataset, shuffle=True, num_workers=4, **dataloader_kwargs(seed))``
    shuffles in the same order and gives every worker process the same seeds on
    every run: torch seeds worker *k* with a base drawn from ``generator`` plus
    *k*, and :func:`seed_dataloader_worker` passes that seed on to Python's
    ``random`` and NumPy in the worker (forked workers would otherwise all share
    the parent's NumPy state, spawned ones would start from entropy).
    """
    import torch

    return {
        "generator": torch.Generator().manual_seed(seed),
        "worker_init_fn": seed_dataloader_worker,
    }


def seed_dataloader_worker(worker_id: int) -> None:
    """A DataLoader ``worker_init_fn``: seed ``random`` and NumPy from the worker's torch seed."""
    import torch

    worker_seed = torch.initial_seed() % 2**32  # base seed + worker_id, set by the DataLoader
    random.seed(worker_seed)
    np.random.seed(worker_seed)
