"""A user trainable that reports the first draw of every RNG raysweep seeds.

    "trainable": "examples.rng_probe:fit"

torch is imported at module level, as in most torch training code. After
reporting, ``fit`` scrambles the global RNGs: a later trial on the same (reused)
actor must still start from its own seed.
"""

from __future__ import annotations

import os
import random
from typing import Any

import numpy as np
import torch
from ray import tune

import raysweep


def fit(config: dict[str, Any]) -> None:
    """Reports the first draw of Python's, NumPy's and torch's global RNGs and the seed."""
    first_random = random.random()
    first_numpy = float(np.random.random())
    first_torch = float(torch.rand(1).item())
    tune.report(
        {
            "loss": first_random + first_numpy + first_torch,
            "first_random": first_random,
            "first_numpy": first_numpy,
            "first_torch": first_torch,
            "trial_seed": raysweep.trial_seed(),
            "worker_pid": os.getpid(),
        }
    )
    random.seed(os.urandom(8))
    np.random.seed(int.from_bytes(os.urandom(4), "little"))
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
