"""One driver per run directory: an flock'ed lock file that names its holder."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType
from typing import IO

from raysweep.errors import LockError


class RunLock:
    """Exclusive, process-lifetime lock on a run directory.

    The kernel drops an flock when its process dies (even by SIGKILL), so a lock
    left by a dead driver is taken over; its pid is reported as stale.
    """

    def __init__(self, path: Path, run: str | None = None) -> None:
        self.path = path  # RunDir.lock_path
        self.run = run or str(path.parent)  # the run as people know it (a remote run's URI)
        self.stale_pid: int | None = None
        self._fh: IO[str] | None = None

    def acquire(self) -> RunLock:
        fh = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "unknown"
            fh.close()
            raise LockError(
                f"run {self.run} is being driven by another process (pid {holder}); "
                "wait for it to finish or stop it first"
            ) from None
        fh.seek(0)
        previous = fh.read().strip()
        if previous.isdigit() and int(previous) != os.getpid():
            self.stale_pid = int(previous)
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._fh = fh
        return self

    def release(self) -> None:
        if self._fh is None:
            return
        self._fh.seek(0)
        self._fh.truncate()
        self._fh.flush()
        fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
        self._fh.close()
        self._fh = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def check_unlocked(path: Path, run: str | None = None) -> None:
    """LockError naming the holder when a live process holds the lock file ``path``.

    ``run``: the run as people know it (default: the lock's directory). Writes nothing.
    """
    run_dir = run or str(path.parent)
    if not path.is_file():
        return
    with path.open("r", encoding="utf-8") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = fh.read().strip() or "unknown"
            raise LockError(
                f"run {run_dir} is being driven by another process (pid {holder}); "
                "wait for it to finish or stop it first"
            ) from None
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
