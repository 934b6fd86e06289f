"""Parameters raysweep sets for LightGBM 4, XGBoost 3 and CatBoost 1.2.

``gbm_params`` returns the seed/thread/device/determinism parameters raysweep
owns for a trial; the built-in trainables merge the user's hyperparameters over
them (and over ``task_params``' objective defaults), re-apply the owned keys,
which always come from the trial context, and finally ``metric_params``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from raysweep.errors import GPUError
from raysweep.gpu.guard import GPU_MEMORY_HEADROOM

Library = Literal["lightgbm", "xgboost", "catboost"]
LIBRARIES: tuple[Library, ...] = ("lightgbm", "xgboost", "catboost")
# Where raysweep takes each key it owns from, and where a user changes it.
SEED_SOURCE = (
    "raysweep sets it per trial from the sweep's seed and the trial's index; "
    'change the top-level "seed" (or sweep run --seed)'
)
THREADS_SOURCE = "raysweep sets it from resources.cpus_per_trial; change that"
DEVICE_SOURCE = (
    "raysweep sets it from resources.gpus_per_trial and the GPUs the trial is given "
    "(sweep run --gpus); change those"
)
DETERMINISM_SOURCE = "raysweep sets it from reproducibility.deterministic; change that"
LOG_SOURCE = "raysweep keeps the library's own log quiet in trials; it cannot be tuned"
FILES_SOURCE = "raysweep keeps CatBoost from writing files into the trial directory"
METRIC_SOURCE = (
    'raysweep evaluates every trial itself and reports the sweep\'s "metric"; '
    'choose the metric with the top-level "metric" (the library\'s own evaluation '
    "settings are fixed)"
)
# Keys raysweep sets from the trial context, with the libraries' aliases for them,
# and where each comes from: sweep validation refuses them in "space", and a value
# that reaches a trainable anyway is dropped so the trial's seed/threads/device hold.
OWNED_PARAMS: dict[str, dict[str, str]] = {
    "lightgbm": {
        **dict.fromkeys(("seed", "random_seed", "random_state", "bagging_seed",
                         "feature_fraction_seed", "extra_seed", "drop_seed", "objective_seed",
                         "data_random_seed"), SEED_SOURCE),
        **dict.fromkeys(("num_threads", "num_thread", "nthread", "nthreads", "n_jobs"),
                        THREADS_SOURCE),
        **dict.fromkeys(("device_type", "device", "gpu_device_id", "gpu_platform_id"),
                        DEVICE_SOURCE),
        "deterministic": DETERMINISM_SOURCE,
        **dict.fromkeys(("verbosity", "verbose"), LOG_SOURCE),
    },
    "xgboost": {
        **dict.fromkeys(("seed", "random_state"), SEED_SOURCE),
        **dict.fromkeys(("nthread", "n_jobs"), THREADS_SOURCE),
        **dict.fromkeys(("device", "gpu_id"), DEVICE_SOURCE),
    },
    "catboost": {
        **dict.fromkeys(("random_seed", "random_state"), SEED_SOURCE),
        **dict.fromkeys(("thread_count", "n_jobs"), THREADS_SOURCE),
        **dict.fromkeys(("task_type", "devices"), DEVICE_SOURCE),
        **dict.fromkeys(("allow_writing_files", "train_dir"), FILES_SOURCE),
        **dict.fromkeys(("verbose", "logging_level", "silent", "verbose_eval"), LOG_SOURCE),
    },
}  # fmt: skip
OWNED_KEYS: dict[str, frozenset[str]] = {lib: frozenset(keys) for lib, keys in OWNED_PARAMS.items()}
# Metric plumbing the built-in trainables rely on; a user's value is dropped.
METRIC_KEYS: dict[str, frozenset[str]] = {
    "lightgbm": frozenset({"metric", "metrics", "metric_types"}),
    "xgboost": frozenset(),
    "catboost": frozenset({"use_best_model", "metric_period", "eval_metric", "custom_metric",
                           "custom_loss"}),
}  # fmt: skip
# Fixed because CatBoost's automatic learning rate depends on the iteration count.
CATBOOST_DEFAULT_LEARNING_RATE = 0.1

CATBOOST_GPU_WARNING = (
    "CatBoost documents GPU training as non-deterministic (the order of floating point "
    "summations varies); results of CatBoost GPU trials will not repeat bit for bit"
)
LIGHTGBM_GPU_WARNING = (
    "LightGBM documents 'deterministic' for the CPU only; GPU trials use double "
    "precision (gpu_use_dp) but are not guaranteed to repeat bit for bit"
)


@dataclass(frozen=True)
class GBMParams:
    """Library parameters and warnings to log (or record) for the trial."""

    params: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


def gbm_params(
    library: Library,
    seed: int,
    threads: int,
    gpu: bool,
    deterministic: bool,
    gpu_ids: Sequence[str] = (),
    gpu_fraction: float = 1.0,
) -> GBMParams:
    """The seed/threads/device/determinism parameters for ``library``.

    ``gpu_ids`` are physical GPU ids; they are mapped to ordinals inside the
    process's ``CUDA_VISIBLE_DEVICES`` (which Ray sets for each trial).
    ``gpu_fraction`` is the trial's share of its GPU: below 1, CatBoost's GPU
    memory (``gpu_ram_part``, 95% of the card by default) is held to that share.
    """
    if threads < 1:
        raise ValueError(f"threads must be >= 1 (got {threads})")
    ordinals = visible_ordinals(gpu_ids) if gpu else []
    if library == "lightgbm":
        return _lightgbm(seed, threads, gpu, deterministic, ordinals)
    if library == "xgboost":
        return _xgboost(seed, threads, gpu, ordinals)
    if library == "catboost":
        return _catboost(seed, threads, gpu, ordinals, gpu_fraction)
    raise ValueError(f"unknown GBM library {library!r}; expected one of {', '.join(LIBRARIES)}")


def task_params(library: Library, task: str, n_classes: int) -> dict[str, Any]:
    """Objective defaults for the task; the user's config overrides them."""
    objectives = {
        "lightgbm": ("objective", "binary", "multiclass", "regression"),
        "xgboost": ("objective", "binary:logistic", "multi:softprob", "reg:squarederror"),
        "catboost": ("loss_function", "Logloss", "MultiClass", "RMSE"),
    }
    key, binary, multi, regression = objectives[library]
    if task == "regression":
        defaults: dict[str, Any] = {key: regression}
    else:
        defaults = {key: binary if n_classes == 2 else multi}
        if n_classes > 2 and library != "catboost":
            defaults["num_class"] = n_classes
    if library == "catboost":
        defaults["learning_rate"] = CATBOOST_DEFAULT_LEARNING_RATE
    return defaults


