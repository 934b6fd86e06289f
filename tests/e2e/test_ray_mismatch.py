"""A Ray whose internals moved is refused before anything starts (exit 2, nothing written).

Every declared target, each in turn, for both engines; and the switch that turns
the performance-only patches off lets a Ray without their targets run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import REPO, Sweeps, crash_config, sweep_env

from factories import make_sweep
from raysweep._raycompat.startup_check import RAY_TESTED, ray_version, required_targets
from raysweep._raycompat.switch import PATCHES_ENV

HERE = Path(__file__).resolve().parent
LOCAL: dict[str, Any] = make_sweep("lightgbm", name="compat-local", execution="local")

# Removes one target from Ray (argv[1]: module, argv[2]: attribute path), then runs the CLI.
WITHOUT_ONE = textwrap.dedent(
    """
    import importlib, sys
    *path, name = sys.argv[2].split(".")
    owner = importlib.import_module(sys.argv[1])
    for part in path:
        owner = getattr(owner, part)
    delattr(owner, name)
    from raysweep.cli import main
    code = main(sys.argv[3:])
    import ray
    print("ray initialized:", ray.is_initialized())
    sys.exit(code)
    """
)


def _quadratic(tmp: Path) -> Path:
    """The quadratic sweep of e2e_helpers, 2 trials."""
    search = {"algorithm": "random", "num_samples": 2}
    return crash_config(tmp / "sweep.json", name="compat", search=search)


def _local(tmp: Path) -> Path:
    path = tmp / "local.json"
    path.write_text(json.dumps(LOCAL))
    return path


def _without(
    module: str, attr: str, args: list[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_ONE, module, attr, *args],
        cwd=REPO, env=env or sweep_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_sweep_run_with_mismatched_ray_exits_2_writes_nothing_starts_nothing(
    tmp_path: Path,
) -> None:
    config = _quadratic(tmp_path)
    storage = tmp_path / "runs"
    args = ["run", "--config", str(config), "--storage", str(storage)]
    done = _without(
        "ray.tune.execution.tune_controller", "TuneController._maybe_reuse_cached_actor", args
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"Ray {ray_version()} is installed" in done.stderr
    assert RAY_TESTED in done.stderr
    assert "TuneController._maybe_reuse_cached_actor is missing" in done.stderr
    assert "ray initialized: False" in done.stdout
    assert not storage.exists()


def _each_target_gone(engine: str, config: Path, root: Path) -> list[dict[str, Any]]:
    """tests/e2e/targets_gone.py's record of `sweep run` with each target gone in turn."""
    done = subprocess.run(
        [sys.executable, str(HERE / "targets_gone.py"), engine, str(config), str(root)],
        cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _assert_each_refused(records: list[dict[str, Any]], engine: str) -> None:
    expected = [t.name for t in required_targets(ray_version(), engine)]
    assert [r["target"] for r in records] == expected  # every target, none skipped
    for record in records:
        name, err = record["target"], record["stderr"]
        assert record["code"] == 2, (name, err)
        assert f"Ray {ray_version()} is installed" in err and RAY_TESTED in err, (name, err)
        listed = [line for line in err.splitlines() if line.startswith("  ")]
        assert listed and all(name in line for line in listed), (name, err)  # it, and only it
        assert not record["written"], name
        assert not record["ray_initialized"], name


def test_each_declared_target_gone_makes_sweep_run_exit_2_naming_it(tmp_path: Path) -> None:
    config = _quadratic(tmp_path)
    records = _each_target_gone("ray", config, tmp_path / "runs")
    assert len(records) >= 70
    _assert_each_refused(records, "ray")


def test_the_local_engine_checks_the_targets_it_uses(tmp_path: Path) -> None:
    config = _local(tmp_path)
    records = _each_target_gone("local", config, tmp_path / "runs")
    names = {r["target"] for r in records}
    assert "ray.tune.schedulers.hyperband._Bracket._halves" in names
    assert not any("TuneController" in name for name in names)
    _assert_each_refused(records, "local")


@pytest.mark.slow
def test_the_local_engine_runs_without_a_target_only_ray_tune_uses(tmp_path: Path) -> None:
    config = _local(tmp_path)
    storage = tmp_path / "runs"
    args = ["run", "--config", str(config), "--storage", str(storage), "--no-dashboard"]
    done = _without(
        "ray.tune.execution.tune_controller", "TuneController._maybe_reuse_cached_actor", args
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    results = json.loads((storage / "compat-local" / "results.json").read_text())
    assert [t["status"] for t in results["trials"]] == ["completed", "completed"]


@pytest.mark.slow
def test_with_the_performance_patches_off_a_ray_without_their_targets_runs(
    tmp_path: Path,
) -> None:
    # Trainable.train_buffered is a target of result_buffer (performance only); the
    # driver never calls it itself, so a Ray without it runs the sweep on its own terms.
    config = _quadratic(tmp_path)
    storage = tmp_path / "runs"
    args = ["run", "--config", str(config), "--storage", str(storage), "--no-dashboard"]
    target = ("ray.tune.trainable.trainable", "Trainable.train_buffered")
    refused = _without(*target, args)
    assert refused.returncode == 2 and "Trainable.train_buffered is missing" in refused.stderr
    assert not storage.exists()
    done = _without(*target, args, env=sweep_env(**{PATCHES_ENV: "off"}))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "outside the tested range" not in done.stdout + done.stderr  # every supported Ray
    results = json.loads((storage / "compat" / "results.json").read_text())
    assert [t["status"] for t in results["trials"]] == ["completed", "completed"]


def test_an_unknown_patches_switch_exits_2_naming_it(tmp_path: Path) -> None:
    config = _quadratic(tmp_path)
    storage = tmp_path / "runs"
    sweeps = Sweeps(tmp_path, env=sweep_env(**{PATCHES_ENV: "fast"}))
    try:
        code, output = sweeps.run("run", "--config", str(config), "--storage", str(storage))
    finally:
        sweeps.close()
    assert code == 2, output
    assert f"{PATCHES_ENV}='fast'" in output
    assert not storage.exists()
