"""SweepSpec -> Ray Tune objects. The only place that assembles a Tuner's parts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ray import tune
from ray.tune.schedulers import TrialScheduler
from ray.tune.search import Searcher

from raysweep.config.schema import HyperbandScheduler, SweepSpec, is_sampled
from raysweep.registry import SCHEDULERS, SEARCHERS, lookup
from raysweep.schedulers.hyperband import hyperband_milestones
from raysweep.search.indexed import IndexedSearcher
from raysweep.search.space import to_param_space
from raysweep.trainables.wrapper import TRIAL_INFO_FILE, TrialPlan, make_trainable

TUNE_DIR = "tune"
TIME_ATTR = "training_iteration"


@dataclass(frozen=True)
class BuildOptions:
    """Run-time facts that are not part of the spec."""

    run_dir: Path
    driver_visible_devices: str | None = None
    callbacks: tuple[tune.Callback, ...] = ()
    cpu_fallback: bool = False  # the config asked for GPUs; none exist; --allow-cpu given
    experiment: str = TUNE_DIR  # Ray experiment directory under run_dir (tune-ext-N extends)
    num_samples: int | None = None  # trials of this experiment (default: the spec's total)
    start_index: int = 0  # trial index of the experiment's first suggestion
    warm_start: Path | None = None  # earlier experiment whose searcher state to continue


@dataclass
class TunerParts:
    """Everything ``ray.tune.Tuner`` takes, built from a spec."""

    trainable: Any
    param_space: dict[str, Any]
    tune_config: tune.TuneConfig
    run_config: tune.RunConfig


def build_searcher(spec: SweepSpec) -> Searcher:
    """The spec's searcher, wrapped so every suggestion carries its trial index.

    In strict mode the searcher is also batched (``IndexedSearcher(BatchedSearcher(inner))``)
    so suggestions and what the searcher learns do not depend on timing.
    """
    factory = lookup(SEARCHERS, "search algorithm", spec.search.algorithm)
    space = to_param_space(spec.space)
    if spec.search.algorithm not in ("grid", "random"):
        space = {k: v for k, v in space.items() if is_sampled(spec.space[k])}
    extra: dict[str, Any] = {}
    if spec.search.algorithm == "optuna" and spec.scheduler.type != "fifo":
        extra["full_length"] = spec.iteration_budget  # shorter trials were stopped early
    inner = factory(
        space=space,
        num_samples=spec.search.num_samples,
        seed=spec.seed,
        metric=spec.metric,
        mode=spec.mode,
        options=dict(spec.search.options),
        **extra,
    )
    if spec.reproducibility.strict:
        from raysweep.search.strict import BatchedSearcher

        inner = BatchedSearcher(
            inner, batch_size=spec.reproducibility.batch_size, total=spec.total_trials
        )
    return IndexedSearcher(inner)


def build_scheduler(spec: SweepSpec) -> TrialScheduler:
    """The spec's trial scheduler."""
    factory = lookup(SCHEDULERS, "scheduler", spec.scheduler.type)
    scheduler: TrialScheduler = factory(spec.scheduler, TIME_ATTR)
    return scheduler


def pause_points(spec: SweepSpec) -> frozenset[int]:
    """Iterations at which the spec's scheduler may pause a trial to resume it later."""
    if isinstance(spec.scheduler, HyperbandScheduler):
        return hyperband_milestones(spec.scheduler)
    return frozenset()


def trial_gpus(spec: SweepSpec, cpu_fallback: bool) -> float:
    """GPUs per trial actually requested from Ray (0 when falling back to CPUs)."""
    return 0.0 if cpu_fallback else float(spec.resources.gpus_per_trial)


def build_plan(
    spec: SweepSpec,
    driver_visible_devices: str | None,
    cpu_fallback: bool = False,
    run_dir: Path | None = None,
) -> TrialPlan:
    """What every trial process needs to seed itself and find its devices."""
    return TrialPlan(
        trainable=spec.trainable,
        master_seed=spec.seed,
        metric=spec.metric,
        mode=spec.mode,
        trainable_args=dict(spec.trainable_args),
        cpus=spec.resources.cpus_per_trial,
        gpu_fraction=trial_gpus(spec, cpu_fallback),
        deterministic=spec.reproducibility.deterministic,
        checkpoint_frequency=spec.checkpoint.frequency,
        checkpoint_at=pause_points(spec),
        driver_visible_devices=driver_visible_devices,
        info_path=str(run_dir.resolve() / TRIAL_INFO_FILE) if run_dir else None,
    )


def build_trainable(
    spec: SweepSpec,
    driver_visible_devices: str | None = None,
    cpu_fallback: bool = False,
    run_dir: Path | None = None,
) -> Any:
    """The wrapped function trainable with its per-trial resources."""
    resources: dict[str, float] = {"cpu": spec.resources.cpus_per_trial}
    gpus = trial_gpus(spec, cpu_fallback)
    if gpus:
        resources["gpu"] = gpus
    trainable = make_trainable(build_plan(spec, driver_visible_devices, cpu_fallback, run_dir))
    return tune.with_resources(trainable, resources)


def constant_space(spec: SweepSpec) -> dict[str, Any]:
    """The constants of the space: Ray merges them into every suggested config."""
    return {k: v for k, v in spec.space.items() if not is_sampled(v)}


def build_tuner_parts(spec: SweepSpec, options: BuildOptions) -> TunerParts:
    """All of a Tuner's arguments for ``spec``."""
    from raysweep.runner.searchalg import build_search_alg

    tune_config = tune.TuneConfig(
        metric=spec.metric,
        mode=spec.mode,
        search_alg=build_search_alg(spec, options.start_index, options.warm_start),
        scheduler=build_scheduler(spec),
        num_samples=options.num_samples or spec.total_trials,
        time_budget_s=spec.stop.time_budget_s,
        reuse_actors=True,
        trial_name_creator=_trial_name,
        trial_dirname_creator=_trial_name,
    )
    stop = {TIME_ATTR: spec.stop.max_iterations} if spec.stop.max_iterations else None
    run_config = tune.RunConfig(
        name=options.experiment,
        storage_path=str(options.run_dir.resolve()),
        stop=stop,
        verbose=0,
        callbacks=list(options.callbacks),
        failure_config=tune.FailureConfig(max_failures=spec.max_failures),
        checkpoint_config=tune.CheckpointConfig(num_to_keep=spec.checkpoint.num_to_keep),
    )
    return TunerParts(
        trainable=build_trainable(
            spec, options.driver_visible_devices, options.cpu_fallback, options.run_dir
        ),
        param_space=constant_space(spec),
        tune_config=tune_config,
        run_config=run_config,
    )


def _trial_name(trial: Any) -> str:
    return f"trial_{trial.trial_id}"
