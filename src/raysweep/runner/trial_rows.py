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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.fs
from ray.tune.logger import JsonLoggerCallback
from ray.tune.result import EXPR_RESULT_FILE


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
    """``JsonLoggerCallback`` that never replaces local rows with a stale upload."""

    def _restore_from_remote(self, file_name: str, trial: Any) -> None:
        checked = file_name == EXPR_RESULT_FILE and trial.checkpoint
        if checked and not _remote_copy_is_newer(trial, file_name):
            return  # the driver's own rows are the complete ones
        super()._restore_from_remote(file_name, trial)
