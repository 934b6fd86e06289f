"""Deterministic execution switches for torch (and the environment CUDA needs for them).

``DETERMINISM_ENV`` must reach a worker before CUDA initialises there: a local
Ray's workers inherit it from the driver's environment, a cluster's get it
through the job's ``runtime_env`` ``env_vars`` (engines/ray/ray_session.py);
``set_determinism_env`` also sets it in-process at every trial start, before
the trial can import torch or touch CUDA.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import Any

DETERMINISM_ENV: dict[str, str] = {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"}


def set_deterministic(enabled: bool, threads: int | None = None) -> None:
    """Switch torch's deterministic algorithms and cuDNN settings on or off.

    Also sets torch's intra-op thread count when ``threads`` is given. torch is
    only touched when the process has already imported it, so GBM trials never
    pay for importing it; a trial switches a torch it imports later through
    ``repro.trial_start``, and the torch_mlp trainable calls this after its own import.
    """
    set_determinism_env(enabled)
    torch = sys.modules.get("torch")
    if torch is not None:
        switch_torch(torch, enabled, threads)


def set_determinism_env(enabled: bool) -> None:
    """Export ``DETERMINISM_ENV`` when ``enabled`` (a value the user set is kept).

    cuBLAS reads ``CUBLAS_WORKSPACE_CONFIG`` when CUDA initialises: set it before.
    """
    if enabled:
        for key, value in DETERMINISM_ENV.items():
            os.environ.setdefault(key, value)


def switch_torch(torch: ModuleType, enabled: bool, threads: int | None = None) -> None:
    """torch's deterministic algorithms, cuDNN flags and (when given) intra-op threads."""
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be >= 1 (got {threads})")
    if (
        torch.are_deterministic_algorithms_enabled() != enabled
        or torch.is_deterministic_algorithms_warn_only_enabled()
    ):  # the call imports torch._inductor (0.9-1.5 s in a fresh process): only to change
        torch.use_deterministic_algorithms(enabled, warn_only=False)
    torch.backends.cudnn.deterministic = enabled
    if enabled:
        torch.backends.cudnn.benchmark = False
    if threads is not None:
        torch.set_num_threads(threads)


def determinism_flags(enabled: bool) -> dict[str, Any]:
    """What ``set_deterministic(enabled)`` sets, for the run manifest (repro.json).

    Reads the live torch state when torch is already imported in this process.
    """
    flags: dict[str, Any] = {
        "deterministic": enabled,
        "torch.use_deterministic_algorithms": enabled,
        "torch.backends.cudnn.deterministic": enabled,
        "torch.backends.cudnn.benchmark": False if enabled else None,
        "env": dict(DETERMINISM_ENV) if enabled else {},
        "lightgbm": {"deterministic": enabled, "force_row_wise": enabled},
        "xgboost": {"tree_method": "hist"},
        "catboost": {"gpu_deterministic": False},
    }
    torch = sys.modules.get("torch")
    if torch is not None:
        flags["torch_state"] = {
            "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled()),
            "cudnn_deterministic": bool(torch.backends.cudnn.deterministic),
            "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
            "num_threads": int(torch.get_num_threads()),
        }
    return flags
