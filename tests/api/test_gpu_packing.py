"""GPU packing through the real pipeline, on Ray's logical GPUs (no NVIDIA GPU needed).

A subprocess starts Ray with logical CPUs and GPUs and runs a sweep into it as onto
an existing cluster (the GPUs are the cluster's). Trials wait at a barrier until
the expected number run at once, so slow worker start-up cannot hide a packing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from factories import make_sweep

REPO = Path(__file__).resolve().parents[2]
Overlap = Callable[[list[tuple[float, float]]], int]
SCRIPT = """
import io, json, sys
from pathlib import Path
import ray
ray.init(address="local", num_cpus=int(sys.argv[3]), num_gpus=int(sys.argv[4]),
         include_dashboard=False,
         log_to_driver=False)
from raysweep import api
code = api.run_sweep(api.RunOptions(config=Path(sys.argv[1]), storage=Path(sys.argv[2]),
                                    address="auto"), out=io.StringIO())
sys.exit(code)
"""


def run_packed(
    tmp_path: Path,
    gpus_per_trial: float,
    trials: int,
    cpus: int,
    gpus: int,
    slots: int,
    cpus_per_trial: float = 1,
) -> list[dict[str, Any]]:
    """Run ``trials`` probes; the first ``slots`` wait for each other before holding 1 s."""
    config = make_sweep(
        "examples.device_probe:probe",
        name=f"pack-{gpus_per_trial}",
        space={
            "x": {"type": "uniform", "low": 0, "high": 1},
            "hold_s": 1.0,
            "barrier_dir": str(tmp_path / "barrier"),
            "barrier_count": slots,
        },
        search={"algorithm": "random", "num_samples": trials},  # as many at once as fit
        resources={"cpus_per_trial": cpus_per_trial, "gpus_per_trial": gpus_per_trial},
    )
    path = tmp_path / "s.json"
    path.write_text(json.dumps(config))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(path), str(tmp_path / "runs"), str(cpus), str(gpus)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((tmp_path / "runs" / config["name"] / "results.json").read_text())
    return list(results["trials"])


@pytest.mark.slow
def test_quarter_gpus_pack_four_trials_per_gpu(tmp_path: Path, max_overlap: Overlap) -> None:
    """8 trials at 0.25 GPU and 0.5 CPU on 2 GPUs and 4 CPUs: four per GPU, two per CPU,
    all at once (the default concurrency is CPUs / cpus_per_trial)."""
    trials = run_packed(tmp_path, 0.25, 8, cpus=4, gpus=2, slots=8, cpus_per_trial=0.5)
    assert len(trials) == 8
    assert max_overlap([(t["last"]["started"], t["last"]["ended"]) for t in trials]) == 8
    by_gpu: dict[str, list[tuple[float, float]]] = {}
    for t in trials:
        last = t["last"]
        assert t["gpu_ids"] and len(t["gpu_ids"]) == 1
        assert last["cuda_visible_devices"] == t["gpu_ids"][0] == last["context_gpu_ids"]
        by_gpu.setdefault(t["gpu_ids"][0], []).append((last["started"], last["ended"]))
    assert sorted(by_gpu) == ["0", "1"]
    assert [max_overlap(v) for v in by_gpu.values()] == [4, 4]


@pytest.mark.slow
def test_whole_gpu_trials_never_share(tmp_path: Path, max_overlap: Overlap) -> None:
    trials = run_packed(tmp_path, 2, 4, cpus=4, gpus=4, slots=2)
    seen: dict[str, list[tuple[float, float]]] = {}
    for t in trials:
        last = t["last"]
        assert len(t["gpu_ids"]) == 2
        assert sorted(last["cuda_visible_devices"].split(",")) == sorted(t["gpu_ids"])
        for gpu in t["gpu_ids"]:
            seen.setdefault(gpu, []).append((last["started"], last["ended"]))
    assert all(max_overlap(v) == 1 for v in seen.values())
    assert len(seen) == 4
