"""A worker node killed under a running trial loses nothing (issue: a lost node).

A two-node loopback cluster (one CPU each) runs 3 checkpointing trials of 10
iterations, two at a time, so one trial runs on the worker node. Once that trial
has checkpointed twice, every process of the worker node is killed with SIGKILL.
With the config as users write it (no ``max_failures``), the sweep must exit 0
with every trial completed exactly once, the lost one continuing from its
checkpoint on the head, and the loss named in the log, ``sweep status`` and
results.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import REPO, SWEEP, LoopbackCluster, kill_group, sweep_env

from factories import make_sweep
from raysweep.rundir import RunDir

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # a cluster starts, one node dies

STEPS = 10
TRAINABLE = textwrap.dedent(
    f"""
    import json, os, tempfile, time
    from ray import tune

    def fit(config):
        start = 0
        checkpoint = tune.get_checkpoint()
        if checkpoint is not None:
            with checkpoint.as_directory() as path:
                with open(os.path.join(path, "state.json")) as fh:
                    start = json.load(fh)["step"]
        for step in range(start + 1, {STEPS} + 1):
            time.sleep(0.3)
            with tempfile.TemporaryDirectory() as tmp:
                with open(os.path.join(tmp, "state.json"), "w") as fh:
                    json.dump({{"step": step}}, fh)
                tune.report(
                    {{"loss": config["x"] / step, "resumed_from": start}},
                    checkpoint=tune.Checkpoint.from_directory(tmp),
                )
    """
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[LoopbackCluster]:
    cluster = LoopbackCluster()
    yield cluster
    cluster.close()


def _wait_for(predicate: Any, proc: subprocess.Popen[str], what: str, limit: float = 240) -> Any:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        if proc.poll() is not None:
            pytest.fail(f"the sweep ended (exit {proc.returncode}) before {what}")
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


def test_a_lost_node_costs_no_trial(tmp_path: Path, cluster: LoopbackCluster) -> None:
    info = cluster.info()
    worker = info["nodes"][1]
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "lost_node_trainable.py").write_text(TRAINABLE)
    config = make_sweep(
        "lost_node_trainable:fit",
        name="lost",
        space={"x": {"type": "uniform", "low": 1, "high": 2}},
        search={"algorithm": "random", "num_samples": 3, "max_concurrent": 2},
        checkpoint={"frequency": 1, "num_to_keep": 2},
        seed=5,
    )
    (proj / "sweep.json").write_text(json.dumps(config))
    run_dir = RunDir(tmp_path / "runs" / "lost")
    env = sweep_env(PYTHONPATH=os.pathsep.join([str(REPO / "src"), str(proj)]))
    log = (tmp_path / "sweep.log").open("w")
    proc = subprocess.Popen(
        [*SWEEP, "run", "--config", "sweep.json", "--address", info["address"],
         "--storage", str(tmp_path / "runs"), "--no-dashboard"],
        cwd=proj, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:

        def on_worker() -> str | None:
            started = [
                r["trial_id"] for r in run_dir.read_trial_info() if r.get("node_id") == worker
            ]
            return started[0] if started else None

        trial_id = _wait_for(on_worker, proc, "a trial started on the worker node")
        tune_dir = run_dir.path / "tune"
        _wait_for(
            lambda: list(tune_dir.glob(f"*{trial_id}*/checkpoint_000001")), proc,
            "the worker's trial checkpointed twice",
        )  # fmt: skip
        killed_at = time.time()
        assert cluster.kill_worker()["killed"] == worker
        code = proc.wait(timeout=300)
    finally:
        kill_group(proc)
        log.close()
    output = (tmp_path / "sweep.log").read_text()
    assert code == 0, output
    result = run_dir.read_results()
    assert sorted(t.index for t in result.trials) == [0, 1, 2]  # each trial once
    assert all(t.status == "completed" and t.iterations == STEPS for t in result.trials), output
    lost = next(t for t in result.trials if t.trial_id == trial_id)
    assert [loss["node_id"] for loss in lost.node_losses] == [worker]
    assert lost.last["resumed_from"] >= 2  # continued from its checkpoint, not from scratch
    assert all(not t.node_losses for t in result.trials if t.trial_id != trial_id)
    assert f"node lost: node {worker[:12]} died while trial {trial_id}" in output
    status = subprocess.run(
        [*SWEEP, "status", str(run_dir.path)], env=env, capture_output=True, text=True, timeout=60
    )
    assert f"died under trial {trial_id}" in status.stdout, status.stdout + status.stderr
    # The figure in benchmarks/BENCHMARKS.md ("A lost node"), printed with -s.
    event = next(e for e in run_dir.read_events() if e.get("event") == "node_lost")
    rows = [json.loads(line) for line in (tune_dir / f"trial_{trial_id}" / "result.json").open()]
    assert [r["training_iteration"] for r in rows] == list(range(1, STEPS + 1))  # each once
    again = next(r for r in rows if r["iterations_since_restore"] == 1 and r["resumed_from"])
    print(
        f"\nnode loss: noticed {event['t'] - killed_at:.1f} s after the kill; the trial's first "
        f"iteration after it reported {again['timestamp'] - killed_at:.1f} s after the kill "
        f"(resumed from iteration {again['resumed_from']}, lost at {event['iterations']})",
        file=sys.stderr,
    )
