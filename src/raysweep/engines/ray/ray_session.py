"""Start (or join) Ray for one command, and stop only what was started here."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from raysweep._raycompat import actor_env
from raysweep._raycompat.interrupt import keep_sigterm_handler, quiet_thread_notice
from raysweep._raycompat.shutdown import kill_autoscaler_monitor, quiet_token_notice
from raysweep.engines.environment import DEFAULT_CONNECT_TIMEOUT_S, in_ray_job
from raysweep.engines.ray.connect import join_within
from raysweep.engines.ray.ray_env import apply_ray_env_defaults

apply_ray_env_defaults()

# Trial failures are reported once, by raysweep's progress line and in results.json;
# these loggers would print each traceback again.
_QUIET_LOGGERS = ("ray.tune.execution.tune_controller", "ray.tune.tune")

_started_here = False  # whether this process started the Ray it is connected to
_joined: RayInfo | None = None  # the cluster joined ahead of the run (engines/ray/preflight.py)


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
PORT_TRIES = 20  # a taken dashboard port moves up to this many ports on


@dataclass(frozen=True)
class RayInfo:
    """The Ray a command runs on: its resources and, when one runs, the dashboard's URL."""

    resources: dict[str, float]
    dashboard_url: str | None = None
    started_here: bool = False


@dataclass(frozen=True)
class RayOptions:
    """How to reach Ray: a local instance (started here) or an existing cluster."""

    address: str | None = None
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S  # joining ``address`` (connect.py)
    num_cpus: int | None = None
    num_gpus: int | None = None
    include_dashboard: bool = True
    dashboard_note: str | None = None  # why a local Ray starts no dashboard (a missing extra)
    dashboard_host: str = "127.0.0.1"
    dashboard_port: int | None = None  # None: Ray's dashboard binds 8265 or the next free port
    env_vars: Mapping[str, str] = field(default_factory=dict)
    # on a cluster only: the user's code and a directory that travel to every node
    py_modules: tuple[str, ...] = ()
    working_dir: str | None = None
    excludes: tuple[str, ...] = ()  # left out of what travels (.gitignore syntax)

    def cluster_runtime_env(self) -> dict[str, Any] | None:
        """The job-level runtime environment when joining a cluster (None: nothing to add).

        Inside a Ray Job (``ray job submit``) the job's own runtime environment
        already ships the working directory; a driver-side one merged into it made
        Ray drop the job's working directory under the running driver. There the
        trial wrapper sets the determinism variables in each worker instead.
        """
        if in_ray_job():
            return None
        env: dict[str, Any] = {}
        if self.env_vars:
            env["env_vars"] = dict(self.env_vars)
        if self.py_modules:
            env["py_modules"] = list(self.py_modules)
        if self.working_dir:
            env["working_dir"] = self.working_dir
        if self.excludes and (self.working_dir or self.py_modules):
            env["excludes"] = list(self.excludes)
        return env or None


def free_port(host: str, port: int) -> int:
    """``port``, or the next one up that nothing listens on at ``host``."""
    for candidate in range(port, port + PORT_TRIES):
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            try:
                probe.bind((host, candidate))
            except OSError:
                continue
            return candidate
    return port  # let Ray report the clash


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the dashboard on this machine."""
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def start_ray(options: RayOptions) -> RayInfo:
    """``ray.init`` for a local instance or an existing cluster.

    A Ray this process is already connected to is used as it is. A local Ray
    starts the dashboard unless told not to, on ``dashboard_port`` or the next
    free port (without one, Ray's dashboard finds 8265 or the next free port itself).
    """
    import ray

    global _started_here
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    quiet_token_notice()
    if ray.is_initialized():
        url = _joined.dashboard_url if _joined is not None else None
        return RayInfo(dict(ray.cluster_resources()), url)
    kwargs: dict[str, Any] = {
        "log_to_driver": False,
        "logging_level": logging.WARNING,
        "configure_logging": True,
    }
    with keep_sigterm_handler():
        if options.address:
            address, runtime_env = options.address, options.cluster_runtime_env()
            quiet_thread_notice()  # ray.init runs in a thread that can be walked away from
            context = join_within(
                address,
                options.connect_timeout_s,
                lambda: ray.init(address=address, runtime_env=runtime_env, **kwargs),
            )
        else:
            # A local Ray's workers inherit this process's environment. A job-level
            # runtime_env would make every trial actor wait for Ray's runtime-env
            # agent (~0.7 s per worker start on 2 cores), so it is kept for clusters;
            # so is Ray Tune's per-actor one (_raycompat/actor_env.py).
            actor_env.prepare_environment()
            for key, value in options.env_vars.items():
                os.environ.setdefault(key, value)
            environment = dict(os.environ)
            _started_here = True  # set first: a signal during init still shuts it down
            # No port: the dashboard itself binds 8265 or one of the next 50, which
            # never races another sweep starting at the same moment (a port found
            # free here can be taken before the dashboard binds it).
            port = options.dashboard_port
            if options.include_dashboard and port is not None:
                port = free_port(options.dashboard_host, port)
            context = ray.init(
                address="local",  # our own Ray, never one another process left running
                num_cpus=options.num_cpus,
                num_gpus=options.num_gpus,
                include_dashboard=options.include_dashboard,
                dashboard_host=options.dashboard_host,
                dashboard_port=port,
                **kwargs,
            )
            actor_env.remember_local_ray(environment)
    url = getattr(context, "dashboard_url", None) or None
    if url and not str(url).startswith("http"):
        url = f"http://{url}"
    return RayInfo(dict(ray.cluster_resources()), url, started_here=not options.address)


def join_cluster(options: RayOptions) -> RayInfo:
    """Connect to the cluster at ``options.address`` ahead of the run.

    ``start_ray`` then finds this connection and uses it, dashboard URL included.
    Ray's own errors (a version mismatch: RuntimeError) pass through.
    """
    global _joined
    if not options.address:
        raise ValueError("join_cluster needs RayOptions.address")
    _joined = start_ray(options)
    return _joined


def stop_ray() -> None:
    """Shut down the Ray that ``start_ray`` started; leave one it joined or found running.

    Called when the work is done (results written) rather than left to Ray's exit
    hook, which first sleeps 0.5 s for log lines raysweep does not forward.
    """
    global _started_here
    if not _started_here:
        return
    import ray

    _started_here = False
    actor_env.forget_local_ray()
    if ray.is_initialized():
        kill_autoscaler_monitor()
        ray.shutdown()


def ray_running() -> bool:
    """Whether this process is connected to a Ray (without importing Ray when it is not)."""
    import sys

    ray = sys.modules.get("ray")
    return bool(ray is not None and ray.is_initialized())


@contextmanager
def ray_session(options: RayOptions) -> Iterator[RayInfo]:
    """Start or join Ray for the block; stop it afterwards if it was started here."""
    started_before = _started_here
    try:
        yield start_ray(options)
    finally:
        if not started_before:
            stop_ray()
