"""Signals during a run: Ray's own handlers kept out, Tune's loop ended on request.

- ``ray.init`` replaces the driver's SIGTERM handler with ``sys.exit(15)``
  (``ray._private.utils.set_sigterm_handler``): a SIGTERM while Ray starts
  (about 5 s after launch on 2 cores) killed the run as ``failed`` with exit 15.
  :func:`keep_sigterm_handler` leaves the caller's handler in place while Ray
  starts, so raysweep owns SIGTERM from the first instant. Joining a cluster
  runs ``ray.init`` in a thread of its own (``run/bounded.py``), where Ray
  installs no handler and says so in a warning at every join;
  :func:`quiet_thread_notice` drops that warning.
- Ray Tune ends its tuning loop gracefully (experiment saved, trials left
  resumable) from its SIGUSR1 handler, installed in every ``fit`` by
  ``ray.tune.tune._setup_signal_catching``. :class:`StopCallback` calls that
  handler at the next controller step once raysweep has recorded a signal.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from ray import tune

from raysweep._raycompat.declared import THREAD_NOTICE

_WORKER_LOGGER = "ray._private.worker"


class StopRequest(Protocol):
    """What :class:`StopCallback` needs of raysweep's signal owner."""

    received: int | None
    forwarded: bool


@contextmanager
def keep_sigterm_handler() -> Iterator[None]:
    """While the block runs (``ray.init``), Ray does not replace the SIGTERM handler."""
    from ray._private import utils

    original = utils.set_sigterm_handler
    utils.set_sigterm_handler = _leave_handler
    try:
        yield
    finally:
        utils.set_sigterm_handler = original


def _not_the_thread_notice(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith(THREAD_NOTICE)


def quiet_thread_notice() -> None:
    """Drop Ray's warning that ``ray.init`` outside the main thread sets no SIGTERM handler."""
    worker_logger = logging.getLogger(_WORKER_LOGGER)
    if _not_the_thread_notice not in worker_logger.filters:
        worker_logger.addFilter(_not_the_thread_notice)


def _leave_handler(sigterm_handler: Any) -> None:
    """``set_sigterm_handler`` that keeps the handler raysweep installed."""


def forward_to_tune(stop: StopRequest) -> None:
    """Ask Ray Tune to end its loop (once): call its SIGUSR1 handler, as Ctrl-C would."""
    if stop.received is None or stop.forwarded:
        return
    handler = signal.getsignal(signal.SIGUSR1)
    if callable(handler):
        stop.forwarded = True
        handler(signal.SIGUSR1, None)


class StopCallback(tune.Callback):
    """Checks for a recorded signal at every Tune controller step and stops the loop."""

    def __init__(self, stop: StopRequest | None) -> None:
        self.stop = stop

    def __getstate__(self) -> dict[str, Any]:
        return {"stop": None}  # tuner.pkl keeps no handle on this process

    def on_step_begin(self, iteration: int, trials: list[Any], **info: Any) -> None:
        if self.stop is not None:
            forward_to_tune(self.stop)
