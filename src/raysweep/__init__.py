"""raysweep: reproducible, checkpointed hyperparameter sweeps on Ray Tune.

The public API. Names are imported on first use, so ``import raysweep`` (done
by every trial process that calls :func:`trial_seed`) stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from raysweep import moved

moved.install()  # earlier run directories name modules that have moved since

if TYPE_CHECKING:
    from raysweep.api import RunOptions, rerun_trial, resume_sweep, run_sweep
    from raysweep.config.schema import SweepSpec
    from raysweep.repro.seeds import dataloader_kwargs
    from raysweep.results.records import SweepResult, TrialRecord
    from raysweep.rundir import RunDir
    from raysweep.trainables.context import trial_context, trial_seed

__all__ = [
    "RunDir",
    "RunOptions",
    "SweepResult",
    "SweepSpec",
    "TrialRecord",
    "__version__",
    "dataloader_kwargs",
    "rerun_trial",
    "resume_sweep",
    "run_sweep",
    "trial_context",
    "trial_seed",
]
__version__ = "0.1.0"

_WHERE = {
    "RunOptions": "raysweep.api",
    "run_sweep": "raysweep.api",
    "resume_sweep": "raysweep.api",
    "rerun_trial": "raysweep.api",
    "SweepSpec": "raysweep.config.schema",
    "SweepResult": "raysweep.results.records",
    "TrialRecord": "raysweep.results.records",
    "dataloader_kwargs": "raysweep.repro.seeds",
    "RunDir": "raysweep.rundir",
    "trial_context": "raysweep.trainables.context",
    "trial_seed": "raysweep.trainables.context",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'raysweep' has no attribute {name!r}")
