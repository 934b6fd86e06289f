"""Start (or join) Ray and drive a Tuner: the only place that calls fit()."""

from __future__ import annotations

import logging
import os
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


# Ray says at every start that the local Ray it starts uses token authentication
# (its secure default): not news in a sweep's output. Its warning that token
# authentication is *disabled* is kept.
_AUTH_LOGGER = "ray._private.authentication.authentication_token_setup"


_started_here = False  # whether this process started the Ray it is connected to


def _not_the_token_auth_enabled_notice(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("Token authentication is enabled")


def start_ray(options: RayOptions) -> dict[str, Any]:
    """ray.init for a local instance or an existing cluster; returns its resources."""
    import ray

    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    auth_logger = logging.getLogger(_AUTH_LOGGER)
    if _not_the_token_auth_enabled_notice not in auth_logger.filters:
        auth_logger.addFilter(_not_the_token_auth_enabled_notice)

    global _started_here
    if ray.is_initialized():
        return dict(ray.cluster_resources())
    kwargs: dict[str, Any] = {
        "log_to_driver": False,
        "logging_level": logging.WARNING,
        "configure_logging": True,
    }
    if options.address:
        runtime_env = {"env_vars": dict(options.env_vars)} if options.env_vars else None
        ray.init(address=options.address, runtime_env=runtime_env, **kwargs)
    else:
        # A local Ray's workers inherit this process's environment. A job-level
        # runtime_env would make every trial actor wait for Ray's runtime-env
        # agent (~0.7 s per worker start on 2 cores), so it is kept for clusters;
        # so is Ray Tune's per-actor one (runner/actor_env.py).
        from raysweep.runner import actor_env

        actor_env.prepare_environment()
        for key, value in options.env_vars.items():
            os.environ.setdefault(key, value)
        environment = dict(os.environ)
        ray.init(
            num_cpus=options.num_cpus,
            num_gpus=options.num_gpus,
            include_dashboard=options.include_dashboard,
            dashboard_host=options.dashboard_host,
            dashboard_port=options.dashboard_port,
            **kwargs,
        )
        actor_env.remember_local_ray(environment)
        _started_here = True
    return dict(ray.cluster_resources())


def stop_ray() -> None:
    """Shut down the Ray that ``start_ray`` started; leave one it joined or found running.

    Called when the work is done (results written) rather than left to Ray's exit
    hook, which first sleeps 0.5 s for log lines raysweep does not forward.
    """
    global _started_here
    import ray

    from raysweep.runner import actor_env

    if not _started_here:
        return
    _started_here = False
    actor_env.forget_local_ray()
    if ray.is_initialized():
        _kill_autoscaler_monitor()
        ray.shutdown()


def _kill_autoscaler_monitor() -> None:
    """Stop the local Ray's autoscaler monitor before ``ray.shutdown`` does.

    Ray sends it SIGTERM after the GCS is gone; its handler then tries to report
    to the GCS and Ray waits a full second before SIGKILL, on every exit. A local
    Ray of fixed size has nothing for it to scale or save.
    """
    import contextlib
    import subprocess

    try:
        from ray._private import ray_constants
        from ray._private import worker as ray_worker
    except ImportError:  # another Ray version: its own shutdown
        return
    node = getattr(ray_worker, "_global_node", None)
    processes = getattr(node, "all_processes", None) or {}
    monitor = getattr(ray_constants, "PROCESS_TYPE_MONITOR", "monitor")
    for info in list(processes.get(monitor, [])):
        process = getattr(info, "process", None)
        if process is None or process.poll() is not None:
            continue
        process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):  # Ray's shutdown deals with it
            process.wait(timeout=5)


def _with_json_logger(callbacks: list[Any]) -> list[Any]:
    from raysweep.runner.trial_rows import TrialRowsLogger

    return [*callbacks, TrialRowsLogger()]


def new_tuner(parts: Any) -> Any:
    """A Tuner for a new experiment (writes its tuner.pkl; starts nothing)."""
    from ray import tune

    parts.run_config.callbacks = _with_json_logger(list(parts.run_config.callbacks))
    return tune.Tuner(
        parts.trainable,
        param_space=parts.param_space,
        tune_config=parts.tune_config,
        run_config=parts.run_config,
    )


def restored_tuner(path: str, parts: Any, retry_errored: bool) -> Any:
    """``Tuner.restore`` of an interrupted experiment, with the parts rebuilt from the spec.

    Ray restores the TuneConfig and RunConfig pickled in tuner.pkl; raysweep puts
    back freshly built ones (this process's callbacks, run-time overrides such as
    max_concurrent), keeping the restored experiment name and storage path.
    Finished trials are kept, unfinished ones continue from their last
    checkpoint, errored ones are resumed from theirs when ``retry_errored``.
    """
    from ray import tune

    # Restore reads results with ExperimentAnalysis, which warns about every trial
    # that had not reported yet (normal after a crash): keep that out of the log.
    analysis_log = logging.getLogger("ray.tune.analysis.experiment_analysis")
    level = analysis_log.level
    analysis_log.setLevel(logging.ERROR)
    try:
        tuner = tune.Tuner.restore(
            path,
            trainable=parts.trainable,
            resume_unfinished=True,
            resume_errored=retry_errored,
        )
    finally:
        analysis_log.setLevel(level)
    local = getattr(tuner, "_local_tuner", None)
    if local is not None:  # None with Ray Client: the pickled configs are used as they are
        local._tune_config = parts.tune_config
        local.get_run_config().callbacks = _with_json_logger(list(parts.run_config.callbacks))
    return tuner


def run_fit(tuner: Any) -> Any:
    """``tuner.fit()`` with raysweep's per-trial savings in Ray Tune's controller.

    Trainable lookups are memoized (runner/registry_cache.py), on a local Ray
    trial actors start as plain workers (runner/actor_env.py), an actor that
    is starting is not killed because a cached one came free (runner/actor_reuse.py),
    and experiment snapshots cost what changed since the last one (runner/snapshots.py).
    """
    from raysweep.runner.actor_env import plain_trial_actors
    from raysweep.runner.actor_reuse import keep_starting_actors
    from raysweep.runner.registry_cache import memoized_registry
    from raysweep.runner.snapshots import cheap_snapshots

    with memoized_registry(), plain_trial_actors(), keep_starting_actors(), cheap_snapshots():
        return tuner.fit()


def fit(parts: Any) -> Any:
    """Run a new sweep to its end; returns Ray's ResultGrid."""
    return run_fit(new_tuner(parts))
