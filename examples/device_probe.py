"""A user trainable that reports which devices its trial was given.

    "trainable": "examples.device_probe:probe"

Useful to check a GPU packing before a long sweep: each trial reports the
``CUDA_VISIBLE_DEVICES`` it sees, Ray's GPU ids, and when it ran; also the
``CUBLAS_WORKSPACE_CONFIG`` its worker process started with (deterministic cuBLAS
needs it before CUDA initialises), that of Ray Tune's ``PL_DISABLE_FORK``, and the
fields of the Ray runtime env the worker was started with.
"""

from __future__ import annotations

import os
import time
from typing import Any

import ray
from ray import tune

import raysweep


def probe(config: dict[str, Any]) -> None:
    """Hold the trial's resources for ``hold_s`` seconds, then report what it saw.

    With ``barrier_dir`` and ``barrier_count``, each trial first waits (up to
    ``barrier_timeout_s``) until that many trials have started, which shows how
    many trials really run side by side however slowly workers start.
    """
    started = time.time()
    _wait_for_peers(config)
    time.sleep(float(config.get("hold_s", 0.5)))
    ctx = raysweep.trial_context()
    tune.report(
        {
            "loss": float(config.get("x", 0.0)),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
            "ray_gpu_ids": ",".join(str(i) for i in ray.get_gpu_ids()),
            "context_gpu_ids": ",".join(ctx.gpu_ids),
            "cublas_workspace_config": _initial_env("CUBLAS_WORKSPACE_CONFIG"),
            "pl_disable_fork": _initial_env("PL_DISABLE_FORK"),
            "runtime_env_fields": ",".join(sorted(ray.get_runtime_context().runtime_env)),
            "started": started,
            "ended": time.time(),
        }
    )


def _initial_env(name: str) -> str:
    """``name`` in the environment this worker process started with (Linux), else now."""
    try:
        with open("/proc/self/environ", "rb") as fh:
            entries = fh.read().split(b"\0")
    except OSError:
        return os.environ.get(name, "")
    prefix = name.encode() + b"="
    found = [e[len(prefix) :] for e in entries if e.startswith(prefix)]
    return found[0].decode() if found else ""


def _wait_for_peers(config: dict[str, Any]) -> None:
    directory = config.get("barrier_dir")
    if not directory:
        return
    os.makedirs(directory, exist_ok=True)
    marker = os.path.join(directory, f"{os.getpid()}-{time.time_ns()}")
    open(marker, "w").close()
    deadline = time.time() + float(config.get("barrier_timeout_s", 60.0))
    while len(os.listdir(directory)) < int(config["barrier_count"]) and time.time() < deadline:
        time.sleep(0.05)
