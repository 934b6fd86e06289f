"""Which GPUs a sweep may use: the ``--gpus`` flag, checks, and id mapping.

Id spaces, in one place:

* **physical id** - the NVML index (``nvidia-smi`` order, PCI bus order). ``--gpus``,
  :class:`GPUPlan` and ``results.json`` speak physical ids. CUDA numbers devices
  fastest-first unless ``CUDA_DEVICE_ORDER=PCI_BUS_ID``; :func:`gpu_env` sets it so
  both agree.
* **Ray slot** - the driver exports ``CUDA_VISIBLE_DEVICES`` (:func:`cuda_visible_devices`)
  before Ray starts, and Ray offers ``num_gpus`` GPU slots ``0..n-1``, slot ``k`` being
  the ``k``-th entry of that variable.
* **inside a trial** - Ray 2.x translates slots itself: when the worker started with
  ``CUDA_VISIBLE_DEVICES`` set, ``ray.get_gpu_ids()`` returns *strings* taken from it
  (already physical) and Ray sets the trial's own ``CUDA_VISIBLE_DEVICES`` to them, so
  the trial sees its GPUs as ``cuda:0..``; when it was unset, ``ray.get_gpu_ids()``
  returns *int* slots, which are then the physical ids. :func:`physical_gpu_ids`
  handles both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from raysweep.errors import ConfigError, GPUError
from raysweep.gpu.inventory import NO_GPU, Inventory

SelectionMode = Literal["unset", "none", "all", "ids"]

#: Ray keeps resource quantities to 4 decimal places.
_RAY_RESOLUTION = 1e-4
#: Warn when fractional packing leaves at least this share of each GPU idle.
_IDLE_WARN = 0.02
#: Warn when a selected GPU already has this share of its memory in use.
_BUSY_WARN = 0.25


@dataclass(frozen=True)
class GPUSelection:
    """The parsed ``--gpus`` flag: ``unset`` (absent), ``none``, ``all`` or explicit ``ids``."""

    mode: SelectionMode
    ids: tuple[int, ...] = ()

    def describe(self) -> str:
        """The flag as the user wrote it, for messages."""
        if self.mode == "unset":
            return "no --gpus flag"
        if self.mode == "ids":
            return "--gpus " + ",".join(str(i) for i in self.ids)
        return f"--gpus {self.mode}"


@dataclass(frozen=True)
class GPUPlan:
    """The GPUs given to Ray: physical ids, their count, and whether we fell back to CPU."""

    physical_ids: tuple[int, ...]
    num_gpus: int
    cpu_fallback: bool
    warnings: tuple[str, ...] = ()
    # resources.gpu_sharing as decided for this machine (gpu/sharing.py): "time-slice"
    # or "mps", what was asked, and why MPS is not used when it was asked for ("auto")
    gpu_sharing: str = "time-slice"
    sharing_requested: str = "time-slice"
    sharing_note: str | None = None


def parse_gpus_flag(value: str | None) -> GPUSelection:
    """Parse ``--gpus``: None, ``"none"``, ``"all"`` or ``"0,1,3"``; ConfigError on bad input."""
    if value is None:
        return GPUSelection("unset")
    text = value.strip().lower()
    if text in ("none", "all"):
        return GPUSelection("none" if text == "none" else "all")
    if not text:
        raise ConfigError("--gpus: expected 'all', 'none' or GPU ids like '0,1,3' (got '')")
    ids: list[int] = []
    for raw in text.split(","):
        token = raw.strip()
        if not token.isdigit() or not token.isascii():
            raise ConfigError(
                f"--gpus: '{token}' is not a GPU id; expected 'all', 'none' or "
                f"comma-separated non-negative integers like '0,1,3' (got '{value}')"
            )
        gpu = int(token)
        if gpu in ids:
            raise ConfigError(f"--gpus: GPU {gpu} is listed twice (got '{value}')")
        ids.append(gpu)
    return GPUSelection("ids", tuple(ids))


def _is_whole(value: float) -> bool:
    return abs(value - round(value)) < _RAY_RESOLUTION


def validate_gpus_per_trial(value: float) -> None:
    """Raise ConfigError unless ``value`` is 0, a fraction in (0, 1] or a whole number."""
    if isinstance(value, bool) or not math.isfinite(value) or value < 0:
        raise ConfigError(f"gpus_per_trial must be >= 0 (got {value})")
    if value > 1 and not _is_whole(value):
        raise ConfigError(
            f"gpus_per_trial must be a fraction in (0, 1] or a whole number (got {value})"
        )
    if 0 < value < _RAY_RESOLUTION:
        raise ConfigError(f"gpus_per_trial must be at least {_RAY_RESOLUTION} (got {value})")


def gpus_per_trial_warnings(value: float) -> tuple[str, ...]:
    """Advice for a valid fraction that does not pack evenly (e.g. 0.3 leaves 10% idle)."""
    if not 0 < value < 1:
        return ()
    per_gpu = math.floor(1 / value + 1e-9)
    idle = 1 - per_gpu * value
    if idle < _IDLE_WARN:
        return ()
    return (
        f"gpus_per_trial={value:g} packs {per_gpu} trial(s) per GPU and leaves "
        f"{idle:.0%} of each GPU idle; 1/n values (0.5, 0.25, 0.2, ...) pack evenly",
    )


def _fmt_gpus(n: float) -> str:
    return f"{n:g} GPU" if n <= 1 else f"{n:g} GPUs"


def _existing(inventory: Inventory) -> str:
    if not inventory.gpus:
        return inventory.error or NO_GPU
    names = ", ".join(f"{g.index} ({g.name})" for g in inventory.gpus)
    return f"GPUs found: {names}"


def _check_ids(ids: Sequence[int], inventory: Inventory) -> None:
    known = set(inventory.indices)
    missing = [i for i in ids if i not in known]
    if not missing:
        return
    which = ", ".join(str(i) for i in missing)
    noun = "GPU" if len(missing) == 1 else "GPUs"
    verb = "does" if len(missing) == 1 else "do"
    if inventory.gpus:
        raise GPUError(f"{noun} {which} {verb} not exist on this machine; {_existing(inventory)}")
    raise GPUError(f"{noun} {which} requested but {_existing(inventory)}")


def _busy_warnings(ids: Sequence[int], inventory: Inventory) -> list[str]:
    out = []
    for g in inventory.gpus:
        if g.index in ids and g.memory_total_mb > 0:
            share = g.memory_used_mb / g.memory_total_mb
            if share >= _BUSY_WARN:
                out.append(
                    f"GPU {g.index} already has {g.memory_used_mb:,.0f} of "
                    f"{g.memory_total_mb:,.0f} MiB in use by other processes"
                )
    return out


def _select(
    selection: GPUSelection, inventory: Inventory, gpus_per_trial: float
) -> tuple[int, ...]:
    if selection.mode == "ids":
        _check_ids(selection.ids, inventory)
        return selection.ids
    if selection.mode == "all" or (selection.mode == "unset" and gpus_per_trial > 0):
        return inventory.indices
    return ()


def resolve_gpus(
    selection: GPUSelection,
    inventory: Inventory,
    gpus_per_trial: float | Literal["auto"],
    allow_cpu: bool,
) -> GPUPlan:
    """Check the selection against the machine and the config; GPUError when it cannot run.

    ``"auto"`` is checked as one whole GPU per trial: its probe trial runs on one.
    """
    auto = isinstance(gpus_per_trial, str)
    wanted = 1.0 if isinstance(gpus_per_trial, str) else gpus_per_trial
    validate_gpus_per_trial(wanted)
    ids = _select(selection, inventory, wanted)
    warnings = [] if auto else list(gpus_per_trial_warnings(wanted))
    if wanted > 0 and not ids:
        if selection.mode == "none":
            why = "--gpus none selects no GPU"
        else:
            detail = (inventory.error or "").removeprefix(NO_GPU).strip()
            why = f"no NVIDIA GPU was found{' ' + detail if detail else ''}"
        request = (
            "GPUs (resources.gpus_per_trial=auto)" if auto else f"{_fmt_gpus(wanted)} per trial"
        )
        asked = f"this config asks for {request} but {why}"
        if not allow_cpu:
            raise GPUError(f"{asked}; use --allow-cpu to run on CPUs")
        return GPUPlan((), 0, True, (f"{asked}; --allow-cpu given, so trials run on CPUs only",))
    if wanted >= 1:
        need = round(wanted)
        if need > len(ids):
            raise GPUError(
                f"this config asks for {_fmt_gpus(wanted)} per trial but only "
                f"{len(ids)} GPU(s) are selected ({selection.describe()}); {_existing(inventory)}"
            )
        if len(ids) % need:
            warnings.append(
                f"{len(ids)} GPUs selected with {need} per trial: "
                f"{len(ids) % need} GPU(s) will stay idle"
            )
    if wanted == 0 and selection.mode in ("ids", "all") and ids:
        warnings.append(
            f"{selection.describe()} given but the config asks for 0 GPUs per trial "
            "(resources.gpus_per_trial); trials will not be given a GPU"
        )
    warnings.extend(_busy_warnings(ids, inventory))
    return GPUPlan(tuple(ids), len(ids), False, tuple(warnings))


def cuda_visible_devices(plan: GPUPlan) -> str:
    """``CUDA_VISIBLE_DEVICES`` to export before Ray starts: ``"0,1,3"``, or ``""`` for none."""
    return ",".join(str(i) for i in plan.physical_ids)


def gpu_env(plan: GPUPlan) -> dict[str, str]:
    """Environment to export before Ray starts so CUDA numbers GPUs like NVML does."""
    return {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": cuda_visible_devices(plan)}


def parse_visible(visible: str | None) -> tuple[str, ...] | None:
    """Split a ``CUDA_VISIBLE_DEVICES`` value; None when unset, () when empty."""
    if visible is None:
        return None
    if visible.strip() in ("", "NoDevFiles"):
        return ()
    return tuple(part.strip() for part in visible.split(","))


def physical_gpu_ids(ray_gpu_ids: Sequence[int | str], visible: str | None) -> tuple[str, ...]:
    """Map ``ray.get_gpu_ids()`` inside a trial to physical GPU ids (as strings).

    ``visible`` is the ``CUDA_VISIBLE_DEVICES`` the driver exported before Ray
    started (None if unset). A *str* id was already translated by Ray through
    that variable and is returned as is; an *int* id is a Ray slot, i.e. an index
    into ``visible`` (or the physical id itself when ``visible`` is None). The
    result is sorted (numerically where ids are numbers; Ray's own order is a set's).
    ValueError when a slot is outside ``visible``.
    """
    entries = parse_visible(visible)
    out: list[str] = []
    for gid in ray_gpu_ids:
        if isinstance(gid, str):
            out.append(gid.strip())
        elif entries is None:
            out.append(str(int(gid)))
        elif 0 <= gid < len(entries):
            out.append(entries[gid])
        else:
            raise ValueError(
                f"Ray GPU slot {gid} is outside CUDA_VISIBLE_DEVICES={visible!r} "
                f"({len(entries)} GPU(s) visible when Ray started)"
            )
    return tuple(sorted(out, key=_id_key))


def _id_key(gid: str) -> tuple[int, int, str]:
    return (0, int(gid), "") if gid.isdigit() else (1, 0, gid)
