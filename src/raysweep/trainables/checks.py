"""Checks that a spec's trainable can run, done before anything starts."""

from __future__ import annotations

from raysweep.config.schema import SweepSpec
from raysweep.errors import ConfigError

# Built-ins train on at most one GPU per trial; user trainables get every GPU
# of their trial in CUDA_VISIBLE_DEVICES and may use them as they like.
MULTI_GPU_TRAINABLES: tuple[str, ...] = ()


def check_trainable(spec: SweepSpec) -> None:
    """ConfigError/TrainableError when the trainable, its args, metric or GPUs are wrong."""
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
    if spec.resources.gpus_auto:  # "auto" gives each trial one GPU at most
        return
    gpus = spec.resources.gpus_per_trial
    if gpus > 1 and spec.trainable not in MULTI_GPU_TRAINABLES:
        raise ConfigError(
            f"resources.gpus_per_trial: built-in trainable {spec.trainable!r} trains on one GPU "
            f"per trial (got {gpus:g}); no built-in trains across several GPUs yet — use a "
            "fraction or 1, or a user trainable (it sees all its GPUs)"
        )
