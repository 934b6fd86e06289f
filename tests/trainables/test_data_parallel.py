"""torch_mlp trained data-parallel across CPU processes (Gloo): the same updates as one
process, bit-identical resume, and no replica outliving its trial however the trial ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import psutil
import pytest

from factories import ctx_for
from raysweep.errors import TrainableError
from raysweep.trainables.torch_mlp import fit_torch_mlp
from raysweep.trainables.torch_mlp_state import replica_seed


@pytest.fixture
def run_mlp(record_fit: Callable[..., Any]) -> Callable[..., Any]:
    return partial(record_fit, fit_torch_mlp, partial(ctx_for, cpus=2))


def fork_server(proc: psutil.Process) -> bool:
    return "multiprocessing.forkserver" in " ".join(proc.cmdline())


def fork_server_pids(pid: int) -> list[int]:
    return [c.pid for c in psutil.Process(pid).children() if fork_server(c)]


def replica_pids(pid: int | None = None) -> list[int]:
    """Live replicas of ``pid``'s trials (default: this process), forked by its fork server."""
    found = []
    for child in psutil.Process(pid).children(recursive=True):
        try:
            parent = child.parent()
            if parent is not None and fork_server(parent) and running(child.pid):
                found.append(child.pid)
        except psutil.NoSuchProcess:
            continue
    return found


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_gone(pids: list[int], timeout_s: float = 15.0) -> list[int]:
    """The ``pids`` still running after up to ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [pid for pid in alive if running(pid)]
    return alive


@pytest.mark.parametrize("dataset", ["wine", "diabetes"])
def test_two_replicas_make_the_updates_of_one_process(
    dataset: str, tmp_path: Path, run_mlp: Callable[..., Any]
) -> None:
    # batch 33 leaves an odd last batch, which the replicas split unevenly
    config = {"lr": 0.01, "hidden_size": 16, "batch_size": 33}
    alone = run_mlp(tmp_path / "one", config, {"dataset": dataset, "epochs": 3})
    split = run_mlp(tmp_path / "two", config, {"dataset": dataset, "epochs": 3, "data_parallel": 2})
    assert [m["epoch"] for m in split.metrics] == [1, 2, 3]
    for one, two in zip(alone.metrics, split.metrics, strict=True):
        assert set(one) == set(two)
        for key in one:
            assert two[key] == pytest.approx(one[key], rel=1e-5, abs=1e-7), key
    assert alone.metrics[-1]["val_loss"] < alone.metrics[0]["val_loss"]
    assert replica_pids() == []


def test_stopped_trial_ends_its_replicas_and_resumes_bit_identically(
    tmp_path: Path, run_mlp: Callable[..., Any]
) -> None:
    args = {"dataset": "wine", "epochs": 4, "data_parallel": 2}
    config = {"dropout": 0.3, "lr": 0.01, "hidden_size": 16, "batch_size": 16}
    full = run_mlp(tmp_path / "full", config, args, checkpoint_frequency=2)
    assert sorted(full.checkpoints) == [2, 4]
    # the scheduler stops the trial at its third report (the reporter raises)
    stopped = run_mlp(tmp_path / "stop", config, args, checkpoint_frequency=2, stop_after=3)
    assert stopped.metrics == full.metrics[:3]
    assert replica_pids() == []
    resumed = run_mlp(tmp_path / "resume", config, args, resume=stopped.checkpoints[2])
    assert resumed.metrics == full.metrics[2:]  # dropout masks of both replicas restored
    other_seed = run_mlp(tmp_path / "seed", config, args, seed=8)
    assert other_seed.metrics != full.metrics
    assert replica_seed(7, 1) != replica_seed(7, 2) != 7


def test_a_failing_replica_fails_the_trial_with_its_traceback(tmp_path: Path) -> None:
    from raysweep.trainables.data import load_dataset

    args = {"dataset": "wine", "epochs": 2, "data_parallel": 2}
    not_a_checkpoint = tmp_path / "empty"
    not_a_checkpoint.mkdir()
    with pytest.raises(TrainableError) as info:
        fit_torch_mlp({}, ctx_for(args, cpus=2), load_dataset(args, 0), lambda m, c: None,
                      not_a_checkpoint)  # fmt: skip
    assert "data-parallel replica" in str(info.value) and "of 2 failed" in str(info.value)
    assert "not a raysweep checkpoint" in str(info.value)  # the replica's own error
    assert replica_pids() == []


def test_killed_replicas_fail_the_trial_naming_the_signal(tmp_path: Path) -> None:
    from raysweep.trainables.data import load_dataset

    args = {"dataset": "digits", "epochs": 200, "data_parallel": 2}
    killed: list[int] = []

    def report(metrics: dict[str, float], checkpoint: Path | None) -> None:
        if not killed:  # e.g. the OOM killer; rank 0 waits for this report to return
            killed.extend(replica_pids())
            for pid in killed:
                os.kill(pid, signal.SIGKILL)

    with pytest.raises(TrainableError, match=r"replica \d of 2 was killed by SIGKILL"):
        fit_torch_mlp({"batch_size": 16}, ctx_for(args, cpus=2), load_dataset(args, 0), report)
    assert len(killed) == 2 and replica_pids() == []


SCRIPT = textwrap.dedent(
    """
    import sys
    from raysweep.trainables.context import TrialContext
    from raysweep.trainables.data import load_dataset
    from raysweep.trainables.torch_mlp import fit_torch_mlp

    def report(metrics, checkpoint):
        print("report", metrics["epoch"], flush=True)

    if __name__ == "__main__":
        args = {"dataset": "digits", "epochs": 100000, "data_parallel": 2}
        ctx = TrialContext(index=0, seed=1, metric="val_loss", mode="min",
                           trainable_args=args, cpus=2)
        fit_torch_mlp({"batch_size": 16}, ctx, load_dataset(args, 0), report)
    """
)


def test_replicas_exit_when_the_trial_process_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "trial.py"
    script.write_text(SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("report 1")  # the replicas are training
        replicas, servers = replica_pids(proc.pid), fork_server_pids(proc.pid)
        assert len(replicas) == 2 and len(servers) == 1
        proc.send_signal(signal.SIGKILL)  # no clean-up code runs in the trial's process
        proc.wait(10)
        assert wait_gone(replicas) == []
        assert wait_gone(servers) == []
    finally:
        proc.kill()
        proc.wait()


def record_metrics(into: list[dict[str, float]], metrics: dict[str, float], _: Any) -> None:
    into.append(metrics)


def test_spawned_replicas_as_on_gpus_train_alike(tmp_path: Path) -> None:
    """GPU replicas are spawned, not forked: the same training through that path, on CPUs."""
    from raysweep.trainables.data import load_dataset
    from raysweep.trainables.data_parallel import run_data_parallel
    from raysweep.trainables.torch_mlp import TrainingJob, hyperparams, train_replica

    args = {"dataset": "wine", "epochs": 2, "data_parallel": 2}
    ctx = ctx_for(args, cpus=2)
    job = TrainingJob(hyperparams({"dropout": 0.2}), 2, ctx, load_dataset(args, 0), None)
    runs: dict[str, list[dict[str, float]]] = {"spawn": [], "forkserver": []}
    for method, reports in runs.items():
        run_data_parallel(train_replica, job, 2, cuda=False, threads=2,
                          report=partial(record_metrics, reports), start_method=method)  # fmt: skip
        assert replica_pids() == []
    assert len(runs["spawn"]) == 2 and runs["spawn"] == runs["forkserver"]
