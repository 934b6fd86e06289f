"""The local engine's journal: what exactly-once resume replays.

``local/journal.jsonl`` (``RunDir.journal_path``) holds two kinds of line, in the
order the controller (``engines/local/controller.py``) made the matching calls into the
searcher and scheduler:

- ``{"e": "suggest", "id", "index", "config"}``: the searcher suggested a trial;
- ``{"e": "end", "id", "index", "status", "rows", "error_file", "started", "ended"}``:
  a trial ended (``completed``, ``stopped`` or ``errored``) with every row it reported;
  ``error_file`` is the path of its error text, or null.

A trial is finished exactly when its ``end`` line is in the file. Each line is one
``write`` on a descriptor opened with ``O_APPEND``, so a ``kill -9`` leaves at most
a torn last line, which the reader skips (that trial is then unfinished and runs
again from its first iteration). No fsync: the lines survive the process, not a
power cut.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

SUGGEST, END = "suggest", "end"


class Journal:
    """Appends the controller's records to ``local/journal.jsonl``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if not _ends_a_line(path):
            os.write(self._fd, b"\n")  # what a kill left half-written stays one torn line

    def suggested(self, trial_id: str, index: int, config: dict[str, Any]) -> None:
        """Record a suggestion (``config`` as the searcher gave it, trial index included)."""
        self._write({"e": SUGGEST, "id": trial_id, "index": index, "config": config})

    def ended(self, record: dict[str, Any]) -> None:
        """Record a finished trial: ``{"id", "index", "status", "rows", "error_file", ...}``."""
        self._write({"e": END, **record})

    def _write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, default=_plain, allow_nan=True) + "\n"
        os.write(self._fd, line.encode("utf-8"))

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _ends_a_line(path: Path) -> bool:
    """Whether the file is empty or ends with a newline."""
    with path.open("rb") as file:
        if file.seek(0, os.SEEK_END) == 0:
            return True
        file.seek(-1, os.SEEK_END)
        return file.read(1) == b"\n"


def _plain(value: Any) -> Any:
    """numpy scalars as plain JSON numbers; anything else JSON cannot hold as text."""
    item = getattr(value, "item", None)
    return item() if callable(item) else str(value)
