"""A user trainable that imports torch inside its function is seeded and switched all the same.

Two `sweep run` processes of the same sweep and seed, side by side (a fresh Ray
each, 2 trials at a time, so two trials start a fresh worker that has not
imported torch yet) must
give identical metrics for every trial, and `sweep repro` must match a trial that
started a worker. The trainable is tests/e2e/torch_inside_trainable.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import REPO, Sweeps, sweep_env

from factories import make_sweep
from raysweep.gpu.guard import GPU_MEMORY_HEADROOM
from raysweep.rundir import RunDir

pytestmark = pytest.mark.slow

TORCH_INSIDE: dict[str, Any] = make_sweep(
    "torch_inside_trainable:fit",
    name="torch-inside",
    space={"lr": {"type": "loguniform", "low": 0.01, "high": 0.3}, "steps": 3},
    search={"algorithm": "random", "num_samples": 4, "max_concurrent": 2},
    resources={"cpus_per_trial": 1},
    seed=31,
)


@pytest.fixture()
def sweeps(tmp_path: Path) -> Iterator[Sweeps]:
    # raysweep from this checkout first, then the trainable's directory (tests/e2e)
    path = os.pathsep.join(str(p) for p in (REPO / "src", REPO, REPO / "tests" / "e2e"))
    runner = Sweeps(tmp_path, sweep_env(PYTHONPATH=path))
    yield runner
    runner.close()


def run_twice(sweeps: Sweeps, tmp_path: Path, data: dict[str, Any], *gpus: str) -> list[Path]:
    """``sweep run`` of ``data`` in two fresh processes at once; the two run directories."""
    config = tmp_path / "sweep.json"
    config.write_text(json.dumps(data))
    storages = ("first", "second")
    procs = [
        sweeps.start("run", "--config", str(config), "--storage", str(tmp_path / storage),
                     "--no-dashboard", *gpus)
        for storage in storages
    ]  # fmt: skip
    for proc in procs:
        code, output = sweeps.wait(proc)
        assert code == 0, output[-4000:]
    return [tmp_path / storage / data["name"] for storage in storages]


KEPT = ("loss", "step", "seeded", "deterministic", "memory_fraction")


def metrics_by_index(run_dir: Path) -> dict[int, dict[str, Any]]:
    """Trial index -> (status, seed, iterations, last metrics without timings)."""
    kept = {}
    for trial in RunDir(run_dir).read_results().trials:
        last = {k: v for k, v in trial.last.items() if k in KEPT}
        kept[trial.index] = {"status": trial.status, "seed": trial.seed,
                             "iterations": trial.iterations, "last": last,
                             "best": trial.best_metric}  # fmt: skip
    return kept


def worker_starters(run_dir: Path) -> list[str]:
    """Ids of the trials that were the first to run in their worker process."""
    first: dict[int, tuple[float, str]] = {}
    for line in (run_dir / "trial_info.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["event"] == "start":
            pid, at = int(record["pid"]), float(record["t"])
            if pid not in first or at < first[pid][0]:
                first[pid] = (at, record["trial_id"])
    return [trial_id for _, trial_id in first.values()]


def check_same_sweep(sweeps: Sweeps, runs: list[Path], trials: int) -> None:
    first, second = (metrics_by_index(run) for run in runs)
    assert sorted(first) == list(range(trials))
    for index, record in first.items():
        assert record["status"] == "completed", record
        assert record["last"]["seeded"] == 1.0, f"trial #{index}: torch not seeded: {record}"
        assert record["last"]["deterministic"] == 1.0, f"trial #{index}: not deterministic"
    assert first == second
    starters = worker_starters(runs[0])
    assert starters, "no trial_info.jsonl start records"
    code, output = sweeps.run("repro", str(runs[0]), "--trial", starters[0])
    assert code == 0, output[-4000:]
    assert output.strip().splitlines()[-1] == "match", output[-2000:]


def test_torch_imported_inside_the_function_repeats_on_cpus(sweeps: Sweeps, tmp_path: Path) -> None:
    runs = run_twice(sweeps, tmp_path, TORCH_INSIDE)
    check_same_sweep(sweeps, runs, 4)


@pytest.mark.gpu
def test_torch_imported_inside_the_function_repeats_on_a_gpu_with_mixed_precision(
    sweeps: Sweeps, tmp_path: Path
) -> None:
    import torch

    if not torch.cuda.is_available():
        pytest.skip("this torch has no CUDA")
    data = {
        **TORCH_INSIDE,
        "space": {**TORCH_INSIDE["space"], "device": "cuda", "amp": True},
        "resources": {"cpus_per_trial": 1, "gpus_per_trial": 0.25},
    }
    runs = run_twice(sweeps, tmp_path, data, "--gpus", "0")
    check_same_sweep(sweeps, runs, 4)
    if hasattr(torch.cuda, "get_per_process_memory_fraction"):  # torch >= 2.8 reads the cap
        for record in metrics_by_index(runs[0]).values():  # the guard capped torch on import
            assert record["last"]["memory_fraction"] == pytest.approx(0.25 * GPU_MEMORY_HEADROOM)
