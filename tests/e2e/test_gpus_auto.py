"""``"gpus_per_trial": "auto"`` through the CLI: refusals, the CPU fallback, the probe on a GPU."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from factories import make_sweep, quadratic_sweep
from raysweep import api
from raysweep.config.load import parse_spec
from raysweep.gpu.allocation import GPUPlan
from raysweep.gpu.inventory import read_inventory
from raysweep.rundir import RunDir

CliRunner = Callable[..., subprocess.CompletedProcess[str]]
HAS_GPU = read_inventory().available
AUTO: dict[str, Any] = quadratic_sweep(
    name="auto",
    space={"x": {"type": "uniform", "low": 0, "high": 6}, "steps": 3},
    search={"algorithm": "random", "num_samples": 2, "max_concurrent": 2},
    resources={"cpus_per_trial": 1, "gpus_per_trial": "auto"},
    seed=5,
)


def write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(data))
    return path


def test_validate_shows_auto(tmp_path: Path, sweep_cli: CliRunner) -> None:
    proc = sweep_cli("validate", "--config", str(write(tmp_path, AUTO)))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["resources"] == {"cpus_per_trial": 1, "gpus_per_trial": "auto"}


def test_other_strings_are_refused_with_the_field(tmp_path: Path, sweep_cli: CliRunner) -> None:
    bad = {**AUTO, "resources": {"gpus_per_trial": "max"}}
    proc = sweep_cli("validate", "--config", str(write(tmp_path, bad)))
    assert proc.returncode == 2
    assert "resources.gpus_per_trial: must be a number or 'auto' (got 'max')" in proc.stderr


@pytest.mark.skipif(HAS_GPU, reason="this machine has an NVIDIA GPU")
def test_auto_without_gpu_exits_2_and_writes_nothing(tmp_path: Path, sweep_cli: CliRunner) -> None:
    config = str(write(tmp_path, AUTO))
    ray_tmp = tmp_path / "ray"  # a Ray started by the command would create its session here
    for extra in ([], ["--dry-run"]):
        proc = sweep_cli(
            "run", "--config", config, "--storage", str(tmp_path / "runs"), *extra,
            env={"RAY_TMPDIR": str(ray_tmp)},
        )  # fmt: skip
        assert proc.returncode == 2, proc.stderr
        asked = "this config asks for GPUs (resources.gpus_per_trial=auto) but no NVIDIA GPU"
        assert asked in proc.stderr
        assert "use --allow-cpu" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "runs").exists()
    assert not ray_tmp.exists()


def test_auto_with_address_exits_2(tmp_path: Path, sweep_cli: CliRunner) -> None:
    proc = sweep_cli(
        "run", "--config", str(write(tmp_path, AUTO)), "--storage", str(tmp_path / "runs"),
        "--address", "127.0.0.1:1",
    )  # fmt: skip
    assert proc.returncode == 2
    assert "resources.gpus_per_trial=auto: the packing is probed on this machine's GPUs" in (
        proc.stderr
    )
    assert not (tmp_path / "runs").exists()


def test_dry_run_says_the_packing_is_probed_at_run_time(tmp_path: Path) -> None:
    spec = parse_spec(AUTO)
    text = api._dry_run_text(spec, tmp_path / "auto", GPUPlan((0,), 1, False))
    assert "gpus per trial: auto, probed at run time" in text
    assert not (tmp_path / "auto").exists()
    fallback = api._dry_run_text(spec, tmp_path / "auto", GPUPlan((), 0, True))
    assert "trials run on CPUs" in fallback


@pytest.mark.slow
@pytest.mark.skipif(HAS_GPU, reason="this machine has an NVIDIA GPU")
def test_allow_cpu_falls_back_and_records_it(tmp_path: Path, sweep_cli: CliRunner) -> None:
    proc = sweep_cli(
        "run", "--config", str(write(tmp_path, AUTO)), "--storage", str(tmp_path), "--allow-cpu"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = tmp_path / "auto"
    spec = json.loads((run_dir / "spec.json").read_text())["spec"]
    assert spec["resources"]["gpus_per_trial"] == "auto"  # what the user wrote
    repro = json.loads((run_dir / "repro.json").read_text())
    assert repro["gpu_plan"]["cpu_fallback"] is True
    assert repro["gpu_plan"]["gpus_per_trial"] == 0.0
    assert repro["gpus_per_trial_auto"] is None
    assert any(
        "resources.gpus_per_trial=auto" in w and "--allow-cpu given" in w for w in repro["warnings"]
    )
    assert not RunDir(run_dir).packing_path.exists() and not RunDir(run_dir).probe_dir.exists()
    results = json.loads((run_dir / "results.json").read_text())
    assert [t["status"] for t in results["trials"]] == ["completed", "completed"]
    assert all(t["gpu_ids"] == [] for t in results["trials"])
    rerun = sweep_cli("repro", str(run_dir))
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert rerun.stdout.strip().endswith("match")


@pytest.mark.gpu
def test_auto_probes_and_packs_torch_mlp_on_a_gpu(tmp_path: Path, sweep_cli: CliRunner) -> None:
    """The probe picks more than one trial per GPU; resume and repro reuse it, never reprobe."""
    data = make_sweep(
        "torch_mlp",
        name="mlp-auto",
        trainable_args={"dataset": "digits", "epochs": 3},
        space={
            "lr": {"type": "loguniform", "low": 0.001, "high": 0.03},
            "hidden_size": {"type": "choice", "values": [32, 64]},
        },
        search={"algorithm": "random", "num_samples": 4},
        resources={"cpus_per_trial": 1, "gpus_per_trial": "auto"},
        seed=11,
    )
    ran = sweep_cli("run", "--config", str(write(tmp_path, data)), "--storage", str(tmp_path),
                "--gpus", "0")  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    run_dir = tmp_path / "mlp-auto"
    record = json.loads(RunDir(run_dir).packing_path.read_text())
    assert record["trials_per_gpu"] > 1
    assert record["gpus_per_trial"] == pytest.approx(1 / record["trials_per_gpu"], abs=1e-4)
    assert record["probe_peak_mb"] > 0 and record["gpu_total_mb"] > record["probe_peak_mb"]
    assert record["method"] in ("nvml-process", "nvml-device", "torch")
    assert record["headroom"] == 0.2
    repro = json.loads((run_dir / "repro.json").read_text())
    assert repro["gpus_per_trial_auto"] == record
    assert repro["gpu_plan"]["gpus_per_trial"] == record["gpus_per_trial"]
    spec = json.loads((run_dir / "spec.json").read_text())["spec"]
    assert spec["resources"]["gpus_per_trial"] == "auto"
    log = RunDir(run_dir).log_path.read_text()
    assert f"-> {record['trials_per_gpu']} trials per GPU" in log
    results = json.loads((run_dir / "results.json").read_text())
    assert [t["status"] for t in results["trials"]] == ["completed"] * 4
    assert all(t["gpu_ids"] == ["0"] for t in results["trials"])

    probe_mtime = RunDir(run_dir).packing_path.stat().st_mtime_ns
    more = sweep_cli("resume", str(run_dir), "--num-samples", "6", "--gpus", "0")
    assert more.returncode == 0, more.stdout + more.stderr
    assert "[recorded in gpu_auto.json]" in more.stdout and "probing" not in more.stdout
    assert RunDir(run_dir).packing_path.stat().st_mtime_ns == probe_mtime
    assert json.loads((run_dir / "repro.json").read_text())["gpus_per_trial_auto"] == record

    rerun = sweep_cli("repro", str(run_dir))
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert rerun.stdout.strip().endswith("match")
