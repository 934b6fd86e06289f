"""call_before: a blocking call waited for until a deadline, and ended at once by a signal."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from raysweep.run.bounded import DeadlinePassed, call_before
from raysweep.run.signals import GracefulStop, Interrupted


def _never_returns(release: threading.Event) -> None:
    release.wait(60)


def test_the_result_or_the_error_of_the_call_comes_back() -> None:
    deadline = time.monotonic() + 30
    assert call_before(deadline, lambda: 42, "answer") == 42
    with pytest.raises(ZeroDivisionError):
        call_before(deadline, lambda: 1 / 0, "fails")


def test_a_call_past_its_deadline_is_left_running() -> None:
    release = threading.Event()
    with pytest.raises(DeadlinePassed):
        call_before(time.monotonic() + 0.3, lambda: _never_returns(release), "stuck")
    stuck = [t for t in threading.enumerate() if t.name == "stuck"]
    assert stuck and stuck[0].daemon  # walked away from, and no obstacle to exiting
    release.set()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_a_signal_ends_the_wait_at_once_and_is_recorded(sig: signal.Signals) -> None:
    release = threading.Event()
    threading.Timer(0.3, os.kill, (os.getpid(), sig)).start()
    with GracefulStop() as stop, pytest.raises(Interrupted):
        call_before(time.monotonic() + 30, lambda: _never_returns(release), "waits")
    assert stop.received == sig
    release.set()


def test_a_signal_received_before_the_wait_ends_it_on_entry() -> None:
    with GracefulStop() as stop:
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.received == signal.SIGTERM  # recorded only, outside a wait
        with pytest.raises(Interrupted):
            call_before(time.monotonic() + 30, lambda: 1, "never starts")


def test_native_stderr_is_dropped_while_waiting_and_back_afterwards(
    capfd: pytest.CaptureFixture[str],
) -> None:
    def writes() -> None:
        os.write(2, b"native noise\n")

    call_before(time.monotonic() + 30, writes, "noisy", quiet_stderr=True)
    os.write(2, b"after\n")
    assert capfd.readouterr().err == "after\n"
