"""A remote run's local staging directory, kept in step with its storage.

A run on remote storage (``raysweep.storage``) keeps a few files in a local
directory (``storage.staging_dir``): the lock (an flock needs a local file) and
the files written line by line by the driver, its progress callback and the
trial processes (``sweep_output.log``, ``trials.jsonl``, ``trial_info.jsonl``,
``resource_usage.json``). The storage's copy is the run's:

- :func:`pull_staged`, when a drive starts (under the lock): a staged file is
  replaced by the storage's copy when that one is longer (another machine drove
  the run, or the staging directory is new or was deleted);
- :class:`Publisher`, while a drive runs: every staged file that changed is
  uploaded every ``period_s`` seconds and once more at the end. A ``kill -9``
  loses at most the last period of these logs; what a resume restores (Ray's
  experiment) is written by Ray Tune straight to the storage.

raysweep's repair of a killed experiment and the searcher warm start read Ray's
experiment folder as a local directory: :func:`pull_tree` copies one to staging
(checkpoint directories as placeholders, their contents left where they are)
and :func:`push_tree` writes back what changed there, deletions included.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType

from raysweep.storage import FsStore, StorageError

logger = logging.getLogger(__name__)

SYNC_ENV = "RAYSWEEP_STORAGE_SYNC_S"
DEFAULT_SYNC_S = 5.0
PLACEHOLDER = ".raysweep-remote-dir"  # stands for a directory whose files stayed remote

Signature = tuple[int, int]  # size, mtime_ns


def sync_period_s() -> float:
    """Seconds between uploads of the staged files (``RAYSWEEP_STORAGE_SYNC_S``, default 5)."""
    try:
        return max(0.1, float(os.environ.get(SYNC_ENV) or DEFAULT_SYNC_S))
    except ValueError:
        return DEFAULT_SYNC_S


def _signature(path: Path) -> Signature | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_size, stat.st_mtime_ns


def pull_staged(store: FsStore, files: Mapping[str, Path]) -> list[str]:
    """Replace each staged file with the storage's copy when that is longer; returns those."""
    pulled = []
    for rel, path in files.items():
        remote = store.size(rel)
        local = path.stat().st_size if path.is_file() else None
        if remote is None or (local is not None and local >= remote):
            continue
        data = store.read_bytes(rel)
        if data is None:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.pull.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        pulled.append(rel)
    return pulled


class Publisher:
    """Uploads the staged files that changed, every ``period_s`` seconds and at the end."""

    def __init__(self, store: FsStore, files: Mapping[str, Path], period_s: float) -> None:
        self.store = store
        self.files = dict(files)
        self.period_s = period_s
        self._sent: dict[str, Signature] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def publish(self) -> int:
        """Upload every staged file changed since its last upload; returns how many."""
        count = 0
        with self._lock:
            for rel, path in self.files.items():
                signature = _signature(path)
                if signature is None or self._sent.get(rel) == signature:
                    continue
                try:
                    data = path.read_bytes()
                except FileNotFoundError:
                    continue
                self.store.write_bytes(rel, data)
                self._sent[rel] = signature
                count += 1
        return count

    def _loop(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                self.publish()
            except StorageError as exc:  # a storage hiccup: the next period tries again
                logger.warning("could not upload the run's logs: %s", exc)

    def __enter__(self) -> Publisher:
        self._thread = threading.Thread(target=self._loop, name="raysweep-publish", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        try:
            self.publish()
        except StorageError as error:
            logger.warning("could not upload the run's logs at the end: %s", error)


def _local_files(root: Path) -> dict[str, Signature]:
    """Relative path (with '/') -> signature of every file under ``root``."""
    found: dict[str, Signature] = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            signature = _signature(path)
            if signature is not None:
                found[path.relative_to(root).as_posix()] = signature
    return found


def pull_tree(
    store: FsStore, rel: str, local: Path, shallow: Callable[[str], bool]
) -> dict[str, Signature]:
    """Copy the tree at ``rel`` to ``local`` (replacing it); returns the copy's signatures.

    A directory whose name ``shallow`` accepts is created with a placeholder file
    when it holds anything, its files left in the storage.
    """
    shutil.rmtree(local, ignore_errors=True)
    local.mkdir(parents=True)
    base = store.fs_path(rel)
    for info in store.infos(rel, recursive=True):
        sub = os.path.relpath(info.path.lstrip("/"), base.lstrip("/"))
        parts = sub.split("/")
        cut = next((i for i, part in enumerate(parts[:-1]) if shallow(part)), None)
        if cut is not None:
            folder = local.joinpath(*parts[: cut + 1])
            folder.mkdir(parents=True, exist_ok=True)
            (folder / PLACEHOLDER).touch()
        elif info.type.name == "Directory":
            local.joinpath(*parts).mkdir(parents=True, exist_ok=True)
        else:
            target = local.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(store.read_bytes(f"{rel}/{sub}") or b"")
    return _local_files(local)


def push_tree(store: FsStore, rel: str, local: Path, before: Mapping[str, Signature]) -> int:
    """Write back what changed in ``local`` since :func:`pull_tree`; returns the changes.

    New and changed files are uploaded; a deleted file is deleted, and a deleted
    placeholder deletes its directory.
    """
    now = _local_files(local)
    changes = 0
    for sub, signature in now.items():
        if os.path.basename(sub) != PLACEHOLDER and before.get(sub) != signature:
            store.write_bytes(f"{rel}/{sub}", (local / sub).read_bytes())
            changes += 1
    for sub in before:
        if sub not in now:
            gone = os.path.dirname(sub) if os.path.basename(sub) == PLACEHOLDER else sub
            store.delete(f"{rel}/{gone}")
            changes += 1
    return changes
