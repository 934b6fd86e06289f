"""The searcher's state inside Ray Tune's experiment snapshot, so the two never disagree.

Ray Tune keeps an experiment's state in three files written one after the other:
the base searcher's ``searcher-state-<session>.pkl``, the wrappers' and the
SearchGenerator's ``search_gen_state-<session>.json`` and the trials'
``experiment_state-<session>.json``; a copy to storage, running beside the
driver's loop, takes and stores them one by one too. A ``kill -9`` in between
leaves a searcher that does not match the trials a restore brings back: a
trial the searcher handed out that Ray never recorded, or one Ray recorded as
finished that the searcher still waits for. A strict sweep then waits forever
for a result that never comes; Optuna is told of trials it never asked.

While ``cheap_snapshots()`` is active the searcher is saved first, and its
files' bytes go into the snapshot document itself (``raysweep_searcher``: file
name -> base64), which is written, hard-linked or uploaded as one file. A
restore (``SweepSearch.restore_from_dir`` in ``search/build.py``, through
SearchGenerator's) takes the searcher from the newest snapshot when it holds
one, and from Ray's own files otherwise (a run directory written before this
existed).
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from raysweep._raycompat.experiment_state import newest_state_file
from raysweep.jsonio import write_chunks_atomic

KEY = "raysweep_searcher"


def save_searcher(search_alg: Any, staging: str, session_str: str) -> dict[str, str]:
    """Save ``search_alg`` into ``staging`` as Ray does; returns file name -> base64 bytes."""
    files: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="raysweep-searcher-") as scratch:
        search_alg.save_to_dir(scratch, session_str=session_str)
        for entry in sorted(os.scandir(scratch), key=lambda e: e.name):
            if entry.is_file() and not entry.name.startswith("."):
                data = Path(entry.path).read_bytes()
                files[entry.name] = base64.b64encode(data).decode()
                write_chunks_atomic(os.path.join(staging, entry.name), [data])
    return files


@contextmanager
def embedded_searcher(dirpath: str) -> Iterator[str | None]:
    """A directory holding the searcher files of ``dirpath``'s newest snapshot, while open.

    None when that snapshot holds none (the searcher is then read from Ray's own files).
    """
    path = newest_state_file(Path(dirpath))
    files = _embedded(path) if path is not None else None
    if not files:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="raysweep-searcher-") as scratch:
        for name, data in files.items():
            Path(scratch, os.path.basename(name)).write_bytes(base64.b64decode(data))
        yield scratch


def _embedded(path: Path) -> dict[str, str] | None:
    """The ``raysweep_searcher`` entry of the snapshot at ``path`` (None: absent or unreadable).

    An unreadable snapshot is Ray's to refuse; it fails the restore with its own error.
    """
    try:
        files = json.loads(path.read_bytes()).get(KEY)
    except (OSError, ValueError, AttributeError):
        return None
    return files if isinstance(files, dict) else None
