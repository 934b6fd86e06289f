"""A blocking call this process can walk away from: bounded in time, ended by a signal.

Some calls block inside native code where neither a clock nor a signal reaches
Python: ``ray.init(address=...)`` on an address where no Ray answers spent 40 s
per attempt in Ray's GCS client, 20 attempts, and a SIGTERM sent meanwhile was
not handled for minutes (Ray 2.60, 127.0.0.1:1). :func:`call_before` runs such
a call in a daemon thread and waits for it until a deadline; a SIGINT or SIGTERM
meanwhile ends the wait at once (``signals_interrupt``). A call walked away from
keeps running until the process exits, which is what follows here.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from raysweep.native_stderr import stderr_dropped
from raysweep.run.signals import signals_interrupt

T = TypeVar("T")
POLL_S = 0.2  # how often the wait looks at the clock (a signal ends it at once)


class DeadlinePassed(Exception):
    """The call had not returned by the deadline; it was left running."""


def call_before(deadline: float, call: Callable[[], T], name: str, quiet_stderr: bool = False) -> T:
    """``call()``'s result, or what it raised, if it ends before ``deadline`` (monotonic).

    DeadlinePassed when it has not; ``Interrupted`` (a KeyboardInterrupt) on a
    signal. ``quiet_stderr``: what native code writes to file descriptor 2 while
    this waits is dropped (and descriptor 2 is back before this returns or raises).
    """
    outcome: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # handed to the waiting thread
            failure.append(exc)

    thread = threading.Thread(target=target, name=name, daemon=True)
    quiet = stderr_dropped() if quiet_stderr else contextlib.nullcontext()
    with signals_interrupt(), quiet:
        thread.start()
        while thread.is_alive():
            left = deadline - time.monotonic()
            if left <= 0:
                raise DeadlinePassed(name)
            thread.join(min(left, POLL_S))
    if failure:
        raise failure[0]
    return outcome[0]
