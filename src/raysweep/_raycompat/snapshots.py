"""Ray Tune's experiment snapshots, at a cost that follows what changed since the last one.

Ray Tune snapshots the experiment (every trial's state, the searcher's) into the
driver's staging directory and then copies that whole directory, every trial's
``result.json`` included, to the run directory. With ``checkpoint.num_to_keep``
set, a trial's checkpoint rotation forces a snapshot, and a forced snapshot
first waits for the previous copy to finish. py-spy on a 270-trial Hyperband
sweep of LightGBM (checkpoints at its rungs): 20% of the driver's samples went
to encoding the snapshot with json's pure-Python encoder (``json.dump`` to a
file never uses the C encoder), 17% to copying the staging directory.

While ``cheap_snapshots()`` is active:

- the snapshot is encoded with the C encoder, each trial's entry only when it
  changed (``_raycompat/snapshot_text.py``; the same text), and replaces the
  previous one atomically, so a copy running alongside never reads a
  half-written snapshot;
- the copy to the run directory writes the top-level files (snapshot, searcher
  state) every time and a file in a trial's directory only when its size,
  modification time or inode changed since it was last copied, each through a
  temporary name and a rename; files whose writer appends to the run directory
  itself (``_raycompat/trial_rows.py``) are left to it; the trials' files go
  first and the snapshot last, so the rows a stored snapshot names are stored;
  on a local run directory the snapshot is hard-linked, not copied;
- checkpoint rotation waits for stored snapshots and forces none
  (``_raycompat/checkpoint_rotation.py``);
- the searcher's state is saved first and goes into the snapshot itself, so a
  restore never pairs trials with a searcher of another moment
  (``_raycompat/searcher_snapshot.py``).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from raysweep._raycompat import checkpoint_rotation
from raysweep._raycompat.searcher_snapshot import KEY as SEARCHER_KEY
from raysweep._raycompat.searcher_snapshot import save_searcher
from raysweep._raycompat.snapshot_text import SnapshotText
from raysweep.jsonio import write_chunks_atomic
from raysweep.storage import OBJECT_STORES

Signature = tuple[int, int, int]  # size, mtime_ns, inode
_TMP_SUFFIX = ".raysweep-tmp"


class _Linked(NamedTuple):
    """A hard link to a top-level file, made beside its destination, waiting to be renamed."""

    path: str


class IncrementalUploader:
    """Copies a local directory to (filesystem, path), skipping trial files already there."""

    def __init__(self) -> None:
        self._copied: dict[tuple[str, str], dict[str, Signature]] = {}
        self._made_dirs: set[tuple[int, str]] = set()  # (id of the filesystem, directory)
        self._direct: set[str] = set()  # destinations their writers keep up to date
        self._atomic: set[str] = set()  # staging files only ever replaced by a rename
        self._lock = threading.RLock()

    def upload(self, local_path: str, fs: Any, fs_path: str) -> int:
        """Copy what changed under ``local_path`` to ``fs_path`` on ``fs``; returns files copied.

        The top-level files (snapshot, searcher state) are read first and written
        last, after the trials' files: a kill in between leaves in storage a
        snapshot no newer than the rows it names. (The other order left, in a
        bucket, a snapshot at a checkpoint whose rows never landed.)
        """
        copied = self._copied.setdefault((local_path, fs_path), {})
        files = list(_files(local_path))
        top = []
        for rel, source in files:
            if "/" not in rel:
                dest = posixpath.join(fs_path, rel)
                top.append((dest, self._take(source, fs, dest)))
        count = 0
        for rel, source in files:
            if "/" in rel:
                count += self._copy_trial_file(copied, rel, source, fs, fs_path)
        for dest, taken in top:
            if isinstance(taken, _Linked):
                os.replace(taken.path, dest)
            elif taken is not None:
                self.replace(fs, dest, taken)
            if taken is not None:
                count += 1
        return count

    def replaced_atomically(self, path: str) -> None:
        """``path`` (a staging file) only ever changes by a rename onto it.

        Such a file is hard-linked into a local run directory instead of copied:
        the link keeps the content it had when it was taken, and at 10,000 trials
        the snapshot is 100 MB read and written again at every upload otherwise.
        """
        with self._lock:
            self._atomic.add(os.path.abspath(path))

    def _take(self, source: str, fs: Any, dest: str) -> _Linked | bytes | None:
        """The content of top-level ``source`` as it is now: a link beside ``dest``, or bytes."""
        if getattr(fs, "type_name", None) == "local" and os.path.abspath(source) in self._atomic:
            link = dest + _TMP_SUFFIX
            try:
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(link)
                os.link(source, link)
                return _Linked(link)
            except FileNotFoundError:
                return None  # removed since it was listed
            except OSError:
                pass  # another filesystem, or no hard links there: copy the bytes
        return _read(source)

    def _copy_trial_file(
        self, copied: dict[str, Signature], rel: str, source: str, fs: Any, fs_path: str
    ) -> int:
        """Copy one file of a trial's directory if it changed; returns 1 if copied."""
        try:
            stat = os.stat(source)
        except FileNotFoundError:
            return 0  # removed since it was listed
        signature = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
        if copied.get(rel) == signature:
            return 0
        dest = posixpath.join(fs_path, rel)
        with self._lock:
            if dest in self._direct:
                return 0  # its writer keeps it up to date
            data = _read(source)
            if data is None:
                return 0
            self._write(fs, dest, data)
        copied[rel] = signature
        return 1

    @contextmanager
    def writing_directly(self, dest: str) -> Iterator[None]:
        """Hold off copies to ``dest`` while the block runs and, after it, for good.

        For a file whose writer appends to the run directory's copy itself: inside
        the block it can bring that copy up to date, and no copy replaces it later.
        """
        with self._lock:
            self._direct.add(dest)
            yield

    def forget_direct(self) -> None:
        """Files written directly are copied again (a new fit)."""
        with self._lock:
            self._direct.clear()

    def _write(self, fs: Any, dest: str, data: bytes) -> None:
        """``data`` to ``dest`` through a temporary name and a rename (caller holds the lock).

        On an object store (S3, GCS) a write is atomic by itself and a rename is a
        copy: the object is written in place, and no directory is made.
        """
        if getattr(fs, "type_name", None) in OBJECT_STORES:
            with fs.open_output_stream(dest) as stream:
                stream.write(data)
            return
        parent = posixpath.dirname(dest)
        if (id(fs), parent) not in self._made_dirs:
            fs.create_dir(parent, recursive=True)
            self._made_dirs.add((id(fs), parent))
        target = dest + _TMP_SUFFIX
        with fs.open_output_stream(target) as stream:
            stream.write(data)
        fs.move(target, dest)

    def replace(self, fs: Any, dest: str, data: bytes) -> None:
        """Write ``data`` to ``dest`` through a temporary name and a rename."""
        with self._lock:
            self._write(fs, dest, data)


