"""A data-parallel torch_mlp sweep end to end: real ``sweep run`` and ``sweep repro``,
two CPU replicas per trial under ASHA, no replica left behind."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from factories import make_sweep

pytestmark = pytest.mark.slow
MARK = "RAYSWEEP_TEST_RUN_MARK"  # set for the run: its processes inherit it

CONFIG = make_sweep(
    "torch_mlp",
    name="ddp",
    trainable_args={"dataset": "wine", "epochs": 4, "data_parallel": 2},
    space={
        "lr": {"type": "loguniform", "low": 0.001, "high": 0.1},
        "hidden_size": 16,
        "dropout": 0.2,
    },
    search={"algorithm": "random", "num_samples": 3},
    scheduler={"type": "asha", "max_t": 4, "grace_period": 1},
    resources={"cpus_per_trial": 2},
    checkpoint={"frequency": 2},
    seed=3,
)


def replicas_started_after(started: float, mark: str) -> list[psutil.Process]:
    """Replicas, and the fork servers of trial processes, started since ``started`` by
    the run whose environment has ``MARK=mark``.

    Not the fork server of Ray's dashboard, whose modules run under one: after the
    driver stops Ray it takes a moment to exit by itself. The mark tells the run's
    processes from those of any other Ray that starts on the machine meanwhile.
    """
    found = []
    for proc in psutil.process_iter(["cmdline", "create_time", "status"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        recent = (proc.info["create_time"] or 0) >= started
        alive = proc.info["status"] != psutil.STATUS_ZOMBIE
        dashboard = "ray.dashboard" in cmdline
        if recent and alive and "multiprocessing.forkserver" in cmdline and not dashboard:
            with contextlib.suppress(psutil.Error):  # gone meanwhile, or not ours to read
                if proc.environ().get(MARK) == mark:
                    found.append(proc)
    return found


def test_data_parallel_sweep_runs_stops_and_repeats(
    tmp_path: Path, sweep_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    started, mark = time.time(), uuid.uuid4().hex
    config = tmp_path / "sweep.json"
    config.write_text(json.dumps(CONFIG))
    run_dir = tmp_path / "runs" / "ddp"
    proc = sweep_cli(
        "run", "--config", str(config), "--storage", str(run_dir.parent), env={MARK: mark}
    )
    assert proc.returncode == 0, proc.stderr
    trials = json.loads((run_dir / "results.json").read_text())["trials"]
    assert len(trials) == 3 and not any(t["error"] for t in trials)
    assert {t["iterations"] for t in trials if t["status"] == "completed"} == {4}
    assert all(t["last"]["epoch"] == t["iterations"] for t in trials)
    metas = [json.loads(p.read_text()) for p in run_dir.rglob("raysweep_checkpoint.json")]
    assert metas and {m["replicas"] for m in metas} == {2}  # trained by two replicas
    assert replicas_started_after(started, mark) == []  # finished and stopped trials ended theirs
    repro = sweep_cli("repro", str(run_dir))
    assert repro.returncode == 0, repro.stdout + repro.stderr
    assert repro.stdout.strip().endswith("match")
