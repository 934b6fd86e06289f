"""The local engine's trial backend: runs trials in a pool of threads, and nothing else.

As Syne Tune's ``TrialBackend`` sits beneath its ``Tuner`` loop, this backend
starts trial functions and hands back the ones that ended; every decision
(which trial next, when to stop one, what a failure means) is the
controller's (``local.controller``). The GBM libraries release the GIL while
they train, so ``slots`` threads keep ``slots`` cores busy.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from types import TracebackType

from raysweep.engines.local.trial import LocalTrial


class ThreadBackend:
    """Runs up to ``slots`` trials at once, each as ``work(trial)`` in its own thread."""

    def __init__(self, slots: int, work: Callable[[LocalTrial], None]) -> None:
        self.slots = slots
        self._work = work
        self._pool = ThreadPoolExecutor(slots, thread_name_prefix="raysweep-trial")
        self._running: dict[Future[None], LocalTrial] = {}

    @property
    def free(self) -> int:
        """Slots with no trial in them."""
        return self.slots - len(self._running)

    @property
    def busy(self) -> bool:
        return bool(self._running)

    def start_trial(self, trial: LocalTrial) -> None:
        self._running[self._pool.submit(self._work, trial)] = trial

    def wait_ended(self, timeout: float) -> list[LocalTrial]:
        """The trials whose function returned within ``timeout`` seconds (none: a quiet turn).

        A trial function keeps its errors to itself; one that escapes is a bug and raised here.
        """
        done, _ = wait(self._running, timeout=timeout, return_when=FIRST_COMPLETED)
        ended = []
        for future in done:
            ended.append(self._running.pop(future))
            future.result()
        return ended

    def __enter__(self) -> ThreadBackend:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._pool.shutdown(wait=True)  # aborted trials stop at their next report
