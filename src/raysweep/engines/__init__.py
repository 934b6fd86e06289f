"""Engines: what runs a sweep's trials, behind one typed seam (``base.Engine``).

The orchestrator (``api.py``) picks one by the spec's ``execution`` through the
registry (``registry.engine_for``) and calls ``run`` or ``resume``; an engine
hands back an exit code, and writes raysweep's own records into the run
directory through the engine-neutral run layer (``raysweep.run``). The Ray
engine lives in ``raysweep.engines.ray``, the in-process one in ``raysweep.engines.local``;
neither imports the other.
"""

from raysweep.engines.base import Engine, EngineOptions, NewRun, TrialSource
from raysweep.engines.registry import ENGINES, TRIAL_SOURCES, engine_for, trial_sources

__all__ = [
    "ENGINES",
    "TRIAL_SOURCES",
    "Engine",
    "EngineOptions",
    "NewRun",
    "TrialSource",
    "engine_for",
    "trial_sources",
]
