"""``resources.gpu_sharing`` through the CLI where MPS cannot run (CI: no GPU, no MPS binary).

"mps" exits 2 naming why, writing nothing and starting no Ray; "auto" runs,
time-slicing, with a one-line note and repro.json saying so; "time-slice" (the
default) is left out of spec.json, so existing runs keep their hash.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from factories import quadratic_sweep
from raysweep.gpu.mps import mps_status

CliRunner = Callable[..., subprocess.CompletedProcess[str]]
MPS = mps_status()
NO_MPS = pytest.mark.skipif(MPS.available, reason="MPS is available on this machine")
SHARED: dict[str, Any] = quadratic_sweep(
    name="shared",
    space={"x": {"type": "uniform", "low": 0, "high": 6}, "steps": 2},
    search={"algorithm": "random", "num_samples": 2, "max_concurrent": 2},
    resources={"cpus_per_trial": 1, "gpus_per_trial": 0.25, "gpu_sharing": "mps"},
    seed=5,
)


def write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(data))
    return path


@NO_MPS
def test_mps_where_unavailable_exits_2_naming_why(tmp_path: Path, sweep_cli: CliRunner) -> None:
    config = str(write(tmp_path, SHARED))
    ray_tmp = tmp_path / "ray"
    for extra in ([], ["--allow-cpu"], ["--dry-run"]):
        proc = sweep_cli(
            "run", "--config", config, "--storage", str(tmp_path / "runs"), *extra,
            env={"RAY_TMPDIR": str(ray_tmp)},
        )  # fmt: skip
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "resources.gpu_sharing: 'mps' is not available: " in proc.stderr
        assert str(MPS.reason) in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "runs").exists()
    assert not ray_tmp.exists()


def test_mps_with_a_cluster_exits_2(tmp_path: Path, sweep_cli: CliRunner) -> None:
    proc = sweep_cli(
        "run", "--config", str(write(tmp_path, SHARED)), "--storage", str(tmp_path / "runs"),
        "--address", "127.0.0.1:1",
    )  # fmt: skip
    assert proc.returncode == 2
    assert "'mps' is not available: --address runs trials on a cluster's nodes" in proc.stderr
    assert not (tmp_path / "runs").exists()


def test_mps_without_gpus_is_a_config_error(tmp_path: Path, sweep_cli: CliRunner) -> None:
    data = {**SHARED, "resources": {"gpu_sharing": "mps"}}
    proc = sweep_cli("validate", "--config", str(write(tmp_path, data)))
    assert proc.returncode == 2
    assert "gpu_sharing: 'mps' shares GPUs between trials, but gpus_per_trial is 0" in proc.stderr


def test_default_sharing_is_left_out_of_the_spec(tmp_path: Path, sweep_cli: CliRunner) -> None:
    plain = {**SHARED, "resources": {"gpus_per_trial": 0.25}}
    explicit = {**SHARED, "resources": {"gpus_per_trial": 0.25, "gpu_sharing": "time-slice"}}
    shown = []
    for data in (plain, explicit, SHARED):
        proc = sweep_cli("validate", "--config", str(write(tmp_path, data)))
        assert proc.returncode == 0, proc.stderr
        shown.append(json.loads(proc.stdout)["resources"])
    assert shown[0] == shown[1] == {"cpus_per_trial": 1, "gpus_per_trial": 0.25}
    assert shown[2]["gpu_sharing"] == "mps"


def test_gpus_reports_mps(sweep_cli: CliRunner) -> None:
    text = sweep_cli("gpus")
    assert text.returncode == 0
    as_json = json.loads(sweep_cli("gpus", "--json").stdout)
    assert as_json["mps"]["available"] is MPS.available
    if not MPS.available:
        assert f"MPS: not available ({MPS.reason})" in text.stdout
        assert as_json["mps"]["reason"] == MPS.reason


@pytest.mark.slow
@NO_MPS
def test_auto_falls_back_to_time_slicing_with_one_note(
    tmp_path: Path, sweep_cli: CliRunner
) -> None:
    """And `sweep repro` of an "mps" run (edited in: no MPS here to make one) reruns time-sliced."""
    data = {**SHARED, "resources": {**SHARED["resources"], "gpu_sharing": "auto"}}
    proc = sweep_cli(
        "run", "--config", str(write(tmp_path, data)), "--storage", str(tmp_path), "--allow-cpu"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    output = proc.stdout + proc.stderr
    notes = [line for line in output.splitlines() if "GPU sharing: time-slicing" in line]
    assert len(notes) == 1, output
    assert notes[0].startswith("note: GPU sharing: time-slicing (MPS not available: ")
    run_dir = tmp_path / "shared"
    repro = json.loads((run_dir / "repro.json").read_text())
    assert repro["gpu_sharing"]["requested"] == "auto"
    assert repro["gpu_sharing"]["used"] == "time-slice"
    assert "MPS not available" in repro["gpu_sharing"]["note"]
    results = json.loads((run_dir / "results.json").read_text())
    assert [t["status"] for t in results["trials"]] == ["completed", "completed"]
    assert not (run_dir / "mps_daemon.json").exists()
    spec_path = run_dir / "spec.json"
    spec = json.loads(spec_path.read_text())
    spec["spec"]["resources"]["gpu_sharing"] = "mps"
    spec_path.write_text(json.dumps(spec))
    proc = sweep_cli("repro", str(run_dir))
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert output.splitlines()[-1] == "match", output
    assert "note: GPU sharing: time-slicing (MPS not available: " in output
    assert not (run_dir / "mps_daemon.json").exists()
