"""Atomic JSON files: every state file raysweep writes goes through here."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def _write_atomic(
    path: str | os.PathLike[str], chunks: Iterable[bytes], *, fsync: bool = False
) -> None:
    """Write ``chunks`` one after the other to a temp file beside ``path``, then rename it."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.writelines(chunks)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: str | os.PathLike[str], data: Any, *, indent: int | None = 2) -> None:
    """Write ``data`` as JSON to ``path`` via a temp file + rename (never a torn file)."""
    text = json.dumps(data, indent=indent, default=str) + "\n"
    _write_atomic(path, [text.encode("utf-8")], fsync=True)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` via a temp file + rename."""
    _write_atomic(path, [text.encode("utf-8")])


def write_chunks_atomic(path: str | os.PathLike[str], chunks: Iterable[bytes]) -> None:
    """Write ``chunks``, one after the other, to ``path`` via a temp file + rename."""
    _write_atomic(path, chunks)


def read_json(path: str | os.PathLike[str]) -> Any:
    """Read a JSON file."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)
