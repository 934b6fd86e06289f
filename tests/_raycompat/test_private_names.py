"""No private Ray name is touched outside _raycompat, where each one is a declared target.

tests/test_architecture.py checks imports; this checks attribute use: a raysweep
class built on a Ray class neither reads nor overrides a private name of its Ray
bases, and a private attribute read on any other object is one raysweep defines
itself (or one of the standard library's, listed here).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path

from raysweep._raycompat.private_name import stored_in_init

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "raysweep"
STDLIB_PRIVATE = {"_exit", "_replace", "_run_exitfuncs", "_SubParsersAction"}


def _files() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_raycompat" not in path.parts:
            parts = path.relative_to(SRC).with_suffix("").parts
            module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            yield module, ast.parse(path.read_text(encoding="utf-8"))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _self_names(cls: ast.ClassDef) -> set[str]:
    """Private names a class body uses on ``self`` or defines as methods."""
    names = {n.name for n in cls.body if isinstance(n, ast.FunctionDef) and _private(n.name)}
    for node in ast.walk(cls):
        base = getattr(node, "value", None)
        on_self = isinstance(base, ast.Name) and base.id == "self"
        if isinstance(node, ast.Attribute) and on_self and _private(node.attr):
            names.add(node.attr)
    return names


def test_no_class_on_a_ray_base_uses_a_private_name_of_it() -> None:
    found = []
    for module, tree in _files():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            cls = getattr(importlib.import_module(module), node.name, None)
            if not inspect.isclass(cls):
                continue
            ray_bases = [k for k in cls.__mro__[1:] if k.__module__.startswith("ray.")]
            for name in _self_names(node):
                if any(name in vars(k) or name in stored_in_init(k) for k in ray_bases):
                    found.append(f"{module}.{node.name}: {name}")
    assert found == []


def test_private_attributes_read_on_other_objects_are_raysweeps_own() -> None:
    own: set[str] = set()
    reads: list[tuple[str, str, int]] = []
    for module, tree in _files():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and _private(node.name):
                own.add(node.name)
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                base = node.value
                on_self = isinstance(base, ast.Name) and base.id in ("self", "cls")
                if on_self or isinstance(node.ctx, ast.Store):
                    own.add(node.attr)
                else:
                    reads.append((module, node.attr, node.lineno))
    foreign = [r for r in reads if r[1] not in own and r[1] not in STDLIB_PRIVATE]
    assert foreign == []
