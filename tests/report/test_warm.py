"""The report's background imports run at the lowest CPU priority."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from raysweep.report import warm


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own priority is Linux's")
def test_the_imports_run_in_a_thread_at_the_lowest_priority(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A module that records the priority of the thread importing it.
    (tmp_path / "warm_probe_mod.py").write_text(
        "import os, threading\n"
        "PRIORITY = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())\n"
        "THREAD = threading.current_thread().name\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(warm, "MODULES", ("warm_probe_mod",))
    monkeypatch.delitem(sys.modules, "warm_probe_mod", raising=False)
    own = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    thread = warm.prewarm_report_imports()
    thread.join(timeout=30)

    probe = sys.modules["warm_probe_mod"]
    assert probe.THREAD == "raysweep-report-imports"
    assert probe.PRIORITY == warm.LOWEST_PRIORITY
    # The calling thread keeps its own priority.
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == own
