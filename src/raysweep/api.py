"""The orchestrator: the one place where the stages connect.

    sweep.json --load/validate--> SweepSpec --checks--> run directory (RunDir)
        --GPU plan--> Engine.run / Engine.resume (engines.registry, by ``execution``)
        --collect--> SweepResult --write--> results, best config, report

``RunOptions`` is the command line's object; nothing below this module sees
it: an engine gets typed values (``EngineOptions``, ``NewRun``). Engines are
imported where a run starts, and the Ray engine imports Ray only then, never
for ``sweep validate`` or the read-only commands.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from raysweep.config.load import (
    absolute_data_paths,
    apply_overrides,
    load_config_file,
    parse_spec,
    spec_to_json,
)
from raysweep.config.schema import SweepSpec
from raysweep.engines.base import EngineOptions, NewRun, ResumePlan
from raysweep.engines.environment import connect_timeout_s, in_ray_job
from raysweep.engines.registry import engine_for
from raysweep.errors import ConfigError, RunDirExistsError
from raysweep.gpu.allocation import GPUPlan
from raysweep.gpu.planning import PROBE_SECONDS, plan_gpus, probe_iterations
from raysweep.run.lock import check_unlocked
from raysweep.run.resume_spec import ResumeConfig, resumed_spec
from raysweep.run.signals import GracefulStop
from raysweep.rundir import RunDir
from raysweep.search.checks import check_search
from raysweep.search.points import WarmStart, load_warm_start
from raysweep.storage import is_uri
from raysweep.trainables.builtins import planned_replicas
from raysweep.trainables.checks import check_trainable

__all__ = [
    "RunOptions",
    "load_run_spec",
    "rerun_trial",
    "resume_sweep",
    "run_sweep",
    "validation_notes",
]


@dataclass(frozen=True)
class RunOptions:
    """Command-line choices for ``sweep run``/``resume`` that sit beside the config."""

    config: Path | None = None  # sweep.json (sweep run); None for sweep resume
    storage: str | os.PathLike[str] = "runs"  # a directory, or a URI (s3://bucket/runs)
    name: str | None = None
    seed: int | None = None
    execution: str | None = None  # --execution: overrides the config's "execution"
    num_samples: int | None = None
    max_concurrent: int | None = None
    gpus: str | None = None
    allow_cpu: bool = False
    address: str | None = None
    connect_timeout: float | None = None  # --connect-timeout; None: RAYSWEEP_CONNECT_TIMEOUT_S
    dashboard: bool | None = None  # --dashboard / --no-dashboard; None: on where Ray can
    dashboard_host: str = "127.0.0.1"
    dashboard_port: int | None = None  # None: 8265 or the next free one (Ray's own search)
    working_dir: Path | None = None  # shipped to a cluster's nodes (--working-dir)
    dry_run: bool = False
    resume: bool = False  # sweep run --resume: continue the run of the same name if it exists
    retry_errored: bool = False  # on resume, rerun errored trials from their last checkpoint
    warm_start: Path | None = None  # best-configs export whose configurations run first

    def engine_options(self) -> EngineOptions:
        """The flags every engine gets (typed; the config path stays here)."""
        return EngineOptions(
            storage=self.storage,
            gpus=self.gpus,
            allow_cpu=self.allow_cpu,
            address=self.cluster_address(),
            connect_timeout_s=connect_timeout_s(self.connect_timeout),
            dashboard=self.dashboard,
            dashboard_host=self.dashboard_host,
            dashboard_port=self.dashboard_port,
            working_dir=self.working_dir,
            dry_run=self.dry_run,
            retry_errored=self.retry_errored,
            warm_start=self.warm_start,
        )

    def cluster_address(self) -> str | None:
        """The Ray cluster to join: ``--address``, else ``RAY_ADDRESS`` (set inside a Ray Job)."""
        return self.address or os.environ.get("RAY_ADDRESS") or None


def load_run_spec(options: RunOptions) -> SweepSpec:
    """Read sweep.json and apply the command-line overrides; ConfigError on any problem."""
    spec = parse_spec(_run_data(options), source=str(options.config))
    check_trainable(spec)
    check_search(spec)
    engine_for(spec).check_options(spec, options.engine_options())
    return spec


def validation_notes(spec: SweepSpec) -> list[str]:
    """What ``sweep validate`` says beside the spec: the trainable's data summary, its
    warnings, and what the same seed repeats (what ``sweep run`` prints at its start)."""
    from raysweep.run.opening import opening_lines
    from raysweep.trainables.describe import describe_data

    return opening_lines(spec, describe_data(spec))


def _config_as_before(options: RunOptions) -> SweepSpec | None:
    """The config resolved as an older raysweep resolved it (``new_defaults=False``):
    what a run directory made before today's defaults recorded for it (None: invalid so)."""
    try:
        return parse_spec(_run_data(options), source=str(options.config), new_defaults=False)
    except ConfigError:
        return None


