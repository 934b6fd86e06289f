"""GPU inventory via NVML (nvidia-ml-py, imported lazily).

``read_inventory`` never raises: on a machine without a usable NVIDIA GPU (no
driver, no ``libnvidia-ml``, no device) it returns an empty :class:`Inventory`
whose ``error`` says why. Indices are NVML's, which are PCI-bus order (the order
``nvidia-smi`` shows); set ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` so CUDA agrees.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

_T = TypeVar("_T")

NO_GPU = "no NVIDIA GPU found"

# NVML error code -> a hint for people (codes from nvml.h).
_HINTS = {
    4: "no permission to access the NVIDIA devices",
    9: "the NVIDIA kernel driver is not loaded",
    12: "is the NVIDIA driver installed?",
}


@dataclass(frozen=True)
class GPUInfo:
    """One GPU as NVML sees it; memory in MiB (as ``nvidia-smi`` shows)."""

    index: int
    name: str
    uuid: str
    memory_total_mb: float
    memory_used_mb: float
    utilization_pct: float | None
    temperature_c: float | None


@dataclass(frozen=True)
class Inventory:
    """The GPUs of this machine, or why there are none (``error``)."""

    gpus: tuple[GPUInfo, ...]
    driver_version: str | None
    cuda_version: str | None
    error: str | None

    @property
    def available(self) -> bool:
        """True when NVML works and found at least one GPU."""
        return bool(self.gpus) and self.error is None

    @property
    def indices(self) -> tuple[int, ...]:
        """The NVML indices of the GPUs found."""
        return tuple(g.index for g in self.gpus)


def bytes_to_mib(num_bytes: int | float) -> float:
    """Bytes as MiB, rounded to 0.1."""
    return round(float(num_bytes) / 2**20, 1)


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def format_cuda_version(raw: int) -> str:
    """NVML's CUDA driver version integer (e.g. 12040) as ``"12.4"``."""
    return f"{raw // 1000}.{(raw % 1000) // 10}"


def nvml_error_text(exc: BaseException) -> str:
    """``"no NVIDIA GPU found (NVML: <reason>; <hint>)"`` for an NVML failure."""
    reason = str(exc) or type(exc).__name__
    hint = _HINTS.get(getattr(exc, "value", -1))
    return f"{NO_GPU} (NVML: {reason}; {hint})" if hint else f"{NO_GPU} (NVML: {reason})"


def nvml_optional(fn: Callable[..., _T], *args: Any) -> _T | None:
    """Call an NVML query that some GPUs do not support; None when it fails."""
    try:
        return fn(*args)
    except Exception:
        return None


def _read_gpu(nvml: Any, index: int) -> GPUInfo:
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    mem = nvml.nvmlDeviceGetMemoryInfo(handle)
    util = nvml_optional(nvml.nvmlDeviceGetUtilizationRates, handle)
    temp = nvml_optional(nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU)
    return GPUInfo(
        index=index,
        name=_text(nvml.nvmlDeviceGetName(handle)),
        uuid=_text(nvml_optional(nvml.nvmlDeviceGetUUID, handle) or ""),
        memory_total_mb=bytes_to_mib(mem.total),
        memory_used_mb=bytes_to_mib(mem.used),
        utilization_pct=None if util is None else float(util.gpu),
        temperature_c=None if temp is None else float(temp),
    )


def read_inventory() -> Inventory:
    """List the NVIDIA GPUs via NVML; never raises (see ``Inventory.error``)."""
    try:
        import pynvml
    except ImportError as exc:  # pragma: no cover - nvidia-ml-py is a dependency
        return Inventory((), None, None, f"{NO_GPU} (nvidia-ml-py is not installed: {exc})")
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        return Inventory((), None, None, nvml_error_text(exc))
    driver: str | None = None
    cuda: str | None = None
    try:
        driver = nvml_optional(lambda: _text(pynvml.nvmlSystemGetDriverVersion()))
        raw_cuda = nvml_optional(pynvml.nvmlSystemGetCudaDriverVersion)
        cuda = None if raw_cuda is None else format_cuda_version(int(raw_cuda))
        count = int(pynvml.nvmlDeviceGetCount())
        gpus = tuple(_read_gpu(pynvml, i) for i in range(count))
    except Exception as exc:
        return Inventory((), driver, cuda, nvml_error_text(exc))
    finally:
        nvml_optional(pynvml.nvmlShutdown)
    if not gpus:
        return Inventory((), driver, cuda, f"{NO_GPU} (NVML reports 0 devices)")
    return Inventory(gpus, driver, cuda, None)


def _fmt_opt(value: float | None, unit: str) -> str:
    return "n/a" if value is None else f"{value:.0f}{unit}"


def format_inventory(inv: Inventory) -> str:
    """A readable table of the GPUs, or the "no NVIDIA GPU found ..." line."""
    if not inv.gpus:
        return inv.error or NO_GPU
    name_w = max(4, *(len(g.name) for g in inv.gpus))
    lines = [
        f"{'GPU':>3}  {'NAME':<{name_w}}  {'MEMORY USED / TOTAL':>24}  {'UTIL':>5}  {'TEMP':>5}"
    ]
    for g in inv.gpus:
        mem = f"{g.memory_used_mb:,.0f} / {g.memory_total_mb:,.0f} MiB"
        util = _fmt_opt(g.utilization_pct, "%")
        temp = _fmt_opt(g.temperature_c, " C")
        lines.append(f"{g.index:>3}  {g.name:<{name_w}}  {mem:>24}  {util:>5}  {temp:>5}")
    lines.append(f"driver {inv.driver_version or 'unknown'}, CUDA {inv.cuda_version or 'unknown'}")
    if inv.error:
        lines.append(inv.error)
    return "\n".join(lines)


def inventory_to_json(inv: Inventory) -> dict[str, Any]:
    """The inventory as a JSON-ready dict (``sweep gpus --json``, repro.json)."""
    return {
        "available": inv.available,
        "driver_version": inv.driver_version,
        "cuda_version": inv.cuda_version,
        "error": inv.error,
        "gpus": [asdict(g) for g in inv.gpus],
    }
