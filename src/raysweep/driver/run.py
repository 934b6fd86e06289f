"""Drive a run directory: lock, log, state, signals, Ray, one Tuner per phase, outputs.

``sweep run`` and ``sweep resume`` both end up here with a list of phases
(see runner/resume.py); api.py only decides which.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from raysweep.config.load import spec_hash, spec_to_json
from raysweep.config.schema import SweepSpec
from raysweep.jsonio import read_json, write_json_atomic, write_text_atomic
from raysweep.runlog import RunLog
from raysweep.runner import state
from raysweep.runner.experiments import Part, load_trials
from raysweep.runner.lock import RunLock
from raysweep.runner.resume import Phase

if TYPE_CHECKING:
    from raysweep.api import RunOptions
    from raysweep.runner.signals import GracefulStop

SPEC_FILE = "spec.json"
REPORT_TXT = "report.txt"
USAGE_FILE = "resource_usage.json"
INTERRUPTED = 130


def write_spec(run_dir: Path, spec: SweepSpec) -> None:
    """spec.json: the resolved spec and its sha256."""
    write_json_atomic(run_dir / SPEC_FILE, {"sha256": spec_hash(spec), "spec": spec_to_json(spec)})


def drive(
    spec: SweepSpec,
    run_dir: Path,
    phases: list[Phase],
    options: RunOptions,
    gpu_plan: Any,
    out: IO[str],
    *,
    record: SweepSpec | None = None,
    retry_errored: bool = False,
) -> int:
    """Run ``phases`` under the run's lock; returns 0 ok, 1 failed, 130 interrupted.

    ``record``: a spec to (re)write to spec.json once the lock is held.
    """
    from raysweep.runner.signals import GracefulStop

    with RunLock(run_dir) as lock, RunLog(run_dir, out) as log, GracefulStop() as stop:
        if lock.stale_pid:
            log.print(f"warning: took over a stale lock left by dead pid {lock.stale_pid}")
        try:
            if record is not None:
                write_spec(run_dir, record)
            state.mark(run_dir, "running")
            if record is not None:  # a new run, or an extension that changed spec.json
                from raysweep.repro.manifest import write_manifest
                from raysweep.runner.autogpu import read_packing

                write_manifest(run_dir, record, gpu_plan, read_packing(run_dir))
            started = time.monotonic()
            # Ray starts even with no phase left: Ray's Trial objects need it to find files.
            live = _run_phases(spec, run_dir, phases, options, gpu_plan, log, stop, retry_errored)
            if stop.received:  # results.json stays what the last finished invocation wrote
                return _interrupted(run_dir, log, stop)
            result = collect_run(spec, run_dir, live)
            result.wall_time_s = time.monotonic() - started
            write_outputs(result, run_dir)
        except KeyboardInterrupt:
            return _interrupted(run_dir, log, stop)
        except BaseException as exc:
            state.mark(run_dir, "failed", error=f"{type(exc).__name__}: {exc}")
            raise
        code = 0 if result.succeeded else 1
        state.mark(run_dir, "completed" if code == 0 else "failed", exit_code=code)
        from raysweep.report.text import format_summary

        log.print("")
        log.print(format_summary(result))
        log.print(f"Results: {run_dir}")
        return code


def _pause_notice(spec: SweepSpec) -> str | None:
    """Where the scheduler pauses trials, and what a paused trial resumes from."""
    from raysweep.runner.build import pause_points
    from raysweep.trainables.builtins import BUILTIN_TRAINABLES

    rungs = sorted(pause_points(spec))
    if not rungs:
        return None
    where = f"{spec.scheduler.type} pauses trials at iterations {', '.join(map(str, rungs))}"
    if spec.trainable in BUILTIN_TRAINABLES:
        return f"{where}; {spec.trainable} checkpoints there and resumes where it stopped"
    return (
        f"{where}; a paused trial resumes from the checkpoint it reported there "
        "(raysweep.trial_context().checkpoint_due(iteration)), else from iteration 1"
    )


def hyperband_concurrency_warning(spec: SweepSpec) -> str | None:
    """A warning when ``max_concurrent`` keeps Hyperband's brackets from filling."""
    from raysweep.config.schema import HyperbandScheduler
    from raysweep.schedulers.hyperband import hyperband_largest_bracket

    limit = spec.search.max_concurrent
    if not isinstance(spec.scheduler, HyperbandScheduler) or limit is None:
        return None
    bracket = min(hyperband_largest_bracket(spec.scheduler), spec.search.num_samples)
    if limit >= bracket:
        return None
    return (
        f"warning: search.max_concurrent {limit} is below hyperband's largest bracket "
        f"({bracket} trials): its paused trials hold the limit, the bracket never fills and "
        "its trials are stopped late or not at all; leave max_concurrent unset (raysweep "
        "then admits every trial, and those beyond the free slots wait in the queue)"
    )


