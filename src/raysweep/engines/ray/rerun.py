"""``sweep repro``: rerun one recorded trial alone and compare its metric with the record.

The trial runs through the same wrapped trainable as in the sweep, with its
recorded config and ``__trial_index__`` (hence the same seed), the same
resources and checkpoint settings, for as many iterations as it ran before,
in a temporary directory. The run directory is only appended to
(``sweep_output.log``). A run that shared its GPUs through MPS is rerun under
MPS with the same share where this machine has it, else time-sliced with a note.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from raysweep.config.schema import SweepSpec
from raysweep.engines.ray.fit import run_tuner
from raysweep.engines.ray.ray_session import RayOptions, ray_running, ray_session
from raysweep.engines.ray.trial_view import trial_view
from raysweep.engines.ray.tuner import BuildOptions
from raysweep.errors import ConfigError, SweepError
from raysweep.gpu.allocation import GPUPlan, gpu_env
from raysweep.gpu.planning import plan_gpus, recorded_spec
from raysweep.gpu.sharing import AUTO, MPS, gpu_sharing
from raysweep.output_log import RunLog
from raysweep.report.collect import collect
from raysweep.repro.determinism import DETERMINISM_ENV
from raysweep.results.records import SweepResult, TrialRecord
from raysweep.rundir import RunDir
from raysweep.schedulers.build import TIME_ATTR


@dataclass(frozen=True)
class Comparison:
    """Recorded vs rerun values of the sweep's metric for one trial."""

    metric: str
    recorded_last: Any
    rerun_last: Any
    recorded_best: float | None
    rerun_best: float | None
    recorded_iterations: int
    rerun_iterations: int

    @property
    def matches(self) -> bool:
        """Bit-identical last and best metric, and the same number of iterations."""
        return (
            _same(self.recorded_last, self.rerun_last)
            and _same(self.recorded_best, self.rerun_best)
            and self.recorded_iterations == self.rerun_iterations
        )


def rerun_trial(run_dir: RunDir, trial_id: str | None, out: IO[str] = sys.stdout) -> int:
    """Rerun ``trial_id`` (default: the best trial) of ``run_dir``; 0 on a match, 1 otherwise."""
    spec = run_dir.read_spec()
    result = run_dir.read_results()
    record = pick_trial(run_dir, result, trial_id)
    with RunLog(run_dir.log_path, out) as log:
        log.print(
            f"Rerunning trial {record.trial_id} (#{record.index}, seed {record.seed}) of "
            f"{spec.name!r} for {record.iterations} iteration(s): {spec.trainable}"
        )
        for warning in run_dir.read_manifest().get("warnings", []):
            log.print(f"note: {warning}")
        rerun = run_alone(spec, run_dir, record, log.print)
        if rerun.status == "errored":
            lines = (rerun.error or "").strip().splitlines()
            log.print(f"recorded: {spec.metric} last={record.last.get(spec.metric)!r}")
            log.print(f"MISMATCH: the rerun failed: {lines[-1] if lines else 'no error text'}")
            return 1
        comparison = compare(spec.metric, record, rerun)
        for line in format_comparison(comparison):
            log.print(line)
        return 0 if comparison.matches else 1


def pick_trial(run_dir: RunDir, result: SweepResult, trial_id: str | None) -> TrialRecord:
    """The trial asked for, else best_config.json's, else the best in results.json."""
    by_id = {t.trial_id: t for t in result.trials}
    if trial_id is None:
        best_file = run_dir.read_best()
        if best_file is not None:
            trial_id = str(best_file["trial_id"])
        else:
            best = result.best()
            if best is None:
                raise SweepError(
                    f"{run_dir}: no trial reported {result.metric!r}; nothing to rerun"
                )
            trial_id = best.trial_id
    record = by_id.get(trial_id)
    if record is None:
        raise ConfigError(
            f"--trial: no trial {trial_id!r} in {run_dir}; trials: {', '.join(sorted(by_id))}"
        )
    if record.index < 0:
        raise SweepError(f"trial {trial_id}: no recorded trial index; cannot derive its seed")
    if record.status in ("errored", "pending", "running") or record.iterations < 1:
        raise SweepError(
            f"trial {trial_id}: status {record.status!r} after {record.iterations} iteration(s); "
            "only trials that reported a metric can be rerun"
        )
    return record