def _read(path: str) -> bytes | None:
    """The file's bytes, or None when it was removed since it was listed."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        return None


def _files(root: str) -> Iterator[tuple[str, str]]:
    """(path relative to root with '/', absolute path) of every file, temp files left out.

    ``os.scandir`` with the relative paths built as strings: ``os.walk`` with
    ``relpath`` took 0.6 s of CPU per upload at 10,000 trial directories.
    """
    pending = [("", root)]
    while pending:
        rel_folder, folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            continue  # removed since it was listed
        for entry in entries:
            rel = f"{rel_folder}{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                pending.append((rel + "/", entry.path))
            elif entry.name.startswith(".") and entry.name.endswith(".tmp"):
                continue  # a raysweep.jsonio temp file about to be renamed
            else:
                yield rel, entry.path


def save_to_dir(controller: Any) -> None:
    """``TuneController.save_to_dir``: the same snapshot, encoded incrementally, atomic."""
    from ray.tune.utils.serialization import TuneFunctionEncoder

    global _saved_mark
    taken_at = checkpoint_rotation.mark()  # deletions asked for so far are in this snapshot
    staging = controller._storage.experiment_driver_staging_path
    searcher = save_searcher(controller._search_alg, staging, controller._session_str)
    chunks = _TEXT.encode(
        controller._get_trial_checkpoints(),
        controller.__getstate__(),
        {"start_time": controller._start_time},
        encoder=TuneFunctionEncoder,
        extra={SEARCHER_KEY: searcher},
    )
    path = os.path.join(staging, controller.experiment_state_file_name)
    write_chunks_atomic(path, chunks)
    _UPLOADER.replaced_atomically(path)
    controller._callbacks.save_to_dir(staging, session_str=controller._session_str)
    _saved_mark = taken_at


_UPLOADER = IncrementalUploader()
_TEXT = SnapshotText()
_ray_upload: Callable[..., None] | None = None  # Ray's own _upload_to_fs_path
_active = False
_saved_mark: int | None = None  # checkpoint_rotation.mark() of the newest snapshot saved


def upload_changed(
    local_path: str, fs: Any, fs_path: str, exclude: list[str] | None = None
) -> None:
    """Stands in for Ray's ``_upload_to_fs_path``: directories go through ``_UPLOADER``.

    A module-level function, so that Ray's syncer, which keeps its last command
    and is pickled with the experiment, pickles it by reference.
    """
    if exclude or not os.path.isdir(local_path):
        if _ray_upload is None:
            raise RuntimeError("raysweep's snapshot upload used outside cheap_snapshots()")
        _ray_upload(local_path=local_path, fs=fs, fs_path=fs_path, exclude=exclude)
        return
    taken_at = _saved_mark  # the staging snapshot is this one or a newer one
    _UPLOADER.upload(local_path, fs, fs_path)
    checkpoint_rotation.snapshot_stored(taken_at)


def direct_uploader() -> IncrementalUploader | None:
    """The uploader of the active ``cheap_snapshots()`` block (None outside one)."""
    return _UPLOADER if _active else None


@contextmanager
def cheap_snapshots() -> Iterator[None]:
    """While the block runs, snapshots are encoded fast and copied incrementally."""
    global _ray_upload, _active, _saved_mark
    targets = _targets()
    if targets is None:
        yield  # a Ray Tune without these internals: its own behaviour
        return
    controller, storage = targets
    original_save, _ray_upload = controller.save_to_dir, storage._upload_to_fs_path
    controller.save_to_dir = save_to_dir
    storage._upload_to_fs_path = upload_changed
    _active, _saved_mark = True, None
    try:
        with checkpoint_rotation.deferred_rotation():
            yield
    finally:
        controller.save_to_dir = original_save
        storage._upload_to_fs_path = _ray_upload
        _active = False
        _UPLOADER.forget_direct()
        _TEXT.clear()


def _targets() -> tuple[Any, Any] | None:
    """(TuneController class, Ray's storage module), or None when either has changed shape."""
    try:
        from ray.train._internal import storage
        from ray.tune.execution.tune_controller import TuneController
    except ImportError:
        return None
    upload = getattr(storage, "_upload_to_fs_path", None)
    if not callable(upload) or upload is upload_changed:
        return None  # absent, or already replaced by an enclosing block
    needed = ("_get_trial_checkpoints", "save_to_dir", "experiment_state_file_name")
    if not all(hasattr(TuneController, name) for name in needed):
        return None
    return TuneController, storage
