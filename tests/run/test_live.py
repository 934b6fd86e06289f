"""The progress display: plain lines with heartbeats off a terminal, a rich panel on one."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import pytest

from raysweep.run.live import (
    LiveDisplay,
    PlainDisplay,
    Snapshot,
    clock,
    heartbeat_interval,
    is_terminal,
    make_display,
    render,
)

SNAP = Snapshot(total=10, done=4, running=2, metric="loss", best=0.125, best_trial="abc",
                elapsed_s=125.0, eta_s=190.4,
                outcomes={"completed": 1, "stopped": 3, "errored": 0})  # fmt: skip


def test_snapshot_texts() -> None:
    assert SNAP.pending == 4
    assert SNAP.counts_text() == "4/10 finished (1 completed, 3 stopped), 2 running, 4 pending"
    assert SNAP.best_text() == "sweep best loss=0.125 (trial abc)"
    assert SNAP.timing_text() == "elapsed 2m05s, ETA ~3m10s"
    empty = Snapshot(3, 0, 0, "acc", None, None, 1.0, None)
    assert empty.counts_text() == "0/3 finished, 0 running, 3 pending"
    assert empty.best_text() == "sweep best acc=-" and empty.timing_text().endswith("ETA -")
    assert clock(3723) == "1h02m03s"


def test_plain_lines_and_a_heartbeat_only_after_a_quiet_spell() -> None:
    out = io.StringIO()
    display = PlainDisplay(out, heartbeat_s=0.2)
    display.tick(lambda: SNAP)
    assert out.getvalue() == ""  # not quiet long enough
    display.line(
        "[1/10] t1 completed after 3 iteration(s): loss=1; sweep best loss=1 (trial t1)",
        lambda: SNAP,
    )
    time.sleep(0.25)
    display.tick(lambda: SNAP)
    display.tick(lambda: SNAP)  # the heartbeat itself restarts the clock
    lines = out.getvalue().splitlines()
    assert lines == [
        "[1/10] t1 completed after 3 iteration(s): loss=1; sweep best loss=1 (trial t1)",
        "[heartbeat] 4/10 finished (1 completed, 3 stopped), 2 running, 4 pending; "
        "sweep best loss=0.125 (trial abc); "
        "elapsed 2m05s, ETA ~3m10s",
    ]
    assert "\x1b" not in out.getvalue()  # no terminal control codes in a pipe or a log


def test_heartbeat_interval_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAYSWEEP_HEARTBEAT_S", raising=False)
    assert heartbeat_interval() == 60.0
    monkeypatch.setenv("RAYSWEEP_HEARTBEAT_S", "2.5")
    assert heartbeat_interval() == 2.5
    monkeypatch.setenv("RAYSWEEP_HEARTBEAT_S", "soon")
    assert heartbeat_interval() == 60.0


def test_live_display_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert isinstance(make_display(io.StringIO(), io.StringIO(), None), PlainDisplay)
    assert isinstance(make_display(io.StringIO(), None, None), PlainDisplay)
    master, slave = os.openpty()
    with os.fdopen(slave, "w") as tty:
        monkeypatch.setenv("TERM", "xterm")
        assert is_terminal(tty)
        display = make_display(io.StringIO(), tty, tmp_path / "log")
        assert isinstance(display, LiveDisplay)
        display.line("[1/10] t1 done", lambda: SNAP)
        display.close(SNAP)
        monkeypatch.setenv("TERM", "dumb")
        assert not is_terminal(tty)
    os.close(master)
    assert (tmp_path / "log").read_text() == "[1/10] t1 done\n"  # the line is kept in the log


def test_render_shows_counts_best_and_times() -> None:
    from rich.console import Console

    console = Console(file=io.StringIO(), width=100, color_system=None)
    console.print(render(SNAP))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    for part in ("4/10 finished (1 completed, 3 stopped)", "2 running", "4 pending",
                 "sweep best loss=0.125", "ETA ~3m10s"):  # fmt: skip
        assert part in text


def test_the_panel_is_redrawn_with_every_trial_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Lines that came within one refresh period left the panel's counts behind them
    ("[4/10] ... done" above a bar still reading 1/10)."""
    master, slave = os.openpty()
    drawn: list[int] = []

    def snapshot(done: int) -> Snapshot:
        drawn.append(done)
        return Snapshot(10, done, 0, "loss", None, None, 1.0, None)

    with os.fdopen(slave, "w") as tty:
        monkeypatch.setenv("TERM", "xterm")
        display = make_display(io.StringIO(), tty, tmp_path / "log")
        for done in (1, 2, 3, 4):  # four trials end at once
            display.line(f"[{done}/10] t{done} completed", lambda done=done: snapshot(done))
        display.close(None)
    os.close(master)
    assert drawn == [1, 2, 3, 4]
