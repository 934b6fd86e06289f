"""resource_usage.json of a resumed run covers every invocation, not only the last one."""

from __future__ import annotations

import io
import json
from pathlib import Path

from raysweep import api
from raysweep.rundir import RunDir


def test_resume_appends_to_the_runs_resource_usage(tmp_path: Path) -> None:
    data = {
        "name": "usage",
        "trainable": "lightgbm",
        "trainable_args": {"dataset": "breast_cancer", "num_boost_round": 10},
        "metric": "val_loss",
        "mode": "min",
        "space": {"learning_rate": {"type": "loguniform", "low": 0.01, "high": 0.3}},
        "search": {"algorithm": "random", "num_samples": 2, "max_concurrent": 1},
        "seed": 3,
        "execution": "local",  # in this process, no Ray: the same monitor as a Ray run's
    }
    path = tmp_path / "usage.json"
    path.write_text(json.dumps(data))
    out = io.StringIO()
    options = api.RunOptions(config=path, storage=tmp_path / "runs", dashboard=False)
    assert api.run_sweep(options, out=out) == 0, out.getvalue()
    run = RunDir(tmp_path / "runs" / "usage")
    first = run.read_usage()
    assert first is not None and first["samples"]
    extend = api.RunOptions(num_samples=3, dashboard=False)
    assert api.resume_sweep(str(run.path), extend, out) == 0, out.getvalue()
    usage = run.read_usage()
    assert usage is not None
    assert usage["samples"][: len(first["samples"])] == first["samples"]
    assert usage["started_at"] == first["started_at"]
    assert [len(first["invocations"]), len(usage["invocations"])] == [1, 2]
    assert usage["summary"]["samples"] == len(usage["samples"]) > len(first["samples"])
