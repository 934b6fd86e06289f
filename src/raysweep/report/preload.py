"""Preload the report's heavy libraries: import them in the background while a run starts.

Building report.html at the end of a run imports plotly, Optuna's importance and,
for fANOVA, scikit-learn's forests: about 2 s on 2 cores, all before the command
can exit. The driver starts this thread before Ray, whose start-up is mostly
waiting on other processes, so the imports are done by the time the report is
built (measured when this module was added: about 2 s less from the last trial to
the command's exit; the figures are in git history).
"""

from __future__ import annotations

import importlib
import threading

MODULES = (
    "plotly.graph_objects",
    "plotly.io",
    "optuna.importance",
    "optuna.visualization",  # the slice plots: about 0.5 s of imports
    "sklearn.ensemble",
    "raysweep.report.build",
)


def import_report_modules() -> None:
    """Import the report's libraries in this thread (stops at the first one missing)."""
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # a missing optional library: the report says so later
            return


def preload_report_imports() -> threading.Thread:
    """Start importing the report's libraries in a daemon thread; returns the thread."""
    name = "raysweep-report-imports"
    thread = threading.Thread(target=import_report_modules, name=name, daemon=True)
    thread.start()
    return thread
