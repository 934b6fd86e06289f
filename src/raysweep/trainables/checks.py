"""Checks that a spec's trainable can run, done before anything starts.

For a built-in: its optional dependency is installed (else exit 2 naming the
``pip install``), its arguments, metric and GPUs fit, and its ``space`` passes
the parameter check (``raysweep.trainables.params.check``).
"""

from __future__ import annotations

from raysweep._imports import require
from raysweep.config.schema import SweepSpec
from raysweep.errors import ConfigError
from raysweep.trainables.builtins import BUILTIN_EXTRAS, DATA_PARALLEL_ARG

# Built-ins that train across several GPUs of one trial (data-parallel); the
# others train on one GPU at most. User trainables get every GPU of their trial
# in CUDA_VISIBLE_DEVICES and may use them as they like.
MULTI_GPU_TRAINABLES: tuple[str, ...] = ("torch_mlp",)


def check_trainable(spec: SweepSpec) -> None:
    """ConfigError/TrainableError when the trainable, its args, metric, GPUs or space are wrong."""
    from raysweep.trainables.builtins import ALLOWED_ARGS, BUILTIN_TRAINABLES, reported_metrics
    from raysweep.trainables.params.check import check_space
    from raysweep.trainables.params.names import CHECKED_TRAINABLES
    from raysweep.trainables.user import load_user_trainable

    if spec.trainable not in BUILTIN_TRAINABLES:
        load_user_trainable(spec.trainable)
        return
    extra = BUILTIN_EXTRAS.get(spec.trainable)
    if extra:
        require(extra, f"trainable {spec.trainable!r}")
    allowed = ALLOWED_ARGS[spec.trainable]
    for key in spec.trainable_args:
        if key not in allowed:
            raise ConfigError(
                f"trainable_args.{key}: unknown argument for trainable {spec.trainable!r}; "
                f"valid: {', '.join(sorted(allowed))}"
            )
    metrics = reported_metrics(spec.trainable, spec.trainable_args)
    wanted = [("metric", m) for m, _ in spec.objective_pairs]
    scheduler_metric = getattr(spec.scheduler, "metric", None)
    if scheduler_metric is not None:
        wanted.append(("scheduler.metric", scheduler_metric))
    for where, metric in wanted:
        if metric not in metrics:
            raise ConfigError(
                f"{where}: trainable {spec.trainable!r} does not report {metric!r}; "
                f"it reports: {', '.join(metrics)}"
            )
    if DATA_PARALLEL_ARG in spec.trainable_args:
        check_data_parallel(spec)
    check_gpus(spec)
    if spec.trainable in CHECKED_TRAINABLES:
        check_space(spec)
    elif spec.trainable == "trading":
        from raysweep.trainables.trading.checks import check_trading

        check_trading(spec)


def check_gpus(spec: SweepSpec) -> None:
    """ConfigError when a built-in that trains on one GPU is given several."""
    if spec.resources.gpus_auto:  # "auto" gives each trial one GPU at most
        return
    gpus = spec.resources.gpus_per_trial
    if gpus > 1 and spec.trainable not in MULTI_GPU_TRAINABLES:
        raise ConfigError(
            f"resources.gpus_per_trial: built-in trainable {spec.trainable!r} trains on one GPU "
            f"per trial (got {gpus:g}); built-ins that train across several GPUs: "
            f"{', '.join(MULTI_GPU_TRAINABLES)} — or use a fraction or 1, or a user trainable "
            "(it sees all its GPUs)"
        )


def check_data_parallel(spec: SweepSpec) -> None:
    """ConfigError when ``trainable_args.data_parallel`` does not fit the trial's resources."""
    from raysweep.trainables.builtins import positive_int_arg

    key = f"trainable_args.{DATA_PARALLEL_ARG}"
    replicas = positive_int_arg(spec.trainable_args, DATA_PARALLEL_ARG, 1)
    if replicas == 1:
        return
    resources = spec.resources
    if resources.gpus_auto:
        raise ConfigError(
            f"{key}: {replicas} replicas need {replicas} whole GPUs per trial, but "
            "resources.gpus_per_trial is 'auto' (at most one GPU per trial); set it to "
            f"{replicas}, or to 0 for CPU replicas"
        )
    gpus = resources.gpus_per_trial
    if gpus > 1 and replicas != gpus:
        raise ConfigError(
            f"{key}: {replicas} does not match resources.gpus_per_trial {gpus:g}; on GPUs "
            "a trial trains one replica per GPU (leave data_parallel out)"
        )
    if 0 < gpus <= 1:
        raise ConfigError(
            f"{key}: {replicas} replicas need {replicas} whole GPUs per trial (got "
            f"resources.gpus_per_trial {gpus:g}); set it to {replicas}, or to 0 for CPU replicas"
        )
    if gpus == 0 and replicas > resources.cpus_per_trial:
        raise ConfigError(
            f"{key}: {replicas} CPU replicas need a CPU each, but resources.cpus_per_trial is "
            f"{resources.cpus_per_trial}; set it to at least {replicas}"
        )
