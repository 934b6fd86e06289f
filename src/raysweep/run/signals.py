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
- a second signal raises ``KeyboardInterrupt`` at once (hard stop).

Import-light (no Ray), so the CLI installs it before anything heavy is imported.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

HANDLED = (signal.SIGINT, signal.SIGTERM)
TUNE_SIGINT_ENV = "TUNE_DISABLE_SIGINT_HANDLER"
_Handler = Callable[[int, FrameType | None], Any] | int | None


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

    def __enter__(self) -> GracefulStop:
        self._depth += 1
        if self._depth > 1:  # already owned by an enclosing block
            return self
        self._env = os.environ.get(TUNE_SIGINT_ENV)
        os.environ[TUNE_SIGINT_ENV] = "1"
        for sig in HANDLED:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is not None:
            raise KeyboardInterrupt(f"stopped by a second {signal.Signals(signum).name}")
        self.received = signum

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
        self._depth -= 1
        if self._depth > 0:
            return
        for sig, previous in self._previous.items():
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()
        if self._env is None:
            os.environ.pop(TUNE_SIGINT_ENV, None)
        else:
            os.environ[TUNE_SIGINT_ENV] = self._env
