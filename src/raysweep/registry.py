"""Name -> lazy factory tables for searchers and schedulers.

Unknown names are errors that list the valid ones. Factories are referenced by
"module:function" strings and imported only when used, so `sweep validate`
never imports Optuna or HyperOpt.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from raysweep.errors import ConfigError

SEARCHERS: dict[str, str] = {
    "grid": "raysweep.search.variants:make_variants",
    "random": "raysweep.search.variants:make_variants",
    "optuna": "raysweep.search.optuna:make_optuna",
    "mf-tpe": "raysweep.search.mftpe:make_mftpe",
    "hyperopt": "raysweep.search.hyperopt:make_hyperopt",
}

SCHEDULERS: dict[str, str] = {
    "fifo": "raysweep.schedulers.fifo:make_fifo",
    "asha": "raysweep.schedulers.asha:make_asha",
    "hyperband": "raysweep.schedulers.hyperband:make_hyperband",
    "median": "raysweep.schedulers.median:make_median",
}


def import_ref(ref: str) -> Callable[..., Any]:
    """Import ``package.module:attribute``."""
    module_name, _, attr = ref.partition(":")
    func: Callable[..., Any] = getattr(importlib.import_module(module_name), attr)
    return func


def lookup(table: dict[str, str], kind: str, name: str) -> Callable[..., Any]:
    """The factory registered as ``name`` in ``table``; ConfigError listing valid names."""
    if name not in table:
        raise ConfigError(f"unknown {kind} {name!r}; valid: {', '.join(sorted(table))}")
    return import_ref(table[name])
