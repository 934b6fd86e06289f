"""The run lock between real processes, and SIGINT/SIGTERM handling in the driver."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from raysweep._raycompat.interrupt import StopCallback
from raysweep.errors import LockError
from raysweep.run.lock import RunLock, check_unlocked
from raysweep.run.signals import GracefulStop, Interrupted
from raysweep.rundir import RunDir

HOLDER = """
import sys, time
from pathlib import Path
from raysweep.run.lock import RunLock
lock = RunLock(Path(sys.argv[1])).acquire()
print("locked", flush=True)
time.sleep(120)
"""


@pytest.fixture()
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """A separate process holding the lock on the run directory tmp_path."""
    lock = RunDir(tmp_path).lock_path
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def test_second_driver_is_refused_naming_the_holder(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    with pytest.raises(LockError, match=rf"another process \(pid {holder.pid}\)"):
        check_unlocked(RunDir(tmp_path).lock_path)
    before = (tmp_path / ".lock").stat().st_mtime_ns
    with pytest.raises(LockError, match=rf"pid {holder.pid}"):
        RunLock(RunDir(tmp_path).lock_path).acquire()
    assert (tmp_path / ".lock").stat().st_mtime_ns == before  # the refused one wrote nothing
    assert holder.poll() is None


def test_lock_of_a_killed_holder_is_taken_over(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    check_unlocked(RunDir(tmp_path).lock_path)
    with RunLock(RunDir(tmp_path).lock_path) as lock:
        assert lock.stale_pid == holder.pid
        assert (tmp_path / ".lock").read_text() == str(os.getpid())
    assert (tmp_path / ".lock").read_text() == ""  # a clean release leaves no stale pid
    with RunLock(RunDir(tmp_path).lock_path) as lock:
        assert lock.stale_pid is None


def test_signal_outside_fit_is_recorded_and_ends_the_command_at_the_next_check() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with GracefulStop() as stop:
        assert os.environ["TUNE_DISABLE_SIGINT_HANDLER"] == "1"  # Tune must not take SIGINT
        stop.check()  # nothing received: no effect
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.1)  # recorded, no exception at an arbitrary point
        assert stop.signal_name == "SIGTERM"
        with pytest.raises(Interrupted, match="SIGTERM"):
            stop.check()
    assert signal.getsignal(signal.SIGTERM) is before


def test_signal_inside_fit_is_handed_to_tune_once() -> None:
    calls: list[int] = []

    def tune_handler(signum: int, frame: FrameType | None) -> None:
        calls.append(signum)

    previous = signal.signal(signal.SIGUSR1, tune_handler)
    try:
        with GracefulStop() as stop:
            callback = StopCallback(stop)
            callback.on_step_begin(0, [])
            assert calls == []
            os.kill(os.getpid(), signal.SIGINT)  # recorded, no exception inside fit
            time.sleep(0.1)
            assert stop.received == signal.SIGINT
            callback.on_step_begin(1, [])
            callback.on_step_begin(2, [])
            assert calls == [signal.SIGUSR1]
            with pytest.raises(KeyboardInterrupt):  # a second signal is a hard stop
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(1)
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_stop_callback_pickles_without_the_process_handle() -> None:
    import pickle

    with GracefulStop() as stop:
        restored = pickle.loads(pickle.dumps(StopCallback(stop)))
    assert restored.stop is None
    restored.on_step_begin(0, [])  # a no-op
