"""Ctrl-C and SIGTERM end a run as ``interrupted`` (exit 130, resumable), from the first instant.

Ray Tune's own SIGINT handler (``ray/tune/tune.py::_setup_signal_catching``)
only covers SIGINT and is installed inside ``fit``; ``ray.init`` replaces the
SIGTERM handler with ``sys.exit``. So raysweep sets
``TUNE_DISABLE_SIGINT_HANDLER=1``, keeps Ray's SIGTERM handler out
(``raysweep._raycompat.interrupt``) and owns both signals for the whole command:

- the first signal is only recorded; outside ``Tuner.fit`` the driver calls
  :meth:`GracefulStop.check` at safe points (run directory marked, Ray started,
  before each experiment), which ends the command as ``interrupted``; inside
  it, ``StopCallback`` hands it to Tune, which saves the experiment and stops;
- a second signal raises ``KeyboardInterrupt`` at once (hard stop);
- inside :func:`signals_interrupt` (a wait with nothing to save, such as joining
  a cluster) the first signal raises :class:`Interrupted` at once.

Import-light (no Ray), so the CLI installs it before anything heavy is imported.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any

HANDLED = (signal.SIGINT, signal.SIGTERM)
TUNE_SIGINT_ENV = "TUNE_DISABLE_SIGINT_HANDLER"
_Handler = Callable[[int, FrameType | None], Any] | int | None
_owner: GracefulStop | None = None  # the outermost GracefulStop now owning the signals


class Interrupted(KeyboardInterrupt):
    """A recorded signal ends the command at a safe point."""


class GracefulStop:
    """Owns SIGINT/SIGTERM while a command drives a run; remembers the first signal."""

    def __init__(self) -> None:
        self.received: int | None = None
        self.forwarded = False  # handed to Ray Tune's loop already
        self._previous: dict[int, _Handler] = {}
        self._env: str | None = None
        self._depth = 0
        self.at_once = 0  # > 0 inside signals_interrupt(): a signal raises Interrupted

    def __enter__(self) -> GracefulStop:
        global _owner
        self._depth += 1
        if self._depth > 1:  # already owned by an enclosing block
            return self
        _owner = self
        self._env = os.environ.get(TUNE_SIGINT_ENV)
        os.environ[TUNE_SIGINT_ENV] = "1"
        for sig in HANDLED:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is not None:
            raise KeyboardInterrupt(f"stopped by a second {signal.Signals(signum).name}")
        self.received = signum
        if self.at_once:
            raise Interrupted(f"stopped by {self.signal_name}")

    def check(self) -> None:
        """Raise :class:`Interrupted` when a signal was recorded (call outside ``fit``)."""
        if self.received is not None:
            raise Interrupted(f"stopped by {self.signal_name}")

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.received).name if self.received else "none"

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        global _owner
        self._depth -= 1
        if self._depth > 0:
            return
        if _owner is self:
            _owner = None
        for sig, previous in self._previous.items():
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()
        if self._env is None:
            os.environ.pop(TUNE_SIGINT_ENV, None)
        else:
            os.environ[TUNE_SIGINT_ENV] = self._env


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """While the block runs, SIGINT/SIGTERM raise :class:`Interrupted` at once.

    For a wait that has nothing to save (joining a cluster before the run directory
    exists). A signal received before the block ends it on entry. Without a
    :class:`GracefulStop`, Python's own handlers apply (SIGINT raises
    ``KeyboardInterrupt``; SIGTERM ends the process).
    """
    owner = _owner
    if owner is None:
        yield
        return
    owner.check()
    owner.at_once += 1
    try:
        yield
    finally:
        owner.at_once -= 1
