"""Deterministic execution switches for torch (and the environment CUDA needs for them).

``DETERMINISM_ENV`` must reach a worker before CUDA initialises there: a local
Ray's workers inherit it from the driver's environment, a cluster's get it
through the job's ``runtime_env`` ``env_vars`` (driver/ray_session.py);
``set_deterministic`` also sets it in-process as a fallback for workers that have
not touched CUDA yet.
"""

from __future__ import annotations

import os
import sys
from typing import Any

DETERMINISM_ENV: dict[str, str] = {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"}


def set_deterministic(enabled: bool, threads: int | None = None) -> None:
    """Switch torch's deterministic algorithms and cuDNN settings on or off.

    Also sets torch's intra-op thread count when ``threads`` is given. torch is
    only touched when the process has already imported it (a torch trainable
    has, by the time it is resolved), so GBM trials never pay for importing it;
    the torch_mlp trainable calls this again after its own import.
    """
    if enabled:
        for key, value in DETERMINISM_ENV.items():
            os.environ.setdefault(key, value)
    torch = sys.modules.get("torch")
    if torch is None:
        return

    torch.use_deterministic_algorithms(enabled, warn_only=False)
    torch.backends.cudnn.deterministic = enabled
    if enabled:
        torch.backends.cudnn.benchmark = False
    if threads is not None:
        if threads < 1:
            raise ValueError(f"threads must be >= 1 (got {threads})")
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
