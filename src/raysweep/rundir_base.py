"""Where a run directory lives and how its files are reached: the base of ``RunDir``.

A run is a local directory (``runs/x``, a shared filesystem on a cluster) or a
place on remote storage named by a URI (``s3://bucket/runs/x``), shown and
accepted back by that URI. Its files are read and written through a store
(``raysweep.storage``), and Ray Tune's experiment folders in it (``tune/``,
``tune-ext-N/``) are read through the same store without Ray
(``raysweep._raycompat.experiment_state``).

``path`` is always local: the directory itself, or a remote run's staging
directory (``storage.staging_dir``), which holds its lock, the logs it appends
to before their upload (``synced``), the GPU probe, and copies of experiment
folders while they are repaired (``local_experiment``).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, Self

from raysweep._raycompat import experiment_state
from raysweep.errors import NoSuchRunError, ResumeError
from raysweep.staging import Publisher, pull_staged, pull_tree, push_tree, sync_period_s
from raysweep.storage import (
    FsStore,
    LocalStore,
    Location,
    check_storage,
    is_uri,
    local_path,
    open_location,
    staging_dir,
)

STATE = "state.json"
# written line by line on the driver's machine; a remote run uploads them while it runs
LOG, EVENTS, TRIAL_INFO, USAGE = (
    "sweep_output.log",
    "trials.jsonl",
    "trial_info.jsonl",
    "resource_usage.json",
)
APPENDED = (LOG, EVENTS, TRIAL_INFO)  # only ever grow
STAGED = (*APPENDED, USAGE)  # USAGE: rewritten by each invocation's monitor


class HasDir(Protocol):
    """One Ray Tune experiment of a run (``rundir.Part``)."""

    @property
    def dir(self) -> str: ...


def part_dir(part: HasDir | str) -> str:
    """The experiment folder's name of a part (or the name itself)."""
    return part if isinstance(part, str) else part.dir


