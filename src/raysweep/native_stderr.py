"""Dropping what native code writes to the process's stderr (file descriptor 2).

Libraries write there from C/C++ whatever Python's logging says: LightGBM's
``[LightGBM] [Fatal] ...`` lines, Ray's GCS client's warnings. Where raysweep
gets the same error back as a value and says it better itself, those lines are
noise; :func:`stderr_dropped` sends them to /dev/null for a block.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def stderr_dropped() -> Iterator[None]:
    """File descriptor 2 goes to /dev/null for the block, and is restored on the way out."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to silence
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