def metric_params(library: Library, task: str, n_classes: int) -> dict[str, Any]:
    """Evaluation settings the built-in trainables need (applied over the user's config)."""
    if library == "lightgbm":
        return {"metric": "None"}  # the trainable evaluates with its own feval
    if library == "catboost":
        if task == "regression":
            return {"eval_metric": "RMSE", "custom_metric": ["R2"], "use_best_model": False}
        loss = "Logloss" if n_classes == 2 else "MultiClass"
        return {"eval_metric": loss, "custom_metric": ["Accuracy"], "use_best_model": False}
    return {}


def visible_ordinals(gpu_ids: Sequence[str]) -> list[int]:
    """CUDA ordinals of physical ``gpu_ids`` as seen by this process.

    With ``CUDA_VISIBLE_DEVICES`` set, ordinal ``i`` is the i-th listed device (when
    it lists exactly as many devices as ``gpu_ids`` but other ids, Ray restricted
    the process to the trial's devices: ordinals 0..n-1); without it, ordinals are
    the ids themselves. No ids means ordinal 0.
    """
    if not gpu_ids:
        return [0]
    visible_env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible_env is None or not visible_env.strip():
        try:
            return [int(i) for i in gpu_ids]
        except ValueError as exc:
            raise GPUError(f"GPU ids must be integers without CUDA_VISIBLE_DEVICES: {exc}") from exc
    visible = [v.strip() for v in visible_env.split(",") if v.strip()]
    missing = [i for i in gpu_ids if str(i) not in visible]
    if missing and len(visible) == len(gpu_ids):
        # Ray restricted this process to exactly the trial's devices (ids renumbered).
        return list(range(len(visible)))
    if missing:
        raise GPUError(
            f"GPU(s) {', '.join(map(str, missing))} not in this process's "
            f"CUDA_VISIBLE_DEVICES={visible_env!r}"
        )
    return [visible.index(str(i)) for i in gpu_ids]


