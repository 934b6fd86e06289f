"""Changes proposed for raysweep, applied as patches so they can be measured before they land.

``python -m benchmarks.probe --patch NAME run ...`` applies one in the driver;
a worker-side patch rides inside the pickled trainable and is installed in the
trial process before the trial runs. Nothing here is used by a normal run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

WORKER_PATCHES: dict[str, Callable[[], None]] = {}


def _lazy_torch() -> None:
    """``set_deterministic`` touches torch only when the trial process already imported it.

    Today the wrapper calls it before the trainable runs, and it imports torch
    (2-3 s of CPU on the VM) in every trial process, even for trainables that
    never use torch. The built-in torch trainable imports torch itself, so the
    switches still apply to it.
    """
    from raysweep.repro import determinism

    original = getattr(determinism.set_deterministic, "__wrapped__", determinism.set_deterministic)

    def set_deterministic(enabled: bool, threads: int | None = None) -> None:
        if enabled:
            for key, value in determinism.DETERMINISM_ENV.items():
                os.environ.setdefault(key, value)
        if "torch" in sys.modules:
            original(enabled, threads)

    set_deterministic.__wrapped__ = original  # type: ignore[attr-defined]
    determinism.set_deterministic = set_deterministic


WORKER_PATCHES["lazy_torch"] = _lazy_torch


def _env_not_runtime_env() -> None:
    """Local Ray: put ``runtime_env.env_vars`` into the driver's environment instead.

    A job-level ``runtime_env`` makes Ray start trial workers through the
    runtime-env agent instead of using the workers it prestarted at ``ray.init``;
    a local cluster's workers inherit the driver's environment anyway. (With
    ``--address`` the runtime_env is still needed and is left alone.)
    """
    import ray

    original = ray.init

    def init(*args: Any, **kwargs: Any) -> Any:
        runtime_env = kwargs.get("runtime_env") or {}
        if kwargs.get("address") is None and set(runtime_env) == {"env_vars"}:
            os.environ.update(runtime_env["env_vars"])
            kwargs["runtime_env"] = None
        return original(*args, **kwargs)

    ray.init = init


DRIVER_PATCHES: dict[str, Callable[[], None]] = {"env_not_runtime_env": _env_not_runtime_env}


def install_worker_patches(names: Sequence[str]) -> None:
    """Apply worker-side patches in this process (idempotent)."""
    for name in names:
        WORKER_PATCHES[name]()


def _wrap_make_trainable(names: Sequence[str]) -> None:
    """Make every trainable raysweep builds install ``names`` in its trial process first."""
    import raysweep.runner.build as build

    original = build.make_trainable
    patches = tuple(names)

    def make_trainable(plan: Any) -> Callable[[dict[str, Any]], Any]:
        inner = original(plan)

        def trial(config: dict[str, Any]) -> Any:
            from benchmarks.prototypes import install_worker_patches

            install_worker_patches(patches)
            return inner(config)

        trial.__name__ = trial.__qualname__ = inner.__name__
        return trial

    build.make_trainable = make_trainable


def apply_patches(names: Sequence[str]) -> None:
    """Apply the named prototypes in the driver (unknown names are an error)."""
    known = {*WORKER_PATCHES, *DRIVER_PATCHES}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown prototype(s) {unknown}; known: {sorted(known)}")
    for name in names:
        if name in DRIVER_PATCHES:
            DRIVER_PATCHES[name]()
    worker = [n for n in names if n in WORKER_PATCHES]
    if worker:
        _wrap_make_trainable(worker)
