"""``resources.gpu_sharing: "mps"`` on a real GPU with NVIDIA MPS (marked ``gpu``).

Skipped, with the reason, where NVML finds no GPU or MPS cannot run (no
``nvidia-cuda-mps-control``, MIG, a compute mode other than Default). The CPU-side
refusals and the fallback are in tests/e2e/test_gpu_sharing_cli.py.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import Sweeps

from factories import make_sweep
from raysweep.gpu import mps_daemon
from raysweep.gpu.mps import mps_status
from raysweep.rundir import RunDir, pid_alive

MPS = mps_status([0])
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not MPS.available, reason=f"MPS not available: {MPS.reason}"),
]
STARTED = re.compile(r"GPU sharing: NVIDIA MPS \(control daemon pid (\d+)")


@pytest.fixture()
def sweeps(tmp_path: Path) -> Iterator[Sweeps]:
    runs = Sweeps(tmp_path)
    yield runs
    runs.close()
    for record in tmp_path.glob("*/mps_daemon.json"):  # a failed test leaves no daemon behind
        mps_daemon.cleanup_stale(RunDir(record.parent))


def sweep_config(tmp_path: Path, name: str, **fields: Any) -> Path:
    data = make_sweep(
        "examples.mps_memory:torch_hold",
        name=name,
        space={
            "mem_fraction": 0.05,
            "x": {"type": "uniform", "low": 0, "high": 1},
            "hold_s": 1.0,
        },
        search={"algorithm": "random", "num_samples": 2},
        resources={"cpus_per_trial": 1, "gpus_per_trial": 0.25, "gpu_sharing": "mps"},
        seed=3,
    )
    data.update(fields)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("trainable", "greedy"),
    [("torch_hold", 0.5), ("xgboost_hold", 0.9)],  # xgboost: its own device buffers
)
def test_a_greedy_trial_fails_alone_with_out_of_memory(
    tmp_path: Path, sweeps: Sweeps, trainable: str, greedy: float
) -> None:
    """Four trials at 0.25 GPU; the one asking for more than its share fails, the rest finish.

    Under time-slicing the greedy one would get what it asks for (XGBoost's memory is
    outside the torch guard); MPS limits the whole process, whatever allocates.
    """
    if trainable == "xgboost_hold":
        pytest.importorskip("xgboost")
    config = sweep_config(
        tmp_path,
        f"greedy-{trainable}",
        trainable=f"examples.mps_memory:{trainable}",
        space={
            "mem_fraction": {"type": "grid", "values": [0.02, 0.02, 0.02, greedy]},
            "x": 1.0,
            "hold_s": 4.0,
        },
        search={"algorithm": "grid", "num_samples": 1},
    )
    code, output = sweeps.run("run", "--config", str(config), "--storage", str(tmp_path),
                              "--gpus", "0", timeout=300)  # fmt: skip
    assert code == 0, output[-4000:]
    result = RunDir(tmp_path / f"greedy-{trainable}").read_results()
    by_status: dict[str, list[Any]] = {}
    for trial in result.trials:
        by_status.setdefault(trial.status, []).append(trial)
    assert sorted(by_status) == ["completed", "errored"], result.counts()
    (failed,) = by_status["errored"]
    assert failed.config["mem_fraction"] == greedy
    assert "memory" in (failed.error or "").lower(), failed.error
    neighbours = by_status["completed"]
    assert len(neighbours) == 3
    assert all(t.last["mps_threads"] == 25.0 for t in neighbours)  # 0.25 -> 25% of the SMs


def test_the_sweep_starts_and_stops_its_daemon(tmp_path: Path, sweeps: Sweeps) -> None:
    config = sweep_config(tmp_path, "daemon")
    code, output = sweeps.run("run", "--config", str(config), "--storage", str(tmp_path),
                              "--gpus", "0", timeout=300)  # fmt: skip
    assert code == 0, output[-4000:]
    started = STARTED.search(output)
    assert started, output[-4000:]
    assert not pid_alive(int(started.group(1)))  # stopped at the end
    run_dir = RunDir(tmp_path / "daemon")
    assert not run_dir.mps_record_path.exists()
    repro = json.loads(run_dir.manifest_path.read_text())
    assert repro["gpu_sharing"] == {"requested": "mps", "used": "mps", "note": None}
    trials = run_dir.read_results().trials
    assert [t.status for t in trials] == ["completed", "completed"]
    assert all(t.last["mps_threads"] == 25.0 for t in trials)


def test_resume_after_kill_9_cleans_up_and_finishes(tmp_path: Path, sweeps: Sweeps) -> None:
    config = sweep_config(
        tmp_path, "killed", search={"algorithm": "random", "num_samples": 6, "max_concurrent": 2}
    )
    config_data = json.loads(config.read_text())
    config_data["space"]["hold_s"] = 3.0
    config.write_text(json.dumps(config_data))
    run_dir = RunDir(tmp_path / "killed")
    driver = sweeps.start("run", "--config", str(config), "--storage", str(tmp_path),
                          "--gpus", "0")  # fmt: skip
    deadline = time.monotonic() + 180
    while not (run_dir.mps_record_path.exists() and run_dir.trial_info_path.exists()):
        assert driver.poll() is None, sweeps.output(driver)[-4000:]
        assert time.monotonic() < deadline, "no trial started"
        time.sleep(0.1)
    daemon = int(json.loads(run_dir.mps_record_path.read_text())["pid"])
    os.kill(driver.pid, signal.SIGKILL)  # the driver alone: its daemon outlives it
    driver.wait()
    code, output = sweeps.run("resume", str(run_dir.path), "--gpus", "0", timeout=300)
    assert code == 0, output[-4000:]
    assert not pid_alive(daemon)
    if f"stopped a stale MPS daemon (pid {daemon})" not in output:
        assert "GPU sharing: NVIDIA MPS" in output  # it had died with the driver's group
    restarted = STARTED.search(output)
    assert restarted and not pid_alive(int(restarted.group(1)))
    assert not run_dir.mps_record_path.exists()
    trials = run_dir.read_results().trials
    assert len(trials) == 6 and {t.status for t in trials} == {"completed"}
    assert sorted(t.index for t in trials) == list(range(6))