@functools.cache
def lightgbm_gpu_device_type() -> str:
    """LightGBM's GPU ``device_type`` this installation supports: "cuda" or "gpu".

    The PyPI wheel is built with the OpenCL learner ("gpu"); a source build with
    ``-DUSE_CUDA=ON`` has the CUDA learner ("cuda"). Probed by training a tiny
    model; raises GPUError explaining both options when neither works.
    """
    import lightgbm as lgb
    import numpy as np

    rng = np.random.default_rng(0)
    X, y = rng.random((64, 2)), rng.random(64)
    errors: dict[str, str] = {}
    for device in ("cuda", "gpu"):
        params = {"device_type": device, "verbosity": -1, "num_threads": 1}
        try:
            lgb.train(params, lgb.Dataset(X, y, params={"verbosity": -1}), num_boost_round=1)
        except Exception as exc:
            errors[device] = str(exc).strip().splitlines()[0]
            continue
        return device
    raise GPUError(
        "LightGBM cannot train on a GPU in this installation: "
        f"device_type='cuda' failed ({errors['cuda']}); "
        f"device_type='gpu' (OpenCL) failed ({errors['gpu']}). "
        "The PyPI wheel needs an OpenCL runtime for NVIDIA (the driver's libnvidia-opencl "
        "and an ICD loader such as ocl-icd-libopencl1, with /etc/OpenCL/vendors/nvidia.icd); "
        "for the CUDA learner build LightGBM from source: pip install lightgbm "
        "--no-binary lightgbm --config-settings=cmake.define.USE_CUDA=ON"
    )


def _lightgbm(
    seed: int, threads: int, gpu: bool, deterministic: bool, ordinals: list[int]
) -> GBMParams:
    params: dict[str, Any] = {
        "seed": seed,
        "num_threads": threads,
        "verbosity": -1,
        "deterministic": deterministic,
    }
    warnings: list[str] = []
    if not gpu:
        params["device_type"] = "cpu"
        if deterministic:
            # The automatic row-/col-wise choice is timing based; pin it.
            params["force_row_wise"] = True
        return GBMParams(params, ())
    device = lightgbm_gpu_device_type()
    params["device_type"] = device
    params["gpu_device_id"] = ordinals[0]
    if len(ordinals) > 1:
        warnings.append("LightGBM trains on one GPU; only the first of the trial's GPUs is used")
    if device == "gpu":
        params["gpu_platform_id"] = 0
        if deterministic:
            params["gpu_use_dp"] = True  # the CUDA learner is always double precision
    if deterministic:
        warnings.append(LIGHTGBM_GPU_WARNING)
    return GBMParams(params, tuple(warnings))


def _xgboost(seed: int, threads: int, gpu: bool, ordinals: list[int]) -> GBMParams:
    params: dict[str, Any] = {
        "seed": seed,
        "nthread": threads,
        "tree_method": "hist",
        "device": f"cuda:{ordinals[0]}" if gpu else "cpu",
    }
    warnings: tuple[str, ...] = ()
    if gpu and len(ordinals) > 1:
        warnings = ("XGBoost trains on one GPU per process; only the first GPU is used",)
    return GBMParams(params, warnings)


def _catboost(
    seed: int, threads: int, gpu: bool, ordinals: list[int], gpu_fraction: float
) -> GBMParams:
    params: dict[str, Any] = {
        "random_seed": seed,
        "thread_count": threads,
        "task_type": "GPU" if gpu else "CPU",
        "allow_writing_files": False,
        "verbose": False,
    }
    warnings: tuple[str, ...] = ()
    if gpu:
        params["devices"] = ":".join(str(o) for o in ordinals)
        if 0 < gpu_fraction < 1:
            # CatBoost reserves gpu_ram_part of the card up front: the default 0.95 would
            # leave nothing to the trials sharing it. Not an owned key: a user's value wins.
            params["gpu_ram_part"] = round(gpu_fraction * GPU_MEMORY_HEADROOM, 4)
        warnings = (CATBOOST_GPU_WARNING,)
    return GBMParams(params, warnings)
