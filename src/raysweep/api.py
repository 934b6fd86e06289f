"""The orchestrator: config -> spec -> run directory -> Ray Tune -> results -> report."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from raysweep.config.load import load_config_file, parse_spec, spec_to_json
from raysweep.config.schema import SweepSpec
from raysweep.errors import ConfigError, ResumeError, RunDirExistsError
from raysweep.jsonio import read_json
from raysweep.runner.session import REPORT_TXT, SPEC_FILE, USAGE_FILE

__all__ = ["REPORT_TXT", "SPEC_FILE", "USAGE_FILE", "RunOptions", "resume_sweep", "run_sweep"]


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
    resume: bool = False  # sweep run --resume: continue the run of the same name if it exists
    retry_errored: bool = False  # on resume, rerun errored trials from their last checkpoint


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
    """Fail before anything starts when the trainable, its args, metric or GPUs are wrong."""
    from raysweep.trainables.checks import check_trainable as check

    check(spec)


def run_sweep(options: RunOptions, out: IO[str] = sys.stdout) -> int:
    """Run a new sweep (or, with ``resume``, continue the run of the same name).

    Returns the exit code: 0 ok, 1 failed, 130 interrupted.
    """
    from raysweep.runner.lock import check_unlocked
    from raysweep.runner.resume import Phase
    from raysweep.runner.session import drive

    spec = load_run_spec(options)
    run_dir = (options.storage / spec.name).resolve()
    if options.resume and (run_dir / SPEC_FILE).is_file():
        return resume_sweep(run_dir, options, out, config=spec)
    if run_dir.exists():
        check_unlocked(run_dir)
        raise RunDirExistsError(
            f"run directory {run_dir} already exists; choose another --name, "
            f"or continue it with: sweep resume {run_dir}"
        )
    gpu_plan = plan_gpus(spec, options)
    if options.dry_run:
        print(_dry_run_text(spec, run_dir, gpu_plan), file=out)
        return 0
    try:
        run_dir.mkdir(parents=True)
    except FileExistsError:  # another `sweep run` created it a moment ago
        check_unlocked(run_dir)
        raise RunDirExistsError(
            f"run directory {run_dir} was just created by another process"
        ) from None
    first = Phase("fit", _first_part(spec))
    return drive(spec, run_dir, [first], options, gpu_plan, out, record=spec)


def _first_part(spec: SweepSpec) -> Any:
    from raysweep.runner.experiments import TUNE_DIR, Part

    return Part(TUNE_DIR, spec.total_trials, 0)


def plan_gpus(spec: SweepSpec, options: RunOptions) -> Any:
    """Resolve --gpus against the NVML inventory (GPUError / ConfigError when impossible).

    ``gpus_per_trial: "auto"`` (not yet probed) needs local GPUs, so not ``--address``.
    """
    from raysweep.gpu.allocation import parse_gpus_flag, resolve_gpus
    from raysweep.gpu.inventory import read_inventory

    resources = spec.resources
    if resources.gpus_auto and options.address:
        raise ConfigError(
            "resources.gpus_per_trial=auto: the packing is probed on this machine's GPUs, "
            "which --address does not use; set resources.gpus_per_trial to a number "
            "(e.g. 0.25) to run on a cluster"
        )
    selection = parse_gpus_flag(options.gpus)
    needs_inventory = selection.mode != "none" and (
        selection.mode != "unset" or resources.gpus_auto or resources.gpus_per_trial > 0
    )
    if options.address or not needs_inventory:
        from raysweep.gpu.inventory import Inventory

        inventory = Inventory(gpus=(), driver_version=None, cuda_version=None, error=None)
        if options.address:
            return resolve_gpus(parse_gpus_flag("none"), inventory, 0.0, allow_cpu=True)
        return resolve_gpus(selection, inventory, resources.gpus_requested, options.allow_cpu)
    return resolve_gpus(selection, read_inventory(), resources.gpus_requested, options.allow_cpu)


def _dry_run_text(spec: SweepSpec, run_dir: Path, gpu_plan: Any) -> str:
    import json

    lines = [
        f"dry run: would write {run_dir}",
        f"trials: {spec.total_trials} ({spec.search.algorithm}, {spec.scheduler.type})",
        f"gpus: {list(gpu_plan.physical_ids) or 'none'}",
    ]
    if spec.resources.gpus_auto and gpu_plan.cpu_fallback:
        lines.append("gpus per trial: auto, but no GPU: trials run on CPUs (--allow-cpu)")
    elif not spec.resources.gpus_auto:
        lines.append(_per_trial_text(spec, gpu_plan.cpu_fallback))
    if spec.resources.gpus_auto and not gpu_plan.cpu_fallback:
        from raysweep.runner.autogpu import PROBE_SECONDS, probe_iterations

        lines.append(
            "gpus per trial: auto, probed at run time (one trial alone on a whole GPU for up "
            f"to {probe_iterations(spec)} iteration(s) or {PROBE_SECONDS:.0f} s; its peak "
            "memory decides how many trials share a GPU)"
        )
    return "\n".join([*lines, json.dumps(spec_to_json(spec), indent=2)])


def _per_trial_text(spec: SweepSpec, cpu_fallback: bool) -> str:
    from raysweep.trainables.builtins import planned_replicas

    gpus = 0.0 if cpu_fallback else spec.resources.gpus_per_trial
    text = f"per trial: {spec.resources.cpus_per_trial} CPU(s), {gpus:g} GPU(s)"
    if cpu_fallback and spec.resources.gpus_per_trial > 0:
        text += " (no GPU: --allow-cpu runs the trials on CPUs)"
    replicas = planned_replicas(spec.trainable, spec.trainable_args, gpus)
    if replicas > 1:
        text += f", {replicas} data-parallel replicas ({'one per GPU' if gpus else 'CPU'})"
    return text


def read_spec(run_dir: Path) -> SweepSpec:
    """The spec a run was started with (ResumeError when the directory has none)."""
    path = run_dir / SPEC_FILE
    if not path.is_file():
        raise ResumeError(f"{run_dir} is not a raysweep run directory (no {SPEC_FILE})")
    try:
        return SweepSpec.model_validate(read_json(path)["spec"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ResumeError(
            f"{path} is unreadable or corrupt ({type(exc).__name__}: {exc})"
        ) from None


def resume_sweep(
    run_dir: Path, options: RunOptions, out: IO[str] = sys.stdout, config: SweepSpec | None = None
) -> int:
    """Continue an interrupted or crashed run, or extend a finished one (``num_samples``).

    ``config``: the spec from ``sweep run --config F --resume``; it must match
    spec.json except for the allowed overrides. Every check runs before
    anything is written; returns 0/1/130 like run_sweep.
    """
    from raysweep.runner.autogpu import recorded_spec
    from raysweep.runner.lock import check_unlocked
    from raysweep.runner.resume import plan_phases, recorded_parts, resumed_spec
    from raysweep.runner.session import drive
    from raysweep.runner.state import read_state

    run_dir = run_dir.resolve()
    stored = read_spec(run_dir)
    spec = resumed_spec(run_dir, stored, config, options.num_samples, options.max_concurrent)
    check_trainable(spec)
    check_unlocked(run_dir)
    state = read_state(run_dir)
    phases = plan_phases(
        run_dir, recorded_parts(run_dir, state, stored), spec, options.retry_errored
    )
    if not phases and state.get("status") == "completed":
        print(f"{run_dir}: complete ({spec.total_trials} trials); nothing to resume", file=out)
        return 0
    # "auto" keeps the packing the run's probe chose (drive() applies it again, and logs it)
    gpu_plan = plan_gpus(recorded_spec(spec, run_dir), options)
    if options.dry_run:
        steps = [f"{p.kind} {p.part.dir}/ ({p.part.trials} trials)" for p in phases]
        plan = "; ".join(steps) or "write outputs"
        print(f"dry run: would resume {run_dir}: {plan}", file=out)
        return 0
    record = None
    if spec.search.num_samples != stored.search.num_samples:  # spec.json keeps max_concurrent
        record = resumed_spec(run_dir, stored, None, spec.search.num_samples, None)
    return drive(
        spec,
        run_dir,
        phases,
        options,
        gpu_plan,
        out,
        record=record,
        retry_errored=options.retry_errored,
    )


def rerun_trial(run_dir: Path, trial_id: str | None, out: IO[str] = sys.stdout) -> int:
    """Rerun one recorded trial and compare its metric with the record (0 match, 1 not)."""
    from raysweep.rerun import rerun_trial as rerun

    return rerun(run_dir, trial_id, out)
