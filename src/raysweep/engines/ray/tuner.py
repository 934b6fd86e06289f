"""SweepSpec -> Ray Tune objects: the one builder of a Tuner's parts.

``sweep run``, ``resume``, extensions, the ``auto`` GPU probe and ``sweep repro``
all build here; what differs between them is a :class:`BuildOptions` value
(overrides), never a patch of the built objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ray import tune
from ray.tune.schedulers import FIFOScheduler

from raysweep.config.schema import SweepSpec
from raysweep.engines.ray.loggers import logger_callbacks
from raysweep.engines.ray.metric_check import MetricCheck, wanted_metrics
from raysweep.rundir import TUNE_DIR
from raysweep.schedulers.build import TIME_ATTR, build_scheduler
from raysweep.search.build import build_search_alg
from raysweep.search.indexed import INDEX_KEY
from raysweep.trainables.plan import constant_space, trial_plan
from raysweep.trainables.wrapper import TrialPlan, make_trainable


@dataclass(frozen=True)
class BuildOptions:
    """Run-time facts that are not part of the spec, and the overrides of a special Tuner.

    A run's experiment needs only the first group. The GPU probe and ``sweep repro``
    override the rest: one fixed trial, FIFO, their own stop rule and failure budget.
    """

    run_dir: Path | str  # Ray's storage_path: a local directory, or a path on storage_filesystem
    driver_visible_devices: str | None = None
    callbacks: tuple[tune.Callback, ...] = ()
    cpu_fallback: bool = False  # the config asked for GPUs; none exist; --allow-cpu given
    experiment: str = TUNE_DIR  # Ray experiment directory under run_dir (tune-ext-N extends)
    num_samples: int | None = None  # trials of this experiment (default: the spec's total)
    start_index: int = 0  # trial index of the experiment's first suggestion
    continued_from: Path | None = None  # earlier experiment whose searcher state to continue
    warm_start_points: tuple[dict[str, Any], ...] = ()  # configs to suggest first (--warm-start)
    info_path: Path | None = None  # trial_info.jsonl (default: none is written)
    # overrides for the GPU probe and sweep repro
    fixed_trial: tuple[Mapping[str, Any], int] | None = None  # (config, index): no searcher
    fifo: bool = False  # no early stopping
    stop: Mapping[str, float] | None = None  # replaces the spec's stop rule
    time_budget_s: float | None = None  # replaces the spec's time budget
    max_failures: int | None = None  # replaces the spec's max_failures
    reuse_actors: bool = True
    memory_probe_path: Path | None = None  # the probe trial writes torch's peak here
    working_dir: Path | None = None  # --working-dir shipped to a cluster's nodes
    extra_env: Mapping[str, str] = field(default_factory=dict)
    storage_filesystem: Any = None  # pyarrow.fs of remote storage (RunDir.ray_storage)


@dataclass
class TunerParts:
    """Everything ``ray.tune.Tuner`` takes, built from a spec."""

    trainable: Any
    param_space: dict[str, Any]
    tune_config: tune.TuneConfig
    run_config: tune.RunConfig


def trial_gpus(spec: SweepSpec, cpu_fallback: bool) -> float:
    """GPUs per trial actually requested from Ray (0 when falling back to CPUs)."""
    return 0.0 if cpu_fallback else float(spec.resources.gpus_per_trial)


def build_plan(spec: SweepSpec, options: BuildOptions) -> TrialPlan:
    """What every Ray trial process needs to seed itself and find its devices."""
    probe = options.memory_probe_path
    return trial_plan(
        spec,
        trial_gpus(spec, options.cpu_fallback),
        driver_visible_devices=options.driver_visible_devices,
        info_path=str(options.info_path.resolve()) if options.info_path else None,
        memory_probe_path=str(probe) if probe else None,
        working_dir=str(options.working_dir.resolve()) if options.working_dir else None,
    )


def build_trainable(spec: SweepSpec, options: BuildOptions) -> Any:
    """The wrapped function trainable with its per-trial resources."""
    resources: dict[str, float] = {"cpu": spec.resources.cpus_per_trial}
    gpus = trial_gpus(spec, options.cpu_fallback)
    if gpus:
        resources["gpu"] = gpus
    return tune.with_resources(make_trainable(build_plan(spec, options)), resources)


def build_tuner_parts(spec: SweepSpec, options: BuildOptions) -> TunerParts:
    """All of a Tuner's arguments for ``spec`` under ``options``."""
    fixed = options.fixed_trial is not None
    if options.fixed_trial is not None:
        config, index = options.fixed_trial
        param_space: dict[str, Any] = {**config, INDEX_KEY: index}
        search_alg, num_samples = None, 1
    else:
        param_space = constant_space(spec)
        search_alg = build_search_alg(
            spec, options.start_index, options.continued_from, options.warm_start_points
        )
        num_samples = options.num_samples or spec.total_trials
    several = spec.objectives is not None  # the searcher and scheduler hold their own metrics
    tune_config = tune.TuneConfig(
        metric=None if several else spec.metric,
        mode=None if several else spec.mode,
        search_alg=search_alg,
        scheduler=FIFOScheduler() if options.fifo else build_scheduler(spec),
        num_samples=num_samples,
        time_budget_s=options.time_budget_s or spec.stop.time_budget_s,
        reuse_actors=options.reuse_actors,
        trial_name_creator=_trial_name,
        trial_dirname_creator=_trial_name,
    )
    stop: Mapping[str, float] | None = options.stop
    if stop is None and spec.stop.max_iterations:
        stop = {TIME_ATTR: spec.stop.max_iterations}
    max_failures = spec.max_failures if options.max_failures is None else options.max_failures
    run_config = tune.RunConfig(
        name=options.experiment,
        storage_path=_storage_path(options),
        storage_filesystem=options.storage_filesystem,
        stop=dict(stop) if stop else None,
        verbose=0,
        # sweep.json's TensorBoard/MLflow loggers; not for the GPU probe or sweep repro
        callbacks=[
            MetricCheck(wanted_metrics(spec)),  # first: before anything reads the result
            *options.callbacks,
            *(logger_callbacks(spec) if not fixed else []),
        ],
        failure_config=tune.FailureConfig(max_failures=max_failures),
        checkpoint_config=tune.CheckpointConfig(num_to_keep=spec.checkpoint.num_to_keep),
    )
    return TunerParts(
        trainable=build_trainable(spec, options),
        param_space=param_space,
        tune_config=tune_config,
        run_config=run_config,
    )


def _storage_path(options: BuildOptions) -> str:
    """``run_dir`` as Ray's storage_path: absolute when local, as given on a remote filesystem."""
    if options.storage_filesystem is not None:
        return str(options.run_dir)
    return str(Path(options.run_dir).resolve())


def _trial_name(trial: Any) -> str:
    return f"trial_{trial.trial_id}"
