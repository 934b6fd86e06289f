"""Module paths of earlier releases, resolved to where that code lives now.

Ray pickles raysweep's callbacks, searcher and trial-name function into a run's
``tune/tuner.pkl`` by module path, so a run directory written before a module moved names
the old path. Importing an old path gives the moved module itself (the same module
object, so its classes are the same classes), and such a run resumes. A module that
moves adds its old path here; ``tests/test_moved.py`` lists the names
earlier run directories hold.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType

MOVED = {  # old module or package -> where it is now (the longest old prefix wins)
    "raysweep.driver": "raysweep.engines.ray",
    "raysweep.local": "raysweep.engines.local",
    "raysweep.tuner": "raysweep.engines.ray",
    "raysweep.tuner.build": "raysweep.engines.ray.tuner",
    "raysweep.tuner.search_alg": "raysweep.search.build",
}


def new_name(old: str) -> str | None:
    """Where the module ``old`` lives now; None when it did not move."""
    prefixes = [p for p in MOVED if old == p or old.startswith(f"{p}.")]
    if not prefixes:
        return None
    prefix = max(prefixes, key=len)
    return MOVED[prefix] + old[len(prefix) :]


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module path as the module now at its new path."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if new_name(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(new_name(spec.name) or spec.name)
        spec.loader_state = module.__spec__  # the import system sets the old path's spec
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (the module ran at its new path); its own spec goes back."""
        assert module.__spec__ is not None
        module.__spec__ = module.__spec__.loader_state


def install() -> None:
    """Put the finder first, before the path finder could load a moved module twice."""
    if not any(isinstance(finder, MovedModules) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModules())
