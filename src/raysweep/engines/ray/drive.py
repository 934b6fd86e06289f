"""Drive a run directory: lock, log, state, signals, Ray, one Tuner per phase, outputs.

``sweep run`` and ``sweep resume`` both end up in :func:`drive` with a list of
phases (engines/ray/phases.py); the orchestrator (api.py) only decides which.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from raysweep._raycompat.interrupt import StopCallback
from raysweep._raycompat.repair import repair_snapshot
from raysweep.config.schema import SweepSpec
from raysweep.engines.environment import in_ray_job
from raysweep.engines.ray.cluster import check_paths_on_nodes, data_paths
from raysweep.engines.ray.experiments import load_trials
from raysweep.engines.ray.fit import run_tuner
from raysweep.engines.ray.gpu_probe import resolve_gpus_auto
from raysweep.engines.ray.lost_nodes import LostNodeCallback
from raysweep.engines.ray.notices import announce_dashboard, dashboard_warning, run_notices
from raysweep.engines.ray.phases import Phase
from raysweep.engines.ray.preflight import preflight_cluster
from raysweep.engines.ray.progress import ProgressCallback
from raysweep.engines.ray.ray_env import apply_run_env_defaults, buffers_results
from raysweep.engines.ray.ray_session import (
    RayOptions,
    is_loopback,
    ray_running,
    ray_session,
)
from raysweep.engines.ray.scheduler_history import recorded_trials
from raysweep.engines.ray.shipping import Shipment, plan_shipment
from raysweep.engines.ray.trial_view import trial_view
from raysweep.engines.ray.tuner import BuildOptions
from raysweep.gpu.allocation import GPUPlan, gpu_env
from raysweep.gpu.monitor import ResourceMonitor
from raysweep.gpu.sharing import gpu_sharing
from raysweep.output_log import RunLog
from raysweep.report.preload import preload_report_imports
from raysweep.repro.determinism import DETERMINISM_ENV
from raysweep.repro.manifest import add_manifest_warning
from raysweep.results.records import SweepResult
from raysweep.results.trial_view import TrialView
from raysweep.run.lifecycle import drive_locked, start_run
from raysweep.run.opening import announce_opening
from raysweep.run.outputs import collect_result, write_outputs
from raysweep.run.signals import GracefulStop
from raysweep.rundir import Part, RunDir
from raysweep.schedulers.restore import resume_note
from raysweep.search.points import WarmStart


@dataclass(frozen=True)
class DriveOptions:
    """How a run is driven, beside its spec: Ray, GPUs, and what a resume asks for."""

    ray: RayOptions
    gpu_plan: GPUPlan
    gpus_flag: str | None = None  # --gpus as given (for the note when a cluster ignores it)
    record: SweepSpec | None = None  # a spec to (re)write to spec.json once the lock is held
    retry_errored: bool = False
    warm_start: WarmStart | None = None  # points the first experiment suggests first
    record_warm_start: bool = False  # a new run: write warm_start to state.json


def drive(
    spec: SweepSpec,
    run_dir: RunDir,
    phases: list[Phase],
    options: DriveOptions,
    out: IO[str],
    stop: GracefulStop,
) -> int:
    """Run ``phases`` under the run's lock; returns 0 ok, 1 failed, 130 interrupted.

    A remote run's lock and logs are in its staging directory; the logs are
    uploaded while it runs (``RunDir.synced``).
    """

    def body(log: RunLog) -> SweepResult:
        start_run(run_dir, spec, options.gpu_plan, options.record, options.warm_start,
                  options.record_warm_start, run_dir.read_packing())  # fmt: skip
        return _drive(spec, run_dir, phases, options, log, stop)

    return drive_locked(run_dir, out, stop, body)


def _drive(
    spec: SweepSpec,
    run_dir: RunDir,
    phases: list[Phase],
    options: DriveOptions,
    log: RunLog,
    stop: GracefulStop,
) -> SweepResult:
    stop.check()
    started = time.monotonic()
    visible = _apply_gpu_plan(options, log)
    log.print(
        f"Sweep {spec.name!r}: {spec.total_trials} trials, {spec.search.algorithm} "
        f"search, {spec.scheduler.type} scheduler, seed {spec.seed} -> {run_dir}"
    )
    announce_opening(spec, run_dir, log)
    for notice in run_notices(spec):
        log.print(notice)
    _log_warm_start(options.warm_start, phases, log)
    wanted = options.ray
    if wanted.dashboard_note:
        log.print(wanted.dashboard_note)
    local_dashboard = wanted.include_dashboard and not wanted.address
    if local_dashboard and not is_loopback(wanted.dashboard_host):
        warning = dashboard_warning(wanted.dashboard_host)
        log.print(warning)
        add_manifest_warning(run_dir, warning)
    preload_report_imports()  # done while Ray starts, not after the last trial
    # Ray starts even with no phase left: Ray's Trial objects need it to find files.
    # The sweep's MPS daemon (gpu_sharing) outlives Ray: started before its workers, stopped after.
    sharing = gpu_sharing(run_dir, options.gpu_plan, log.print)
    with sharing, ray_session(_ray_options(spec, options.ray, options.gpu_plan.num_gpus)) as ray:
        stop.check()
        announce_dashboard(run_dir, ray, log)
        if in_ray_job():  # Ray may remove the job's working directory under us
            os.chdir(run_dir.path)
        if options.ray.address:  # a cluster: can every node read the data?
            check_paths_on_nodes(data_paths(spec), _working_dir(options))
        cluster = ray.resources
        live = _run_phases(spec, run_dir, phases, options, visible, cluster, log, stop)
        stop.check()  # results.json stays what the last finished invocation wrote
        result = collect_result(spec, run_dir, run_trials(spec, run_dir, live), started)
        # Written while Ray shuts down: they need the run directory, not Ray.
        outputs = ThreadPoolExecutor(1, thread_name_prefix="raysweep-outputs")
        written = outputs.submit(write_outputs, result, run_dir)
    with outputs:
        written.result()
    return result


def preflight(spec: SweepSpec, run_dir: RunDir, ray: RayOptions) -> RayOptions:
    """On a cluster, before anything is written: what travels, then join and check.

    Returns ``ray`` with the code that travels (engines/ray/shipping.py); raises a
    ConfigError (exit 2) for a cluster on another Ray or Python, or a node that
    cannot import the trainable (engines/ray/preflight.py). The connection stays open.
    """
    if not ray.address:
        return ray
    if in_ray_job():  # the job's own runtime environment carries the code
        shipment = Shipment(working_dir=ray.working_dir, in_job=True)
    else:
        storage = None if run_dir.is_remote else run_dir.path.parent
        shipment = plan_shipment(spec.trainable, ray.working_dir, storage)
        ray = replace(
            ray,
            working_dir=shipment.working_dir,
            py_modules=shipment.py_modules,
            excludes=shipment.excludes,
        )
    preflight_cluster(spec, _ray_options(spec, ray, None), shipment)
    return ray


def _ray_options(spec: SweepSpec, ray: RayOptions, num_gpus: int | None) -> RayOptions:
    """The Ray to start or join, with the determinism variables its workers need."""
    return RayOptions(
        address=ray.address,
        connect_timeout_s=ray.connect_timeout_s,
        num_gpus=None if ray.address else num_gpus,
        include_dashboard=ray.include_dashboard,
        dashboard_host=ray.dashboard_host,
        dashboard_port=ray.dashboard_port,
        env_vars=dict(DETERMINISM_ENV) if spec.reproducibility.deterministic else {},
        py_modules=ray.py_modules if ray.address else (),
        working_dir=ray.working_dir if ray.address else None,
        excludes=ray.excludes if ray.address else (),
    )


def _working_dir(options: DriveOptions) -> Path | None:
    shipped = options.ray.working_dir if options.ray.address else None
    return Path(shipped) if shipped else None


def _run_phases(
    spec: SweepSpec,
    run_dir: RunDir,
    phases: list[Phase],
    options: DriveOptions,
    visible: str | None,
    cluster: Mapping[str, Any],
    log: RunLog,
    stop: GracefulStop,
) -> dict[str, list[Any]]:
    """Run the phases; returns the Trial objects of each experiment run here.

    A spec with ``gpus_per_trial: "auto"`` is resolved first (engines/ray/gpu_probe.py).
    """
    live: dict[str, list[Any]] = {}
    with ResourceMonitor(run_dir.usage_path, gpu_ids=options.gpu_plan.physical_ids):
        resolved = resolve_gpus_auto(spec, run_dir, options.gpu_plan, visible, cluster, log, stop)
        for phase in phases:
            stop.check()
            if resolved is None:
                break
            live[phase.part.dir] = _run_phase(resolved, run_dir, phase, options, visible, log, stop)
    return live


def _run_phase(
    spec: SweepSpec,
    run_dir: RunDir,
    phase: Phase,
    options: DriveOptions,
    visible: str | None,
    log: RunLog,
    stop: GracefulStop,
) -> list[Any]:
    # Read by Ray Tune when fit() starts.
    apply_run_env_defaults(spec.total_trials, buffer_results=buffers_results(spec))
    parts = run_dir.parts()
    index = next((i for i, p in enumerate(parts) if p.dir == phase.part.dir), len(parts))
    progress = ProgressCallback(
        run_dir.events_path,
        spec.metric,
        spec.mode,
        spec.total_trials,
        log.stream,
        terminal=log.out,  # a live display when it is a terminal (run/live.py)
        log_path=run_dir.log_path,
        rank_by=spec.ranking,
        max_iterations=spec.iteration_budget,
        info_path=_trial_info_path(run_dir, options),
    )
    # the earlier experiments' trials: the count and best so far
    for trial in load_trials(run_dir, parts[:index], spec.metric, spec.mode):
        progress.count_finished(trial)
    restoring = phase.kind == "restore"
    storage_path, storage_fs = run_dir.ray_storage()
    build = BuildOptions(
        run_dir=storage_path,
        storage_filesystem=storage_fs,
        driver_visible_devices=visible,
        callbacks=(progress, StopCallback(stop), LostNodeCallback(run_dir.events_path, log.stream)),
        cpu_fallback=options.gpu_plan.cpu_fallback,
        experiment=phase.part.dir,
        num_samples=phase.part.trials,
        start_index=phase.part.start_index,
        warm_start_points=_first_points(phase, options.warm_start),
        info_path=_trial_info_path(run_dir, options),
        working_dir=_working_dir(options),
    )
    if restoring:
        log.print(f"Resuming {phase.part.dir}/ (finished trials kept, unfinished ones continue)")
        for note in _repair(run_dir, phase.part):
            log.print(f"  {note}")
        recorded = recorded_trials(run_dir, phase.part, spec)  # the scheduler's history
        unrebuilt = resume_note(spec.scheduler.type)
        if unrebuilt:
            log.print(f"  {unrebuilt}")
        restore, _ = run_dir.ray_experiment(phase.part)  # Tuner.restore reads the storage
        return run_tuner(
            spec, build, restore=restore, retry_errored=options.retry_errored, recorded=recorded
        )
    if phase.part.start_index:
        last = phase.part.start_index + phase.part.trials - 1
        log.print(
            f"Extending with {phase.part.trials} trials in {phase.part.dir}/ (indices "
            f"{phase.part.start_index}...{last}, searcher continued from {phase.continued_from}/)"
        )
    if phase.part not in parts:
        run_dir.set_parts([*parts, phase.part])
    if not phase.continued_from:
        return run_tuner(spec, build)
    with run_dir.local_experiment(phase.continued_from, write_back=False) as earlier:
        return run_tuner(spec, replace(build, continued_from=earlier))


def _trial_info_path(run_dir: RunDir, options: DriveOptions) -> Path | None:
    """Where trial processes append trial_info.jsonl (None: nowhere).

    The run directory (shared storage on a cluster), or a remote run's staging
    directory, which only this machine has: none then with a cluster, whose
    results lack the trials' node and GPU ids (seeds follow the seed rule).
    """
    return None if run_dir.is_remote and options.ray.address else run_dir.trial_info_path


def _repair(run_dir: RunDir, part: Part) -> list[str]:
    """Catch a killed experiment's snapshot up with its checkpoints (``_raycompat/repair.py``).

    A remote run's experiment is repaired in a staging copy and written back.
    """
    with run_dir.local_experiment(part) as exp_dir:
        return repair_snapshot(exp_dir, run_dir.ray_experiment(part) if run_dir.is_remote else None)


def _first_points(phase: Phase, warm_start: WarmStart | None) -> tuple[dict[str, Any], ...]:
    """Warm-start points for the run's first experiment (none for an extension)."""
    if warm_start is None or phase.part.start_index or phase.continued_from:
        return ()
    return warm_start.points


