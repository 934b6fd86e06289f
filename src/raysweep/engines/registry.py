"""Name -> engine, and the trial sources ``sweep status`` reads, as lazy references.

Engines are chosen like searchers (``raysweep.registry``): by a name in the
spec (``execution``), from one table, imported only when used, so ``sweep
validate`` and the read-only commands never import Ray.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raysweep.registry import import_ref, lookup

if TYPE_CHECKING:
    from raysweep.config.schema import SweepSpec
    from raysweep.engines.base import Engine, TrialRerun, TrialSource

ENGINES: dict[str, str] = {
    "ray": "raysweep.engines.ray.engine:RayEngine",
    "local": "raysweep.engines.local.engine:LocalEngine",
}

# Asked in this order; the last one reads any run directory (Ray's snapshots, maybe none).
TRIAL_SOURCES: dict[str, str] = {
    "local": "raysweep.engines.local.status_source:JournalSource",
    "ray": "raysweep.engines.ray.status_source:SnapshotSource",
}

# sweep repro: a recorded trial reruns as a Ray trial, whichever engine ran the sweep
TRIAL_RERUN = "raysweep.engines.ray.engine:RayTrialRerun"


def engine_named(name: str) -> Engine:
    """The engine registered as ``name``; ConfigError listing the valid names."""
    engine: Engine = lookup(ENGINES, "execution", name)()
    return engine


def engine_for(spec: SweepSpec) -> Engine:
    """The engine that runs ``spec`` (its ``execution``): the one place that reads it."""
    return engine_named(spec.execution)


def trial_sources() -> list[TrialSource]:
    """Every registered trial source, in the order ``sweep status`` asks them."""
    return [import_ref(ref)() for ref in TRIAL_SOURCES.values()]


def trial_rerun() -> TrialRerun:
    """What reruns one recorded trial (``sweep repro``)."""
    rerun: TrialRerun = import_ref(TRIAL_RERUN)()
    return rerun
