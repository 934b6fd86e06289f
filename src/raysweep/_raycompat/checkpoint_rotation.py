"""Checkpoint rotation that never leaves the run directory's snapshot pointing at nothing.

With ``checkpoint.num_to_keep`` set, Ray Tune deletes a trial's older checkpoints
as soon as a new one is registered. Its experiment snapshot reaches the run
directory later, so a snapshot there could name a deleted checkpoint; Ray avoids
that by forcing a full snapshot whenever a trial has registered ``num_to_keep``
checkpoints since the last one, which in a sweep that checkpoints often is most
of the driver's work (measured when this module was added; the figures are in git
history, BENCHMARKS.md keeps the current ones only).

While ``deferred_rotation()`` is active, a deletion Ray asks for waits until a
snapshot taken after the request has been copied to the run directory
(``_raycompat/snapshots.py`` reports each copy), and Ray forces no snapshot. Every
snapshot in the run directory then names checkpoints that exist, at any moment
a ``kill -9`` may come; the deletions come at most one snapshot period late.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

logger = logging.getLogger(__name__)


class DeferredDeletions:
    """Deletion requests, carried out once a snapshot that follows them is stored."""

    def __init__(self, delete: Callable[..., None]) -> None:
        self._delete = delete
        self._pending: list[tuple[int, Any, str]] = []  # (request number, fs, path)
        self._requested = 0
        self._lock = threading.Lock()

    def request(self, fs: Any, fs_path: str) -> None:
        """Ray's ``_delete_fs_path``, deferred."""
        with self._lock:
            self._pending.append((self._requested, fs, fs_path))
            self._requested += 1

    def mark(self) -> int:
        """The requests a snapshot taken now reflects (call before taking it)."""
        with self._lock:
            return self._requested

    def snapshot_stored(self, mark: int) -> int:
        """Carry out the requests before ``mark``; returns how many were carried out."""
        with self._lock:
            due = [item for item in self._pending if item[0] < mark]
            self._pending = [item for item in self._pending if item[0] >= mark]
        for _, fs, fs_path in due:
            try:
                self._delete(fs=fs, fs_path=fs_path)
            except FileNotFoundError:
                logger.debug("old checkpoint %s was already gone", fs_path)
            except Exception:  # a storage hiccup: keep going
                logger.warning("could not delete old checkpoint %s", fs_path, exc_info=True)
        return len(due)

    def pending(self) -> list[str]:
        """Paths still waiting for a stored snapshot."""
        with self._lock:
            return [path for _, _, path in self._pending]


_active: DeferredDeletions | None = None


def mark() -> int | None:
    """``DeferredDeletions.mark`` of the active block (None outside one)."""
    return _active.mark() if _active is not None else None


def snapshot_stored(mark: int | None) -> None:
    """Report a snapshot copied to the run directory, taken at ``mark``."""
    if _active is not None and mark is not None:
        _active.snapshot_stored(mark)


@contextmanager
def deferred_rotation() -> Iterator[DeferredDeletions | None]:
    """While the block runs, checkpoint deletions wait for a stored snapshot; none is forced."""
    global _active
    targets = _targets()
    if targets is None or _active is not None:
        yield None  # a Ray without these internals, or an enclosing block already did it
        return
    manager_module, experiment_manager = targets
    original_delete = manager_module._delete_fs_path
    original_forcing = experiment_manager.on_trial_checkpoint
    deletions = DeferredDeletions(original_delete)
    _active = deletions
    manager_module._delete_fs_path = deletions.request
    experiment_manager.on_trial_checkpoint = _no_forced_snapshot
    try:
        yield deletions
    finally:
        manager_module._delete_fs_path = original_delete
        experiment_manager.on_trial_checkpoint = original_forcing
        _active = None
        # Still pending: requested after the last stored snapshot. A finished fit
        # stores a final one, so these are left only after a crash, when the
        # snapshot may still name them.


def _no_forced_snapshot(self: Any, trial: Any) -> None:
    """``_ExperimentCheckpointManager.on_trial_checkpoint`` forcing nothing."""


def _targets() -> tuple[Any, Any] | None:
    """(Ray's checkpoint-manager module, the experiment checkpoint manager class), or None."""
    try:
        from ray.train._internal import checkpoint_manager
        from ray.tune.execution.experiment_state import _ExperimentCheckpointManager
    except ImportError:
        return None
    if not callable(getattr(checkpoint_manager, "_delete_fs_path", None)):
        return None
    if not callable(getattr(_ExperimentCheckpointManager, "on_trial_checkpoint", None)):
        return None
    return checkpoint_manager, _ExperimentCheckpointManager
