"""Ray's start-up and shutdown noise and delays that raysweep does without.

- The local Ray's autoscaler monitor gets SIGTERM after the GCS is gone on
  ``ray.shutdown``; its handler then tries to report to the GCS and Ray waits a
  full second before SIGKILL, on every exit. A local Ray of fixed size has
  nothing for it to scale or save: :func:`kill_autoscaler_monitor` stops it first.
- Ray says at every start that the local Ray uses token authentication (its
  secure default): not news in a sweep's output. Its warning that token
  authentication is *disabled* is kept (:func:`quiet_token_notice`).
"""

from __future__ import annotations

import contextlib
import logging
import subprocess

_AUTH_LOGGER = "ray._private.authentication.authentication_token_setup"


def _not_the_token_auth_enabled_notice(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("Token authentication is enabled")


def quiet_token_notice() -> None:
    """Drop Ray's "token authentication is enabled" notice (once per process)."""
    auth_logger = logging.getLogger(_AUTH_LOGGER)
    if _not_the_token_auth_enabled_notice not in auth_logger.filters:
        auth_logger.addFilter(_not_the_token_auth_enabled_notice)


def kill_autoscaler_monitor() -> None:
    """Stop the local Ray's autoscaler monitor before ``ray.shutdown`` does."""
    from ray._private import ray_constants
    from ray._private import worker as ray_worker

    node = getattr(ray_worker, "_global_node", None)
    processes = getattr(node, "all_processes", None) or {}
    for info in list(processes.get(ray_constants.PROCESS_TYPE_MONITOR, [])):
        process = getattr(info, "process", None)
        if process is None or process.poll() is not None:
            continue
        process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):  # Ray's shutdown deals with it
            process.wait(timeout=5)
