"""sweep_output.log: everything a command prints about a run, appended across invocations."""

from __future__ import annotations

import sys
from pathlib import Path
from types import TracebackType
from typing import IO


class _Tee:
    def __init__(self, *streams: IO[str]) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


class RunLog:
    """Prints to the terminal and appends the same lines to the run's log file."""

    def __init__(self, path: Path, out: IO[str] = sys.stdout) -> None:
        self.path = path  # RunDir.log_path
        self.out = out
        self._file: IO[str] | None = None
        self.stream: IO[str] = out

    def __enter__(self) -> RunLog:
        self._file = self.path.open("a", encoding="utf-8")
        self._file.write(f"\n$ {' '.join(sys.argv)}\n")
        self.stream = _Tee(self.out, self._file)  # type: ignore[assignment]
        return self

    def print(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._file is not None:
            if exc is not None:
                self._file.write(f"error: {type(exc).__name__}: {exc}\n")
            self._file.close()
            self._file = None
        self.stream = self.out