def hyperband_searcher_warning(spec: SweepSpec) -> str | None:
    """A warning when a model-based searcher gets every Hyperband trial before any result."""
    limit = spec.search.max_concurrent
    if spec.scheduler.type != "hyperband" or spec.search.algorithm not in ("optuna", "hyperopt"):
        return None
    if limit is not None and limit < spec.search.num_samples:
        return None
    return (
        f"warning: hyperband admits all {spec.search.num_samples} trials at once, so "
        f"{spec.search.algorithm} suggests every configuration before any result and "
        "learns nothing from them (random search in effect); use the asha scheduler "
        f"to let {spec.search.algorithm} learn from the trials that finish"
    )


def _interrupted(run_dir: Path, log: RunLog, stop: GracefulStop) -> int:
    state.mark(run_dir, "interrupted", exit_code=INTERRUPTED, signal=stop.signal_name)
    log.print(
        f"interrupted by {stop.signal_name}: state saved; continue with: sweep resume {run_dir}"
    )
    return INTERRUPTED


def _run_phases(
    spec: SweepSpec,
    run_dir: Path,
    phases: list[Phase],
    options: RunOptions,
    gpu_plan: Any,
    log: RunLog,
    stop: GracefulStop,
    retry_errored: bool,
) -> dict[str, list[Any]]:
    """Start Ray and run the phases; returns the Trial objects of each experiment run here.

    A spec with ``gpus_per_trial: "auto"`` is resolved first (runner/autogpu.py).
    """
    from raysweep.gpu.monitor import ResourceMonitor
    from raysweep.repro.determinism import DETERMINISM_ENV
    from raysweep.runner.autogpu import resolve_gpus_auto
    from raysweep.runner.execute import RayOptions, start_ray

    visible = _apply_gpu_plan(gpu_plan, options, log)
    log.print(
        f"Sweep {spec.name!r}: {spec.total_trials} trials, {spec.search.algorithm} search, "
        f"{spec.scheduler.type} scheduler, seed {spec.seed} -> {run_dir}"
    )
    notices = (
        _pause_notice(spec),
        hyperband_concurrency_warning(spec),
        hyperband_searcher_warning(spec),
    )
    for notice in notices:
        if notice:
            log.print(notice)
    cluster = start_ray(
        RayOptions(
            address=options.address,
            num_gpus=None if options.address else gpu_plan.num_gpus,
            include_dashboard=options.dashboard,
            dashboard_host=options.dashboard_host,
            dashboard_port=options.dashboard_port,
            env_vars=dict(DETERMINISM_ENV) if spec.reproducibility.deterministic else {},
        )
    )
    stop.install()  # ray.init replaced the SIGTERM handler
    live: dict[str, list[Any]] = {}
    with ResourceMonitor(run_dir / USAGE_FILE, gpu_ids=gpu_plan.physical_ids):
        resolved = resolve_gpus_auto(spec, run_dir, gpu_plan, visible, cluster, log, stop)
        for phase in phases:
            if stop.received or resolved is None:
                break
            trials = _run_phase(
                resolved, run_dir, phase, gpu_plan, visible, log, stop, retry_errored
            )
            live[phase.part.dir] = trials
    return live


