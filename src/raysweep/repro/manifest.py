"""repro.json: everything that decides a run's result, written when the run starts.

Fast (no torch or GBM import just for a version string: versions come from
package metadata, CUDA facts from NVML and torch's ``version.py``) and never
fails a run over a missing fact: unknown values are ``null``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
import re
import socket
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from raysweep._raycompat.switch import perf_patches_on
from raysweep.config.load import spec_hash
from raysweep.config.schema import SweepSpec
from raysweep.gpu.allocation import GPUPlan, cuda_visible_devices
from raysweep.gpu.inventory import read_inventory
from raysweep.repro import gbm_params as gp
from raysweep.repro.determinism import DETERMINISM_ENV, determinism_flags
from raysweep.repro.scope import guarantee, repeat_scope
from raysweep.repro.seeds import SEED_RULE
from raysweep.rundir import RunDir

GPUS_AUTO_KEY = "gpus_per_trial_auto"
MANIFEST_FORMAT = 1
# Distribution names whose versions can change a result.
PACKAGES: dict[str, str] = {
    "raysweep": "raysweep",
    "ray": "ray",
    "torch": "torch",
    "numpy": "numpy",
    "optuna": "optuna",
    "hyperopt": "hyperopt",
    "lightgbm": "lightgbm",
    "xgboost": "xgboost",
    "catboost": "catboost",
    "scikit-learn": "scikit-learn",
    "pydantic": "pydantic",
    "pandas": "pandas",
}
# Environment variables that change results (unset ones are recorded as null).
RESULT_ENV_VARS: tuple[str, ...] = (
    "PYTHONHASHSEED",
    "CUBLAS_WORKSPACE_CONFIG",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_LAUNCH_BLOCKING",
    "NVIDIA_TF32_OVERRIDE",
    "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "MKL_CBWR",
    "TUNE_MAX_PENDING_TRIALS_PG",
)
_CUDNN_DISTS = ("nvidia-cudnn-cu13", "nvidia-cudnn-cu12", "nvidia-cudnn-cu11")
_GBM_LIBRARIES = ("lightgbm", "xgboost", "catboost")


def write_manifest(
    run_dir: RunDir, spec: SweepSpec, gpu_plan: GPUPlan, gpus_auto: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Build repro.json for an invocation starting now and write it atomically; returns it.

    When the run already has one (``sweep resume``), the earlier manifests are kept,
    oldest first, under ``previous``: a resumed run may have changed machine or versions.
    ``gpus_auto``: the packing recorded for ``gpus_per_trial: "auto"``, when known.
    """
    manifest = build_manifest(spec, gpu_plan, gpus_auto)
    earlier = run_dir.read_manifest()
    if earlier:
        manifest["previous"] = [*earlier.pop("previous", []), earlier]
    run_dir.write_manifest(manifest)
    return manifest


def add_manifest_warning(run_dir: RunDir, warning: str) -> None:
    """Add a warning about this invocation to repro.json's ``warnings``."""
    manifest = run_dir.read_manifest()
    if not manifest:
        return
    manifest["warnings"] = [*manifest.get("warnings", []), warning]
    run_dir.write_manifest(manifest)


def record_data_summary(run_dir: RunDir, data: dict[str, Any]) -> str | None:
    """Put the trainable's data summary into repro.json's ``data`` (its warnings into
    ``warnings``); returns a warning when it differs from the summary recorded by an
    earlier invocation of the run (the data changed under a resumed run)."""
    manifest = run_dir.read_manifest()
    if not manifest:
        return None
    before = manifest.get("data")
    change = None
    if before and before.get("summary") != data.get("summary"):
        was = (before.get("summary") or ["?"])[0]
        change = f"the data changed since this run started: was {was}; now {data['summary'][0]}"
        manifest["data_before"] = before
    manifest["data"] = data
    known = manifest.get("warnings", [])
    new = [w for w in [*data.get("warnings", []), change] if w and w not in known]
    manifest["warnings"] = [*known, *new]
    run_dir.write_manifest(manifest)
    return change


