"""Run `sweep run` once per declared Ray target, with that target gone from this Ray.

    python tests/e2e/targets_gone.py ENGINE CONFIG STORAGE_ROOT

For every target the installed Ray's release needs for ENGINE (``ray`` or
``local``), in this one process: remove it (an attribute deleted from its module
or class, a field renamed in the ``__init__`` that stores it, as a Ray release
that renamed it would; a module made unimportable), call the CLI's ``main`` with
``run --config CONFIG --storage STORAGE_ROOT/<n>``, put the target back, and
print one JSON line: the target's name, the exit code, stderr, whether the
storage directory exists and whether Ray was initialised. One process for all
targets: each run stops at the start-up check, before Ray starts, so a fresh
interpreter per target would only repeat ``import ray``.
Not a test module itself (tests/e2e/test_ray_mismatch.py runs it).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ray

from raysweep._raycompat.startup_check import Target, ray_version, required_targets
from raysweep.cli import main


@contextlib.contextmanager
def gone(target: Target) -> Iterator[None]:
    """While the block runs, ``target`` is absent from the installed Ray."""
    if target.kind == "module":
        saved = sys.modules.get(target.module)
        sys.modules[target.module] = None  # type: ignore[assignment]  # import raises
        try:
            yield
        finally:
            if saved is None:
                del sys.modules[target.module]
            else:
                sys.modules[target.module] = saved
        return
    owner: Any = importlib.import_module(target.module)
    *path, name = target.attr.split(".")
    for part in path:
        owner = getattr(owner, part)
    with contextlib.ExitStack() as restore:
        holders = owner.__mro__ if isinstance(owner, type) else (owner,)
        for holder in (h for h in holders if h is not object):
            if name in vars(holder):
                restore.enter_context(_deleted(holder, name))
        if target.kind == "field":
            for klass in owner.__mro__:
                init = vars(klass).get("__init__")
                if isinstance(init, types.FunctionType) and name in init.__code__.co_names:
                    restore.enter_context(_init_renaming(klass, init, name))
        yield


@contextlib.contextmanager
def _deleted(holder: Any, name: str) -> Iterator[None]:
    value = vars(holder)[name]
    delattr(holder, name)
    try:
        yield
    finally:
        setattr(holder, name, value)


@contextlib.contextmanager
def _init_renaming(klass: type, init: types.FunctionType, name: str) -> Iterator[None]:
    """``klass.__init__`` storing ``name`` under another name (its code, names changed)."""
    names = tuple(f"{n}_renamed" if n == name else n for n in init.__code__.co_names)
    renamed = types.FunctionType(
        init.__code__.replace(co_names=names),
        init.__globals__,
        init.__name__,
        init.__defaults__,
        init.__closure__,
    )
    renamed.__kwdefaults__ = init.__kwdefaults__
    klass.__init__ = renamed  # type: ignore[misc]
    try:
        yield
    finally:
        klass.__init__ = init  # type: ignore[misc]


def run_without_each(engine: str, config: str, root: Path) -> None:
    for number, target in enumerate(required_targets(ray_version(), engine)):
        if target.lazy:
            importlib.import_module(target.module)  # checked live once imported
        storage = root / str(number)
        err = io.StringIO()
        with gone(target), contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
            code = main(["run", "--config", config, "--storage", str(storage)])
        record = {
            "target": target.name,
            "code": code,
            "stderr": err.getvalue(),
            "written": storage.exists(),
            "ray_initialized": ray.is_initialized(),
        }
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    run_without_each(sys.argv[1], sys.argv[2], Path(sys.argv[3]))
