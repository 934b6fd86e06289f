"""``resources.gpus_per_trial: "auto"`` for a run: reuse the recorded packing, or probe.

The probe runs the sweep's first suggested trial alone on one whole GPU, in
``run_dir/gpu_probe/``, for a few iterations or about 30 s, while
gpu/autopack.py's sampler watches its memory. The packing chosen goes to
``gpu_auto.json``, which ``sweep resume`` and ``sweep repro`` reuse (they never
probe again), and to repro.json under ``gpus_per_trial_auto``.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from raysweep._raycompat.interrupt import StopCallback
from raysweep.config.schema import SweepSpec
from raysweep.engines.ray.fit import run_tuner
from raysweep.engines.ray.tuner import BuildOptions
from raysweep.errors import GPUError, SweepError
from raysweep.gpu.allocation import GPUPlan
from raysweep.gpu.autopack import (
    DEFAULT_HEADROOM,
    MAX_TRIALS_PER_GPU,
    TORCH_PEAK_FILE,
    MemorySampler,
    ProbeReading,
    choose_packing,
    describe,
    packing_record,
)
from raysweep.gpu.planning import PROBE_SECONDS, probe_iterations
from raysweep.output_log import RunLog
from raysweep.repro.manifest import record_gpus_auto
from raysweep.run.signals import GracefulStop
from raysweep.rundir import PROBE_DIR, RunDir
from raysweep.schedulers.build import TIME_ATTR

PROBE_BUDGET_S = 180.0  # the whole probe, worker start-up included


def packing_cap(spec: SweepSpec, num_gpus: int, cluster: Mapping[str, Any]) -> int:
    """Most trials per GPU worth packing: 8, the CPU slots per GPU, max_concurrent per GPU."""
    cpu_slots = int(float(cluster.get("CPU", 1)) // spec.resources.cpus_per_trial)
    caps = [MAX_TRIALS_PER_GPU, max(1, cpu_slots // max(1, num_gpus))]
    if spec.search.max_concurrent:
        caps.append(max(1, math.ceil(spec.search.max_concurrent / max(1, num_gpus))))
    return min(caps)


def resolve_gpus_auto(
    spec: SweepSpec,
    run_dir: RunDir,
    gpu_plan: GPUPlan,
    visible: str | None,
    cluster: Mapping[str, Any],
    log: RunLog,
    stop: GracefulStop,
) -> SweepSpec | None:
    """The spec with a number of GPUs per trial; None when a signal stopped the probe.

    Specs that give a number come back as they are. Ray must be running.
    """
    if not spec.resources.gpus_auto:
        return spec
    if gpu_plan.cpu_fallback:
        return spec.with_gpus_per_trial(0.0)
    record = run_dir.read_packing()
    if record is not None:
        log.print(
            f"gpus_per_trial auto: {float(record['gpus_per_trial']):g} GPU per trial, as the "
            f"run's probe chose [recorded in {run_dir.packing_path.name}]"
        )
        return spec.with_gpus_per_trial(float(record["gpus_per_trial"]))
    if not gpu_plan.physical_ids:
        raise GPUError("resources.gpus_per_trial=auto: no local GPU to probe on")
    cap = packing_cap(spec, gpu_plan.num_gpus, cluster)
    reading = probe_memory(spec, run_dir, gpu_plan, visible, log, stop)
    if reading is None:
        return None
    peak, _ = reading.peak()
    if reading.gpu_free_mb <= 0:
        raise SweepError(
            "resources.gpus_per_trial=auto: a GPU of the run had no free memory before the "
            f"probe ({reading.gpu_total_mb:.0f} MiB in use by other processes)"
        )
    packing = choose_packing(peak, reading.gpu_free_mb, DEFAULT_HEADROOM, cap)
    record = packing_record(reading, packing, DEFAULT_HEADROOM, cap)
    run_dir.write_packing(record)
    record_gpus_auto(run_dir, record)
    log.print(describe(record))
    for warning in record["warnings"]:
        log.print(f"warning: {warning}")
    return spec.with_gpus_per_trial(packing.gpus_per_trial)


def probe_memory(
    spec: SweepSpec,
    run_dir: RunDir,
    gpu_plan: GPUPlan,
    visible: str | None,
    log: RunLog,
    stop: GracefulStop,
) -> ProbeReading | None:
    """Run one trial alone on a whole GPU and measure it; None when a signal stopped it."""
    probe_dir = run_dir.probe_dir
    shutil.rmtree(probe_dir, ignore_errors=True)  # what an interrupted probe left
    probe_dir.mkdir(parents=True, exist_ok=True)
    options = probe_options(spec, probe_dir, visible, stop)
    log.print(
        f"gpus_per_trial auto: probing one trial alone on a whole GPU (up to "
        f"{probe_iterations(spec)} iteration(s) or {PROBE_SECONDS:.0f} s) in {PROBE_DIR}/"
    )
    finder = partial(_probe_trial, RunDir(probe_dir).trial_info_path)
    with MemorySampler(gpu_plan.physical_ids, finder, probe_dir / TORCH_PEAK_FILE) as sampler:
        trials = run_tuner(spec.with_gpus_per_trial(1.0), options)
    if stop.received:
        return None
    reading = sampler.reading()
    _check_probe(trials, reading)
    return reading


def probe_options(
    spec: SweepSpec, probe_dir: Path, visible: str | None, stop: GracefulStop | None
) -> BuildOptions:
    """The sweep's first trial alone on one whole GPU, under the probe's limits.

    The sweep's own builder (same searcher, seed and trainable), with a FIFO
    scheduler, no retries, and the trial's torch peak written to ``probe_dir``.
    """
    return BuildOptions(
        run_dir=probe_dir,
        driver_visible_devices=visible,
        callbacks=(StopCallback(stop),),
        num_samples=1,
        info_path=RunDir(probe_dir).trial_info_path,
        fifo=True,
        time_budget_s=PROBE_BUDGET_S,
        stop={TIME_ATTR: probe_iterations(spec), "time_total_s": PROBE_SECONDS},
        max_failures=0,
        memory_probe_path=probe_dir / TORCH_PEAK_FILE,
    )


def _probe_trial(info_path: Path) -> tuple[int, int] | None:
    """(pid, physical GPU) of the probe trial from its trial_info.jsonl, once it started."""
    if not info_path.is_file():
        return None
    for line in info_path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
            gpus = record.get("gpu_ids") or []
            if record.get("event") == "start" and gpus and str(gpus[0]).isdigit():
                return int(record["pid"]), int(gpus[0])
        except (ValueError, KeyError, TypeError):
            continue
    return None


def _check_probe(trials: list[Any], reading: ProbeReading) -> None:
    """SweepError when the probe trial failed or was never seen on a GPU."""
    failed = [t for t in trials if str(t.status) == "ERROR"]
    if failed:
        path = getattr(failed[0], "error_file", None)
        text = Path(path).read_text(errors="replace") if path and Path(path).is_file() else ""
        lines = text.strip().splitlines()
        raise SweepError(
            "resources.gpus_per_trial=auto: the probe trial failed, so no packing was chosen: "
            f"{lines[-1] if lines else 'no error text'}; fix the trainable or set "
            "resources.gpus_per_trial to a number"
        )
    if reading.gpu_index is None:
        raise SweepError(
            "resources.gpus_per_trial=auto: the probe trial was never seen running on a GPU "
            f"that NVML knows (within {PROBE_BUDGET_S:.0f} s); set resources.gpus_per_trial "
            "to a number"
        )
