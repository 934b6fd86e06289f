"""A cluster on another supported Ray is refused before anything starts.

The cluster runs Ray 2.59.0 from a virtual environment of its own (same Python),
made once and kept in a cache (``$RAYSWEEP_TEST_CACHE``, default
``~/.cache/raysweep-tests``); the test is skipped, saying why, when it cannot be
made. ``sweep run --address`` from the project's Ray must exit 2 naming both
versions and the install line, with no traceback, no run directory and no Ray
started by the driver.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import REPO, SWEEP, LoopbackCluster, sweep_env

from factories import quadratic_sweep
from raysweep._raycompat.startup_check import ray_version

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]  # the first run makes the venv

OTHER_RAY = "2.59.0"  # a supported Ray other than the project's pin


def _cache() -> Path:
    default = Path.home() / ".cache" / "raysweep-tests"
    return Path(os.environ.get("RAYSWEEP_TEST_CACHE", default))


def other_ray_python() -> str:
    """The interpreter of a cached virtual environment with ``ray[tune,default]==OTHER_RAY``."""
    venv = _cache() / f"venv-ray-{OTHER_RAY}-py{platform.python_version()}"
    python = venv / "bin" / "python"
    done = venv / ".installed"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{venv}.lock", "w") as lock:  # two test sessions build it once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.is_file():
            return str(python)
        steps = [
            [sys.executable, "-m", "venv", "--clear", str(venv)],
            [str(python), "-m", "pip", "install", "-q", f"ray[tune,default]=={OTHER_RAY}"],
        ]
        for step in steps:
            made = subprocess.run(step, capture_output=True, text=True, timeout=1200)
            if made.returncode != 0:
                pytest.skip(f"cannot make a Ray {OTHER_RAY} environment: {made.stderr[-400:]}")
        done.write_text(OTHER_RAY)
    return str(python)


@pytest.fixture(scope="module")
def other_cluster() -> Iterator[dict[str, Any]]:
    if ray_version() == OTHER_RAY:
        pytest.skip(f"the project's Ray is {OTHER_RAY} itself")
    cluster = LoopbackCluster(python=other_ray_python())
    try:
        yield cluster.info()
    finally:
        cluster.close()


def test_a_cluster_on_another_ray_exits_2_naming_both_writing_nothing(
    tmp_path: Path, other_cluster: dict[str, Any]
) -> None:
    import ray

    config = tmp_path / "sweep.json"
    config.write_text(json.dumps(quadratic_sweep(name="versions")))
    storage = tmp_path / "runs"
    temp = tmp_path / "driver-tmp"  # where a Ray the driver started would keep its session
    temp.mkdir()
    env = sweep_env(TMPDIR=str(temp), PYTHONPATH=f"{REPO / 'src'}{os.pathsep}{REPO}")
    done = subprocess.run(
        [*SWEEP, "run", "--config", str(config), "--storage", str(storage),
         "--address", other_cluster["address"]],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert f"runs Ray {OTHER_RAY}" in done.stderr and f"runs Ray {ray.__version__}" in done.stderr
    assert f"pip install 'raysweep[...]' 'ray[tune,default]=={OTHER_RAY}'" in done.stderr
    assert "Traceback" not in output
    assert not storage.exists()
    assert not list(temp.rglob("session_*")), "the driver started a Ray of its own"
    env["RAY_ADDRESS"] = other_cluster["address"]  # as a Ray Job or a user's shell sets it
    by_env = subprocess.run(
        [*SWEEP, "run", "--config", str(config), "--storage", str(storage)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert by_env.returncode == 2, by_env.stdout + by_env.stderr
    assert f"runs Ray {OTHER_RAY}" in by_env.stderr and "Traceback" not in by_env.stderr
    assert not storage.exists()
