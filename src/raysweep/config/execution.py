"""``"execution"``: which specs the in-process executor can run (no Ray, no pydantic here).

"ray": Ray Tune (any trainable, GPUs, clusters); "local": raysweep's in-process
executor (``raysweep.engines.local``), for the built-in GBM trainables on this machine's
CPUs, without starting Ray.
"""

from __future__ import annotations

from typing import Any, Protocol

LOCAL_TRAINABLES = ("lightgbm", "xgboost", "catboost")
LOCAL_SCHEDULERS = ("fifo", "asha", "median")


class ExecutionFields(Protocol):
    """The fields of a ``SweepSpec`` that decide whether it can run in-process."""

    @property
    def execution(self) -> str: ...
    @property
    def trainable(self) -> str: ...
    @property
    def resources(self) -> Any: ...
    @property
    def scheduler(self) -> Any: ...
    @property
    def logging(self) -> Any: ...


def check_local_execution(spec: ExecutionFields) -> None:
    """ValueError naming the field a spec with ``"execution": "local"`` cannot run with."""
    if spec.execution != "local":
        return
    how = '; use "execution": "ray"'
    if spec.trainable not in LOCAL_TRAINABLES:
        raise ValueError(
            f"execution: 'local' runs the built-in GBM trainables ({', '.join(LOCAL_TRAINABLES)}) "
            f"only (got trainable {spec.trainable!r}){how}"
        )
    gpus = spec.resources.gpus_requested
    if spec.resources.gpus_auto or (isinstance(gpus, int | float) and gpus > 0):
        raise ValueError(
            f"execution: 'local' runs trials on CPUs only (got resources.gpus_per_trial "
            f"{gpus!r}){how}"
        )
    if spec.scheduler.type not in LOCAL_SCHEDULERS:
        raise ValueError(
            f"execution: 'local' supports schedulers {', '.join(LOCAL_SCHEDULERS)} (got "
            f"scheduler.type {spec.scheduler.type!r}, which pauses and resumes trials){how}"
        )
    if spec.logging.tensorboard or spec.logging.mlflow is not None:
        raise ValueError(
            f"execution: 'local' writes no TensorBoard or MLflow logs (Ray Tune's loggers); "
            f"remove logging or{how[1:]}"
        )
