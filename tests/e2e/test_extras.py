"""Optional heavy dependencies: torch and the GBM libraries are extras (issue 20, deliverable 6).

The slow test installs raysweep with only the ``lightgbm`` extra into a
throw-away venv (``pip install -c constraints.txt -e .[lightgbm]`` of a copy of
the package, pip's cache reused): a LightGBM sweep runs there without torch, and a
torch_mlp sweep exits 2 naming ``raysweep[torch]``. With the dashboard's packages
(Ray's ``default`` extra) then removed, the demo runs without a dashboard and says so
in one line, and an explicit ``--dashboard`` exits 2 naming ``ray[default]``. Both
skip, saying why, when pip cannot reach its index.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from factories import make_sweep
from raysweep._imports import (
    EXTRAS,
    MissingExtraError,
    install_hint,
    is_installed,
    require,
    try_import,
)
from raysweep.errors import ConfigError
from raysweep.trainables.builtins import BUILTIN_EXTRAS

REPO = Path(__file__).resolve().parents[2]


def test_every_builtin_names_a_declared_extra() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    required = " ".join(project["dependencies"])
    for module in BUILTIN_EXTRAS.values():
        assert EXTRAS[module] in extras, module
        assert module not in required  # not a core dependency any more
        assert EXTRAS[module] in extras["all"][0]


def test_the_one_message_names_the_pip_install() -> None:
    assert install_hint("torch") == "pip install 'raysweep[torch]'"
    assert issubclass(MissingExtraError, ConfigError) and MissingExtraError.exit_code == 2
    require("lightgbm", "trainable 'lightgbm'")  # installed here
    assert not is_installed("raysweep_no_such_module")
    with pytest.raises(MissingExtraError, match=r"^feature X needs raysweep_no_such_module, "):
        require("raysweep_no_such_module", "feature X")


def test_try_import_defers_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "catboost", None)  # an import Python refuses
    with try_import("catboost", "trainable 'catboost'") as imported:
        import catboost  # noqa: F401
    assert not imported.is_successful()
    with pytest.raises(
        MissingExtraError, match=r"install it with: pip install 'raysweep\[catboost\]'"
    ):
        imported.check()


def copy_package(dest: Path) -> Path:
    """What a fresh clone holds of the package: pyproject, README, constraints, src."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md", "constraints.txt"):
        shutil.copy2(REPO / name, dest / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    shutil.copytree(REPO / "src", dest / "src", ignore=ignore)
    return dest


@pytest.fixture(scope="module")
def lightgbm_only_venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A throw-away venv with raysweep and only its ``lightgbm`` extra, and its environment."""
    tmp_path = tmp_path_factory.mktemp("extras")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "PYTHONPATH")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    probe = subprocess.run(
        [str(python), "-m", "pip", "index", "versions", "lightgbm"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if probe.returncode != 0:
        pytest.skip(f"pip cannot reach its package index: {probe.stderr.strip()[-300:]}")
    source = copy_package(tmp_path / "raysweep")
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "-c", "constraints.txt", "-e",
         ".[lightgbm]"],
        cwd=source, env=env, capture_output=True, text=True, timeout=1500,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]
    return venv, env


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_lightgbm_only_install_runs_lightgbm_and_refuses_torch(
    lightgbm_only_venv: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    venv, env = lightgbm_only_venv
    python = venv / "bin" / "python"
    gone = subprocess.run([str(python), "-c", "import torch"], capture_output=True, text=True)
    assert gone.returncode != 0 and "No module named 'torch'" in gone.stderr

    work = tmp_path / "work"
    work.mkdir()
    sweep = venv / "bin" / "sweep"
    space = {"num_leaves": {"type": "int", "low": 4, "high": 16}, "objective": "binary"}
    lgbm = work / "lgbm.json"
    lgbm.write_text(json.dumps(make_sweep("lightgbm", name="lgbm", space=space)))
    ran = subprocess.run(
        [str(sweep), "run", "--config", str(lgbm), "--storage", str(work / "runs")],
        cwd=work, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    results = json.loads((work / "runs" / "lgbm" / "results.json").read_text())
    assert [t["status"] for t in results["trials"]] == ["completed", "completed"]

    mlp = work / "mlp.json"
    mlp.write_text(json.dumps(make_sweep("torch_mlp", name="mlp", space={"lr": 0.01})))
    for command in (["validate", "--config", str(mlp)],
                    ["run", "--config", str(mlp), "--storage", str(work / "runs")]):  # fmt: skip
        refused = subprocess.run(
            [str(sweep), *command], cwd=work, env=env, capture_output=True, text=True, timeout=300
        )
        assert refused.returncode == 2, refused.stderr
        assert "pip install 'raysweep[torch]'" in refused.stderr
    assert not (work / "runs" / "mlp").exists()

    # Optuna's samplers: GP needs torch (refused up front), CMA-ES runs past its start-up
    for sampler, code in (("gp", 2), ("cmaes", 0)):
        search = {"algorithm": "optuna", "num_samples": 3, "max_concurrent": 1,
                  "options": {"sampler": sampler, "n_startup_trials": 1}}  # fmt: skip
        config = make_sweep("lightgbm", name=sampler, space=space, search=search,
                            execution="local")  # fmt: skip
        path = work / f"{sampler}.json"
        path.write_text(json.dumps(config))
        done = subprocess.run(
            [str(sweep), "run", "--config", str(path), "--storage", str(work / "runs")],
            cwd=work, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == code, done.stderr[-3000:]
        if code == 2:
            assert "search.options.sampler 'gp' needs torch" in done.stderr
            assert "pip install 'raysweep[torch]'" in done.stderr
            assert not (work / "runs" / sampler).exists()
    results = json.loads((work / "runs" / "cmaes" / "results.json").read_text())
    assert [t["status"] for t in results["trials"]] == ["completed"] * 3


# Ray's "default" extra (the dashboard's packages) less what ray[tune] and raysweep need.
DASHBOARD_ONLY = ("aiohttp-cors", "opencensus", "opencensus-context")


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_without_rays_default_extra_the_demo_runs_and_an_explicit_dashboard_exits_2(
    lightgbm_only_venv: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """A GPU host packed by tools/gpu_host.py has ray[tune] but not ray[default]."""
    venv, env = lightgbm_only_venv
    python, sweep = venv / "bin" / "python", venv / "bin" / "sweep"
    removed = subprocess.run(
        [str(python), "-m", "pip", "uninstall", "--yes", *DASHBOARD_ONLY],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert removed.returncode == 0, removed.stderr
    check = "import ray.dashboard.optional_deps"  # Ray's own test of its dashboard's needs
    probe = subprocess.run([str(python), "-c", check], env=env, capture_output=True, text=True)
    assert "No module named" in probe.stderr, probe.stderr

    storage = tmp_path / "runs"
    demo = [str(sweep), "run", "--config", str(REPO / "sweeps" / "demo.json"),
            "--storage", str(storage)]  # fmt: skip
    asked = subprocess.run(
        [*demo, "--name", "asked", "--dashboard"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert asked.returncode == 2, asked.stdout + asked.stderr
    assert "pip install 'ray[default]'" in asked.stderr and "Traceback" not in asked.stderr
    assert not (storage / "asked").exists() and not storage.exists()

    ran = subprocess.run(
        [*demo, "--name", "demo"], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=900,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    notes = [line for line in ran.stdout.splitlines() if "ray[default]" in line]
    assert len(notes) == 1 and notes[0].startswith("note: no Ray dashboard"), ran.stdout
    assert "Cannot include dashboard" not in ran.stdout + ran.stderr
    results = json.loads((storage / "demo" / "results.json").read_text())
    assert len(results["trials"]) == 20
