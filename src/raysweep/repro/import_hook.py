"""Run an action the moment a module finishes importing: a one-shot post-import hook.

Why: raysweep seeds, switches and caps torch at every trial start, but only a
torch that is already imported can be touched, and importing it for every
trial would cost a GBM trial about two seconds and a CUDA context. A trainable
that does ``import torch`` inside its function therefore ran the first trial
of every fresh Ray worker unseeded (measured: 2 of 4 trials differed between
two runs of the same sweep at 2 slots, exactly the two that started a worker).
:func:`when_imported` closes that gap without importing anything: a finder at
the front of ``sys.meta_path`` lets the normal finders locate the module, runs
the real loader, then the action, and takes itself off ``sys.meta_path``.

The hook is process-wide (an import can happen on any thread); its state is
guarded by one lock. When several contexts wait for the same module (trials in
threads), the action of the context opened by the importing thread runs, else
that of the latest one: the module's global state is shared by all of them.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

Action = Callable[[ModuleType], None]


@dataclass(eq=False)
class _Waiting:
    """One open :func:`when_imported` context."""

    name: str
    action: Action
    thread: int = field(default_factory=threading.get_ident)


_lock = threading.RLock()
_waiting: list[_Waiting] = []


@contextmanager
def when_imported(name: str, action: Action) -> Iterator[None]:
    """Call ``action(module)`` when top-level module ``name`` finishes importing in this block.

    Runs nothing when ``name`` is already imported (the caller handles that case
    directly) or when the block ends without importing it; either way the hook
    is gone from ``sys.meta_path`` when the block ends, as it is right after it
    fires. An exception raised by ``action`` fails the import statement.
    """
    if "." in name:
        raise ValueError(f"when_imported watches top-level modules only (got {name!r})")
    entry = _Waiting(name, action)
    with _lock:
        if name not in sys.modules:
            _waiting.append(entry)
            _install()
    try:
        yield
    finally:
        with _lock:
            if entry in _waiting:
                _waiting.remove(entry)
            if not _waiting:
                _uninstall()


def watching() -> list[str]:
    """Names of the modules a hook waits for now (for tests and diagnostics)."""
    with _lock:
        return [entry.name for entry in _waiting]


def _take(name: str) -> _Waiting | None:
    """Remove every context waiting for ``name``; the one whose action runs."""
    with _lock:
        mine = [entry for entry in _waiting if entry.name == name]
        if not mine:
            return None
        for entry in mine:
            _waiting.remove(entry)
        if not _waiting:
            _uninstall()
    here = threading.get_ident()
    return next((entry for entry in reversed(mine) if entry.thread == here), mine[-1])


class _Finder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader that the other finders find for a watched name."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        with _lock:
            if fullname not in {entry.name for entry in _waiting}:
                return None
        spec = _find_elsewhere(fullname, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _ThenAct(spec.loader, fullname)
        return spec


_FINDER = _Finder()


def _install() -> None:
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def _uninstall() -> None:
    while _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)


def _find_elsewhere(
    fullname: str, path: Sequence[str] | None, target: ModuleType | None
) -> ModuleSpec | None:
    """The spec the rest of ``sys.meta_path`` finds, as if this hook were not there."""
    for finder in list(sys.meta_path):
        find = getattr(finder, "find_spec", None)
        if finder is _FINDER or find is None:
            continue
        spec = find(fullname, path, target)
        if spec is not None:
            return spec
    return None


class _ThenAct(importlib.abc.Loader):
    """The module's own loader, then the waiting action; the module keeps its own loader."""

    def __init__(self, loader: Any, name: str) -> None:
        self.loader, self.name = loader, name

    def __getattr__(self, attr: str) -> Any:  # get_filename, is_package, get_resource_reader...
        return getattr(self.loader, attr)

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        if getattr(module, "__loader__", None) in (None, self):
            module.__loader__ = self.loader  # importlib.resources, inspect and pkgutil use it
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.loader is self:
            spec.loader = self.loader
        self.loader.exec_module(module)
        entry = _take(self.name)
        if entry is not None:
            entry.action(module)
