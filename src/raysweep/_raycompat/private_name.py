"""One private Ray name, and how to tell whether the installed Ray still has it in that shape.

A :class:`Target` names a module attribute (dotted through classes), what it
must be, the raysweep module that relies on it, the engines that use that
module and, for a difference between Ray releases, the releases it applies
to. :func:`problem` says why it does not match the installed Ray.

Instance attributes (``TuneController._start_time``) exist only on instances,
and constructing a TuneController or a Tuner at start-up would cost seconds.
A ``field`` is found instead among the attributes a class of the MRO stores in
its ``__init__`` bytecode (``STORE_ATTR``), or on the class (a property, a
method, a class attribute): no source file needed. Checking every target costs
about 14 ms of CPU once the modules are imported, and ``check_ray`` imports no
module the driver would not import anyway (docs/ray-compat.md).
"""

from __future__ import annotations

import ast
import dis
import functools
import importlib
import importlib.util
import inspect
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import Any, Literal

Kind = Literal["callable", "class", "value", "field", "keys", "source", "module"]
Version = tuple[int, int, int]


@dataclass(frozen=True)
class Target:
    """One private Ray name: ``module`` + dotted ``attr`` and what it must be.

    ``kind``/``params``: ``callable`` takes ``params`` as its leading parameters;
    ``class``, ``value``: exists and is a class/anything; ``field``: an attribute
    of the class's instances; ``keys``: a function whose dict literals have
    exactly the string keys ``params`` (the shape of a document raysweep writes in
    Ray's place); ``source``: a function whose code contains each of ``params``
    (whitespace aside); ``module``: an importable module (``attr`` empty).
    ``since``/``before``: the Ray releases the target applies to (a difference
    between releases is one target per side). ``lazy``: the module imports a
    heavy library (Optuna, 0.7 s): while it is not imported, its source file is
    read instead.
    """

    module: str
    attr: str
    kind: Kind
    params: tuple[str, ...] = ()
    used_by: str = ""
    engines: tuple[str, ...] = ("ray",)
    since: Version | None = None
    before: Version | None = None
    lazy: bool = False

    @property
    def name(self) -> str:
        return f"{self.module}.{self.attr}" if self.attr else self.module

    def applies_to(self, version: Version | None) -> bool:
        """Whether this target is Ray ``version``'s (every target when it is unknown)."""
        if version is None:
            return True
        return (self.since is None or version >= self.since) and (
            self.before is None or version < self.before
        )


def parse_version(version: str) -> Version | None:
    """``"2.59.0"`` -> ``(2, 59, 0)``; None for anything else."""
    try:
        major, minor, patch = (int(part) for part in version.split(".")[:3])
    except ValueError:
        return None
    return major, minor, patch


def resolve(target: Target) -> Any:
    """The object ``target`` names (None for a field); AttributeError/ImportError when gone."""
    node: Any = importlib.import_module(target.module)
    names = target.attr.split(".") if target.attr else []
    for i, name in enumerate(names):
        last = i == len(names) - 1
        if last and target.kind == "field" and inspect.isclass(node):
            if name in stored_in_init(node) or _defined_on(node, name):
                return None
            raise AttributeError(f"{node.__name__} instances have no {name!r}")
        if not (_defined_on(node, name) if inspect.isclass(node) else hasattr(node, name)):
            raise AttributeError(f"{getattr(node, '__name__', node)} has no {name!r}")
        node = getattr(node, name)
    return node


def _defined_on(cls: type, name: str) -> bool:
    """Whether ``cls`` or a base other than ``object`` defines ``name``.

    (``object.__getstate__`` is no stand-in for the one a Ray class defines.)
    """
    return any(name in vars(klass) for klass in cls.__mro__ if klass is not object)


def stored_in_init(cls: type) -> set[str]:
    """Attribute names the ``__init__`` of ``cls`` or of a class it inherits from stores."""
    names: set[str] = set()
    for klass in cls.__mro__:
        code = getattr(klass.__dict__.get("__init__"), "__code__", None)
        if code is not None:
            names |= _stores(code)
    return names


@functools.lru_cache(maxsize=256)
def _stores(code: CodeType) -> frozenset[str]:
    """The attribute names a code object stores (a replaced ``__init__`` is a new key)."""
    return frozenset(i.argval for i in dis.get_instructions(code) if i.opname == "STORE_ATTR")