class RunPlace:
    """A run's place: local directory or URI, its store, staging and experiment folders."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.location: Location | None = None
        self.store: LocalStore | FsStore
        if is_uri(path):
            self.location = open_location(os.fspath(path))
            self.path = staging_dir(self.location)
            self.store = FsStore(self.location)
        else:
            self.path = local_path(path)
            self.store = LocalStore(self.path)

    @classmethod
    def under(cls, storage: str | os.PathLike[str], name: str) -> Self:
        """The run ``name`` under ``--storage`` (a local directory made absolute)."""
        if is_uri(storage):
            return cls(open_location(os.fspath(storage)).child(name).uri)
        return cls((local_path(storage) / name).resolve())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"

    def __str__(self) -> str:
        return self.location.uri if self.location is not None else str(self.path)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunPlace) and str(other) == str(self)

    def __hash__(self) -> int:
        return hash(str(self))

    @property
    def name(self) -> str:
        return self.location.name if self.location is not None else self.path.name

    @property
    def is_remote(self) -> bool:
        """Whether the run lives on remote storage (a URI)."""
        return self.location is not None

    def resolved(self) -> Self:
        return self if self.location is not None else type(self)(self.path.resolve())

    def where(self, name: str = "") -> str:
        """A file of the run as people see it: its local path, or its URI."""
        if self.location is not None:
            return self.location.child(name).uri if name else self.location.uri
        return str(self.path / name) if name else str(self.path)

    # -- the store -----------------------------------------------------------------
    def _has(self, name: str) -> bool:
        return self.store.kind(name) == "file"

    def _read_json(self, name: str) -> Any:
        """The JSON file ``name`` (None when absent)."""
        data = self.store.read_bytes(name)
        return None if data is None else json.loads(data)

    def _write_text(self, name: str, text: str) -> None:
        self.store.write_bytes(name, text.encode("utf-8"))

    def exists(self) -> bool:
        """Whether anything is stored at the run's place."""
        return self.store.kind() is not None

    def must_exist(self) -> Self:
        """This run, or NoSuchRunError (exit 2) naming its place when nothing is stored there."""
        if not self.exists():
            raise NoSuchRunError(f"no such run directory: {self.where()}")
        return self

    def create(self) -> None:
        """Start a new run directory (FileExistsError when a local one exists).

        Remote storage needs no directory; the staging directory starts empty.
        """
        if self.location is not None:
            shutil.rmtree(self.path, ignore_errors=True)  # of a deleted run of the same URI
        self.path.mkdir(parents=True)

    def check_storage(self) -> None:
        """A remote run: write, read and delete a marker beside it (ConfigError naming it)."""
        if self.location is not None:
            check_storage(self.location.parent())

    def modified_at(self) -> float:
        """When the run last changed (epoch seconds): its directory's mtime.

        Every state change renames a new state.json into the directory, which sets
        the directory's mtime; ``touch -d`` on the directory sets it too. A remote
        run: its state.json's time.
        """
        if self.location is None:
            return self.path.stat().st_mtime
        return self.store.mtime(STATE) or 0.0

    # -- files written on the driver's machine ---------------------------------------
    def _read_staged(self, name: str) -> bytes | None:
        """A file written on the driver's machine: local, or the better of staging and storage.

        An appended log: the longer copy. Otherwise the newer one.
        """
        local = self.path / name
        here = local.read_bytes() if local.is_file() else None
        if self.location is None:
            return here
        if name in APPENDED:
            stored = self.store.read_bytes(name)
            longer = stored is None or (here is not None and len(here) >= len(stored))
            return here if longer else stored
        if here is not None and not self._newer_stored(name, local):
            return here
        return self.store.read_bytes(name) or here

    def _newer_stored(self, name: str, local: Path) -> bool:
        """Whether the storage's copy of ``name`` was written after the staged one."""
        stored = self.store.mtime(name)
        return stored is not None and stored > local.stat().st_mtime

    @contextmanager
    def synced(self) -> Iterator[None]:
        """A remote run: pull the staged logs, then upload them while the block runs.

        Enter it holding the run's lock; a local run needs nothing.
        """
        if not isinstance(self.store, FsStore):
            yield
            return
        files = {name: self.path / name for name in STAGED}
        pull_staged(self.store, files)
        with Publisher(self.store, files, sync_period_s()):
            yield

    # -- Ray Tune's experiment folders -----------------------------------------------
    def experiment_path(self, part: HasDir | str) -> Path:
        """Ray Tune's experiment folder of ``part`` (``tune/``, ``tune-ext-N/``).

        Local: a remote run's copy in staging exists only inside ``local_experiment``.
        """
        return self.path / part_dir(part)

    def has_experiment(self, part: HasDir | str) -> bool:
        """Whether Ray's experiment folder of ``part`` exists."""
        return self.store.kind(part_dir(part)) == "dir"

    def trial_states(self, part: HasDir) -> list[dict[str, Any]]:
        """Trial id, status and config of each trial in the part's newest snapshot."""
        if self.location is None:
            return experiment_state.read_trial_states(self.experiment_path(part))
        name = experiment_state.newest_state_name(self.store.names(part.dir))
        if name is None:
            return []
        rel = f"{part.dir}/{name}"
        data = self.store.read_bytes(rel) or b""
        return experiment_state.parse_trial_states(data, self.where(rel))

    def has_snapshot(self, part: HasDir) -> bool:
        """Whether Ray saved at least one experiment snapshot for the part."""
        return experiment_state.newest_state_name(self.store.names(part.dir)) is not None

    def check_restorable(self, part: HasDir) -> None:
        """ResumeError unless ``part`` is an experiment that ``Tuner.restore`` can read."""
        if self.location is None:
            experiment_state.check_restorable(self.experiment_path(part))
            return
        if not self.has_experiment(part):
            raise ResumeError(
                f"{self.where(part.dir)} is missing: Ray Tune's experiment directory is gone. "
                "Nothing was changed; restore it from a backup or start a new run."
            )
        pkl = f"{part.dir}/{experiment_state.TUNER_PKL}"
        experiment_state.check_tuner_pickle(self.store.read_bytes(pkl), self.where(pkl))
        self.trial_states(part)

    def ray_storage(self) -> tuple[str, Any]:
        """Ray Tune's ``(storage_path, storage_filesystem)`` for this run's experiments."""
        if self.location is None:
            return str(self.path.resolve()), None
        return self.location.path, self.location.fs

    def ray_experiment(self, part: HasDir | str) -> tuple[str, Any]:
        """The experiment of ``part`` as ``Tuner.restore``/``ExperimentAnalysis`` take it."""
        path, fs = self.ray_storage()
        return f"{path}/{part_dir(part)}", fs

    @contextmanager
    def local_experiment(self, part: HasDir | str, write_back: bool = True) -> Iterator[Path]:
        """Ray's experiment folder of ``part`` as a local directory, for the block.

        A local run's is itself. A remote run's is copied to staging (checkpoint
        directories as placeholders); with ``write_back``, what the block changed
        there is written back when it ends without an error.
        """
        local = self.experiment_path(part)
        if not isinstance(self.store, FsStore):
            yield local
            return
        shallow = experiment_state.is_checkpoint_dir
        before = pull_tree(self.store, part_dir(part), local, shallow)
        yield local
        if write_back:
            push_tree(self.store, part_dir(part), local, before)