def record_gpus_auto(run_dir: RunDir, record: dict[str, Any]) -> None:
    """Put the packing the GPU probe chose (``gpus_per_trial: "auto"``) into repro.json."""
    manifest = run_dir.read_manifest()
    if not manifest:
        return
    manifest[GPUS_AUTO_KEY] = record
    manifest.setdefault("gpu_plan", {})["gpus_per_trial"] = record["gpus_per_trial"]
    manifest["warnings"] = [*manifest.get("warnings", []), *record.get("warnings", [])]
    run_dir.write_manifest(manifest)


def build_manifest(
    spec: SweepSpec, gpu_plan: GPUPlan, gpus_auto: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The repro.json content for ``spec`` run with ``gpu_plan`` (and "auto"'s packing)."""
    repro = spec.reproducibility
    cpu_fallback = bool(getattr(gpu_plan, "cpu_fallback", False))
    manifest: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "name": spec.name,
        "spec_sha256": spec_hash(spec),
        "trainable": spec.trainable,
        "master_seed": spec.seed,
        "seed_rule": SEED_RULE,
        "reproducibility": {
            "deterministic": repro.deterministic,
            "strict": repro.strict,
            "batch_size": repro.batch_size,
            "strict_schedule": repro.schedule,
            "guarantee": guarantee(spec),
            "scope": repeat_scope(spec),  # the line sweep run prints at its start
        },
        "search": {
            "algorithm": spec.search.algorithm,
            "num_samples": spec.search.num_samples,
            "total_trials": spec.total_trials,
            "max_concurrent": spec.search.max_concurrent,
            "scheduler": spec.scheduler.type,
            "time_budget_s": spec.stop.time_budget_s,
        },
        "determinism": determinism_flags(repro.deterministic),
        "worker_env": dict(DETERMINISM_ENV) if repro.deterministic else {},
        "versions": versions(),
        "cuda": cuda_facts(),
        "gpu_plan": {
            "physical_ids": [int(i) for i in getattr(gpu_plan, "physical_ids", ())],
            "cpu_fallback": cpu_fallback,
            "gpus_per_trial": _gpus_per_trial(spec, cpu_fallback, gpus_auto),
            "cpus_per_trial": spec.resources.cpus_per_trial,
            "cuda_visible_devices": _planned_visible_devices(gpu_plan),
        },
        "gpu_sharing": {  # resources.gpu_sharing asked for, what ran, why not MPS
            "requested": getattr(gpu_plan, "sharing_requested", "time-slice"),
            "used": getattr(gpu_plan, "gpu_sharing", "time-slice"),
            "note": getattr(gpu_plan, "sharing_note", None),
        },
        "env": {name: os.environ.get(name) for name in RESULT_ENV_VARS},
        # RAYSWEEP_RAY_PATCHES: speed only, but a run on Ray's own behaviour says so
        "ray_patches": "on" if perf_patches_on() else "off",
        "host": {
            "hostname": socket.gethostname(),
            "platform": platform.platform(),
            "machine": platform.machine(),
            "cpu_count": os.cpu_count(),
            "cwd": os.getcwd(),
        },
        "warnings": manifest_warnings(spec, gpu_plan),
    }
    if spec.resources.gpus_auto:  # null until the probe has run (and on a CPU fallback)
        manifest[GPUS_AUTO_KEY] = None if cpu_fallback else gpus_auto
        if gpus_auto and not cpu_fallback:
            manifest["warnings"].extend(gpus_auto.get("warnings", []))
    return manifest


def _gpus_per_trial(
    spec: SweepSpec, cpu_fallback: bool, gpus_auto: dict[str, Any] | None
) -> float | str:
    """GPUs per trial asked of Ray; "auto" while the probe has not chosen yet."""
    if cpu_fallback:
        return 0.0
    if not spec.resources.gpus_auto:
        return spec.resources.gpus_per_trial
    return float(gpus_auto["gpus_per_trial"]) if gpus_auto else "auto"


def manifest_warnings(spec: SweepSpec, gpu_plan: GPUPlan) -> list[str]:
    """Everything known at start that can make this run differ from a rerun."""
    warnings = [str(w) for w in getattr(gpu_plan, "warnings", ())]
    concurrent = spec.search.max_concurrent != 1
    if spec.stop.time_budget_s is not None:
        warnings.append(
            f"stop.time_budget_s={spec.stop.time_budget_s:g}: how many trials start and "
            "finish before the budget runs out depends on speed"
            + (", even in strict mode" if spec.reproducibility.strict else "")
        )
    if not spec.reproducibility.strict and concurrent:
        if spec.search.algorithm in ("optuna", "mf-tpe", "hyperopt"):
            warnings.append(
                f"search.algorithm={spec.search.algorithm} with max_concurrent "
                f"{spec.search.max_concurrent or 'unlimited'}: suggestions depend on the order "
                "in which trials finish; use reproducibility.strict for repeatable configs"
            )
        if spec.scheduler.type != "fifo":
            advice = "use max_concurrent 1 for repeatable runs"
            if spec.scheduler.type == "hyperband":
                advice += " (Hyperband then stops no trial early: its brackets cannot fill)"
            warnings.append(
                f"scheduler.type={spec.scheduler.type} with max_concurrent "
                f"{spec.search.max_concurrent or 'unlimited'}: when trials are stopped depends "
                f"on the order in which results arrive; {advice}"
            )
    warnings.extend(_library_warnings(spec, gpu_plan))
    return warnings


def _library_warnings(spec: SweepSpec, gpu_plan: GPUPlan) -> list[str]:
    asks = spec.resources.gpus_auto or spec.resources.gpus_per_trial > 0
    on_gpu = asks and not getattr(gpu_plan, "cpu_fallback", False)
    deterministic = spec.reproducibility.deterministic
    out: list[str] = []
    if spec.trainable in _GBM_LIBRARIES:
        if on_gpu and spec.trainable == "catboost":
            out.append(gp.CATBOOST_GPU_WARNING)
        elif on_gpu and spec.trainable == "lightgbm":
            out.append(gp.LIGHTGBM_GPU_WARNING)  # no probe of the GPU learner here
    if not deterministic:
        out.append(
            "reproducibility.deterministic=false: torch may pick non-deterministic kernels "
            "and LightGBM its fastest (timing-based) histogram layout"
        )
    return out


def versions() -> dict[str, str | None]:
    """Installed versions of Python and every result-changing package (None if absent)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for key, dist in PACKAGES.items():
        try:
            out[key] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[key] = None
    return out


def cuda_facts() -> dict[str, Any]:
    """CUDA toolkit torch was built with, cuDNN, the driver and GPU names (None if absent)."""
    inventory = read_inventory()
    return {
        "torch_cuda": _torch_cuda_version(),
        "cudnn": _cudnn_version(),
        "driver_version": inventory.driver_version,
        "driver_cuda_version": inventory.cuda_version,
        "gpus": [{"index": g.index, "name": g.name, "uuid": g.uuid} for g in inventory.gpus],
        "nvml_error": inventory.error,
    }


def _planned_visible_devices(gpu_plan: GPUPlan) -> str | None:
    """CUDA_VISIBLE_DEVICES the run exports for its GPU plan (set after this file is written)."""
    return cuda_visible_devices(gpu_plan) if isinstance(gpu_plan, GPUPlan) else None


def _torch_cuda_version() -> str | None:
    """``torch.version.cuda``, read from torch's version.py unless torch is already imported."""
    torch = sys.modules.get("torch")
    if torch is not None:
        return getattr(getattr(torch, "version", None), "cuda", None)
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        text = (Path(spec.submodule_search_locations[0]) / "version.py").read_text()
    except OSError:
        return None
    match = re.search(r"^cuda\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", text, re.MULTILINE)
    return match.group(1) if match else None


def _cudnn_version() -> str | None:
    """cuDNN torch uses: asked of torch when imported, else the pip package's version."""
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            value = torch.backends.cudnn.version()
        except Exception:
            value = None
        if value is not None:
            return str(value)
    for dist in _CUDNN_DISTS:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None
