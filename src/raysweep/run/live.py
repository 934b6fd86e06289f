"""What ``sweep run`` shows while trials run: a live display on a terminal, plain lines elsewhere.

On a terminal (stdout is a TTY and TERM is not ``dumb``), :class:`LiveDisplay`
keeps a rich panel at the bottom: trials done / running / pending against the
total, the best value so far and its trial, elapsed time and an ETA; each
finished trial's line scrolls above it (and goes to sweep_output.log). Anywhere
else (cron, CI, a pipe, a Ray Job), :class:`PlainDisplay` prints the same
per-trial lines and, when no line came for a minute, a heartbeat line with the
same counts. Ray Tune prints nothing of its own (verbose=0, and
ProgressCallback takes the place of its progress reporter), so nothing is shown
twice.
"""

from __future__ import annotations

import atexit
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

HEARTBEAT_ENV = "RAYSWEEP_HEARTBEAT_S"  # seconds between heartbeat lines (default 60)
HEARTBEAT_S = 60.0
REFRESH_S = 0.25  # the live display redraws at most 4 times a second


@dataclass(frozen=True)
class Snapshot:
    """The numbers on show at one moment."""

    total: int
    done: int
    running: int
    metric: str
    best: float | None
    best_trial: str | None
    elapsed_s: float
    eta_s: float | None
    outcomes: dict[str, int] = field(default_factory=dict)  # completed / stopped / errored

    @property
    def pending(self) -> int:
        return max(self.total - self.done - self.running, 0)

    def best_text(self) -> str:
        if self.best is None:
            return f"sweep best {self.metric}=-"
        return f"sweep best {self.metric}={self.best:.6g}" + (
            f" (trial {self.best_trial})" if self.best_trial else ""
        )

    def timing_text(self) -> str:
        eta = f"ETA ~{clock(self.eta_s)}" if self.eta_s is not None else "ETA -"
        return f"elapsed {clock(self.elapsed_s)}, {eta}"

    def finished_text(self) -> str:
        """``4/10 finished (3 completed, 1 stopped)``: the words results.json uses."""
        parts = [f"{n} {kind}" for kind, n in self.outcomes.items() if n]
        return f"{self.done}/{self.total} finished" + (f" ({', '.join(parts)})" if parts else "")

    def counts_text(self) -> str:
        return f"{self.finished_text()}, {self.running} running, {self.pending} pending"


def clock(seconds: float) -> str:
    """``1h02m03s`` / ``2m13s``."""
    whole = max(round(seconds), 0)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


# A snapshot on demand: counting running trials walks every trial, so a display
# takes one only when it draws (at 10,000 trials a count per trial and per turn
# of Ray Tune's loop made the driver's cost per trial grow with the trials).
SnapshotFn = Callable[[], Snapshot]


class Display(Protocol):
    """Where ProgressCallback shows progress."""

    def line(self, text: str, snapshot: SnapshotFn) -> None: ...
    def tick(self, snapshot: SnapshotFn) -> None: ...
    def close(self, snapshot: Snapshot | None) -> None: ...


class PlainDisplay:
    """One line per finished trial; a heartbeat line after ``heartbeat_s`` without one."""

    def __init__(self, out: IO[str], heartbeat_s: float | None = None) -> None:
        self.out = out
        self.heartbeat_s = heartbeat_s if heartbeat_s is not None else heartbeat_interval()
        self._last = time.monotonic()

    def line(self, text: str, snapshot: SnapshotFn) -> None:
        print(text, file=self.out, flush=True)
        self._last = time.monotonic()

    def tick(self, snapshot: SnapshotFn) -> None:
        if time.monotonic() - self._last >= self.heartbeat_s:
            now = snapshot()
            self.line(
                f"[heartbeat] {now.counts_text()}; {now.best_text()}; {now.timing_text()}",
                snapshot,
            )

    def close(self, snapshot: Snapshot | None) -> None:
        """Nothing to tidy: every line is already out."""


class LiveDisplay:
    """A rich Live panel on the terminal; trial lines above it and in the run's log file."""

    def __init__(self, terminal: IO[str], log_path: Path | None) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = Console(file=terminal)
        self.live = Live(console=self.console, auto_refresh=False, transient=False)
        self.log_path = log_path
        self._drawn = 0.0
        self._started = False

    def line(self, text: str, snapshot: SnapshotFn) -> None:
        """The line above the panel, and the panel redrawn at once: its counts include it."""
        self._start()
        self.live.console.print(text, markup=False, highlight=False, soft_wrap=True)
        if self.log_path is not None:
            with self.log_path.open("a", encoding="utf-8") as log:
                log.write(text + "\n")
        self._draw(snapshot())

    def tick(self, snapshot: SnapshotFn) -> None:
        if time.monotonic() - self._drawn >= REFRESH_S:
            self._draw(snapshot())

    def close(self, snapshot: Snapshot | None) -> None:
        if not self._started:
            return
        if snapshot is not None:
            self._draw(snapshot)
        self.live.stop()
        self._started = False

    def _start(self) -> None:
        if not self._started:
            self.live.start()
            self._started = True
            # rich hides the cursor while live: give it back even if the experiment never ends
            atexit.register(self.close, None)

    def _draw(self, snapshot: Snapshot) -> None:
        self._start()
        self.live.update(render(snapshot), refresh=True)
        self._drawn = time.monotonic()


def render(snapshot: Snapshot) -> Any:
    """The live panel: a progress bar with the counts, then best so far, elapsed and ETA."""
    from rich.progress_bar import ProgressBar
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column()
    bar = ProgressBar(total=max(snapshot.total, 1), completed=snapshot.done, width=30)
    counts = Text.assemble(
        (snapshot.finished_text(), "bold green"),
        f", {snapshot.running} running, {snapshot.pending} pending",
    )
    grid.add_row(bar, counts)
    grid.add_row(Text(snapshot.best_text(), style="bold"), Text(snapshot.timing_text()))
    return grid


def heartbeat_interval() -> float:
    """Seconds between heartbeat lines: ``RAYSWEEP_HEARTBEAT_S`` or a minute."""
    try:
        return max(float(os.environ.get(HEARTBEAT_ENV, HEARTBEAT_S)), 0.1)
    except ValueError:
        return HEARTBEAT_S


def is_terminal(stream: IO[str] | None) -> bool:
    """Whether ``stream`` is an interactive terminal that can redraw a live display."""
    try:
        tty = stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False
    return bool(tty) and os.environ.get("TERM", "") != "dumb"


def make_display(out: IO[str], terminal: IO[str] | None, log_path: Path | None) -> Display:
    """The live display when ``terminal`` is one, else plain lines on ``out``."""
    if terminal is not None and is_terminal(terminal):
        return LiveDisplay(terminal, log_path)
    return PlainDisplay(out)
