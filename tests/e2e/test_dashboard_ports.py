"""Sweeps started at the same moment each get a dashboard of their own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from factories import make_sweep


def test_simultaneous_sweeps_without_a_port_both_run_each_on_its_own_port(tmp_path: Path) -> None:
    procs = []
    for name in ("first", "second"):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(make_sweep("lightgbm", name=name)), encoding="utf-8")
        cmd = [sys.executable, "-m", "raysweep.cli", "run", "--config", str(path)]
        cmd += ["--storage", str(tmp_path / "runs")]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))  # fmt: skip
    outputs = [proc.communicate(timeout=240)[0] for proc in procs]
    for proc, out in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, out
    urls = []
    for name in ("first", "second"):
        state = json.loads((tmp_path / "runs" / name / "state.json").read_text(encoding="utf-8"))
        urls.append(state["dashboard_url"])
    assert all(url.startswith("http://127.0.0.1:") for url in urls), urls
    assert urls[0] != urls[1]  # two dashboards, two ports
