"""A trainable whose module imports slowly in every Ray worker but the first.

The first worker to import it takes a lock file and goes on at once; every later
worker sleeps ``RAYSWEEP_TEST_SLOW_IMPORT_S`` first. Preloaded into Ray's workers
(``RAY_preload_python_modules``, imported before a worker accepts work), it
makes every trial actor after the first slow to start, so the second one is
still starting when the first has finished its first short trial: the moment
Ray Tune's actor reuse used to kill the starting actor.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ray import tune

LOCK_ENV = "RAYSWEEP_TEST_FAST_IMPORT_LOCK"
SLOW_ENV = "RAYSWEEP_TEST_SLOW_IMPORT_S"


def _slow_unless_first() -> None:
    import ray

    lock = os.environ.get(LOCK_ENV)
    if not lock or ray._private.worker.global_worker.mode != ray.WORKER_MODE:
        return  # the driver imports it quickly
    try:
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        time.sleep(float(os.environ.get(SLOW_ENV, "2")))


_slow_unless_first()


def short(config: dict[str, Any]) -> None:
    """Sleeps 10 ms and reports once."""
    time.sleep(0.01)
    tune.report({"loss": float(config["x"])})
