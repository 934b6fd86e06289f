"""resource_usage.json of a resumed run covers every invocation, not only the last one."""

from __future__ import annotations

import io
from pathlib import Path

from factories import make_sweep, sweep_in_process
from raysweep import api


def test_resume_appends_to_the_runs_resource_usage(tmp_path: Path) -> None:
    # in this process, no Ray: the same monitor as a Ray run's
    data = make_sweep("lightgbm", name="usage", seed=3, execution="local")
    code, run_dir, output = sweep_in_process(tmp_path, data, dashboard=False)
    assert code == 0, output
    first = run_dir.read_usage()
    assert first is not None and first["samples"]
    out = io.StringIO()
    extend = api.RunOptions(num_samples=3, dashboard=False)
    assert api.resume_sweep(str(run_dir.path), extend, out) == 0, out.getvalue()
    usage = run_dir.read_usage()
    assert usage is not None
    assert usage["samples"][: len(first["samples"])] == first["samples"]
    assert usage["started_at"] == first["started_at"]
    assert [len(first["invocations"]), len(usage["invocations"])] == [1, 2]
    assert usage["summary"]["samples"] == len(usage["samples"]) > len(first["samples"])