def _run_data(options: RunOptions) -> dict[str, Any]:
    """sweep.json's data with the command-line overrides and data paths made absolute."""
    if options.config is None:
        raise ValueError("RunOptions.config is required to load a sweep.json")
    overrides = {
        "name": options.name,
        "seed": options.seed,
        "execution": options.execution,
        "search.num_samples": options.num_samples,
        "search.max_concurrent": options.max_concurrent,
    }
    data = apply_overrides(load_config_file(options.config), overrides)
    return absolute_data_paths(data, options.config.resolve().parent)


def run_sweep(
    options: RunOptions, out: IO[str] = sys.stdout, stop: GracefulStop | None = None
) -> int:
    """Run a new sweep (or, with ``resume``, continue the run of the same name).

    Returns the exit code: 0 ok, 1 failed, 130 interrupted. A signal at any
    moment ends it as ``interrupted`` once its run directory exists.
    """
    with stop or GracefulStop() as owned:
        spec = load_run_spec(options)
        remote = is_uri(options.storage)
        if in_ray_job() and not remote and not Path(options.storage).is_absolute():
            raise ConfigError(
                f"--storage {options.storage}: inside a Ray Job the working directory is a "
                "temporary copy that Ray removes; give an absolute path on storage that "
                "outlives the job (e.g. --storage /shared/runs or s3://bucket/runs)"
            )
        run_dir = RunDir.under(options.storage, spec.name)
        if not options.dry_run:
            run_dir.check_storage()  # remote storage: reachable and writable, before anything
        if options.resume and run_dir.has_spec():
            config = ResumeConfig(spec, _config_as_before(options))
            return resume_sweep(str(run_dir), options, out, config=config, stop=owned)
        if run_dir.exists():
            check_unlocked(run_dir.lock_path, str(run_dir))
            raise RunDirExistsError(
                f"run directory {run_dir} already exists; choose another --name, "
                f"or continue it with: sweep resume {run_dir}"
            )
        gpu_plan = plan_gpus(spec, options.gpus, options.allow_cpu, bool(options.cluster_address()))
        warm = load_warm_start(options.warm_start, spec) if options.warm_start else None
        if options.dry_run:
            print(_dry_run_text(spec, run_dir, gpu_plan, warm), file=out)
            return 0
        engine = engine_for(spec)
        engine.prepare(spec, run_dir, options.engine_options(), out)  # exit 2 writes nothing
        try:
            run_dir.create()
        except FileExistsError:  # another `sweep run` created it a moment ago
            check_unlocked(run_dir.lock_path, str(run_dir))
            raise RunDirExistsError(
                f"run directory {run_dir} was just created by another process"
            ) from None
        new = NewRun(gpu_plan, warm)
        return engine.run(spec, run_dir, new, options.engine_options(), out, owned)


def resume_sweep(
    run_dir: str | os.PathLike[str],
    options: RunOptions,
    out: IO[str] = sys.stdout,
    config: ResumeConfig | None = None,
    stop: GracefulStop | None = None,
) -> int:
    """Continue an interrupted or crashed run, or extend a finished one (``num_samples``).

    ``config``: the config of ``sweep run --config F --resume``; it must match
    spec.json except for the allowed overrides. Every check runs before
    anything is written; returns 0/1/130 like run_sweep.
    """
    with stop or GracefulStop() as owned:
        return _resume(RunDir(run_dir).resolved(), options, out, config, owned)


