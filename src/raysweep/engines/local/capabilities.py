"""What the local engine can run: the built-in GBM trainables, on this machine's CPUs,
under a scheduler that never pauses a trial, without Ray's loggers.

The engine declares it here and checks it in ``check_options`` (``sweep validate``,
``sweep run`` and ``sweep resume`` alike); the config layer knows nothing of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raysweep.errors import ConfigError

if TYPE_CHECKING:
    from raysweep.config.schema import SweepSpec

TRAINABLES = ("lightgbm", "xgboost", "catboost")
SCHEDULERS = ("fifo", "asha", "median")


def check_runnable(spec: SweepSpec) -> None:
    """ConfigError (exit 2) naming the field of ``spec`` the local engine cannot run."""
    how = '; use "execution": "ray"'
    if spec.trainable not in TRAINABLES:
        raise ConfigError(
            f"execution: 'local' runs the built-in GBM trainables ({', '.join(TRAINABLES)}) "
            f"only (got trainable {spec.trainable!r}){how}"
        )
    gpus = spec.resources.gpus_requested
    if spec.resources.gpus_auto or (isinstance(gpus, int | float) and gpus > 0):
        raise ConfigError(
            f"execution: 'local' runs trials on CPUs only (got resources.gpus_per_trial "
            f"{gpus!r}){how}"
        )
    if spec.scheduler.type not in SCHEDULERS:
        raise ConfigError(
            f"execution: 'local' supports schedulers {', '.join(SCHEDULERS)} (got "
            f"scheduler.type {spec.scheduler.type!r}, which pauses and resumes trials){how}"
        )
    if spec.logging.tensorboard or spec.logging.mlflow is not None:
        raise ConfigError(
            f"execution: 'local' writes no TensorBoard or MLflow logs (Ray Tune's loggers); "
            f"remove logging or{how[1:]}"
        )
