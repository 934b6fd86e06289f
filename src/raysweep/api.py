"""The orchestrator: config -> spec -> Ray Tune -> results -> report. Nothing else connects stages."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from raysweep.config.load import load_config_file, parse_spec, spec_hash, spec_to_json
from raysweep.config.schema import SweepSpec
from raysweep.errors import ConfigError, RunDirExistsError, SweepError
from raysweep.jsonio import read_json, write_json_atomic, write_text_atomic
from raysweep.runlog import RunLog

SPEC_FILE = "spec.json"
REPORT_TXT = "report.txt"
USAGE_FILE = "resource_usage.json"


@dataclass(frozen=True)
class RunOptions:
    """Command-line choices for ``sweep run`` that sit beside the config."""

    config: Path
    storage: Path = Path("runs")
    name: str | None = None
    seed: int | None = None
    num_samples: int | None = None
    max_concurrent: int | None = None
    gpus: str | None = None
    allow_cpu: bool = False
    address: str | None = None
    dashboard: bool = False
    dashboard_host: str = "127.0.0.1"
    dashboard_port: int = 8265
    dry_run: bool = False


def load_run_spec(options: RunOptions) -> SweepSpec:
    """Read sweep.json and apply the command-line overrides; ConfigError on any problem."""
    from raysweep.config.load import apply_overrides

    data = load_config_file(options.config)
    overrides = {
        "name": options.name,
        "seed": options.seed,
        "search.num_samples": options.num_samples,
        "search.max_concurrent": options.max_concurrent,
    }
    spec = parse_spec(apply_overrides(data, overrides), source=str(options.config))
    check_trainable(spec)
    return spec


def check_trainable(spec: SweepSpec) -> None:
    """Fail before anything starts when the trainable, its args or its metric are wrong."""
    from raysweep.trainables.builtins import ALLOWED_ARGS, BUILTIN_TRAINABLES, reported_metrics
    from raysweep.trainables.user import load_user_trainable

    if spec.trainable not in BUILTIN_TRAINABLES:
        load_user_trainable(spec.trainable)
        return
    allowed = ALLOWED_ARGS[spec.trainable]
    for key in spec.trainable_args:
        if key not in allowed:
            raise ConfigError(
                f"trainable_args.{key}: unknown argument for trainable {spec.trainable!r}; "
                f"valid: {', '.join(sorted(allowed))}"
            )
    metrics = reported_metrics(spec.trainable, spec.trainable_args)
    if spec.metric not in metrics:
        raise ConfigError(
            f"metric: trainable {spec.trainable!r} does not report {spec.metric!r}; "
            f"it reports: {', '.join(metrics)}"
        )


def run_sweep(options: RunOptions, out: IO[str] = sys.stdout) -> int:
    """Run a new sweep; returns the exit code (0 ok, 1 failed, 130 interrupted)."""
    spec = load_run_spec(options)
    run_dir = (options.storage / spec.name).resolve()
    if run_dir.exists():
        raise RunDirExistsError(
            f"run directory {run_dir} already exists; choose another --name, "
            f"or continue it with: sweep resume {run_dir}"
        )
    gpu_plan = plan_gpus(spec, options)
    if options.dry_run:
        print(_dry_run_text(spec, run_dir, gpu_plan), file=out)
        return 0
    run_dir.mkdir(parents=True)
    write_json_atomic(run_dir / SPEC_FILE, {"sha256": spec_hash(spec), "spec": spec_to_json(spec)})
    return _drive(spec, run_dir, options, gpu_plan, out)


def _drive(spec: SweepSpec, run_dir: Path, options: RunOptions, gpu_plan: Any, out: IO[str]) -> int:
    from raysweep.runner import state
    from raysweep.runner.lock import RunLock

    with RunLock(run_dir) as lock, RunLog(run_dir, out) as log:
        if lock.stale_pid:
            log.print(f"warning: took over a stale lock left by dead pid {lock.stale_pid}")
        state.mark(run_dir, "running")
        from raysweep.repro.manifest import write_manifest

        write_manifest(run_dir, spec, gpu_plan)
        started = time.monotonic()
        try:
            result = _execute(spec, run_dir, options, gpu_plan, log)
        except BaseException as exc:
            state.mark(run_dir, "failed", error=f"{type(exc).__name__}: {exc}")
            raise
        result.wall_time_s = time.monotonic() - started
        _write_outputs(result, run_dir)
        code = 0 if result.succeeded else 1
        state.mark(run_dir, "completed" if code == 0 else "failed", exit_code=code)
        from raysweep.report.text import format_summary

        log.print("")
        log.print(format_summary(result))
        log.print(f"Results: {run_dir}")
        return code


def _execute(spec: SweepSpec, run_dir: Path, options: RunOptions, gpu_plan: Any, log: RunLog) -> Any:
    from raysweep.report.collect import collect
    from raysweep.repro.determinism import DETERMINISM_ENV
    from raysweep.runner.build import BuildOptions, build_tuner_parts
    from raysweep.runner.execute import RayOptions, fit, start_ray
    from raysweep.runner.progress import EVENTS_FILE, ProgressCallback

    visible = _apply_gpu_plan(gpu_plan, options, log)
    log.print(
        f"Sweep {spec.name!r}: {spec.total_trials} trials, {spec.search.algorithm} search, "
        f"{spec.scheduler.type} scheduler, seed {spec.seed} -> {run_dir}"
    )
    start_ray(
        RayOptions(
            address=options.address,
            num_gpus=None if options.address else gpu_plan.num_gpus,
            include_dashboard=options.dashboard,
            dashboard_host=options.dashboard_host,
            dashboard_port=options.dashboard_port,
            env_vars=dict(DETERMINISM_ENV) if spec.reproducibility.deterministic else {},
        )
    )
    progress = ProgressCallback(run_dir, spec.metric, spec.mode, spec.total_trials, log.stream)
    parts = build_tuner_parts(
        spec,
        BuildOptions(
            run_dir=run_dir,
            driver_visible_devices=visible,
            callbacks=(progress,),
            cpu_fallback=gpu_plan.cpu_fallback,
        ),
    )
    from raysweep.gpu.monitor import ResourceMonitor

    with ResourceMonitor(run_dir / USAGE_FILE, gpu_ids=gpu_plan.physical_ids):
        grid = fit(parts)
    trials = grid._experiment_analysis.trials
    return collect(trials, spec.name, spec.metric, spec.mode, spec.seed, run_dir / EVENTS_FILE)


def plan_gpus(spec: SweepSpec, options: RunOptions) -> Any:
    """Resolve --gpus against the NVML inventory (GPUError / ConfigError when impossible)."""
    from raysweep.gpu.allocation import parse_gpus_flag, resolve_gpus
    from raysweep.gpu.inventory import read_inventory

    selection = parse_gpus_flag(options.gpus)
    needs_inventory = selection.mode != "none" and (
        selection.mode != "unset" or spec.resources.gpus_per_trial > 0
    )
    if options.address or not needs_inventory:
        from raysweep.gpu.inventory import Inventory

        inventory = Inventory(gpus=(), driver_version=None, cuda_version=None, error=None)
        if options.address:
            return resolve_gpus(
                parse_gpus_flag("none"), inventory, 0.0, allow_cpu=True
            )
        return resolve_gpus(selection, inventory, spec.resources.gpus_per_trial, options.allow_cpu)
    return resolve_gpus(
        selection, read_inventory(), spec.resources.gpus_per_trial, options.allow_cpu
    )


def _apply_gpu_plan(plan: Any, options: RunOptions, log: RunLog) -> str | None:
    from raysweep.gpu.allocation import gpu_env

    for warning in plan.warnings:
        log.print(f"warning: {warning}")
    if options.address:
        if options.gpus:
            log.print(f"note: --gpus {options.gpus} ignored: with --address the GPUs are the cluster's")
        return None
    env = gpu_env(plan)
    os.environ.update(env)
    return env["CUDA_VISIBLE_DEVICES"]


def _write_outputs(result: Any, run_dir: Path) -> None:
    from raysweep.report.export import write_results
    from raysweep.report.text import format_report

    write_results(result, run_dir)
    sections = []
    usage_path = run_dir / USAGE_FILE
    if usage_path.is_file():
        from raysweep.gpu.usage import format_usage_summary

        sections.append(format_usage_summary(read_json(usage_path).get("summary", {})))
    write_text_atomic(run_dir / REPORT_TXT, format_report(result, sections))


def _dry_run_text(spec: SweepSpec, run_dir: Path, gpu_plan: Any) -> str:
    import json

    return "\n".join(
        [
            f"dry run: would write {run_dir}",
            f"trials: {spec.total_trials} ({spec.search.algorithm}, {spec.scheduler.type})",
            f"gpus: {list(gpu_plan.physical_ids) or 'none'}",
            json.dumps(spec_to_json(spec), indent=2),
        ]
    )


def read_spec(run_dir: Path) -> SweepSpec:
    """The spec a run was started with."""
    path = run_dir / SPEC_FILE
    if not path.is_file():
        raise SweepError(f"{run_dir} is not a raysweep run directory (no {SPEC_FILE})")
    return SweepSpec.model_validate(read_json(path)["spec"])


def resume_sweep(run_dir: Path, options: RunOptions, out: IO[str] = sys.stdout) -> int:
    """Continue an interrupted or crashed run (not supported yet)."""
    raise ConfigError("sweep resume is not supported yet")


def rerun_trial(run_dir: Path, trial_id: str | None, out: IO[str] = sys.stdout) -> int:
    """Rerun one recorded trial and compare its metric with the record (not supported yet)."""
    raise ConfigError("sweep repro is not supported yet")