def _log_warm_start(warm_start: WarmStart | None, phases: list[Phase], log: RunLog) -> None:
    """Say what warm start does, when the first experiment starts here (not on a restore)."""
    fresh = any(p.kind == "fit" and not p.part.start_index and not p.continued_from for p in phases)
    if warm_start is None or not fresh:
        return
    for line in warm_start.announcement():
        log.print(line)


def run_trials(
    spec: SweepSpec, run_dir: RunDir, live: Mapping[str, list[Any]] | None = None
) -> list[TrialView]:
    """The trials of every experiment of the run (what results.json is collected from).

    ``live``: Trial objects of experiments run by this process (Ray's own, as the
    ResultGrid has them); the others are read from their last snapshot.
    """
    live = live or {}
    trials: list[TrialView] = []
    for part in run_dir.parts():
        if part.dir in live:
            trials.extend(trial_view(t) for t in live[part.dir])
        else:
            trials.extend(load_trials(run_dir, [part], spec.metric, spec.mode))
    return trials


def _apply_gpu_plan(options: DriveOptions, log: RunLog) -> str | None:
    for warning in options.gpu_plan.warnings:
        log.print(f"warning: {warning}")
    if options.ray.address or ray_running():
        # Joining a cluster (or a Ray this process already started): its GPUs are
        # its own, and this process's environment is left as it is.
        if options.gpus_flag:
            log.print(
                f"note: --gpus {options.gpus_flag} ignored: with --address the GPUs are "
                "the cluster's"
            )
        return None
    env = gpu_env(options.gpu_plan)
    os.environ.update(env)
    return env["CUDA_VISIBLE_DEVICES"]