def _run_phase(
    spec: SweepSpec,
    run_dir: Path,
    phase: Phase,
    gpu_plan: Any,
    visible: str | None,
    log: RunLog,
    stop: GracefulStop,
    retry_errored: bool,
) -> list[Any]:
    from raysweep.runner.build import BuildOptions, build_tuner_parts
    from raysweep.runner.execute import new_tuner, restored_tuner, run_fit
    from raysweep.runner.progress import ProgressCallback
    from raysweep.runner.signals import StopCallback
    from raysweep.runner.tuning import apply_run_env_defaults

    apply_run_env_defaults(spec.total_trials)  # read by Ray Tune when fit() starts
    parts = _parts(run_dir)
    earlier = parts[: next((i for i, p in enumerate(parts) if p.dir == phase.part.dir), len(parts))]
    done, best = _earlier_progress(run_dir, earlier, spec)
    progress = ProgressCallback(
        run_dir, spec.metric, spec.mode, spec.total_trials, log.stream, done, best
    )
    restoring = phase.kind == "restore"
    tuner_parts = build_tuner_parts(
        spec,
        BuildOptions(
            run_dir=run_dir,
            driver_visible_devices=visible,
            callbacks=(progress, StopCallback(stop)),
            cpu_fallback=gpu_plan.cpu_fallback,
            experiment=phase.part.dir,
            num_samples=phase.part.trials,
            start_index=phase.part.start_index,
            warm_start=None if restoring or not phase.warm_start else run_dir / phase.warm_start,
        ),
    )
    exp_dir = run_dir / phase.part.dir
    if restoring:
        from raysweep.runner.repair import repair_snapshot

        log.print(f"Resuming {exp_dir.name}/ (finished trials kept, unfinished ones continue)")
        for note in repair_snapshot(exp_dir):
            log.print(f"  {note}")
        tuner = restored_tuner(str(exp_dir), tuner_parts, retry_errored)
    else:
        if phase.part.start_index:
            log.print(
                f"Extending with {phase.part.trials} trials in {exp_dir.name}/ "
                f"(indices {phase.part.start_index}..."
                f"{phase.part.start_index + phase.part.trials - 1}, searcher continued "
                f"from {phase.warm_start}/)"
            )
        tuner = new_tuner(tuner_parts)
        if phase.part not in parts:
            state.update(run_dir, experiments=[p.to_json() for p in [*parts, phase.part]])
    stop.in_fit = True
    try:
        grid = run_fit(tuner)
    finally:
        stop.in_fit = False
    return list(grid._experiment_analysis.trials)


def _parts(run_dir: Path) -> list[Part]:
    return [Part.from_json(p) for p in state.experiments(state.read_state(run_dir))]


def _earlier_progress(
    run_dir: Path, earlier: list[Part], spec: SweepSpec
) -> tuple[int, float | None]:
    """Finished trials and best metric of the experiments before the current one."""
    if not earlier:
        return 0, None
    best: float | None = None
    trials = load_trials(run_dir, earlier, spec.metric, spec.mode)
    for trial in trials:
        value = (trial.metric_analysis or {}).get(spec.metric, {}).get(spec.mode)
        valid = isinstance(value, int | float) and not math.isnan(value)
        if valid and (best is None or (value < best if spec.mode == "min" else value > best)):
            best = float(value)
    return len(trials), best


def collect_run(spec: SweepSpec, run_dir: Path, live: dict[str, list[Any]] | None = None) -> Any:
    """SweepResult over every experiment of the run (results.json's content).

    ``live``: Trial objects of experiments run by this process (Ray's own, as the
    ResultGrid has them); the others are read from their last snapshot.
    """
    from raysweep.report.collect import collect
    from raysweep.runner.progress import EVENTS_FILE

    live = live or {}
    trials: list[Any] = []
    for part in _parts(run_dir):
        if part.dir in live:
            trials.extend(live[part.dir])
        else:
            trials.extend(load_trials(run_dir, [part], spec.metric, spec.mode))
    return collect(
        trials,
        spec.name,
        spec.metric,
        spec.mode,
        spec.seed,
        run_dir / EVENTS_FILE,
        max_iterations=spec.iteration_budget,
    )


def _apply_gpu_plan(plan: Any, options: RunOptions, log: RunLog) -> str | None:
    from raysweep.gpu.allocation import gpu_env

    for warning in plan.warnings:
        log.print(f"warning: {warning}")
    if options.address or _ray_running():
        # Joining a cluster (or a Ray this process already started): its GPUs are
        # its own, and this process's environment is left as it is.
        if options.gpus:
            log.print(
                f"note: --gpus {options.gpus} ignored: with --address the GPUs are the cluster's"
            )
        return None
    env = gpu_env(plan)
    os.environ.update(env)
    return env["CUDA_VISIBLE_DEVICES"]


def _ray_running() -> bool:
    import ray

    return bool(ray.is_initialized())


def write_outputs(result: Any, run_dir: Path) -> None:
    """results.json/csv, best_config.json and report.txt."""
    from raysweep.report.export import write_results
    from raysweep.report.text import format_report

    write_results(result, run_dir)
    sections = []
    usage_path = run_dir / USAGE_FILE
    if usage_path.is_file():
        from raysweep.gpu.usage import format_usage_summary

        sections.append(format_usage_summary(read_json(usage_path).get("summary", {})))
    write_text_atomic(run_dir / REPORT_TXT, format_report(result, sections))
