"""What of the user's code travels to a cluster's nodes, and a check that it is enough.

A trainable ``train:fit`` in ``~/proj/train.py`` often imports its neighbours
(``features.py``, a ``utils/`` package). Shipping ``train.py`` alone made every
trial on a cluster fail with ``No module named 'features'``, while the same
sweep ran locally. So the folder the trainable's top-level module or package
lives in travels as the job's working directory (Ray puts it first on the
workers' import path), when it is a plain source folder: not installed
packages, not the filesystem root or the home directory, and at most
:data:`SHIP_LIMIT_BYTES` of files once the usual non-source folders are left
out. Otherwise (or when ``--working-dir`` names another folder) the module or
package alone travels, as before.

Whatever travels, the trainable is then imported once on every node before
any trial starts: a module a node cannot import is an error (exit 2) naming
it and ``--working-dir``, not a sweep of errored trials.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from raysweep.engines.ray.cluster import user_code_path
from raysweep.errors import ConfigError

SHIP_LIMIT_BYTES = 100 * 1024 * 1024  # Ray's own ceiling for one package is 512 MiB
# Left behind when a folder travels (Ray's runtime_env "excludes", .gitignore syntax);
# a run directory inside the folder is added to them.
LEFT_BEHIND = (
    ".git", "__pycache__", "*.pyc", ".venv*", "venv", ".tox", ".nox", "node_modules",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints",
)  # fmt: skip
_LEFT_DIRS = {n for n in LEFT_BEHIND if "*" not in n} | {".venv"}


@dataclass(frozen=True)
class Shipment:
    """What travels: the job's working directory, single modules, what is left out, and why."""

    working_dir: str | None = None
    py_modules: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    why_module_only: str | None = None  # why the trainable's folder did not travel
    in_job: bool = False  # inside a Ray Job, whose own runtime environment carries the code

    def describe(self) -> str:
        if self.in_job:
            return "nothing: inside a Ray Job the job's working directory carries the code"
        if self.working_dir:
            return f"the folder {self.working_dir}"
        if self.py_modules:
            return " and ".join(self.py_modules) + " alone"
        return "no code (the trainable's module is installed)"


def plan_shipment(trainable: str, working_dir: str | None, storage: Path | None) -> Shipment:
    """The code that travels for ``trainable`` beside ``--working-dir`` (None: not given).

    ``storage``: the local directory runs are written under, left behind when inside
    the shipped folder.
    """
    code = user_code_path(trainable)
    if code is None:
        return Shipment(working_dir=working_dir)
    folder = code.parent
    if working_dir is not None:
        if Path(working_dir).resolve() == folder:
            return Shipment(working_dir=working_dir)  # the folder travels already
        why = f"--working-dir {working_dir} is another folder"
        return Shipment(working_dir=working_dir, py_modules=(str(code),), why_module_only=why)
    excludes = list(LEFT_BEHIND)
    if storage is not None and storage.resolve().is_relative_to(folder):
        excludes.append(f"/{storage.resolve().relative_to(folder).as_posix()}/")
    refused = _not_shippable(folder, storage)
    if refused is not None:
        return Shipment(py_modules=(str(code),), why_module_only=refused)
    return Shipment(working_dir=str(folder), excludes=tuple(excludes))


def _not_shippable(folder: Path, storage: Path | None) -> str | None:
    """Why ``folder`` is not a plain source folder to ship (None: it is)."""
    if folder == Path(folder.anchor) or folder == Path.home().resolve():
        return f"its folder {folder} is the filesystem root or the home directory"
    skip = storage.resolve() if storage is not None else None
    size = 0
    for path in _files(folder, skip):
        try:
            size += path.stat().st_size
        except OSError:
            continue
        if size > SHIP_LIMIT_BYTES:
            limit = SHIP_LIMIT_BYTES // (1024 * 1024)
            return f"its folder {folder} holds more than {limit} MiB of files"
    return None


def _files(folder: Path, skip: Path | None) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        dirs[:] = [
            d for d in dirs if d not in _LEFT_DIRS and not d.startswith(".venv")
            and (skip is None or here / d != skip)
        ]  # fmt: skip
        yield from (here / f for f in files if not f.endswith(".pyc"))


def _import_on_node(trainable: str) -> tuple[str, str | None, str | None]:
    """On a node: (node id, missing module or None, error text or None)."""
    import ray

    node = ray.get_runtime_context().get_node_id()
    module, _, name = trainable.partition(":")
    try:
        getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as exc:
        return node, exc.name, f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # any failure of the user's import is reported
        return node, None, f"{type(exc).__name__}: {exc}"
    return node, None, None


def check_import_on_nodes(trainable: str, shipment: Shipment) -> None:
    """ConfigError naming the node and module when a node cannot import ``trainable``.

    Ray must be connected with the runtime environment that carries ``shipment``.
    """
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    probe = ray.remote(num_cpus=0)(_import_on_node)
    nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
    refs = [
        probe.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False)
        ).remote(trainable)
        for node in nodes
    ]
    try:
        answers = ray.get(refs, timeout=300)
    except ray.exceptions.RayError as exc:  # e.g. raysweep itself missing on a node
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"trainable {trainable!r}: the check that every node can import it failed: "
            f"{first}. Every node needs raysweep and its dependencies installed "
            "(docs/cluster.md, 'What travels'). Nothing was written."
        ) from None
    failed = [(n, missing, error) for n, missing, error in answers if error]
    if not failed:
        return
    node, missing, error = failed[0]
    shipped = shipment.describe()
    text = (
        f"trainable {trainable!r} cannot be imported on node {node[:12]}"
        f"{f' (and {len(failed) - 1} more)' if len(failed) > 1 else ''}: {error}. "
        f"raysweep shipped {shipped}"
    )
    if shipment.why_module_only:
        text += f" ({shipment.why_module_only})"
    if missing:
        ship = "ray job submit --working-dir DIR" if shipment.in_job else "--working-dir DIR"
        text += (
            f". Ship the folder that holds module {missing!r} with {ship} (it goes "
            f"first on the nodes' import path), or install {missing!r} on every node"
        )
    raise ConfigError(text + ". Nothing was written (docs/cluster.md, 'What travels').")
