"""A trial's start: every RNG seeded, determinism switched, torch's GPU memory capped.

Applied now to what the trial process has imported, and to torch the moment the
trial imports it (``repro.import_hook``): a trainable that does ``import torch``
inside its function, in a fresh worker, gets the same seed, switches and memory
cap as one whose module imported torch at the top. Nothing here imports torch,
so a trial that never uses it pays nothing and gets no CUDA context.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType

from raysweep.gpu.guard import cap_torch_memory
from raysweep.repro.determinism import set_determinism_env, switch_torch
from raysweep.repro.import_hook import when_imported
from raysweep.repro.seeds import seed_everything, seed_torch


@dataclass(frozen=True)
class TrialStart:
    """What a trial's start sets: its seed, determinism, torch threads and GPU share."""

    seed: int
    deterministic: bool = True
    threads: int | None = None  # torch's intra-op threads (None: left as they are)
    gpu_fraction: float = 0.0  # the trial's share of each of its GPUs (0: no GPU, no cap)

    def prepare_torch(self, torch: ModuleType) -> None:
        """Cap (before anything allocates), seed and switch an imported torch."""
        cap_torch_memory(self.gpu_fraction)
        seed_torch(torch, self.seed)
        switch_torch(torch, self.deterministic, self.threads)


@contextmanager
def started_trial(start: TrialStart) -> Iterator[None]:
    """Seed and switch everything now; torch too when the block imports it.

    ``CUBLAS_WORKSPACE_CONFIG`` is exported first (deterministic mode), before the
    block can initialise CUDA. A torch imported after the block is left alone: the
    hook is gone when the block ends.
    """
    set_determinism_env(start.deterministic)
    seed_everything(start.seed)  # random, NumPy and an already imported torch
    torch = sys.modules.get("torch")
    if torch is not None:
        start.prepare_torch(torch)
        yield
        return
    with when_imported("torch", start.prepare_torch):
        yield
