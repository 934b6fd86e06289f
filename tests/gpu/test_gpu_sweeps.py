"""Sweeps on a real NVIDIA GPU (marked ``gpu``: skipped where NVML finds none).

Packing, the memory guard and the GBM libraries' GPU learners, each through the
``sweep`` CLI in a fresh process. The CPU-only counterparts (packing on Ray's
logical GPUs, NVML's failure path) are in tests/api/test_gpu_packing.py and
tests/gpu/test_inventory.py.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from factories import make_sweep
from raysweep.rundir import RunDir

CliRunner = Callable[..., subprocess.CompletedProcess[str]]
Overlap = Callable[[list[tuple[float, float]]], int]


def run_on_gpu0(tmp_path: Path, sweep_cli: CliRunner, data: dict[str, Any]) -> Path:
    """``sweep run`` of ``data`` on physical GPU 0; returns the run directory."""
    path = tmp_path / f"{data['name']}.json"
    path.write_text(json.dumps(data))
    ran = sweep_cli("run", "--config", str(path), "--storage", str(tmp_path), "--gpus", "0")
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    return tmp_path / data["name"]


def trial_intervals(run_dir: Path) -> dict[str, tuple[float, float]]:
    """Per trial id: (first start, last end) from the run's trials.jsonl."""
    spans: dict[str, list[float]] = {}
    for line in (run_dir / "trials.jsonl").read_text().splitlines():
        event = json.loads(line)
        times = spans.setdefault(event["trial_id"], [float("inf"), float("-inf")])
        if event["event"] == "start":
            times[0] = min(times[0], float(event["t"]))
        elif event["event"] in ("ended", "errored"):
            times[1] = max(times[1], float(event["t"]))
    return {trial: (start, end) for trial, (start, end) in spans.items()}


