"""``gpus_per_trial: "auto"``: measure one trial's peak GPU memory and pick a packing.

* :func:`choose_packing` - pure: peak memory, memory of a GPU, headroom and a cap
  -> trials per GPU and the fraction of a GPU each trial asks Ray for.
* :class:`MemorySampler` - driver side: samples NVML every 0.2 s while the probe
  trial runs: the trial process's own memory (``nvml-process``) and, for
  containers where NVML cannot see the trial's pid, the rise of the GPU's used
  memory over its pre-probe baseline (``nvml-device``).
* :func:`start_torch_peak_writer` - trial side: keeps torch's peak reserved CUDA
  memory in a file (``torch``), used when NVML saw less.
"""

from __future__ import annotations

import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from raysweep.errors import GPUError
from raysweep.gpu.inventory import bytes_to_mib, nvml_error_text, nvml_optional
from raysweep.jsonio import write_json_atomic

DEFAULT_HEADROOM = 0.2
MAX_TRIALS_PER_GPU = 8
SAMPLE_INTERVAL_S = 0.2
TORCH_PEAK_FILE = "torch_peak.json"
#: Ray keeps resource quantities to 4 decimal places; 1/n is rounded down to them.
_RAY_DECIMALS = 10_000

#: (pid, physical GPU index) of the probe trial, once it has started.
TrialFinder = Callable[[], tuple[int, int] | None]


@dataclass(frozen=True)
class Packing:
    """How many trials share a GPU, and the GPU fraction each asks Ray for."""

    trials_per_gpu: int
    gpus_per_trial: float
    warning: str | None = None


def choose_packing(
    peak_mb: float,
    gpu_memory_mb: float,
    headroom: float = DEFAULT_HEADROOM,
    cap: int = MAX_TRIALS_PER_GPU,
) -> Packing:
    """The most trials (at most ``cap``) whose peaks fit in ``gpu_memory_mb`` less ``headroom``.

    At least one trial per GPU: when even one does not fit, 1.0 with a warning.
    """
    if gpu_memory_mb <= 0:
        raise ValueError(f"gpu_memory_mb must be > 0 (got {gpu_memory_mb})")
    if not 0 <= headroom < 1:
        raise ValueError(f"headroom must be in [0, 1) (got {headroom})")
    if cap < 1:
        raise ValueError(f"cap must be >= 1 (got {cap})")
    usable = gpu_memory_mb * (1 - headroom)
    fits = math.floor(usable / peak_mb) if peak_mb > 0 else cap
    n = max(1, min(fits, cap))
    warning = None
    if fits < 1:
        warning = (
            f"gpus_per_trial auto: one trial's peak ({peak_mb:.0f} MiB) exceeds "
            f"{usable:.0f} MiB ({gpu_memory_mb:.0f} MiB less {headroom:.0%} headroom); "
            "running one trial per GPU, which may run out of memory"
        )
    fraction = 1.0 if n == 1 else math.floor(_RAY_DECIMALS / n) / _RAY_DECIMALS
    return Packing(n, fraction, warning)


@dataclass(frozen=True)
class ProbeReading:
    """What the sampler saw while the probe trial ran (memory in MiB)."""

    gpu_index: int | None  # the trial's GPU (None: the trial was never seen)
    pid: int | None
    process_peak_mb: float | None  # NVML's figure for the trial's pid
    device_peak_mb: float | None  # rise of the GPU's used memory over its baseline
    torch_peak_mb: float | None  # torch.cuda.max_memory_reserved in the trial
    gpu_total_mb: float  # the smallest GPU of the run
    gpu_free_mb: float  # the least free memory of the run's GPUs before the probe
    samples: int

    def peak(self) -> tuple[float, str]:
        """The trial's peak memory and how it was measured."""
        if self.process_peak_mb is not None:
            return self.process_peak_mb, "nvml-process"
        device, torch = self.device_peak_mb or 0.0, self.torch_peak_mb or 0.0
        return (torch, "torch") if torch > device else (device, "nvml-device")


