"""Ending the ``sweep`` process at once when its work is done."""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from typing import NoReturn


def exit_now(code: int) -> NoReturn:
    """End the process with ``code`` without the interpreter's teardown.

    After a sweep, that teardown (finalizers of Ray, scikit-learn and the GBM
    libraries' modules) takes 1-2 s. Every file raysweep writes is closed by
    then, so, as the interpreter would, non-daemon threads are joined and the
    exit handlers run; then the standard streams are flushed and the process ends.
    """
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(code)
