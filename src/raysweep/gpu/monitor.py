"""Background sampler of host CPU/RAM and GPU use, written to ``resource_usage.json``.

One daemon thread samples every ``interval_s`` (psutil for the host, NVML for the
GPUs when it works), rewrites the file atomically every ``flush_every_s`` and at
stop. Memory stays bounded: once ``max_samples`` are held, the older half is
merged pairwise (mean utilisation, peak memory, ``n`` = raw samples merged), so
old data gets coarser while recent data keeps full resolution. The monitor's own
summary is exact over every raw sample, whatever was merged.

A resumed run's invocations share the file: a monitor that finds an earlier
``resource_usage.json`` with samples appends to it (its samples, and its
summary's exact peaks, are kept), and ``invocations`` lists each invocation's
start, GPUs and sampled span. The summary's ``duration_s`` then counts the
sampled time of every invocation, not the gaps between them.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from raysweep.gpu.inventory import bytes_to_mib, nvml_error_text, nvml_optional
from raysweep.gpu.usage import Accumulator, Sample, downsample, earlier_usage, sampled_seconds
from raysweep.jsonio import read_json, write_json_atomic

__all__ = ["ResourceMonitor"]

log = logging.getLogger(__name__)


class _GpuSampler:
    """NVML handles for the GPUs to watch; empty (with ``error``) when NVML fails."""

    def __init__(self, gpu_ids: Sequence[int] | None) -> None:
        self.handles: list[tuple[int, Any]] = []
        self.error: str | None = None
        self._nvml: Any = None
        if gpu_ids is not None and not gpu_ids:
            return
        try:
            import pynvml

            pynvml.nvmlInit()
        except Exception as exc:
            self.error = nvml_error_text(exc)
            return
        self._nvml = pynvml
        try:
            count = int(pynvml.nvmlDeviceGetCount())
            wanted = range(count) if gpu_ids is None else gpu_ids
            missing = [i for i in wanted if not 0 <= i < count]
            if missing:
                self.error = f"GPU(s) {missing} not found by NVML ({count} present)"
            self.handles = [
                (i, pynvml.nvmlDeviceGetHandleByIndex(i)) for i in wanted if 0 <= i < count
            ]
        except Exception as exc:
            self.error = nvml_error_text(exc)

    def sample(self) -> list[dict[str, Any]]:
        """One reading per GPU; fields a GPU cannot report are None."""
        nvml = self._nvml
        out = []
        for index, handle in self.handles:
            util = nvml_optional(nvml.nvmlDeviceGetUtilizationRates, handle)
            mem = nvml_optional(nvml.nvmlDeviceGetMemoryInfo, handle)
            out.append(
                {
                    "index": index,
                    "util_pct": None if util is None else float(util.gpu),
                    "mem_used_mb": None if mem is None else bytes_to_mib(mem.used),
                    "mem_total_mb": None if mem is None else bytes_to_mib(mem.total),
                }
            )
        return out

    def close(self) -> None:
        if self._nvml is not None:
            nvml_optional(self._nvml.nvmlShutdown)
            self._nvml = None


class ResourceMonitor:
    """Samples resource use in a daemon thread; use as ``with ResourceMonitor(path): ...``.

    ``gpu_ids`` are physical (NVML) indices: None watches every GPU, ``()`` none.
    Sampling never raises into the sweep: failures are logged and skipped.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        interval_s: float = 2.0,
        gpu_ids: Sequence[int] | None = None,
        *,
        flush_every_s: float = 30.0,
        max_samples: int = 10_000,
    ) -> None:
        if interval_s <= 0:
            raise ValueError(f"interval_s must be > 0 (got {interval_s})")
        if max_samples < 4:
            raise ValueError(f"max_samples must be >= 4 (got {max_samples})")
        self.path = Path(path)
        self.interval_s = float(interval_s)
        self.gpu_ids = None if gpu_ids is None else tuple(int(i) for i in gpu_ids)
        self.flush_every_s = float(flush_every_s)
        self.max_samples = int(max_samples)
        self._samples: list[Sample] = []
        self._acc = Accumulator()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._psutil: Any = None
        self._gpu_error: str | None = None
        self._host_error: str | None = None
        self._downsampled = False
        self._started_at: float | None = None
        self._failures = 0
        self._invocations: list[dict[str, Any]] = []  # earlier ones, then this one

    # -- lifecycle -------------------------------------------------------
    def start(self) -> ResourceMonitor:
        """Start sampling in a daemon thread (once)."""
        if self._thread is not None:
            raise RuntimeError("ResourceMonitor already started")
        try:
            import psutil

            psutil.cpu_percent(interval=None)  # prime: later calls measure since the last one
            self._psutil = psutil
        except ImportError as exc:
            self._host_error = f"psutil not installed ({exc}); host CPU/RAM not sampled"
        self._continue_earlier_file()
        self._started_at = time.time()
        gpu_ids = None if self.gpu_ids is None else list(self.gpu_ids)
        self._invocations.append(
            {"started_at": self._started_at, "gpu_ids": gpu_ids, "samples": 0,
             "first_t": None, "last_t": None}
        )  # fmt: skip
        self._thread = threading.Thread(target=self._run, name="raysweep-monitor", daemon=True)
        self._thread.start()
        return self

    def _continue_earlier_file(self) -> None:
        """Keep an earlier invocation's samples (a resumed run): this one's are appended."""
        try:
            earlier = earlier_usage(read_json(self.path)) if self.path.is_file() else None
        except (OSError, ValueError) as exc:
            log.warning("resource monitor: %s is unreadable (%s); starting it anew", self.path, exc)
            earlier = None
        if earlier is None:
            return
        with self._lock:
            self._samples = list(earlier["samples"])
            for sample in self._samples:
                self._acc.add(sample)
            self._acc.add_peaks(earlier.get("summary") or {})
            self._invocations = [dict(inv) for inv in earlier["invocations"]]
            self._downsampled = bool(earlier.get("downsampled"))

    def stop(self, timeout: float = 10.0) -> None:
        """Take a last sample, write the file and join the thread (idempotent)."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():
                log.warning("resource monitor did not stop within %.0f s", timeout)

    def __enter__(self) -> ResourceMonitor:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- results ---------------------------------------------------------
    @property
    def samples(self) -> list[Sample]:
        """A copy of the samples held now (older ones possibly merged)."""
        with self._lock:
            return list(self._samples)

    def summary(self) -> dict[str, Any]:
        """Exact summary over every raw sample taken so far."""
        with self._lock:
            summary = self._acc.result()
            if len(self._invocations) > 1:  # not the gaps between a resumed run's invocations
                summary["duration_s"] = sampled_seconds(self._invocations)
                summary["invocations"] = len(self._invocations)
        if self._gpu_error:
            summary["gpu_error"] = self._gpu_error
        return summary

    # -- thread ----------------------------------------------------------
    def _run(self) -> None:
        gpus = _GpuSampler(self.gpu_ids)
        self._gpu_error = gpus.error
        last_flush = time.monotonic()
        try:
            while not self._stop.wait(self.interval_s):
                self._record(gpus)
                if time.monotonic() - last_flush >= self.flush_every_s:
                    self._flush()
                    last_flush = time.monotonic()
            self._record(gpus)
        finally:
            gpus.close()
            self._flush()

    def _host(self) -> dict[str, Any]:
        if self._psutil is None:
            return {"cpu_pct": None, "ram_used_mb": None, "ram_total_mb": None}
        vm = self._psutil.virtual_memory()
        return {
            "cpu_pct": round(float(self._psutil.cpu_percent(interval=None)), 1),
            "ram_used_mb": bytes_to_mib(vm.total - vm.available),
            "ram_total_mb": bytes_to_mib(vm.total),
        }

    def _record(self, gpus: _GpuSampler) -> None:
        try:
            sample: Sample = {"t": round(time.time(), 3), **self._host(), "gpus": gpus.sample()}
        except Exception as exc:
            self._failures += 1
            if self._failures == 1:
                log.warning("resource monitor: sampling failed: %s", exc)
            return
        with self._lock:
            self._acc.add(sample)
            self._samples.append(sample)
            current = self._invocations[-1]
            current["samples"] += 1
            current["last_t"] = sample["t"]
            if current["first_t"] is None:
                current["first_t"] = sample["t"]
            if len(self._samples) >= self.max_samples:
                self._samples = downsample(self._samples)
                self._downsampled = True

    def payload(self) -> dict[str, Any]:
        """The JSON document written to ``resource_usage.json``."""
        summary = self.summary()
        with self._lock:
            samples = list(self._samples)
            invocations = [dict(inv) for inv in self._invocations]
        first = invocations[0].get("started_at") if invocations else None
        return {
            "interval_s": self.interval_s,
            "gpu_ids": None if self.gpu_ids is None else list(self.gpu_ids),  # this invocation's
            "started_at": first if first is not None else self._started_at,
            "invocations": invocations,
            "updated_at": round(time.time(), 3),
            "max_samples": self.max_samples,
            "downsampled": self._downsampled,
            "gpu_error": self._gpu_error,
            "host_error": self._host_error,
            "samples": samples,
            "summary": summary,
        }

    def _flush(self) -> None:
        try:
            write_json_atomic(self.path, self.payload(), indent=None)
        except Exception as exc:
            log.warning("resource monitor: cannot write %s: %s", self.path, exc)