def trial_starts(run_dir: Path) -> dict[str, list[int]]:
    """Per trial id: the pid of each start (a retry starts again) from trial_info.jsonl."""
    starts: dict[str, list[int]] = {}
    for line in (run_dir / "trial_info.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["event"] == "start":
            starts.setdefault(record["trial_id"], []).append(int(record["pid"]))
    return starts


@contextmanager
def gpu_processes(index: int = 0, interval_s: float = 0.05) -> Iterator[dict[str, Any]]:
    """Sample GPU ``index`` in the background: pids with a CUDA context, peak memory used."""
    import pynvml

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    seen: dict[str, Any] = {
        "pids": set(),
        "baseline_mb": pynvml.nvmlDeviceGetMemoryInfo(handle).used / 2**20,
        "peak_mb": 0.0,
    }
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            try:
                procs = pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
            except pynvml.NVMLError:  # not supported on every driver or VM
                procs = []
            seen["pids"].update(int(proc.pid) for proc in procs)
            used = pynvml.nvmlDeviceGetMemoryInfo(handle).used / 2**20
            seen["peak_mb"] = max(seen["peak_mb"], used)
            done.wait(interval_s)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        done.set()
        thread.join()
        pynvml.nvmlShutdown()


def run_completed_on_gpu0(tmp_path: Path, sweep_cli: CliRunner, data: dict[str, Any]) -> Path:
    """Run ``data`` on GPU 0; every trial completes there, its process seen on the GPU."""
    with gpu_processes() as seen:
        run_dir = run_on_gpu0(tmp_path, sweep_cli, data)
    result = RunDir(run_dir).read_results()
    assert [t.status for t in result.trials] == ["completed"] * data["search"]["num_samples"]
    assert all(t.gpu_ids == ["0"] and t.best_metric is not None for t in result.trials)
    pids = {pid for run in trial_starts(run_dir).values() for pid in run}
    if pids & seen["pids"]:  # NVML reports this namespace's pids: each trial's must be there
        assert pids <= seen["pids"], (pids, seen["pids"])
    else:  # no per-process figures, or pids of another namespace: the used memory rose
        assert seen["peak_mb"] - seen["baseline_mb"] > 100, seen
    return run_dir


@pytest.mark.gpu
def test_quarter_gpu_runs_four_torch_mlp_trials_at_once(
    tmp_path: Path, sweep_cli: CliRunner, max_overlap: Overlap
) -> None:
    """0.25 GPU per trial: four torch_mlp trials share GPU 0 at once; the monitor saw it."""
    data = make_sweep(
        "torch_mlp",
        name="mlp-quarter",
        # Long enough (~10 s a trial) that worker start-up skew cannot hide the packing.
        trainable_args={"dataset": "digits", "epochs": 150},
        space={
            "lr": {"type": "loguniform", "low": 1e-3, "high": 1e-2},
            "hidden_size": {"type": "choice", "values": [64, 128]},
            "batch_size": 32,
        },
        search={"algorithm": "random", "num_samples": 4},
        resources={"cpus_per_trial": 1, "gpus_per_trial": 0.25},
        seed=5,
    )
    run_dir = run_completed_on_gpu0(tmp_path, sweep_cli, data)
    assert max_overlap(list(trial_intervals(run_dir).values())) == 4
    usage = json.loads((run_dir / "resource_usage.json").read_text())
    gpus = usage["summary"]["gpus"]
    assert [g["index"] for g in gpus] == [0]
    assert gpus[0]["util_pct_peak"] > 0 and gpus[0]["mem_used_mb_peak"] > 0
    assert "GPU 0  util mean" in (run_dir / "report.txt").read_text()


@pytest.mark.gpu
def test_memory_guard_fails_the_greedy_trial_alone(
    tmp_path: Path, sweep_cli: CliRunner, max_overlap: Overlap
) -> None:
    """Four trials on a quarter each; the one asking for half the card hits OOM, twice.

    Without the guard it would get its half (torch does not know about Ray's
    fractions) and the four together would ask for 95% of the card.
    """
    data = make_sweep(
        "examples.gpu_memory:hold",
        name="greedy",
        space={
            "mem_fraction": {"type": "grid", "values": [0.15, 0.15, 0.15, 0.5]},
            "x": 1.0,
            "hold_s": 4.0,
        },
        search={"algorithm": "grid", "num_samples": 1},  # each grid point once
        resources={"cpus_per_trial": 1, "gpus_per_trial": 0.25},
        max_failures=1,
        seed=9,
    )
    run_dir = run_on_gpu0(tmp_path, sweep_cli, data)
    result = RunDir(run_dir).read_results()
    by_status: dict[str, list[Any]] = {}
    for trial in result.trials:
        by_status.setdefault(trial.status, []).append(trial)
    assert sorted(by_status) == ["completed", "errored"], result.counts()
    (greedy,) = by_status["errored"]
    assert greedy.config["mem_fraction"] == 0.5
    assert "out of memory" in (greedy.error or "").lower()
    neighbours = by_status["completed"]
    assert len(neighbours) == 3 and all(t.last["held_bytes"] > 0 for t in neighbours)
    assert len(trial_starts(run_dir)[greedy.trial_id]) == 2  # retried once (max_failures 1)
    starts = trial_intervals(run_dir)
    assert max_overlap(list(starts.values())) >= 2  # the greedy one failed beside others
    report = (run_dir / "report.txt").read_text()
    assert greedy.trial_id in report and "out of memory" in report.lower()


@pytest.mark.gpu
@pytest.mark.parametrize("library", ["xgboost", "catboost"])
def test_gbm_trials_train_on_the_gpu(tmp_path: Path, sweep_cli: CliRunner, library: str) -> None:
    """The trials' worker processes hold a CUDA context on GPU 0 while they train."""
    data = make_sweep(
        library,
        name=f"{library}-gpu",
        trainable_args={"dataset": "digits", "num_boost_round": 30},
        space={"learning_rate": {"type": "loguniform", "low": 0.05, "high": 0.3}},
        search={"algorithm": "random", "num_samples": 2},
        resources={"cpus_per_trial": 1, "gpus_per_trial": 0.5},
        seed=4,
    )
    run_completed_on_gpu0(tmp_path, sweep_cli, data)


@pytest.mark.gpu
def test_lightgbm_on_the_gpu_trains_or_explains(tmp_path: Path, sweep_cli: CliRunner) -> None:
    """LightGBM's PyPI wheel needs an OpenCL runtime: the trial trains, or its error says so."""
    data = make_sweep(
        "lightgbm",
        name="lightgbm-gpu",
        trainable_args={"dataset": "breast_cancer", "num_boost_round": 20},
        space={"learning_rate": 0.1},
        search={"algorithm": "random", "num_samples": 1},
        resources={"cpus_per_trial": 1, "gpus_per_trial": 1},
        seed=4,
    )
    path = tmp_path / "lgb.json"
    path.write_text(json.dumps(data))
    ran = sweep_cli("run", "--config", str(path), "--storage", str(tmp_path), "--gpus", "0")
    (trial,) = RunDir(tmp_path / data["name"]).read_results().trials
    if trial.status == "completed":
        assert ran.returncode == 0 and trial.gpu_ids == ["0"]
    else:
        assert trial.status == "errored", ran.stdout + ran.stderr
        assert "OpenCL" in (trial.error or "") and "USE_CUDA=ON" in (trial.error or "")


@pytest.mark.gpu
def test_torch_mlp_trains_data_parallel_across_two_gpus(
    tmp_path: Path, sweep_cli: CliRunner
) -> None:
    """gpus_per_trial 2: one NCCL replica per GPU, both GPUs recorded, the rerun matches."""
    from raysweep.gpu.inventory import read_inventory

    if len(read_inventory().gpus) < 2:
        pytest.skip("needs two NVIDIA GPUs (the CPU replicas are tested everywhere)")
    data = make_sweep(
        "torch_mlp",
        name="ddp-gpu",
        trainable_args={"dataset": "digits", "epochs": 3},
        space={"lr": {"type": "loguniform", "low": 0.001, "high": 0.05}, "dropout": 0.1},
        resources={"cpus_per_trial": 2, "gpus_per_trial": 2},
        checkpoint={"frequency": 1},
        seed=4,
    )
    path = tmp_path / "ddp.json"
    path.write_text(json.dumps(data))
    ran = sweep_cli("run", "--config", str(path), "--storage", str(tmp_path), "--gpus", "0,1")
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    run_dir = tmp_path / data["name"]
    trials = RunDir(run_dir).read_results().trials
    assert [t.status for t in trials] == ["completed", "completed"]
    assert all(sorted(t.gpu_ids) == ["0", "1"] for t in trials)
    metas = [json.loads(p.read_text()) for p in run_dir.rglob("raysweep_checkpoint.json")]
    assert metas and {m["replicas"] for m in metas} == {2}
    repro = sweep_cli("repro", str(run_dir))
    assert repro.returncode == 0 and repro.stdout.strip().endswith("match"), repro.stdout
