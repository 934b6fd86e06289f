"""Ctrl-C and SIGTERM become Ray Tune's graceful stop: trials stop, state is saved, exit 130.

Ray Tune's own SIGINT handler (``ray/tune/tune.py::_setup_signal_catching``)
only covers SIGINT, is installed inside ``tune.run`` (so a signal that arrives
before it is lost or kills the driver), and ``ray.init`` replaces the SIGTERM
handler with ``sys.exit``. So raysweep sets ``TUNE_DISABLE_SIGINT_HANDLER=1``
and owns both signals for the whole command:

- outside ``Tuner.fit`` a signal raises ``KeyboardInterrupt`` (nothing runs yet);
- inside it the signal is only recorded, and :class:`StopCallback` hands it to
  Tune's always-installed SIGUSR1 handler at the next controller step, which
  ends the tuning loop the same way Ctrl-C does (experiment state saved,
  running trials left resumable);
- a second signal while stopping raises ``KeyboardInterrupt`` (hard stop).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

from ray import tune

HANDLED = (signal.SIGINT, signal.SIGTERM)
TUNE_SIGINT_ENV = "TUNE_DISABLE_SIGINT_HANDLER"
_Handler = Callable[[int, FrameType | None], Any] | int | None


class GracefulStop:
    """Owns SIGINT/SIGTERM while a command drives a run; remembers the first signal."""

    def __init__(self) -> None:
        self.received: int | None = None
        self.in_fit = False
        self.forwarded = False
        self._previous: dict[int, _Handler] = {}
        self._env: str | None = None

    def __enter__(self) -> GracefulStop:
        self._env = os.environ.get(TUNE_SIGINT_ENV)
        os.environ[TUNE_SIGINT_ENV] = "1"
        self.install()
        return self

    def install(self) -> None:
        """(Re-)install the handlers; call again after ``ray.init`` (it replaces SIGTERM's)."""
        for sig in HANDLED:
            previous = signal.signal(sig, self._handle)
            self._previous.setdefault(sig, previous)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is not None or not self.in_fit:
            self.received = self.received or signum
            raise KeyboardInterrupt(f"stopped by {signal.Signals(signum).name}")
        self.received = signum

    def forward_to_tune(self) -> None:
        """Ask Ray Tune to end its loop (once): call its SIGUSR1 handler, as Ctrl-C would."""
        if self.received is None or self.forwarded:
            return
        handler = signal.getsignal(signal.SIGUSR1)
        if callable(handler):
            self.forwarded = True
            handler(signal.SIGUSR1, None)

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.received).name if self.received else "none"

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()
        if self._env is None:
            os.environ.pop(TUNE_SIGINT_ENV, None)
        else:
            os.environ[TUNE_SIGINT_ENV] = self._env


class StopCallback(tune.Callback):
    """Checks for a recorded signal at every Tune controller step and stops the loop."""

    def __init__(self, stop: GracefulStop | None) -> None:
        self.stop = stop

    def __getstate__(self) -> dict[str, Any]:
        return {"stop": None}  # tuner.pkl keeps no handle on this process

    def on_step_begin(self, iteration: int, trials: list[Any], **info: Any) -> None:
        if self.stop is not None:
            self.stop.forward_to_tune()
