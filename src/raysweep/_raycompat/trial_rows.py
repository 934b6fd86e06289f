"""Ray Tune's per-trial ``result.json`` writer, safe against a racing upload.

When a trial restarts with a checkpoint (Hyperband resumes a paused trial, a
failed trial is retried), Ray's ``JsonLoggerCallback`` first copies the trial's
``result.json`` back from the run directory over the driver's local copy. Ray
uploads the driver's files to the run directory in a background thread, so
that copy can be an older or half-written one: the rows written since are lost
from the local file and, at the next upload, from the run directory too.

Within one driver process the local file is the complete one; it is only
absent (or shorter) when the sweep was resumed by a new process, and then the
run directory's copy is the one to continue.

A trial that restarts continues from its latest checkpoint: its next report is
that checkpoint's iteration + 1, or iteration 1 without one. The rows it wrote
after that point (a retry per ``max_failures`` after a failure past its last
checkpoint) are cut before it appends again, with the whole file kept as
``result.json.orig``, so that every iteration appears once.

Inside ``_raycompat/snapshots.py``'s ``cheap_snapshots()`` and with a run directory
on the local filesystem, every row is also appended to the run directory's copy
as it is written, and the snapshot copies leave that file alone. A ``kill -9``
then finds every reported row there, with the name of every checkpoint
registered, instead of the rows of the last snapshot: a resume continues from
the trial's newest checkpoint (``_raycompat/repair.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.fs
from ray.tune.logger import JsonLoggerCallback
from ray.tune.result import EXPR_RESULT_FILE
from ray.tune.utils.util import SafeFallbackEncoder

from raysweep._raycompat.repair import ITER, truncate_rows
from raysweep._raycompat.snapshots import direct_uploader


def remote_copy_is_newer(local_size: int | None, remote_size: int | None) -> bool:
    """Whether the run directory's copy should replace the driver's (bytes; None: absent)."""
    if remote_size is None:
        return False
    return local_size is None or remote_size > local_size


def _remote_copy_is_newer(trial: Any, file_name: str) -> bool:
    """``remote_copy_is_newer`` for one trial's file (True when storage cannot be asked)."""
    local = Path(trial.local_path, file_name)
    local_size = local.stat().st_size if local.is_file() else None
    remote = Path(trial.storage.trial_fs_path, file_name).as_posix()
    try:
        info = trial.storage.storage_filesystem.get_file_info(remote)
    except Exception:  # storage unreachable: Ray's own restore (it logs and goes on)
        return True
    remote_size = info.size if info.type == pyarrow.fs.FileType.File else None
    return remote_copy_is_newer(local_size, remote_size)


class TrialRowsLogger(JsonLoggerCallback):
    """``JsonLoggerCallback`` that never replaces local rows with a stale upload.

    Inside ``cheap_snapshots()`` it also appends each row to the run directory.
    """

    def __init__(self) -> None:
        super().__init__()
        self._direct: dict[Any, Path] = {}  # trial -> the run directory's result.json

    def log_trial_start(self, trial: Any) -> None:
        super().log_trial_start(trial)
        self._start_direct(trial)

    def log_trial_result(self, iteration: int, trial: Any, result: dict[str, Any]) -> None:
        super().log_trial_result(iteration, trial, result)
        dest = self._direct.get(trial)
        if dest is not None:  # opened per row: paused trials hold no file open
            with dest.open("a", encoding="utf-8") as rows:
                rows.write(json.dumps(result, cls=SafeFallbackEncoder) + "\n")

    def log_trial_end(self, trial: Any, failed: bool = False) -> None:
        super().log_trial_end(trial, failed)
        self._direct.pop(trial, None)

    def _start_direct(self, trial: Any) -> None:
        """Bring the run directory's rows up to the local ones; append there from now on."""
        self._direct.pop(trial, None)
        uploader = direct_uploader()
        storage: Any = getattr(trial, "storage", None)
        fs = getattr(storage, "storage_filesystem", None)
        if uploader is None or not isinstance(fs, pyarrow.fs.LocalFileSystem):
            return
        local = Path(trial.local_path, EXPR_RESULT_FILE)
        dest = Path(storage.trial_fs_path, EXPR_RESULT_FILE)
        with uploader.writing_directly(dest.as_posix()):
            rows = local.read_bytes() if local.is_file() else b""
            held = dest.stat().st_size if dest.is_file() else None
            if held is None and not rows:
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.touch()
            elif held != len(rows):
                uploader.replace(fs, dest.as_posix(), rows)
        self._direct[trial] = dest

    def _restore_from_remote(self, file_name: str, trial: Any) -> None:
        """Ray's: bring back the uploaded rows; then cut those the trial will report again."""
        checked = file_name == EXPR_RESULT_FILE and trial.checkpoint
        if not checked or _remote_copy_is_newer(trial, file_name):
            super()._restore_from_remote(file_name, trial)
        # else: the driver's own rows are the complete ones
        if file_name == EXPR_RESULT_FILE:
            truncate_rows(Path(trial.local_path, file_name), restart_iteration(trial))


def restart_iteration(trial: Any) -> int:
    """The iteration a (re)starting trial's next report follows: its checkpoint's, or 0."""
    result = trial.latest_checkpoint_result
    if result is None or result.checkpoint is None:
        return 0
    return int(result.metrics.get(ITER) or 0)
