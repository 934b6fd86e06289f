"""Memory guard: cap a torch trial's CUDA memory at its share of the card.

Ray's fractional GPUs are a scheduling count only; nothing stops a trial given
0.25 of a GPU from allocating all of it. For a trial that uses torch, raysweep
caps torch's caching allocator at ``GPU_MEMORY_HEADROOM`` of the trial's share
(``torch.cuda.set_per_process_memory_fraction``) at the trial's start, or the
moment the trial imports torch (``raysweep.repro.trial_start``), so a trial that
outgrows its share fails alone with CUDA out-of-memory instead of starving its
neighbours. The cap covers torch's allocations, not the CUDA context itself nor
memory other libraries allocate (XGBoost, CatBoost, CuPy).
"""

from __future__ import annotations

import os
import sys

# The share of its fraction a trial may allocate: the rest absorbs the CUDA context.
GPU_MEMORY_HEADROOM = 0.95


def cap_torch_memory(gpu_fraction: float) -> float | None:
    """Cap torch's allocator on every visible GPU at ``gpu_fraction`` x headroom.

    Returns the fraction of each card now allowed, or None when nothing was
    capped: whole GPUs (``gpu_fraction`` 0 or >= 1), torch not imported by this
    process (torch is never imported here: a trial that does not use it pays
    nothing and gets no CUDA context from raysweep), or no CUDA device visible.
    Calling it again with the same fraction changes nothing.
    """
    if not 0 < gpu_fraction < 1 or os.environ.get("RAYSWEEP_GPU_SHARING") == "mps":
        return None  # whole GPUs; or MPS, which limits the whole process (gpu/mps.py)
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return None
    cap = gpu_fraction * GPU_MEMORY_HEADROOM
    for device in range(torch.cuda.device_count()):
        torch.cuda.set_per_process_memory_fraction(cap, device)
    return cap