class MemorySampler:
    """Samples NVML in a daemon thread; use as ``with MemorySampler(ids, finder) as s:``.

    ``gpu_ids`` are the run's physical (NVML) GPUs; ``find_trial`` is polled until
    it names the probe trial's pid and GPU. GPUError when NVML does not work.
    """

    def __init__(
        self,
        gpu_ids: Sequence[int],
        find_trial: TrialFinder,
        torch_peak_path: Path | None = None,
        interval_s: float = SAMPLE_INTERVAL_S,
    ) -> None:
        if not gpu_ids:
            raise ValueError("MemorySampler needs at least one GPU")
        self.gpu_ids = tuple(int(i) for i in gpu_ids)
        self.find_trial = find_trial
        self.torch_peak_path = torch_peak_path
        self.interval_s = interval_s
        self._nvml: Any = None
        self._handles: dict[int, Any] = {}
        self._baseline: dict[int, float] = {}
        self._total: dict[int, float] = {}
        self._used_peak: dict[int, float] = {}
        self._process_peak: float | None = None
        self._trial: tuple[int, int] | None = None
        self._samples = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> MemorySampler:
        try:
            import pynvml

            pynvml.nvmlInit()
        except Exception as exc:
            raise GPUError(f"resources.gpus_per_trial=auto: {nvml_error_text(exc)}") from None
        self._nvml = pynvml
        try:
            for index in self.gpu_ids:
                handle = pynvml.nvmlDeviceGetHandleByIndex(index)
                mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
                self._handles[index] = handle
                self._baseline[index] = self._used_peak[index] = bytes_to_mib(mem.used)
                self._total[index] = bytes_to_mib(mem.total)
        except Exception as exc:
            self._close()
            raise GPUError(f"resources.gpus_per_trial=auto: {nvml_error_text(exc)}") from None
        self._thread = threading.Thread(target=self._run, name="raysweep-gpu-probe", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10.0)
        self._close()

    def _close(self) -> None:
        if self._nvml is not None:
            nvml_optional(self._nvml.nvmlShutdown)
            self._nvml = None

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()
        self.sample()

    def sample(self) -> None:
        """One reading of every GPU's used memory and of the trial process's memory."""
        nvml = self._nvml
        if nvml is None:
            return
        if self._trial is None:
            try:
                self._trial = self.find_trial()
            except Exception:
                self._trial = None
        for index, handle in self._handles.items():
            mem = nvml_optional(nvml.nvmlDeviceGetMemoryInfo, handle)
            if mem is not None:
                self._used_peak[index] = max(self._used_peak[index], bytes_to_mib(mem.used))
        if self._trial is not None and self._trial[1] in self._handles:
            pid, index = self._trial
            procs = nvml_optional(nvml.nvmlDeviceGetComputeRunningProcesses, self._handles[index])
            for proc in procs or ():
                used = getattr(proc, "usedGpuMemory", None)
                if getattr(proc, "pid", None) == pid and used is not None:
                    self._process_peak = max(self._process_peak or 0.0, bytes_to_mib(used))
        self._samples += 1

    def reading(self) -> ProbeReading:
        """The peaks seen so far."""
        index = self._trial[1] if self._trial else None
        device = None
        if index is not None and index in self._used_peak:
            device = round(max(0.0, self._used_peak[index] - self._baseline[index]), 1)
        return ProbeReading(
            gpu_index=index,
            pid=self._trial[0] if self._trial else None,
            process_peak_mb=self._process_peak,
            device_peak_mb=device,
            torch_peak_mb=read_torch_peak(self.torch_peak_path),
            gpu_total_mb=min(self._total.values()),
            gpu_free_mb=min(self._total[i] - self._baseline[i] for i in self._total),
            samples=self._samples,
        )


def read_torch_peak(path: Path | None) -> float | None:
    """The figure :func:`start_torch_peak_writer` left in ``path`` (None if none)."""
    if path is None or not path.is_file():
        return None
    try:
        return float(json.loads(path.read_text(encoding="utf-8"))["torch_peak_mb"])
    except (ValueError, KeyError, TypeError, OSError):
        return None


_writer_lock = threading.Lock()
_writer_started = False


def start_torch_peak_writer(path: str, interval_s: float = SAMPLE_INTERVAL_S) -> None:
    """In a trial process: write torch's peak reserved CUDA memory to ``path`` as it grows.

    Never imports torch nor initialises CUDA: it only reads torch's counters once
    the trial has done both. One writer per process.
    """
    global _writer_started
    with _writer_lock:
        if _writer_started:
            return
        _writer_started = True

    def run() -> None:
        last = 0.0
        while True:
            time.sleep(interval_s)
            torch = sys.modules.get("torch")
            try:
                if torch is None or not torch.cuda.is_initialized():
                    continue
                peak = bytes_to_mib(torch.cuda.max_memory_reserved(0))
                if peak > last:
                    write_json_atomic(Path(path), {"pid": os.getpid(), "torch_peak_mb": peak})
                    last = peak
            except Exception:
                continue

    threading.Thread(target=run, name="raysweep-torch-peak", daemon=True).start()


def packing_record(
    reading: ProbeReading, packing: Packing, headroom: float, cap: int
) -> dict[str, Any]:
    """The ``gpus_per_trial_auto`` record kept in gpu_auto.json and repro.json."""
    peak, method = reading.peak()
    return {
        "gpus_per_trial": packing.gpus_per_trial,
        "trials_per_gpu": packing.trials_per_gpu,
        "probe_peak_mb": peak,
        "method": method,
        "gpu_total_mb": reading.gpu_total_mb,
        "gpu_free_mb": reading.gpu_free_mb,
        "headroom": headroom,
        "cap": cap,
        "probe_gpu": reading.gpu_index,
        "measured": {
            "nvml_process_mb": reading.process_peak_mb,
            "nvml_device_mb": reading.device_peak_mb,
            "torch_mb": reading.torch_peak_mb,
            "samples": reading.samples,
        },
        "warnings": [packing.warning] if packing.warning else [],
    }


def describe(record: dict[str, Any]) -> str:
    """The log line for a packing record."""
    n = int(record["trials_per_gpu"])
    return (
        f"gpus_per_trial auto: probe peak {record['probe_peak_mb']:.0f} MiB "
        f"({record['method']}) of {record['gpu_free_mb']:.0f} MiB free -> {n} "
        f"trial{'s' if n != 1 else ''} per GPU ({record['gpus_per_trial']:g} GPU each, "
        f"{record['headroom']:.0%} headroom, at most {record['cap']})"
    )
