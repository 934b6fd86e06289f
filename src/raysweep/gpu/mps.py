"""NVIDIA MPS: whether this machine can give trials enforced GPU shares, and each trial's limits.

Ray's fractional GPUs only count; under time-slicing a trial at 0.25 GPU can still
take the whole card, and the kernels of packed trials take turns instead of running
side by side. Clients of one MPS server share a context (their kernels run
concurrently) and each can be limited in compute (``CUDA_MPS_ACTIVE_THREAD_PERCENTAGE``)
and device memory (``CUDA_MPS_PINNED_DEVICE_MEM_LIMIT``), whatever CUDA library
allocates it (torch, XGBoost, CatBoost, CuPy).

:func:`mps_status` never raises: it says why MPS cannot be used here (no
``nvidia-cuda-mps-control``, not executable, no GPU, MIG, a compute mode other
than Default). NVML is imported lazily; the daemon's lifecycle is in
``gpu/mps_daemon.py``.
"""

from __future__ import annotations

import functools
import json
import math
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from raysweep.gpu.inventory import NO_GPU, Inventory, nvml_error_text, nvml_optional

CONTROL_BINARY = "nvidia-cuda-mps-control"
PIPE_ENV = "CUDA_MPS_PIPE_DIRECTORY"
LOG_ENV = "CUDA_MPS_LOG_DIRECTORY"
THREADS_ENV = "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"
MEMORY_ENV = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"
# Set by the driver for its Ray workers when the sweep's trials run as MPS clients.
SHARING_ENV = "RAYSWEEP_GPU_SHARING"

# A trial's device-memory limit is this share of its fraction of the card: the
# rest is left for the MPS server's own per-client state (as the time-slicing
# memory guard leaves its 5% for the CUDA context, gpu/guard.py).
MPS_MEMORY_HEADROOM = 0.95
# A trial's compute limit is its fraction of the SMs, rounded up to a whole percent:
# packed trials together never ask for more than the card, and a trial at 0.125
# still gets 13% of the SMs, not 12.
_NVML_COMPUTE_MODES = {1: "exclusive-thread", 2: "prohibited", 3: "exclusive-process"}


@dataclass(frozen=True)
class MPSStatus:
    """Whether MPS can be used for ``gpu_ids``, and if not, why (one line)."""

    available: bool
    reason: str | None = None
    binary: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"available": self.available, "reason": self.reason, "binary": self.binary}


def format_mps(status: MPSStatus) -> str:
    """One line for ``sweep gpus``: whether ``resources.gpu_sharing: "mps"`` can run here."""
    if status.available:
        return f"MPS: available ({status.binary}); resources.gpu_sharing 'mps' enforces shares"
    return f"MPS: not available ({status.reason}); trials time-slice the GPUs"


def gpus_text(inventory: Inventory, as_json: bool) -> str:
    """``sweep gpus`` (``--json``): the inventory, and whether MPS can run on its GPUs."""
    from raysweep.gpu.inventory import format_inventory, inventory_to_json

    mps = mps_status(inventory.indices or None)
    if as_json:
        return json.dumps({**inventory_to_json(inventory), "mps": mps.to_json()}, indent=2)
    return f"{format_inventory(inventory)}\n{format_mps(mps)}"


def find_control_binary() -> str | None:
    """The ``nvidia-cuda-mps-control`` on PATH, or None."""
    return shutil.which(CONTROL_BINARY)


def mps_status(gpu_ids: Sequence[int] | None = None) -> MPSStatus:
    """Whether MPS can run trials on ``gpu_ids`` (NVML indices; None: every GPU found)."""
    binary = find_control_binary()
    if binary is None:
        return MPSStatus(False, f"{CONTROL_BINARY} is not on PATH")
    if not os.access(binary, os.X_OK):
        return MPSStatus(False, f"no permission to run {binary}", binary)
    reason = _gpu_reason(gpu_ids)
    return MPSStatus(reason is None, reason, binary)


