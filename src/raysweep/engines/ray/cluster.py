"""Running on an existing Ray cluster: the user's code travels, data paths are checked.

A user trainable (``mypkg.train:fit``) whose top-level package or module is not
installed (it sits on the driver's path only) is shipped to every node through
Ray's runtime environment (``py_modules``); ``--working-dir DIR`` ships a
directory (data files, configs). Nodes then need only raysweep and its
dependencies. Before any trial starts, every alive node is asked whether it
can read the data files the spec names: a node that cannot is an error naming
the node and the file, not a sweep of errored trials.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path

from raysweep.config.schema import SweepSpec
from raysweep.errors import ConfigError
from raysweep.trainables.builtins import BUILTIN_TRAINABLES


def _installed_roots() -> list[Path]:
    roots = {sysconfig.get_paths()[k] for k in ("purelib", "platlib", "stdlib", "platstdlib")}
    roots.update(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    return [Path(r).resolve() for r in roots if r]


def user_code_path(trainable: str) -> Path | None:
    """The directory or file of the trainable's top-level package or module, when not installed."""
    if trainable in BUILTIN_TRAINABLES or ":" not in trainable:
        return None
    top = trainable.partition(":")[0].split(".")[0]
    if "" not in sys.path:
        sys.path.insert(0, "")
    spec = importlib.util.find_spec(top)
    if spec is None or spec.origin in (None, "built-in", "frozen"):
        return None
    origin = Path(spec.origin).resolve()
    location = origin.parent if spec.submodule_search_locations else origin
    if any(location.is_relative_to(root) for root in _installed_roots()):
        return None
    return location


def data_paths(spec: SweepSpec) -> list[str]:
    """Absolute file paths among the spec's ``trainable_args`` (as config loading made them)."""
    return [
        value
        for value in spec.trainable_args.values()
        if isinstance(value, str) and os.path.isabs(value) and os.path.exists(value)
    ]


def _exists_on_node(paths: Sequence[str]) -> tuple[str, list[str]]:
    import ray

    node = ray.get_runtime_context().get_node_id()
    return node, [p for p in paths if not os.path.exists(p)]


def check_paths_on_nodes(paths: Sequence[str], working_dir: Path | None) -> None:
    """ConfigError naming each node that cannot read a data file (Ray must be running).

    Files inside ``working_dir`` travel with it and are found there by the trials.
    """
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    shipped = working_dir.resolve() if working_dir is not None else None
    needed = [p for p in paths if shipped is None or not Path(p).is_relative_to(shipped)]
    if not needed:
        return
    probe = ray.remote(num_cpus=0)(_exists_on_node)
    nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
    refs = [
        probe.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False)
        ).remote(needed)
        for node in nodes
    ]
    missing = [(node, gone) for node, gone in ray.get(refs, timeout=120) if gone]
    if missing:
        lines = [f"node {node[:12]}: {', '.join(gone)}" for node, gone in missing]
        raise ConfigError(
            "trainable_args: data files the cluster's nodes cannot read:\\n  "
            + "\\n  ".join(lines)
            + "\\nPut them on storage every node mounts, or ship them with --working-dir DIR "
            "(a directory that holds them)."
        )