def run_alone(
    spec: SweepSpec, run_dir: RunDir, record: TrialRecord, say: Callable[[str], None] = print
) -> TrialRecord:
    """Run the recorded trial alone in a temporary directory; its new record.

    Starts (and afterwards stops) a local Ray unless this process already has one.
    """
    cpu_fallback = bool(run_dir.read_manifest().get("gpu_plan", {}).get("cpu_fallback", False))
    spec = _shared_where_possible(_resolved_gpus(spec, run_dir, cpu_fallback))
    plan = _gpu_plan(spec, record, cpu_fallback)
    if not ray_running():  # CUDA numbering is fixed when Ray starts, as in `sweep run`
        os.environ.update(gpu_env(plan))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ray_options = RayOptions(
        num_gpus=plan.num_gpus,
        include_dashboard=False,  # one short trial
        env_vars=dict(DETERMINISM_ENV) if spec.reproducibility.deterministic else {},
    )
    with (
        gpu_sharing(run_dir, plan, say),
        ray_session(ray_options),
        tempfile.TemporaryDirectory(prefix="raysweep-repro-") as tmp,
    ):
        options = BuildOptions(
            run_dir=Path(tmp),
            driver_visible_devices=visible,
            cpu_fallback=plan.cpu_fallback,
            experiment="repro",
            fixed_trial=(record.config, record.index),
            fifo=True,
            stop={TIME_ATTR: record.iterations},
            max_failures=0,
            reuse_actors=False,
        )
        trials = run_tuner(spec, options)
        return collect(
            [trial_view(t) for t in trials], spec.name, spec.metric, spec.mode, spec.seed
        ).trials[0]


def _resolved_gpus(spec: SweepSpec, run_dir: RunDir, cpu_fallback: bool) -> SweepSpec:
    """``gpus_per_trial: "auto"`` as the run resolved it: its recorded packing (no probe)."""
    if not spec.resources.gpus_auto:
        return spec
    if cpu_fallback:
        return spec.with_gpus_per_trial(0.0)
    resolved = recorded_spec(spec, run_dir)
    if resolved.resources.gpus_auto:
        raise SweepError(
            f"{run_dir}: resources.gpus_per_trial is 'auto' but the run recorded no packing "
            f"({run_dir.packing_path.name} is missing); cannot rerun its trials the same way"
        )
    return resolved


def _shared_where_possible(spec: SweepSpec) -> SweepSpec:
    """An ``"mps"`` run is rerun as ``"auto"``: with its MPS share here, else time-sliced.

    A rerun compares numbers, and a trial alone on a GPU gets the same numbers
    from most CUDA libraries either way; refusing it on a machine without MPS
    would leave the run with no way to check a trial at all. The note says when
    the share was not reproduced (cuBLAS may pick other kernels for another SM count).
    """
    if spec.resources.gpu_sharing != MPS:
        return spec
    resources = spec.resources.model_copy(update={"gpu_sharing": AUTO})
    return spec.model_copy(update={"resources": resources})


def _gpu_plan(spec: SweepSpec, record: TrialRecord, cpu_fallback: bool) -> GPUPlan:
    """The GPU plan for the rerun: the trial's own physical GPUs when it had any."""
    gpus = ",".join(record.gpu_ids) if record.gpu_ids else None
    if spec.resources.gpus_per_trial <= 0 or cpu_fallback:
        gpus = "none"
    return plan_gpus(spec, gpus, allow_cpu=cpu_fallback)


def compare(metric: str, recorded: TrialRecord, rerun: TrialRecord) -> Comparison:
    """The recorded and rerun values of ``metric`` side by side."""
    return Comparison(
        metric=metric,
        recorded_last=recorded.last.get(metric),
        rerun_last=rerun.last.get(metric),
        recorded_best=recorded.best_metric,
        rerun_best=rerun.best_metric,
        recorded_iterations=recorded.iterations,
        rerun_iterations=rerun.iterations,
    )


def format_comparison(c: Comparison) -> list[str]:
    """Lines for people: both values when they differ; ``match`` last when they agree."""
    lines = [
        f"recorded: {c.metric} last={c.recorded_last!r} best={c.recorded_best!r} "
        f"iterations={c.recorded_iterations}",
        f"rerun:    {c.metric} last={c.rerun_last!r} best={c.rerun_best!r} "
        f"iterations={c.rerun_iterations}",
    ]
    if c.matches:
        return [*lines, "match"]
    diffs = []
    if not _same(c.recorded_last, c.rerun_last):
        diffs.append(f"last {c.metric} {c.recorded_last!r} != {c.rerun_last!r}")
    if not _same(c.recorded_best, c.rerun_best):
        diffs.append(f"best {c.metric} {c.recorded_best!r} != {c.rerun_best!r}")
    if c.recorded_iterations != c.rerun_iterations:
        diffs.append(f"iterations {c.recorded_iterations} != {c.rerun_iterations}")
    return [*lines, "MISMATCH: " + "; ".join(diffs)]


def _same(a: Any, b: Any) -> bool:
    """Equal, counting two NaNs as the same."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)
