"""Seeds: the per-trial seed rule and seeding every RNG in the process."""

from __future__ import annotations

import os
import random

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
    it is already imported, so non-torch trials do not pay for importing it.
    """
    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    import sys

    if "torch" in sys.modules:
        import torch

        torch.manual_seed(seed)  # also seeds every CUDA device
