"""Start (or join) Ray and drive a Tuner: the only place that calls fit()."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from raysweep.runner.tuning import apply_ray_env_defaults

apply_ray_env_defaults()


@dataclass(frozen=True)
class RayOptions:
    """How to reach Ray."""

    address: str | None = None
    num_cpus: int | None = None
    num_gpus: int | None = None
    include_dashboard: bool = False
    dashboard_host: str = "127.0.0.1"
    dashboard_port: int = 8265
    env_vars: dict[str, str] = field(default_factory=dict)


# Trial failures are reported once, by our progress line and in results.json;
# these loggers would print each traceback again.
_QUIET_LOGGERS = ("ray.tune.execution.tune_controller", "ray.tune.tune")


def start_ray(options: RayOptions) -> dict[str, Any]:
    """ray.init for a local instance or an existing cluster; returns its resources."""
    import ray

    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)

    if ray.is_initialized():
        return dict(ray.cluster_resources())
    kwargs: dict[str, Any] = {
        "log_to_driver": False,
        "logging_level": logging.WARNING,
        "configure_logging": True,
        "runtime_env": {"env_vars": dict(options.env_vars)} if options.env_vars else None,
    }
    if options.address:
        ray.init(address=options.address, **kwargs)
    else:
        ray.init(
            num_cpus=options.num_cpus,
            num_gpus=options.num_gpus,
            include_dashboard=options.include_dashboard,
            dashboard_host=options.dashboard_host,
            dashboard_port=options.dashboard_port,
            **kwargs,
        )
    return dict(ray.cluster_resources())


def stop_ray() -> None:
    """Shut down the Ray this process started."""
    import ray

    if ray.is_initialized():
        ray.shutdown()


def fit(parts: Any) -> Any:
    """Run a new sweep to its end; returns Ray's ResultGrid."""
    from ray import tune
    from ray.tune.logger import JsonLoggerCallback

    callbacks = [*parts.run_config.callbacks, JsonLoggerCallback()]
    parts.run_config.callbacks = callbacks
    tuner = tune.Tuner(
        parts.trainable,
        param_space=parts.param_space,
        tune_config=parts.tune_config,
        run_config=parts.run_config,
    )
    return tuner.fit()
