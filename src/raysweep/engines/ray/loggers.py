"""sweep.json's ``logging``: Ray Tune's own TensorBoard and MLflow logger callbacks.

``"logging": {"tensorboard": true}`` adds ``ray.tune.logger.TBXLoggerCallback``
(event files in each trial's folder under ``tune/``, which ``tensorboard --logdir
RUN_DIR/tune`` reads); ``"mlflow": {"tracking_uri": ..., "experiment_name": ...}``
adds ``ray.air.integrations.mlflow.MLflowLoggerCallback`` (one MLflow run per
trial, its config as params and its results as metrics). Both run in the driver
and leave raysweep's own files alone. Their libraries are extras
(``raysweep[tensorboard]``, ``raysweep[mlflow]``); a missing one, or a tracking
URI MLflow refuses, is a ConfigError (exit 2) before any trial starts.
"""

from __future__ import annotations

from typing import Any

from raysweep._imports import MissingExtraError, is_installed
from raysweep.config.schema import MlflowSettings, SweepSpec
from raysweep.errors import ConfigError


def _require(module: str, extra: str, field: str) -> None:
    if not is_installed(module):
        raise MissingExtraError(
            f"{field} needs {module}, which is not installed; install it with: "
            f"pip install 'raysweep[{extra}]'"
        )


def check_mlflow(settings: MlflowSettings) -> None:
    """ConfigError unless MLflow accepts the tracking URI (it opens its store, nothing more)."""
    _require("mlflow", "mlflow", "logging.mlflow")
    from mlflow.tracking import MlflowClient

    try:
        MlflowClient(tracking_uri=settings.tracking_uri)
    except Exception as exc:  # MlflowException and whatever the store's backend raises
        raise ConfigError(
            f"logging.mlflow.tracking_uri: MLflow refused {settings.tracking_uri!r}: {exc}"
        ) from None


def check_logging(spec: SweepSpec) -> None:
    """ConfigError when ``spec.logging`` cannot run; imports no Ray (called before any write)."""
    if spec.logging.tensorboard:
        _require("tensorboardX", "tensorboard", "logging.tensorboard")
    if spec.logging.mlflow is not None:
        check_mlflow(spec.logging.mlflow)


def logger_callbacks(spec: SweepSpec) -> list[Any]:
    """The logger callbacks ``spec.logging`` asks for (ConfigError when one cannot run)."""
    callbacks: list[Any] = []
    if spec.logging.tensorboard:
        _require("tensorboardX", "tensorboard", "logging.tensorboard")
        from ray.tune.logger import TBXLoggerCallback

        callbacks.append(TBXLoggerCallback())
    mlflow = spec.logging.mlflow
    if mlflow is not None:
        check_mlflow(mlflow)
        from ray.air.integrations.mlflow import MLflowLoggerCallback

        callbacks.append(
            MLflowLoggerCallback(
                tracking_uri=mlflow.tracking_uri,
                experiment_name=mlflow.experiment_name or spec.name,
                tags={"raysweep.sweep": spec.name, "raysweep.metric": spec.metric},
            )
        )
    return callbacks
