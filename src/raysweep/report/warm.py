"""Import the report's heavy libraries in the background while a run starts.

Building report.html at the end of a run imports plotly, Optuna's importance and,
for fANOVA, scikit-learn's forests: about 2 s on 2 cores, all before the command
can exit. The driver starts this thread before Ray, whose start-up leaves 1.5-4
CPU-seconds idle on 2 cores while its processes wait on each other, so the imports
are done by the time the report is built (``benchmarks/BENCHMARKS.md``, "The report
at the end of a run"). The thread runs at the lowest CPU priority (Linux): at
normal priority it competed with Ray's own processes and delayed Ray's start by
0.3-1.3 s ("The report's imports at the lowest priority").
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading

MODULES = (
    "plotly.graph_objects",
    "plotly.io",
    "optuna.importance",
    "optuna.visualization",  # the slice plots: about 0.5 s of imports
    "sklearn.ensemble",
    "raysweep.report.build",
)


LOWEST_PRIORITY = 19  # nice: the imports take the CPU that Ray's start leaves idle


def _import_all() -> None:
    # Linux sets a thread's own priority this way; elsewhere the imports run as before.
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOWEST_PRIORITY)
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # a missing optional library: the report says so later
            return


def prewarm_report_imports() -> threading.Thread:
    """Start importing the report's libraries in a daemon thread; returns the thread."""
    thread = threading.Thread(target=_import_all, name="raysweep-report-imports", daemon=True)
    thread.start()
    return thread