def _resume(
    run_dir: RunDir,
    options: RunOptions,
    out: IO[str],
    config: ResumeConfig | None,
    stop: GracefulStop,
) -> int:
    """resume_sweep on its run directory, inside the stop handler it holds."""
    if not options.dry_run and config is None:  # sweep run --resume checked it already
        run_dir.check_storage()  # remote storage: reachable (its error names the endpoint)
    run_dir.must_exist()
    stored = run_dir.read_spec()
    spec = resumed_spec(run_dir, stored, config, options.num_samples, options.max_concurrent)
    check_trainable(spec)
    check_search(spec)
    check_unlocked(run_dir.lock_path, str(run_dir))
    engine, engine_options = engine_for(spec), options.engine_options()
    engine.check_options(spec, engine_options)
    if options.warm_start is not None:  # either engine: the recorded points stay
        print(
            f"note: --warm-start {options.warm_start} ignored: a resumed run keeps the "
            "starting points it was started with",
            file=out,
        )
    state = run_dir.read_state()
    plan = engine.plan_resume(run_dir, stored, state, _resume_basis(run_dir, stored, spec, state),
                              engine_options)  # fmt: skip
    if not plan.steps:
        print(f"{run_dir}: complete ({spec.total_trials} trials); nothing to resume", file=out)
        return 0
    if options.dry_run:
        print(f"dry run: would resume {run_dir}: {'; '.join(plan.steps)}", file=out)
        return 0
    engine.prepare(spec, run_dir, engine_options, out)  # exit 2 changes nothing
    return engine.resume(run_dir, plan, engine_options, out, stop)


def _resume_basis(
    run_dir: RunDir, stored: SweepSpec, spec: SweepSpec, state: dict[str, Any]
) -> ResumePlan:
    """What every engine's resume keeps: the spec with its overrides, the spec.json an
    extension records (``num_samples`` grew; spec.json keeps ``max_concurrent``), and
    the starting points the run was started with."""
    extended = spec.search.num_samples != stored.search.num_samples
    record = (
        resumed_spec(run_dir, stored, None, spec.search.num_samples, None) if extended else None
    )
    recorded = run_dir.read_warm_start(state)
    return ResumePlan(spec, record, WarmStart.from_json(recorded) if recorded else None)


def rerun_trial(
    run_dir: str | os.PathLike[str], trial_id: str | None, out: IO[str] = sys.stdout
) -> int:
    """Rerun one recorded trial and compare its metric with the record (0 match, 1 not)."""
    from raysweep.engines.registry import trial_rerun

    rerun = trial_rerun()  # a Ray trial, whichever engine ran the sweep
    rerun.check(out)
    return rerun.rerun(_existing(RunDir(run_dir).resolved()), trial_id, out)


def _existing(run_dir: RunDir) -> RunDir:
    """``run_dir`` once it exists; a remote run's staging directory made (its log goes there)."""
    run_dir.must_exist()
    if run_dir.is_remote:
        run_dir.path.mkdir(parents=True, exist_ok=True)
    return run_dir


def _dry_run_text(
    spec: SweepSpec, run_dir: RunDir, gpu_plan: GPUPlan, warm: WarmStart | None = None
) -> str:
    lines = [
        f"dry run: would write {run_dir}",
        f"trials: {spec.total_trials} ({spec.search.algorithm}, {spec.scheduler.type})",
        f"gpus: {list(gpu_plan.physical_ids) or 'none'}",
    ]
    if warm is not None:
        lines.append(f"warm start: {len(warm.points)} configuration(s) from {warm.source} first")
        lines.extend(f"  {note}" for note in warm.notes)
    if spec.resources.gpus_auto and gpu_plan.cpu_fallback:
        lines.append("gpus per trial: auto, but no GPU: trials run on CPUs (--allow-cpu)")
    elif not spec.resources.gpus_auto:
        lines.append(_per_trial_text(spec, gpu_plan.cpu_fallback))
    if spec.resources.gpus_auto and not gpu_plan.cpu_fallback:
        lines.append(
            "gpus per trial: auto, probed at run time (one trial alone on a whole GPU for up "
            f"to {probe_iterations(spec)} iteration(s) or {PROBE_SECONDS:.0f} s; its peak "
            "memory decides how many trials share a GPU)"
        )
    lines.extend(engine_for(spec).plan_lines(spec))
    return "\n".join([*lines, json.dumps(spec_to_json(spec), indent=2)])


def _per_trial_text(spec: SweepSpec, cpu_fallback: bool) -> str:
    gpus = 0.0 if cpu_fallback else spec.resources.gpus_per_trial
    text = f"per trial: {spec.resources.cpus_per_trial} CPU(s), {gpus:g} GPU(s)"
    if cpu_fallback and spec.resources.gpus_per_trial > 0:
        text += " (no GPU: --allow-cpu runs the trials on CPUs)"
    replicas = planned_replicas(spec.trainable, spec.trainable_args, gpus)
    if replicas > 1:
        text += f", {replicas} data-parallel replicas ({'one per GPU' if gpus else 'CPU'})"
    return text
