"""repro.json holds everything that decides a run's result, quickly and without heavy imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from factories import make_spec
from raysweep.config.load import spec_hash
from raysweep.gpu.allocation import GPUPlan
from raysweep.repro import manifest
from raysweep.repro.gbm_params import CATBOOST_GPU_WARNING
from raysweep.repro.seeds import trial_seed_for
from raysweep.rundir import RunDir

REPO = Path(__file__).resolve().parents[2]
CPU_PLAN = GPUPlan(physical_ids=(), num_gpus=0, cpu_fallback=False)


def test_manifest_has_every_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    spec = make_spec(reproducibility={"strict": True, "batch_size": 6})
    written = manifest.write_manifest(RunDir(tmp_path), spec, CPU_PLAN)
    data = json.loads(RunDir(tmp_path).manifest_path.read_text())
    assert data == json.loads(json.dumps(written)) == RunDir(tmp_path).read_manifest()
    assert data["master_seed"] == 42
    assert data["spec_sha256"] == spec_hash(spec)
    assert data["reproducibility"]["strict"] is True
    assert data["reproducibility"]["batch_size"] == 6
    assert data["reproducibility"]["strict_schedule"] == "window"  # a new strict sweep's
    assert data["reproducibility"]["deterministic"] is True
    assert data["reproducibility"]["guarantee"].startswith("strict")
    assert data["determinism"]["torch.use_deterministic_algorithms"] is True
    assert data["worker_env"] == {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"}
    versions = data["versions"]
    for key in ("python", "ray", "torch", "numpy", "optuna", "hyperopt", "lightgbm",
                "xgboost", "catboost", "scikit-learn", "pydantic"):  # fmt: skip
        assert versions[key], key
    assert versions["numpy"] == np.__version__
    assert set(data["cuda"]) >= {"torch_cuda", "cudnn", "driver_version", "gpus"}
    assert isinstance(data["cuda"]["gpus"], list)
    env = data["env"]
    for name in ("PYTHONHASHSEED", "CUBLAS_WORKSPACE_CONFIG", "CUDA_VISIBLE_DEVICES",
                 "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # fmt: skip
        assert name in env
    assert env["OMP_NUM_THREADS"] == "3"
    assert env["MKL_NUM_THREADS"] is None
    assert data["host"]["hostname"]
    assert data["gpu_plan"] == {
        "physical_ids": [],
        "cpu_fallback": False,
        "gpus_per_trial": 0.0,
        "cpus_per_trial": 1,
        "cuda_visible_devices": "",
    }
    assert data["search"]["max_concurrent"] == 1
    assert data["warnings"] == []


def test_manifest_says_whether_the_performance_patches_ran(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = make_spec()
    monkeypatch.delenv("RAYSWEEP_RAY_PATCHES", raising=False)
    assert manifest.build_manifest(spec, CPU_PLAN)["ray_patches"] == "on"
    monkeypatch.setenv("RAYSWEEP_RAY_PATCHES", "off")
    assert manifest.build_manifest(spec, CPU_PLAN)["ray_patches"] == "off"


def test_seed_rule_is_what_trial_seeds_use() -> None:
    rule = manifest.SEED_RULE
    for master, index in [(0, 0), (42, 3), (2**40 + 7, 999)]:
        value = eval(rule, {"numpy": np}, {"master_seed": master, "trial_index": index})
        assert value == trial_seed_for(master, index)


def test_manifest_imports_no_heavy_library() -> None:
    code = (
        "import sys\n"
        "from raysweep.config.load import load_spec\n"
        "from raysweep.gpu.allocation import GPUPlan\n"
        "from raysweep.repro.manifest import build_manifest\n"
        "spec = load_spec('sweeps/user_quadratic.json')\n"
        "build_manifest(spec, GPUPlan((), 0, False))\n"
        "heavy = [m for m in ('torch', 'lightgbm', 'xgboost', 'catboost', 'optuna') "
        "if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"  # building repro.json never imports torch or a GBM library


def test_warnings_for_gpu_libraries_plans_and_timing() -> None:
    plan = GPUPlan(physical_ids=(0, 1), num_gpus=2, cpu_fallback=False, warnings=("plan note",))
    spec = make_spec(
        trainable="catboost",
        metric="val_loss",
        resources={"gpus_per_trial": 0.5},
        stop={"time_budget_s": 60},
        reproducibility={"strict": True},
    )
    data = manifest.build_manifest(spec, plan)
    assert data["warnings"][0] == "plan note"
    assert CATBOOST_GPU_WARNING in data["warnings"]
    assert any("time_budget_s=60" in w and "strict" in w for w in data["warnings"])
    assert data["gpu_plan"]["physical_ids"] == [0, 1]
    assert data["gpu_plan"]["cuda_visible_devices"] == "0,1"
    on_cpu = manifest.build_manifest(spec, GPUPlan((), 0, True))
    assert CATBOOST_GPU_WARNING not in on_cpu["warnings"]
    assert on_cpu["gpu_plan"]["gpus_per_trial"] == 0.0


def test_warnings_for_timing_dependent_searchers_and_schedulers() -> None:
    spec = make_spec(
        space={"x": {"type": "uniform", "low": 0, "high": 1}},
        search={"algorithm": "optuna", "num_samples": 4, "max_concurrent": 2},
        scheduler={"type": "asha"},
    )
    data = manifest.build_manifest(spec, CPU_PLAN)
    text = "\n".join(data["warnings"])
    assert "search.algorithm=optuna with max_concurrent 2" in text
    assert "scheduler.type=asha with max_concurrent 2" in text
    assert data["reproducibility"]["guarantee"].startswith("per-trial only")
    serial = make_spec(scheduler={"type": "hyperband"}, reproducibility={"deterministic": False})
    data = manifest.build_manifest(serial, CPU_PLAN)
    assert data["reproducibility"]["guarantee"].startswith("serial")
    assert [w for w in data["warnings"] if "deterministic=false" in w]


def test_rewrite_keeps_earlier_manifests(tmp_path: Path) -> None:
    first = manifest.write_manifest(RunDir(tmp_path), make_spec(), CPU_PLAN)
    manifest.write_manifest(RunDir(tmp_path), make_spec(), CPU_PLAN)
    third = manifest.write_manifest(RunDir(tmp_path), make_spec(seed=43), CPU_PLAN)
    data = RunDir(tmp_path).read_manifest()
    assert data["master_seed"] == 43 == third["master_seed"]
    assert [m["master_seed"] for m in data["previous"]] == [42, 42]
    assert data["previous"][0] == json.loads(json.dumps(first))
    assert all("previous" not in m for m in data["previous"])


def test_gpus_auto_is_pending_then_recorded(tmp_path: Path) -> None:
    spec = make_spec(resources={"gpus_per_trial": "auto"})
    plan = GPUPlan(physical_ids=(0,), num_gpus=1, cpu_fallback=False)
    manifest.write_manifest(RunDir(tmp_path), spec, plan)
    data = RunDir(tmp_path).read_manifest()
    assert data["gpu_plan"]["gpus_per_trial"] == "auto"
    assert data[manifest.GPUS_AUTO_KEY] is None
    record = {"gpus_per_trial": 0.125, "trials_per_gpu": 8, "warnings": ["probe note"]}
    manifest.record_gpus_auto(RunDir(tmp_path), record)
    data = RunDir(tmp_path).read_manifest()
    assert data["gpu_plan"]["gpus_per_trial"] == 0.125
    assert data[manifest.GPUS_AUTO_KEY] == record
    assert data["warnings"][-1] == "probe note"
    rebuilt = manifest.build_manifest(spec, plan, record)  # a resume that extends the run
    assert rebuilt["gpu_plan"]["gpus_per_trial"] == 0.125
    assert rebuilt[manifest.GPUS_AUTO_KEY] == record and "probe note" in rebuilt["warnings"]
    assert rebuilt["spec_sha256"] == spec_hash(spec)  # the hash of what the user wrote


def test_gpus_auto_on_cpu_fallback_and_numbers() -> None:
    spec = make_spec(resources={"gpus_per_trial": "auto"})
    fallback = GPUPlan((), 0, True, ("asks for GPUs (resources.gpus_per_trial=auto) ...",))
    data = manifest.build_manifest(spec, fallback)
    assert data["gpu_plan"]["gpus_per_trial"] == 0.0 and data["gpu_plan"]["cpu_fallback"]
    assert data[manifest.GPUS_AUTO_KEY] is None
    assert "resources.gpus_per_trial=auto" in data["warnings"][0]
    assert manifest.GPUS_AUTO_KEY not in manifest.build_manifest(make_spec(), CPU_PLAN)