def _gpu_reason(gpu_ids: Sequence[int] | None) -> str | None:
    """Why the GPUs cannot serve MPS clients (None when they can): no GPU, MIG, compute mode."""
    try:
        import pynvml
    except ImportError as exc:  # pragma: no cover - nvidia-ml-py is a dependency
        return f"{NO_GPU} (nvidia-ml-py is not installed: {exc})"
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        return nvml_error_text(exc)
    try:
        count = int(pynvml.nvmlDeviceGetCount())
        ids = list(range(count)) if gpu_ids is None else list(gpu_ids)
        if count == 0 or not ids:
            return f"{NO_GPU} (NVML reports 0 devices)" if count == 0 else "no GPU selected"
        for index in ids:
            if not 0 <= index < count:
                return f"GPU {index} does not exist on this machine ({count} found)"
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            mig = nvml_optional(pynvml.nvmlDeviceGetMigMode, handle)
            if mig is not None and int(mig[0]) == 1:
                return f"GPU {index} has MIG enabled (MPS does not run on a MIG-partitioned card)"
            mode = nvml_optional(pynvml.nvmlDeviceGetComputeMode, handle)
            if mode is not None and int(mode) in _NVML_COMPUTE_MODES:
                return (
                    f"GPU {index} is in {_NVML_COMPUTE_MODES[int(mode)]} compute mode (another "
                    "process or a system MPS server owns it; raysweep needs Default mode)"
                )
    except Exception as exc:
        return nvml_error_text(exc)
    finally:
        nvml_optional(pynvml.nvmlShutdown)
    return None


def thread_percentage(gpu_fraction: float) -> int:
    """``CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`` for a trial at ``gpu_fraction`` of a GPU."""
    if gpu_fraction >= 1 or gpu_fraction <= 0:
        return 100
    return max(1, min(100, math.ceil(gpu_fraction * 100 - 1e-9)))


def memory_limit_mb(gpu_fraction: float, total_mb: float) -> int | None:
    """The trial's device-memory limit in MiB on a card of ``total_mb`` (None: whole GPUs)."""
    if gpu_fraction >= 1 or gpu_fraction <= 0:
        return None
    return max(1, int(gpu_fraction * MPS_MEMORY_HEADROOM * total_mb))


def client_env(gpu_fraction: float, totals_mb: Sequence[float]) -> dict[str, str]:
    """The MPS limits of one trial whose visible devices (ordinals 0..) have ``totals_mb``."""
    env = {THREADS_ENV: str(thread_percentage(gpu_fraction))}
    limits = [memory_limit_mb(gpu_fraction, total) for total in totals_mb]
    if limits and all(limit is not None for limit in limits):
        env[MEMORY_ENV] = ",".join(f"{i}={limit}MB" for i, limit in enumerate(limits))
    return env


def apply_client_limits(gpu_fraction: float, physical_ids: Sequence[str]) -> dict[str, str]:
    """Set this trial's MPS limits in its environment (before CUDA initialises); returns them.

    Does nothing unless the driver started the sweep's trials as MPS clients
    (``RAYSWEEP_GPU_SHARING=mps``). Memory totals come from NVML by physical id; the
    trial sees its GPUs as ordinals 0.. in the order of ``physical_ids``.
    """
    if os.environ.get(SHARING_ENV) != "mps" or not physical_ids:
        return {}
    env = client_env(gpu_fraction, _totals_mb(physical_ids))
    os.environ.update(env)
    return env


def mps_active() -> bool:
    """Whether this process runs as one of the sweep's MPS clients."""
    return os.environ.get(SHARING_ENV) == "mps"


def _totals_mb(physical_ids: Sequence[str]) -> list[float]:
    return _totals_of(tuple(physical_ids))


@functools.cache  # a reused actor asks again at every trial; the cards do not change
def _totals_of(physical_ids: tuple[str, ...]) -> list[float]:
    from raysweep.gpu.inventory import read_inventory

    by_index = {str(g.index): g.memory_total_mb for g in read_inventory().gpus}
    if not all(i in by_index for i in physical_ids):
        return []  # ordinals would not line up: the compute limit alone
    return [by_index[i] for i in physical_ids]
