"""Bad input exits 2 with a message naming the field; nothing is written, no Ray starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from factories import REPO, make_sweep, quadratic_sweep, run_sweep_cli

GOOD: dict[str, Any] = quadratic_sweep(name="ok")


CASES: list[tuple[str, Any, str]] = [
    (
        "space.x",
        {"type": "int", "low": 300, "high": 256},
        "space.x.low: must be < high (got 300 >= 256)",
    ),
    ("space.x", {"type": "loguniform", "low": -1, "high": 2}, "space.x.low: must be > 0"),
    ("space.x", {"type": "int", "low": 1, "high": 5, "step": 0}, "space.x.step: must be >= 1"),
    ("search.num_samples", 0, "search.num_samples"),
    ("mode", "lowest", "mode: Input should be 'min' or 'max'"),
    ("resources.gpus_per_trial", 2.5, "resources.gpus_per_trial: must be a fraction in (0, 1]"),
    ("trainable", "nosuchmodule.x:fit", "cannot import module 'nosuchmodule.x'"),
    ("trainable", "examples.quadratic:nope", "module 'examples.quadratic' has no function 'nope'"),
    ("trainable", "magic", "trainable: unknown trainable 'magic'"),
    (
        "search.options",
        {"sampler": "tpe"},
        "search.options.sampler: unknown option for algorithm 'random'",
    ),
]


@pytest.mark.parametrize(("path", "value", "expected"), CASES)
def test_bad_config_exits_2_and_writes_nothing(
    tmp_path: Path, path: str, value: Any, expected: str
) -> None:
    config = json.loads(json.dumps(GOOD))
    node = config
    *parents, leaf = path.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value
    file = tmp_path / "sweep.json"
    file.write_text(json.dumps(config))
    ray_tmp = tmp_path / "ray"  # a Ray started by the command would create its session here
    for command in (
        ["validate", "--config", str(file)],
        ["run", "--config", str(file), "--storage", str(tmp_path / "runs")],
    ):
        proc = run_sweep_cli(*command, cwd=REPO, env={"RAY_TMPDIR": str(ray_tmp)})
        assert proc.returncode == 2, proc.stderr
        assert expected in proc.stderr
        assert "Traceback" not in proc.stderr
    assert not (tmp_path / "runs").exists()
    assert not ray_tmp.exists()


def test_missing_file_and_invalid_json(tmp_path: Path) -> None:
    proc = run_sweep_cli("run", "--config", str(tmp_path / "none.json"), cwd=tmp_path)
    assert proc.returncode == 2 and "config file not found" in proc.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    proc = run_sweep_cli(
        "run", "--config", str(bad), "--storage", str(tmp_path / "runs"), cwd=tmp_path
    )
    assert proc.returncode == 2 and "invalid JSON at line 1" in proc.stderr
    assert not (tmp_path / "runs").exists()


def test_builtin_metric_and_args_are_checked(tmp_path: Path) -> None:
    config = make_sweep("lightgbm", metric="auc", trainable_args={"dataset": "breast_cancer"})
    file = tmp_path / "s.json"
    file.write_text(json.dumps(config))
    proc = run_sweep_cli("validate", "--config", str(file), cwd=tmp_path)
    assert proc.returncode == 2
    assert "metric: trainable 'lightgbm' does not report 'auc'" in proc.stderr
    config["metric"] = "val_loss"
    config["trainable_args"] = {"dataset": "breast_cancer", "rounds": 3}
    file.write_text(json.dumps(config))
    proc = run_sweep_cli("validate", "--config", str(file), cwd=tmp_path)
    assert proc.returncode == 2 and "trainable_args.rounds: unknown argument" in proc.stderr


def test_existing_run_dir_is_never_overwritten(tmp_path: Path) -> None:
    file = tmp_path / "s.json"
    file.write_text(json.dumps(GOOD))
    run_dir = tmp_path / "runs" / "ok"
    run_dir.mkdir(parents=True)
    (run_dir / "keep.txt").write_text("x")
    proc = run_sweep_cli(
        "run", "--config", str(file), "--storage", str(tmp_path / "runs"), cwd=REPO
    )
    assert proc.returncode == 2
    assert (
        "already exists" in proc.stderr
        and "--name" in proc.stderr
        and "sweep resume" in proc.stderr
    )
    assert sorted(p.name for p in run_dir.iterdir()) == ["keep.txt"]


def test_unknown_gpu_id_exits_2(tmp_path: Path) -> None:
    file = tmp_path / "s.json"
    file.write_text(json.dumps({**GOOD, "resources": {"gpus_per_trial": 0.25}}))
    proc = run_sweep_cli(
        "run", "--config", str(file), "--gpus", "7", "--storage", str(tmp_path / "r"), cwd=REPO
    )
    assert proc.returncode == 2 and "GPU 7" in proc.stderr
    proc = run_sweep_cli("run", "--config", str(file), "--storage", str(tmp_path / "r"), cwd=REPO)
    assert proc.returncode == 2 and "--allow-cpu" in proc.stderr
    assert not (tmp_path / "r").exists()


def test_validate_prints_resolved_spec_and_schema_is_json(tmp_path: Path) -> None:
    proc = run_sweep_cli("validate", "--config", str(REPO / "sweeps" / "demo.json"), cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    spec = json.loads(proc.stdout)
    assert spec["reproducibility"]["deterministic"] is True  # default filled in
    assert spec["space"]["num_leaves"] == {
        "type": "int",
        "low": 4,
        "high": 64,
        "log": True,
        "step": 1,
    }
    proc = run_sweep_cli("schema", cwd=REPO)
    assert proc.returncode == 0 and json.loads(proc.stdout)["title"] == "raysweep sweep.json"


def has_gpu() -> bool:
    from raysweep.gpu.inventory import read_inventory

    return read_inventory().available


@pytest.mark.skipif(has_gpu(), reason="this machine has an NVIDIA GPU")
def test_gpus_without_gpu_says_so(tmp_path: Path) -> None:
    proc = run_sweep_cli("gpus", cwd=tmp_path)
    assert proc.returncode == 0
    assert "no NVIDIA GPU found" in proc.stdout
    proc = run_sweep_cli("gpus", "--json", cwd=tmp_path)
    assert json.loads(proc.stdout)["gpus"] == []


def test_builtin_on_several_gpus_is_refused(tmp_path: Path) -> None:
    config = make_sweep(
        "lightgbm", trainable_args={"dataset": "wine"}, resources={"gpus_per_trial": 2}
    )
    file = tmp_path / "s.json"
    file.write_text(json.dumps(config))
    proc = run_sweep_cli("validate", "--config", str(file), cwd=tmp_path)
    assert proc.returncode == 2
    assert (
        "resources.gpus_per_trial: built-in trainable 'lightgbm' trains on one GPU" in proc.stderr
    )
    assert "built-ins that train across several GPUs: torch_mlp" in proc.stderr