def problem(target: Target) -> str | None:
    """Why ``target`` does not match the installed Ray (None when it does)."""
    if target.lazy and target.module not in sys.modules:
        return _problem_in_source_file(target)
    try:
        obj = resolve(target)
    except (ImportError, AttributeError) as exc:
        return f"{target.name} is missing ({exc})"
    if target.kind == "class" and not inspect.isclass(obj):
        return f"{target.name} is no longer a class"
    if target.kind in ("callable", "keys", "source") and not callable(obj):
        return f"{target.name} is no longer callable"
    if target.kind == "callable":
        return _parameter_problem(target, obj)
    if target.kind in ("keys", "source"):
        try:
            source = textwrap.dedent(inspect.getsource(obj))
        except (OSError, TypeError):
            return f"{target.name}: its source cannot be read to check its shape"
        return _source_problem(target, source)
    return None


def _parameter_problem(target: Target, obj: Any) -> str | None:
    try:
        names = tuple(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return None
    if names[: len(target.params)] != target.params:
        return f"{target.name} takes ({', '.join(names)}), expected ({', '.join(target.params)})"
    return None


def _source_problem(target: Target, source: str) -> str | None:
    if target.kind == "keys":
        keys = {
            key.value
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Dict)
            for key in node.keys
            if isinstance(key, ast.Constant) and isinstance(key.value, str)
        }
        if keys != set(target.params):
            return f"{target.name} writes the keys {sorted(keys)}, expected {sorted(target.params)}"
        return None
    flat = " ".join(source.split())
    missing = [fragment for fragment in target.params if " ".join(fragment.split()) not in flat]
    if missing:
        return f"{target.name} no longer contains {' / '.join(missing)}"
    return None


def _problem_in_source_file(target: Target) -> str | None:
    """``problem`` of a lazy target, read in its module's file instead of importing it."""
    path = _module_file(target.module)
    if path is None:
        return f"{target.name} is missing (no module {target.module})"
    node: ast.AST = _parsed(path, path.stat().st_mtime_ns)
    names = target.attr.split(".")
    for i, name in enumerate(names):
        found = _definition(node, name)
        last = i == len(names) - 1
        if found is None and last and target.kind == "field" and isinstance(node, ast.ClassDef):
            if name in _assigned_in_init(node):
                return None
            return f"{target.name} is missing ({node.name} instances have no {name!r}; {path})"
        if found is None:
            return f"{target.name} is missing (no {name!r} in {path})"
        node = found
    if target.kind == "class" and not isinstance(node, ast.ClassDef):
        return f"{target.name} is no longer a class"
    if target.kind == "callable":
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return f"{target.name} is no longer a function"
        args = node.args
        names_found = tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
        if names_found[: len(target.params)] != target.params:
            return (
                f"{target.name} takes ({', '.join(names_found)}), "
                f"expected ({', '.join(target.params)})"
            )
    if target.kind in ("keys", "source"):
        return _source_problem(target, ast.unparse(node))
    return None


@functools.lru_cache(maxsize=8)
def _parsed(path: Path, mtime_ns: int) -> ast.Module:
    """The module's syntax tree, parsed once per version of the file."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _module_file(module: str) -> Path | None:
    """The source file of ``module``, importing none of the packages not imported yet.

    (``ray.tune.search.optuna``'s ``__init__`` imports the searcher, hence Optuna.)
    """
    parts = module.split(".")
    depth = next((d for d in range(len(parts) - 1, 0, -1) if ".".join(parts[:d]) in sys.modules), 0)
    if depth:
        roots = getattr(sys.modules[".".join(parts[:depth])], "__path__", None) or []
    else:  # nothing of it imported: where the top-level package is (finding it imports nothing)
        spec = importlib.util.find_spec(parts[0])
        if spec is None:
            return None
        if len(parts) == 1:
            return Path(spec.origin) if spec.origin else None
        roots, depth = list(spec.submodule_search_locations or []), 1
    rest = parts[depth:]
    for root in roots:
        for candidate in (
            Path(root, *rest[:-1], rest[-1] + ".py"),
            Path(root, *rest, "__init__.py"),
        ):
            if candidate.is_file():
                return candidate
    return None


def _definition(node: ast.AST, name: str) -> ast.AST | None:
    """The class, function or assignment of ``name`` directly in ``node``'s body."""
    for child in getattr(node, "body", []):
        if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            if child.name == name:
                return child
        elif isinstance(child, ast.Assign | ast.AnnAssign):
            targets = child.targets if isinstance(child, ast.Assign) else [child.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return child
    return None


def _assigned_in_init(cls: ast.ClassDef) -> set[str]:
    """Attribute names ``self.<name> = ...`` in the class's own ``__init__``."""
    init = _definition(cls, "__init__")
    if init is None:
        return set()
    return {
        node.attr
        for node in ast.walk(init)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    }
